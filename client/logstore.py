"""A player's table log kept on disk, per server, player and table, so that a client started
again at that table shows what its player saw before: the server keeps no chat, and a log line
may hold what only that player's seat saw (its own hand). One small JSON file a player and
table, private to the user, in the state directory beside the seat tokens.

The key is the player and the table, not the seat's token: a player whose seat went to a bot
and who takes it back (a new token) has their log back, as the door keeps its guests' logs. The
state directory is the user's own, and friends who share it play under different names."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from rich.errors import MarkupError
from rich.text import Text
from tonk.shared.records import record

from .model.state import LogLine

#: A kept log not written to for this long is deleted (its table is long over).
KEEP_DAYS = 14


@record
class KeptLog:
    """The lines of a seat's log, oldest first, and how far the hand they end in was logged
    (its number and how many of its events), so that the events sent again are not logged
    twice."""

    lines: tuple[LogLine, ...]
    hand: int = 0
    events: int = 0


class LogStore:
    """The kept logs under `directory/logs`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory / "logs"

    def _path(self, server: str, name: str, table: int) -> Path:
        # (The key's last line once held the seat's token, now empty: the door's files, which
        # never had one, keep their names.)
        key = hashlib.sha256(f"{server}\n{name}\n{table}\n".encode()).hexdigest()[:32]
        return self.directory / f"{key}.json"

    def save(self, server: str, name: str, table: int, log: KeptLog) -> None:
        """Write the log whole (to a private file renamed over the last): a crash mid-write
        leaves the one before. A directory that cannot be written keeps nothing."""
        data = {
            "hand": log.hand,
            "events": log.events,
            "lines": [{"text": line.text.markup, "chat": line.chat} for line in log.lines],
        }
        with contextlib.suppress(OSError):
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".log-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle)
                os.replace(tmp, self._path(server, name, table))
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def load(self, server: str, name: str, table: int) -> KeptLog | None:
        """The log kept for that player and table, None if there is none (or it cannot be read)."""
        try:
            data = json.loads(self._path(server, name, table).read_text("utf-8"))
            lines = tuple(
                LogLine(number, Text.from_markup(line["text"]), bool(line["chat"]))
                for number, line in enumerate(data["lines"])
            )
            return KeptLog(lines, int(data["hand"]), int(data["events"]))
        except (OSError, ValueError, KeyError, TypeError, MarkupError):
            return None

    def forget(self, server: str, name: str, table: int) -> None:
        with contextlib.suppress(OSError):
            self._path(server, name, table).unlink()

    def prune(self, now: float | None = None) -> None:
        """Delete the logs not written to for KEEP_DAYS."""
        limit = (time.time() if now is None else now) - KEEP_DAYS * 86400
        with contextlib.suppress(OSError):
            for path in self.directory.glob("*.json"):
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < limit:
                        path.unlink()
