"""Durable storage in one SQLite file (WAL, synchronous=FULL): tables, seats, the ledger, every
hand's record and each accepted action of the hand in play.

Writes go to one writer thread that commits whatever is waiting in one transaction (group
commit, one fsync for many tables) and only then resolves each writer's future: a caller that
awaits `write` knows its change is on disk. The event loop never waits on SQLite.

A write that cannot be made durable fails with StoreError: a locked database, a full disk, an
I/O error, and also a database file that was removed, moved or replaced while the server runs
(SQLite would go on writing to the unlinked file, and those writes would be lost at the next
start: the store checks the file is still the one it opened before each commit). The writer
never creates the file again: it opens it read-write only, so a removed database stays a fault
until the file is put back.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import queue
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tonk.shared.protocol import LEDGER_HANDS

log = logging.getLogger("tonk.server")

Op = tuple[str, tuple[Any, ...]]

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    hands_played INTEGER NOT NULL DEFAULT 0,
    dealer INTEGER,
    multiplier INTEGER NOT NULL DEFAULT 1,
    creator INTEGER
);
CREATE TABLE IF NOT EXISTS seats (
    table_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    strategy TEXT,
    token_hash TEXT,
    stake INTEGER NOT NULL,
    away INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seat)
);
CREATE TABLE IF NOT EXISTS balances (
    table_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    balance INTEGER NOT NULL,
    PRIMARY KEY (table_id, name)
);
CREATE TABLE IF NOT EXISTS hands (
    table_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    record TEXT NOT NULL,
    names TEXT NOT NULL,
    settlement TEXT,
    started REAL NOT NULL,
    ended REAL,
    PRIMARY KEY (table_id, number)
);
CREATE TABLE IF NOT EXISTS actions (
    table_id INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (table_id, hand, idx)
);
CREATE TABLE IF NOT EXISTS payments (
    table_id INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    payer TEXT NOT NULL,
    payee TEXT NOT NULL,
    amount INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ssh_names (
    folded TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    public_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    claimed REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ssh_seats (
    folded TEXT NOT NULL,
    table_id INTEGER NOT NULL,
    left_table INTEGER NOT NULL DEFAULT 0,
    taken REAL NOT NULL,
    PRIMARY KEY (folded, table_id)
);
CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

#: Commits are grouped: at most this many writes share one transaction.
MAX_BATCH = 512
#: Seconds a write waits for a lock held by another process before it fails.
BUSY_TIMEOUT = 5.0
#: The page size of a new database file (an existing one keeps its own). Each commit writes
#: every page it changed to the WAL, and the action of each of many tables changes a page of
#: its own (in the actions' index): with 4 KiB pages (SQLite's default) most of what a commit
#: writes is untouched bytes around each row, and the writer thread's CPU per action is about
#: a third more than with 1 KiB pages.
PAGE_SIZE = 1024
#: Bytes of WAL after which a commit copies it back into the database (SQLite's default,
#: 1,000 pages, is 4 MiB with 4 KiB pages).
CHECKPOINT_BYTES = 4 * 1024 * 1024


class StoreError(Exception):
    """A write could not be made durable; nothing of it was kept."""


def hash_token(token: str) -> str:
    """Seat tokens are kept only as a hash: a copy of the database gives nobody a seat."""
    return hashlib.sha256(token.encode()).hexdigest()


#: One encoder for every record (json.dumps with separators builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def dumps(data: Any) -> str:
    return _ENCODER.encode(data)


@dataclass(slots=True)
class SavedSeat:
    seat: int
    name: str
    kind: str
    strategy: str | None
    token_hash: str | None
    stake: int
    away: bool = False  # its seat is played for it until its player is back


@dataclass(slots=True)
class SavedHand:
    number: int
    record: dict[str, Any]
    names: list[str]
    settlement: dict[str, Any] | None
    actions: list[dict[str, Any]]


@dataclass(slots=True)
class SavedTable:
    id: int
    name: str
    config: dict[str, Any]
    state: str
    created: float
    started: float | None
    hands_played: int
    dealer: int | None
    multiplier: int
    creator: int | None
    seats: list[SavedSeat] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)
    history: list[tuple[int, str, list[tuple[str, str, int]]]] = field(default_factory=list)
    hand: SavedHand | None = None  # the last hand dealt (in play, or the one just settled)


@dataclass(frozen=True, slots=True)
class SavedName:
    """A name claimed through the SSH door by the first key that came under it."""

    name: str
    public_key: str  # OpenSSH's one-line form, without a comment
    fingerprint: str  # SHA256:...
    claimed: float


@dataclass(frozen=True, slots=True)
class SavedDoorSeat:
    """A table at which a name claimed over SSH took a seat through the door (no token: the
    key is the player's proof, and a copy of the database must give nobody a seat)."""

    table_id: int
    left: bool
    taken: float


class Store:
    """The database: `open` it (creates the schema, loads the open tables), `write` to it from
    the event loop, `close` it when done (waits for every queued write)."""

    def __init__(self, path: Path, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        # (device, inode) of the database file and of its WAL, as opened: a file found
        # different (or gone) before a commit is a storage fault, not a new database.
        self._identity: tuple[int, int] | None = None
        self._wal_identity: tuple[int, int] | None = None
        self._queue: queue.SimpleQueue[
            tuple[Sequence[Op], asyncio.Future[None], asyncio.AbstractEventLoop] | None
        ] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.commits = 0
        self.writes = 0

    # -- opening and loading (before serving: plain blocking calls) ---------------------------

    def _connect(self, create: bool = False) -> sqlite3.Connection:
        mode = "rwc" if create else "rw"
        conn = sqlite3.connect(
            f"{self.path.absolute().as_uri()}?mode={mode}",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            if create:
                conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # only while the file is empty
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            # Statement journals in memory: a commit's merged INSERT is one statement that may
            # fail halfway, so SQLite keeps the pages it changes to undo that statement alone;
            # past 64 KiB it spilled them to a new temporary file on disk, on most commits
            # under load. Only the statement's own undo is there (the WAL is the durable
            # journal), so nothing durable moves to memory.
            conn.execute("PRAGMA temp_store=MEMORY")
            (page_size,) = conn.execute("PRAGMA page_size").fetchone()
            conn.execute(f"PRAGMA wal_autocheckpoint={max(1, CHECKPOINT_BYTES // page_size)}")
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _stat(path: str) -> tuple[int, int] | None:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            return None
        return info.st_dev, info.st_ino

    def _check_file(self) -> None:
        """Raise StoreError unless the database (and its WAL) is still the file opened."""
        if self._identity is not None and self._stat(str(self.path)) != self._identity:
            raise StoreError(f"the database file {self.path} was removed or replaced")
        if self._wal_identity is not None and self._stat(f"{self.path}-wal") != self._wal_identity:
            raise StoreError(f"the database's journal {self.path}-wal was removed or replaced")

    def open(self, history: int = LEDGER_HANDS) -> list[SavedTable]:
        """Create the file and schema if needed; return the tables still open, each with the
        newest `history` settled hands of its ledger."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect(create=True)
        try:
            conn.executescript(SCHEMA)
            upgrade(conn)
            tables = self._load(conn, history)
        finally:
            conn.close()
        self._identity = self._stat(str(self.path))
        self._thread = threading.Thread(target=self._run, name="tonk-store", daemon=True)
        self._thread.start()
        return tables

    def _load(self, conn: sqlite3.Connection, history: int) -> list[SavedTable]:
        out: list[SavedTable] = []
        rows = conn.execute(
            "SELECT id, name, config, state, created, started, hands_played, dealer,"
            " multiplier, creator FROM tables WHERE state IN ('waiting', 'playing') ORDER BY id"
        ).fetchall()
        for row in rows:
            table = SavedTable(
                id=row[0],
                name=row[1],
                config=json.loads(row[2]),
                state=row[3],
                created=row[4],
                started=row[5],
                hands_played=row[6],
                dealer=row[7],
                multiplier=row[8],
                creator=row[9],
            )
            for number, name, kind, strategy, token_hash, stake, away in conn.execute(
                "SELECT seat, name, kind, strategy, token_hash, stake, away FROM seats"
                " WHERE table_id = ? ORDER BY seat",
                (table.id,),
            ):
                table.seats.append(
                    SavedSeat(number, name, kind, strategy, token_hash, stake, bool(away))
                )
            table.balances = dict(
                conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (table.id,))
            )
            # The newest `history` settled hands (what the table keeps of its ledger's hands),
            # and the last hand, settled or still being played.
            recent = conn.execute(
                "SELECT number, settlement FROM hands WHERE table_id = ?"
                " AND settlement IS NOT NULL ORDER BY number DESC LIMIT ?",
                (table.id, max(1, history)),
            ).fetchall()[::-1]
            payments: dict[int, list[tuple[str, str, int]]] = {}
            for hand, payer, payee, amount in conn.execute(
                "SELECT hand, payer, payee, amount FROM payments WHERE table_id = ? AND hand >= ?"
                " ORDER BY rowid",
                (table.id, recent[0][0] if recent else 0),
            ):
                payments.setdefault(hand, []).append((payer, payee, amount))
            for number, settlement in recent:
                ending = json.loads(settlement)["ending"]
                table.history.append((number, ending, payments.get(number, [])))
            last: tuple[Any, ...] | None = conn.execute(
                "SELECT number, record, names, settlement FROM hands WHERE table_id = ?"
                " ORDER BY number DESC LIMIT 1",
                (table.id,),
            ).fetchone()
            if last is not None:
                actions = [
                    json.loads(a)
                    for (a,) in conn.execute(
                        "SELECT action FROM actions WHERE table_id = ? AND hand = ? ORDER BY idx",
                        (table.id, last[0]),
                    )
                ]
                table.hand = SavedHand(
                    number=last[0],
                    record=json.loads(last[1]),
                    names=json.loads(last[2]),
                    settlement=None if last[3] is None else json.loads(last[3]),
                    actions=actions,
                )
            out.append(table)
        return out

    def setting(self, name: str) -> str | None:
        """A server setting kept in the database (`port`: where its server listened last)."""
        conn = self._connect()
        try:
            row = conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
            return None if row is None else str(row[0])
        finally:
            conn.close()

    def max_table_id(self) -> int:
        conn = self._connect()
        try:
            row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM tables").fetchone()
            return int(row[0])
        finally:
            conn.close()

    def door_players(self) -> tuple[list[SavedName], dict[str, list[SavedDoorSeat]]]:
        """The names claimed over SSH and, by folded name, the tables where each sat."""
        conn = self._connect()
        try:
            names = [
                SavedName(*row)
                for row in conn.execute(
                    "SELECT name, public_key, fingerprint, claimed FROM ssh_names ORDER BY claimed"
                )
            ]
            seats: dict[str, list[SavedDoorSeat]] = {}
            for folded, table_id, left, taken in conn.execute(
                "SELECT folded, table_id, left_table, taken FROM ssh_seats ORDER BY taken"
            ):
                seats.setdefault(folded, []).append(SavedDoorSeat(table_id, bool(left), taken))
            return names, seats
        finally:
            conn.close()

    # -- writing ------------------------------------------------------------------------------

    def write(self, ops: Sequence[Op]) -> asyncio.Future[None]:
        """Run `ops` in one transaction: await what this returns, which is done once they
        are committed, or raises StoreError. (A future, not a coroutine: one frame less to
        go through when the commit resumes the writer, on every action.)"""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._thread is None:
            future.set_exception(StoreError("the store is not open"))
            return future
        # Not shielded: the writer thread holds the ops, so the write happens (or fails)
        # whether or not anybody still waits for it, and a cancelled future is skipped.
        self._queue.put((ops, future, future.get_loop()))
        return future

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            item = self._queue.get()
            if item is None:
                break
            batch = [item]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            try:
                self._check_file()
                if conn is None:
                    conn = self._connect()
                    self._wal_identity = None
                results = self._commit(conn, batch)
                if self._wal_identity is None:
                    self._wal_identity = self._stat(f"{self.path}-wal")
            except Exception as exc:  # the thread must outlive any failure: report, go on
                log.error("storage error: %s", exc)
                results = [exc] * len(batch)
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()
                conn = None
                self._wal_identity = None
            # One wake-up per event loop for the whole batch, not one per write.
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Any]]] = {}
            for (_, future, loop), result in zip(batch, results, strict=True):
                by_loop.setdefault(loop, []).append((future, result))
            for loop, resolved in by_loop.items():
                with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                    loop.call_soon_threadsafe(_resolve_all, resolved)
            if stop:
                break
        if conn is not None:
            conn.close()

    def _commit(
        self,
        conn: sqlite3.Connection,
        batch: list[tuple[Sequence[Op], asyncio.Future[None], asyncio.AbstractEventLoop]],
    ) -> list[Exception | None]:
        results: list[Exception | None] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            # First, everything at once, in as few statements as possible: each statement
            # hands the GIL to the event loop and back, which is what limits a busy server.
            # If anything fails, start again one write at a time, each in a savepoint, so
            # that a failing write fails alone.
            try:
                for sql, params in merged([op for ops, _, _ in batch for op in ops]):
                    conn.execute(sql, params)
            except Exception:
                conn.execute("ROLLBACK")
                conn.execute("BEGIN IMMEDIATE")
            else:
                conn.execute("COMMIT")
                self.commits += 1
                self.writes += len(batch)
                return [None] * len(batch)
            for ops, _, _ in batch:
                conn.execute("SAVEPOINT w")
                try:
                    for sql, params in ops:
                        conn.execute(sql, params)
                except Exception as exc:  # this write fails alone; the others commit
                    conn.execute("ROLLBACK TO w")
                    results.append(exc)
                else:
                    results.append(None)
                conn.execute("RELEASE w")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.commits += 1
        self.writes += len(batch)
        return results

    async def close(self) -> None:
        """Finish every queued write, then close."""
        thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        await asyncio.to_thread(thread.join)
        self._thread = None


def upgrade(conn: sqlite3.Connection) -> None:
    """Bring a database made by an older tonk-server to this schema (columns added since)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(seats)")}
    if "away" not in columns:
        conn.execute("ALTER TABLE seats ADD COLUMN away INTEGER NOT NULL DEFAULT 0")


def _resolve_all(resolved: list[tuple[asyncio.Future[None], Exception | None]]) -> None:
    for future, result in resolved:
        if future.done():
            continue
        if result is None:
            future.set_result(None)
        else:
            future.set_exception(StoreError(str(result)))


#: A plain insert of one row, every value a parameter: several in a row can become one.
_PLAIN_INSERT = re.compile(r"INSERT INTO \w+ \([\w, ]+\) VALUES (\((?:\?, )*\?\))")
#: SQLite's smallest limit on parameters in one statement (older versions).
_MAX_PARAMS = 999


def merged(ops: Sequence[Op]) -> list[Op]:
    """The same changes in fewer statements: runs of the same plain one-row INSERT become
    multi-row INSERTs (rows in the same order; any failure fails the whole run)."""
    out: list[Op] = []
    i = 0
    while i < len(ops):
        sql, params = ops[i]
        match = _PLAIN_INSERT.fullmatch(sql)
        j = i + 1
        if match is not None and params:
            most = max(1, _MAX_PARAMS // len(params))
            while j < len(ops) and j - i < most and ops[j][0] == sql:
                j += 1
        if j - i == 1:
            out.append((sql, params))
        else:
            rows = ", ".join([match.group(1)] * (j - i)) if match else ""
            values = tuple(value for _, row in ops[i:j] for value in row)
            out.append((sql[: match.start(1)] + rows if match else sql, values))
        i = j
    return out


# -- the statements the tables use -----------------------------------------------------------


def insert_table(
    table_id: int, name: str, config: dict[str, Any], created: float, creator: int | None
) -> Op:
    return (
        "INSERT INTO tables (id, name, config, state, created, creator)"
        " VALUES (?, ?, ?, 'waiting', ?, ?)",
        (table_id, name, dumps(config), created, creator),
    )


def put_setting(name: str, value: str) -> Op:
    return ("INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (name, value))


def update_table(table_id: int, **columns: Any) -> Op:
    names = sorted(columns)
    assignments = ", ".join(f"{name} = ?" for name in names)
    return (
        f"UPDATE tables SET {assignments} WHERE id = ?",
        (*(columns[name] for name in names), table_id),
    )


def put_seat(table_id: int, seat: SavedSeat) -> Op:
    return (
        "INSERT OR REPLACE INTO seats"
        " (table_id, seat, name, kind, strategy, token_hash, stake, away)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            table_id,
            seat.seat,
            seat.name,
            seat.kind,
            seat.strategy,
            seat.token_hash,
            seat.stake,
            int(seat.away),
        ),
    )


def set_away(table_id: int, seat: int, away: bool) -> Op:
    return (
        "UPDATE seats SET away = ? WHERE table_id = ? AND seat = ?",
        (int(away), table_id, seat),
    )


def set_token(table_id: int, seat: int, name: str, token_hash: str) -> Op:
    """A new token for a seat still held under `name` (nothing if it was given up since)."""
    return (
        "UPDATE seats SET token_hash = ? WHERE table_id = ? AND seat = ? AND name = ?",
        (token_hash, table_id, seat, name),
    )


def delete_seat(table_id: int, seat: int) -> Op:
    return ("DELETE FROM seats WHERE table_id = ? AND seat = ?", (table_id, seat))


def delete_seats(table_id: int) -> Op:
    return ("DELETE FROM seats WHERE table_id = ?", (table_id,))


def insert_hand(
    table_id: int, number: int, record: dict[str, Any], names: list[str], started: float
) -> Op:
    return (
        "INSERT INTO hands (table_id, number, record, names, started) VALUES (?, ?, ?, ?, ?)",
        (table_id, number, dumps(record), dumps(names), started),
    )


def insert_action(table_id: int, hand: int, index: int, action: dict[str, Any]) -> Op:
    return (
        "INSERT INTO actions (table_id, hand, idx, action) VALUES (?, ?, ?, ?)",
        (table_id, hand, index, dumps(action)),
    )


def settle_hand(
    table_id: int,
    number: int,
    record: dict[str, Any],
    settlement: dict[str, Any],
    ended: float,
    payments: Sequence[tuple[str, str, int]],
    balances: dict[str, int],
) -> list[Op]:
    """The settled hand, its payments and the new balances (run in one transaction)."""
    ops: list[Op] = [
        (
            "UPDATE hands SET record = ?, settlement = ?, ended = ?"
            " WHERE table_id = ? AND number = ?",
            (dumps(record), dumps(settlement), ended, table_id, number),
        )
    ]
    ops.extend(
        (
            "INSERT INTO payments (table_id, hand, payer, payee, amount) VALUES (?, ?, ?, ?, ?)",
            (table_id, number, payer, payee, amount),
        )
        for payer, payee, amount in payments
    )
    ops.extend(
        (
            "INSERT INTO balances (table_id, name, balance) VALUES (?, ?, ?)"
            " ON CONFLICT (table_id, name) DO UPDATE SET balance = excluded.balance",
            (table_id, name, balance),
        )
        for name, balance in balances.items()
    )
    return ops


def claim_name(folded: str, name: SavedName) -> Op:
    return (
        "INSERT INTO ssh_names (folded, name, public_key, fingerprint, claimed)"
        " VALUES (?, ?, ?, ?, ?)",
        (folded, name.name, name.public_key, name.fingerprint, name.claimed),
    )


def put_door_seat(folded: str, seat: SavedDoorSeat) -> Op:
    return (
        "INSERT OR REPLACE INTO ssh_seats (folded, table_id, left_table, taken)"
        " VALUES (?, ?, ?, ?)",
        (folded, seat.table_id, int(seat.left), seat.taken),
    )


def delete_door_seat(folded: str, table_id: int) -> Op:
    return ("DELETE FROM ssh_seats WHERE folded = ? AND table_id = ?", (folded, table_id))
