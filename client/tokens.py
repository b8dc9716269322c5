"""Seat tokens kept on disk, per server and table, so a client started again (after an SSH
session died, say) takes its seat back. One small JSON file in the user's state directory."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_state_dir


def default_state_dir() -> Path:
    """`$XDG_STATE_HOME/tonk` on Linux (`~/.local/state/tonk`), the platform's own elsewhere."""
    return Path(user_state_dir("tonk", appauthor=False))


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """A seat we hold: the table, its token, and the name we sat down with."""

    table: int
    token: str
    name: str
    left: bool = False  # we left the table on purpose: do not go back to it on start


class SeatTokens:
    """The tokens file, read and written whole (it holds a handful of entries)."""

    FILE = "seats.json"

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_state_dir()
        self.path = self.directory / self.FILE

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
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

    def seats(self, server: str) -> list[SeatRecord]:
        """The seats we hold on `server` ("host:port"), most recently taken first."""
        entries = self._read().get(server, {})
        records = []
        for table, entry in entries.items():
            try:
                record = SeatRecord(
                    int(table), str(entry["token"]), str(entry["name"]), bool(entry.get("left"))
                )
                records.append((entry.get("order", 0), record))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
        return [record for _, record in sorted(records, key=lambda r: -r[0])]

    def remember(self, server: str, record: SeatRecord) -> None:
        data = self._read()
        entries = data.setdefault(server, {})
        order = 1 + max((e.get("order", 0) for e in entries.values()), default=0)
        entries[str(record.table)] = {
            "token": record.token,
            "name": record.name,
            "order": order,
            "left": record.left,
        }
        with contextlib.suppress(OSError):
            self._write(data)

    def mark_left(self, server: str, table: int) -> None:
        """We left the table; the seat is still ours (played for us) if we sit there again."""
        data = self._read()
        entry = data.get(server, {}).get(str(table))
        if entry is None:
            return
        entry["left"] = True
        with contextlib.suppress(OSError):
            self._write(data)

    def forget(self, server: str, table: int) -> None:
        data = self._read()
        entries = data.get(server, {})
        if entries.pop(str(table), None) is None:
            return
        if not entries:
            data.pop(server, None)
        with contextlib.suppress(OSError):
            self._write(data)
