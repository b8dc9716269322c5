"""Seat tokens kept on disk, per server, player and table, so a client started again (after an
SSH session died, say) takes its seat back, and friends who share one computer account each
keep their own. One small JSON file in the user's state directory."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from platformdirs import user_state_dir
from tonk.shared.records import record

from .logstore import LogStore

try:
    import fcntl
except ImportError:  # not on this platform: two clients writing at once may lose an entry
    fcntl = None  # type: ignore[assignment]


def default_state_dir() -> Path:
    """`$XDG_STATE_HOME/tonk` on Linux (`~/.local/state/tonk`), the platform's own elsewhere."""
    return Path(user_state_dir("tonk", appauthor=False))


@record
class SeatRecord:
    """A seat we hold: the table, its token, and the name we sat down with."""

    table: int
    token: str
    name: str
    left: bool = False  # we left the table on purpose: do not go back to it on start


class SeatTokens:
    """The tokens file, read and written whole (it holds a handful of entries), under a lock
    so that two clients of one account writing at once both keep their entry.

    `{"version": 2, "servers": {"host:port": {"player": {"table": {"token", "order",
    "left"}}}}}`. A file written before tokens were kept per player (`{"host:port":
    {"table": {"token", "name", "order", "left"}}}`) is read as well, and rewritten in the
    new layout at the next change."""

    FILE = "seats.json"
    LOCK = "seats.lock"
    VERSION = 2

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_state_dir()
        self.path = self.directory / self.FILE
        self._claims: list[IO[str]] = []  # open while this process plays under each name

    # -- who plays here -----------------------------------------------------------------------

    def claim(self, server: str, name: str) -> bool:
        """Note that this process plays as `name` on `server` until it exits; False if another
        running client of this account does already (a friend on the same account: the seats
        kept under that name are theirs). An exclusive lock on a file of its own, which the
        system lets go when the process ends however it ends; True where there is no lock to
        take (the platform has none, or the state directory cannot be written)."""
        digest = hashlib.sha256(f"{server}\n{name}".encode()).hexdigest()[:24]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / f"playing-{digest}.lock", "a")  # noqa: SIM115
        except OSError:
            return True
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                return False
        self._claims.append(handle)
        return True

    def log_store(self) -> LogStore | None:
        """Where the logs of the seats these tokens hold are kept, beside them."""
        return LogStore(self.directory)

    def release(self) -> None:
        """Let go of every name this process claimed."""
        for handle in self._claims:
            handle.close()
        self._claims.clear()

    # -- the file ---------------------------------------------------------------------------

    def _read(self) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
        """server -> player -> table -> entry, whatever the layout on disk."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        servers: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        stored = data.get("servers") if data.get("version") == self.VERSION else None
        for server, players in (stored if isinstance(stored, dict) else {}).items():
            if not isinstance(players, dict):
                continue
            for player, tables in players.items():
                if isinstance(tables, dict):
                    for table, entry in tables.items():
                        if isinstance(entry, dict):
                            servers.setdefault(server, {}).setdefault(player, {})[table] = entry
        # The old layout (also what an older client adds beside the new one).
        for server, tables in data.items():
            if server in ("version", "servers") or not isinstance(tables, dict):
                continue
            for table, entry in tables.items():
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    player = servers.setdefault(server, {}).setdefault(entry["name"], {})
                    player.setdefault(table, {k: v for k, v in entry.items() if k != "name"})
        return servers

    def _write(self, servers: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {"version": self.VERSION, "servers": servers}
        # Written to a private temporary file and renamed: a token is a secret, and a crash
        # mid-write must not lose the others.
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".seats-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, dict[str, dict[str, dict[str, Any]]]]]:
        """The file's entries to change, written back when the block ends; no other client
        of this account reads or writes them meanwhile. A file that cannot be written is
        left as it was (the seat is still held on the server)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            lock = open(self.directory / self.LOCK, "a")  # noqa: SIM115
        except OSError:
            lock = None
        try:
            if lock is not None and fcntl is not None:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            servers = self._read()
            yield servers
            with contextlib.suppress(OSError):
                self._write(servers)
        finally:
            if lock is not None:
                lock.close()  # and the lock with it

    # -- seats --------------------------------------------------------------------------------

    def seats(self, server: str, name: str | None = None) -> list[SeatRecord]:
        """The seats held on `server` ("host:port") by player `name` (by anyone on this
        account when None), most recently taken first."""
        players = self._read().get(server, {})
        records = []
        for player, tables in players.items():
            if name is not None and player != name:
                continue
            for table, entry in tables.items():
                try:
                    record = SeatRecord(
                        int(table), str(entry["token"]), player, bool(entry.get("left"))
                    )
                    records.append((int(entry.get("order", 0)), record))
                except (KeyError, TypeError, ValueError, AttributeError):
                    continue
        return [record for _, record in sorted(records, key=lambda r: -r[0])]

    def remember(self, server: str, record: SeatRecord) -> None:
        with self._changing() as servers:
            players = servers.setdefault(server, {})
            order = 1 + max(
                (
                    int(entry.get("order", 0))
                    for tables in players.values()
                    for entry in tables.values()
                    if isinstance(entry.get("order", 0), int)
                ),
                default=0,
            )
            players.setdefault(record.name, {})[str(record.table)] = {
                "token": record.token,
                "order": order,
                "left": record.left,
            }

    def mark_left(self, server: str, table: int, name: str) -> None:
        """`name` left the table; the seat is still theirs (played for them) if they sit
        there again."""
        with self._changing() as servers:
            entry = servers.get(server, {}).get(name, {}).get(str(table))
            if entry is not None:
                entry["left"] = True

    def forget(self, server: str, table: int, name: str) -> None:
        with self._changing() as servers:
            players = servers.get(server, {})
            tables = players.get(name, {})
            tables.pop(str(table), None)
            if not tables:
                players.pop(name, None)
            if not players:
                servers.pop(server, None)
