"""What the database holds: its schema (and the upgrade of an older file), and the records a
server reads back from it when it starts (`load_tables`)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

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
    claimed REAL NOT NULL,
    token_hash TEXT
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


def upgrade(conn: sqlite3.Connection) -> None:
    """Bring a database made by an older tonk-server to this schema (columns added since)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(seats)")}
    if "away" not in columns:
        conn.execute("ALTER TABLE seats ADD COLUMN away INTEGER NOT NULL DEFAULT 0")
    # A name claimed from a web browser (the web door) has its token's hash, and no key.
    names = {row[1] for row in conn.execute("PRAGMA table_info(ssh_names)")}
    if "token_hash" not in names:
        conn.execute("ALTER TABLE ssh_names ADD COLUMN token_hash TEXT")


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
    """A name claimed through a door: at the SSH door by the first key that came under it
    (`public_key`), or at the web door by a browser (`token_hash`, and no key)."""

    name: str
    public_key: str  # OpenSSH's one-line form, without a comment ("" for a browser's)
    fingerprint: str  # SHA256:... ("" for a browser's)
    claimed: float
    token_hash: str | None = None  # the browser's token, hashed (the cookie holds the token)

    @property
    def by_browser(self) -> bool:
        return self.token_hash is not None


@dataclass(frozen=True, slots=True)
class SavedDoorSeat:
    """A table at which a name claimed over SSH took a seat through the door (no token: the
    key is the player's proof, and a copy of the database must give nobody a seat)."""

    table_id: int
    left: bool
    taken: float


def load_tables(conn: sqlite3.Connection, history: int) -> list[SavedTable]:
    """The tables still open, each with its seats, balances, the newest `history` settled
    hands of its ledger and its last hand (with the actions taken in it)."""
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
