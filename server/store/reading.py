"""A database opened read-only, in one snapshot, for the host's tools (`tonk-server ledger`,
`audit`, `names`, ...) and the requests that read the past (history, standings); AuditError
when it cannot be read."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path


class AuditError(Exception):
    """The database cannot be read (missing, not a tonk-server database, no such table/hand)."""


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """The database opened read-only, in one read transaction: one snapshot of it, even while
    the server commits (WAL lets readers and the writer work at once)."""
    if not path.is_file():
        raise AuditError(f"no database at {path}")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise AuditError(f"cannot open {path}: {exc}") from None
    try:
        conn.execute("BEGIN")
        conn.execute("SELECT id FROM tables LIMIT 1").fetchall()
        yield conn
    except sqlite3.DatabaseError as exc:
        raise AuditError(f"{path} is not a tonk-server database: {exc}") from None
    finally:
        conn.close()
