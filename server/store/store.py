"""Durable storage in one SQLite file (WAL, synchronous=FULL): tables, seats, the ledger, every
hand's record and each accepted action of the hand in play. This module is the writer; the
schema and the records read back are in `store_schema`, the statements in `store_ops`.

Writes go to one writer thread that commits whatever is waiting in one transaction (group
commit, one fsync for many tables) and only then resolves each writer's future: a caller that
awaits `write` knows its change is on disk. The event loop never waits on SQLite.

A storage fault (a full disk, a lock held by another program, a read-only or unreadable file,
and also a database file that was removed, moved or replaced while the server runs: SQLite would
go on writing to the unlinked file, and those writes would be lost at the next start) does not
fail the writes: the writer keeps the batch that failed and tries that same batch again, with a
backoff, until it commits (after a full disk it first copies the WAL back into the database and
truncates it), then commits what waited behind it. The event loop is told once when a fault
starts and once when it is over (`watch`). The writer never creates the file again: it opens it
read-write only, so a removed database stays a fault until the file is put back.

One server at a time: `open` takes an exclusive lock beside the database (DB.lock) and keeps it,
and refuses a database whose file is missing while its WAL is there (DatabaseRefused).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tonk.shared.wire.protocol import LEDGER_HANDS

from .saved import SavedDoorSeat as SavedDoorSeat
from .saved import SavedHand as SavedHand
from .saved import SavedName as SavedName
from .saved import SavedSeat as SavedSeat
from .saved import SavedTable as SavedTable

# The statements and the records are the store's too: callers use `store.put_seat` and such.
from .store_ops import Op as Op
from .store_ops import claim_name as claim_name
from .store_ops import count_hand as count_hand
from .store_ops import delete_door_seat as delete_door_seat
from .store_ops import delete_seat as delete_seat
from .store_ops import delete_seats as delete_seats
from .store_ops import dumps as dumps
from .store_ops import hash_token as hash_token
from .store_ops import insert_action as insert_action
from .store_ops import insert_hand as insert_hand
from .store_ops import insert_table as insert_table
from .store_ops import merged as merged
from .store_ops import put_door_seat as put_door_seat
from .store_ops import put_rematch as put_rematch
from .store_ops import put_seat as put_seat
from .store_ops import put_setting as put_setting
from .store_ops import seat_changed as seat_changed
from .store_ops import set_away as set_away
from .store_ops import set_token as set_token
from .store_ops import settle_hand as settle_hand
from .store_ops import update_table as update_table
from .store_schema import SCHEMA as SCHEMA
from .store_schema import hand_occupants as hand_occupants
from .store_schema import load_tables as load_tables
from .store_schema import upgrade as upgrade

log = logging.getLogger("tonk.server")

#: Commits are grouped: at most this many writes share one transaction.
MAX_BATCH = 512
#: Seconds a write waits for a lock held by another process before it counts as a storage
#: fault (the tables are told they wait; the write itself is retried until it goes through).
BUSY_TIMEOUT = 1.0
#: Seconds between tries of a batch that met a storage fault: doubled after each failed try,
#: up to RETRY_MAX.
RETRY_FIRST = 0.05
RETRY_MAX = 2.0
#: SQLite's primary result codes that mean the storage, not the write, is at fault: BUSY,
#: LOCKED, NOMEM, READONLY, IOERR, FULL, CANTOPEN, PROTOCOL.
FAULT_CODES = frozenset({5, 6, 7, 8, 10, 13, 14, 15})
SQLITE_FULL = 13
#: The page size of a new database file (an existing one keeps its own). Each commit writes
#: every page it changed to the WAL, and the action of each of many tables changes a page of
#: its own (in the actions' index): with 4 KiB pages (SQLite's default) most of what a commit
#: writes is untouched bytes around each row, and the writer thread's CPU per action is about
#: a third more than with 1 KiB pages.
PAGE_SIZE = 1024
#: Bytes of WAL after which a commit copies it back into the database (SQLite's default,
#: 1,000 pages, is 4 MiB with 4 KiB pages).
CHECKPOINT_BYTES = 4 * 1024 * 1024
#: On a nearly full disk the WAL is copied back sooner: once it holds this share of the room
#: left (the copy needs room in the database for the pages it adds; a WAL grown into the last
#: free byte could never be copied back, and the disk would stay full for good).
CHECKPOINT_SHARE = 4
#: ... but not more often than every this many bytes.
CHECKPOINT_MIN_BYTES = 16 * 1024
#: Seconds between looks at the room left on the database's filesystem.
ROOM_CHECK = 1.0
#: After the disk ran out of room, play carries on only once this many bytes are free again.
ROOM_RESERVE = 1024 * 1024


class StoreError(Exception):
    """A write could not be made durable; nothing of it was kept."""


class DatabaseRefused(Exception):
    """The database cannot be opened by this server: another server holds it, or its file is
    missing beside a WAL still holding changes. The message is one line for the operator."""


class FileFault(StoreError):
    """The database file (or its WAL) is not the one opened: removed, moved or replaced."""


def fault_of(exc: BaseException) -> str | None:
    """Why `exc` is a storage fault (retry the same write later), or None: the write itself
    is wrong (a constraint, a bug) and fails alone."""
    if isinstance(exc, FileFault):
        return str(exc)
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in FAULT_CODES:
            return str(exc)
        if isinstance(exc, sqlite3.OperationalError) and code is None:
            return str(exc)
        return None
    if isinstance(exc, OSError):
        return str(exc)
    return None


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
        self._stopping = threading.Event()  # close(): a fault is no longer waited out
        self._lock_file: int | None = None  # the open DB.lock, locked while this store is open
        self._watcher: tuple[asyncio.AbstractEventLoop, Callable[[str | None], None]] | None = None
        #: Why the database cannot be written now, or None (set in the watching loop).
        self.fault: str | None = None
        self.commits = 0
        self.writes = 0
        self.retries = 0  # tries of a batch after a storage fault
        self._checkpoint_pages = 0  # the connection's wal_autocheckpoint now
        self._room_checked = 0.0  # monotonic time of the last look at the room left
        # The storage fault going on (writer thread): its first reason, every reason seen,
        # when it started, tries so far, the wait before the next, and whether it was the
        # disk running out of room.
        self._fault: str | None = None
        self._fault_reasons: set[str] = set()
        self._fault_started = 0.0
        self._tries = 0
        self._delay = RETRY_FIRST
        self._short_of_room = False

    def watch(
        self, loop: asyncio.AbstractEventLoop, on_fault: Callable[[str | None], None]
    ) -> None:
        """Call `on_fault(reason)` in `loop` when a storage fault starts (or its reason
        changes), and `on_fault(None)` once it is over, before the writes that waited for it
        are resolved."""
        self._watcher = (loop, on_fault)

    def _report(self, reason: str | None) -> None:
        watcher = self._watcher
        if watcher is None:
            self.fault = reason
            return
        loop, on_fault = watcher

        def tell() -> None:
            self.fault = reason
            on_fault(reason)

        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody listens
            loop.call_soon_threadsafe(tell)

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
            self._checkpoint_pages = max(1, CHECKPOINT_BYTES // page_size)
            conn.execute(f"PRAGMA wal_autocheckpoint={self._checkpoint_pages}")
            self._room_checked = 0.0
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
            raise FileFault(f"the database file {self.path} was removed or replaced")
        if self._wal_identity is not None and self._stat(f"{self.path}-wal") != self._wal_identity:
            raise FileFault(f"the database's journal {self.path}-wal was removed or replaced")

    def open(self, history: int = LEDGER_HANDS) -> list[SavedTable]:
        """Create the file and schema if needed; return the tables still open, each with the
        newest `history` settled hands of its ledger. DatabaseRefused if another server holds
        the database, or its file is gone while its WAL is still there."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        try:
            self._refuse_orphaned_wal()
            conn = self._connect(create=True)
            try:
                conn.executescript(SCHEMA)
                upgrade(conn)
                tables = load_tables(conn, history)
            finally:
                conn.close()
        except BaseException:
            self._release_lock()
            raise
        self._identity = self._stat(str(self.path))
        self._thread = threading.Thread(target=self._run, name="tonk-store", daemon=True)
        self._thread.start()
        return tables

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def _take_lock(self) -> None:
        """Hold an exclusive lock on DB.lock while open (released by the system if the
        process dies): a second server on the same database refuses to start."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise DatabaseRefused(
                f"the database {self.path} is in use by another tonk-server{who}; "
                "stop it first, or give this one another --db"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_file = fd

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            os.close(self._lock_file)  # closing the file releases its lock
            self._lock_file = None

    def _refuse_orphaned_wal(self) -> None:
        """A WAL with no database beside it holds changes nobody can read back: the database
        file was removed while a server wrote to it. Starting would make a new, empty
        database and throw the WAL away."""
        wal = Path(f"{self.path}-wal")
        try:
            size = wal.stat().st_size
        except FileNotFoundError:
            return
        try:
            present = self.path.stat().st_size > 0
        except FileNotFoundError:
            present = False
        if size and not present:
            raise DatabaseRefused(
                f"found the write-ahead log {wal} ({size} bytes) but no database {self.path}: "
                "the database file was removed while a server was using it; put it back (or "
                "move the log away to start afresh)"
            )

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
        """The names claimed at the doors (by key or by browser) and, by folded name, the
        tables where each sat."""
        conn = self._connect()
        try:
            names = [
                SavedName(*row)
                for row in conn.execute(
                    "SELECT name, public_key, fingerprint, claimed, token_hash FROM ssh_names"
                    " ORDER BY claimed"
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
            if self._fault is not None:
                # Short of room after a full disk: look at it again now and then, writes or not.
                try:
                    item = self._queue.get(timeout=self._delay)
                except queue.Empty:
                    self._look_at_the_room()
                    continue
            else:
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
            results, conn = self._commit_durably(conn, batch)
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
            with contextlib.suppress(Exception):
                conn.close()

    def _commit_durably(
        self,
        conn: sqlite3.Connection | None,
        batch: list[tuple[Sequence[Op], asyncio.Future[None], asyncio.AbstractEventLoop]],
    ) -> tuple[list[Exception | None], sqlite3.Connection | None]:
        """Commit `batch`; through a storage fault, try this same batch again (with a
        backoff) until it commits, or until the store is closed. Returns each write's result
        and the connection to go on with."""
        while True:
            try:
                self._check_file()
                if conn is None:
                    conn = self._connect()
                    self._wal_identity = None
                results = self._commit(conn, batch)
                self._mind_the_room(conn)
                if self._wal_identity is None:
                    self._wal_identity = self._stat(f"{self.path}-wal")
            except Exception as exc:  # the thread must outlive any failure
                reason = fault_of(exc)
                if reason is None:  # the writes are at fault, not the storage
                    log.error("storage error: %s", exc)
                    self._drop(conn)
                    return [exc] * len(batch), None
                self._tries += 1
                self._fault_seen(reason)
                code = getattr(exc, "sqlite_errorcode", 0) or 0
                if code & 0xFF == SQLITE_FULL and conn is not None:
                    # Room may be had by copying the WAL back into the database and
                    # truncating it.
                    self._short_of_room = True
                    with contextlib.suppress(Exception):
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                else:
                    # Open it again: a connection opened while the file was read-only stays
                    # read-only, and one to a removed file writes nowhere.
                    self._drop(conn)
                    conn = None
                if self._stopping.is_set() or self._stopping.wait(self._delay):
                    return [StoreError(reason)] * len(batch), conn
                self._delay = min(self._delay * 2, RETRY_MAX)
                self.retries += 1
                continue
            if self._fault is not None:
                self._look_at_the_room()
            return results, conn

    def _fault_seen(self, reason: str) -> None:
        """A try failed for `reason`: said once a fault (and once each new reason in it)."""
        if self._fault is None:
            log.error(
                "storage fault: %s; the writes wait and are tried again until the database "
                "can be written",
                reason,
            )
            self._fault = reason
            self._fault_reasons = {reason}
            self._fault_started = time.monotonic()
            self._report(reason)
        elif reason not in self._fault_reasons:
            log.error("storage fault, also: %s", reason)
            self._fault_reasons.add(reason)

    def _look_at_the_room(self) -> None:
        """The write that met the fault went through: the fault is over, unless it was the
        disk running out of room and there is still less than ROOM_RESERVE left (then the
        next write would fail again, and play would stop and start many times a second)."""
        if self._stopping.is_set():
            return
        if self._short_of_room and self._room() < ROOM_RESERVE:
            self._delay = min(self._delay * 2, RETRY_MAX)
            return
        log.warning(
            "storage fault over after %.1f s and %d tries: the writes that waited are saved",
            time.monotonic() - self._fault_started,
            self._tries,
        )
        self._fault = None
        self._short_of_room = False
        self._tries = 0
        self._delay = RETRY_FIRST
        self._report(None)

    def _room(self) -> int:
        """Bytes free on the database's filesystem."""
        try:
            info = os.statvfs(self.path.parent)
        except OSError:
            return 0
        return info.f_bavail * info.f_frsize

    def _mind_the_room(self, conn: sqlite3.Connection) -> None:
        """Copy the WAL back sooner when the disk is nearly full (see CHECKPOINT_SHARE)."""
        now = time.monotonic()
        if now - self._room_checked < ROOM_CHECK:
            return
        self._room_checked = now
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        room = self._room() // CHECKPOINT_SHARE
        pages = max(CHECKPOINT_MIN_BYTES, min(CHECKPOINT_BYTES, room)) // page_size
        if pages != self._checkpoint_pages:
            conn.execute(f"PRAGMA wal_autocheckpoint={pages}")
            # A WAL that grew large before keeps its size on disk unless truncated.
            conn.execute(f"PRAGMA journal_size_limit={pages * page_size}")
            self._checkpoint_pages = pages

    def _drop(self, conn: sqlite3.Connection | None) -> None:
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        self._wal_identity = None

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
            # that a failing write fails alone. A storage fault fails the whole batch.
            try:
                for sql, params in merged([op for ops, _, _ in batch for op in ops]):
                    conn.execute(sql, params)
            except Exception as exc:
                conn.execute("ROLLBACK")
                if fault_of(exc) is not None:
                    raise
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
                    if fault_of(exc) is not None:
                        raise
                    conn.execute("ROLLBACK TO w")
                    results.append(exc)
                else:
                    results.append(None)
                conn.execute("RELEASE w")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
            raise
        self.commits += 1
        self.writes += len(batch)
        return results

    async def close(self) -> None:
        """Finish every queued write, then close."""
        thread = self._thread
        if thread is None:
            self._release_lock()
            return
        # A storage fault is not waited out any longer: what cannot be written now fails
        # (nobody was told it was saved).
        self._stopping.set()
        self._queue.put(None)
        await asyncio.to_thread(thread.join)
        self._thread = None
        self._release_lock()


def _resolve_all(resolved: list[tuple[asyncio.Future[None], Exception | None]]) -> None:
    for future, result in resolved:
        if future.done():
            continue
        if result is None:
            future.set_result(None)
        else:
            future.set_exception(StoreError(str(result)))
