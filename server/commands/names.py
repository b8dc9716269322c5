"""`tonk-server names`: the names claimed at the doors, each with the SSH key or the web browser
that holds it, and `tonk-server names release NAME` to free one (a player who lost their key,
cleared their browser or wants a new one, a name claimed by the wrong person). Safe while the
server runs: a running server lets go of a released name within seconds (DoorNames.refresh)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..doors.door_names import fold
from ..store.paths import default_db_path
from ..store.reading import AuditError, read_only
from .helptext import HelpFormatter, add_db_option

#: The subcommand of `tonk-server` this module answers.
COMMAND = "names"
#: Seconds the release waits for the server's writes to let it write (SQLite's busy timeout).
BUSY_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Claim:
    """A claimed name as the database keeps it."""

    name: str
    fingerprint: str  # the key's ("" for a browser's)
    claimed: float
    tables: int  # tables where the name sat through the door (seats it may come back to)
    by_browser: bool = False  # claimed at the web door

    @property
    def holder(self) -> str:
        """Who holds it, in words: the key's fingerprint, or a web browser."""
        return "a web browser" if self.by_browser else f"key {self.fingerprint}"


def claims(conn: sqlite3.Connection) -> list[Claim]:
    """Every claimed name, the oldest claim first (none in a database from before the door,
    which the server gives its door's tables when it next starts)."""
    if not _has_door_tables(conn):
        return []
    columns = {row[1] for row in conn.execute("PRAGMA table_info(ssh_names)")}
    # (A database from before the web door has no browsers' claims, nor their column.)
    browser = "n.token_hash IS NOT NULL" if "token_hash" in columns else "0"
    rows = conn.execute(
        f"SELECT n.name, n.fingerprint, n.claimed, COUNT(s.table_id), {browser} FROM ssh_names "
        "n LEFT JOIN ssh_seats s ON s.folded = n.folded GROUP BY n.folded ORDER BY n.claimed"
    )
    return [Claim(name, key, when, tables, bool(web)) for name, key, when, tables, web in rows]


def _has_door_tables(conn: sqlite3.Connection) -> bool:
    found = conn.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
        "('ssh_names', 'ssh_seats')"
    ).fetchone()
    return bool(found[0] == 2)


def release(path: Path, name: str) -> Claim:
    """Delete the claim on `name` (in any case); returns it. Raises AuditError when the
    database cannot be written or nobody holds that name."""
    if not path.is_file():
        raise AuditError(f"no database at {path}")
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,
        )
    except sqlite3.Error as exc:
        raise AuditError(f"cannot open {path}: {exc}") from None
    try:
        conn.execute("BEGIN IMMEDIATE")
        found = [c for c in claims(conn) if fold(c.name) == fold(name)]
        if not found:
            conn.execute("ROLLBACK")
            raise AuditError(f"nobody has claimed the name {name!r} in {path}")
        conn.execute("DELETE FROM ssh_names WHERE folded = ?", (fold(name),))
        conn.execute("COMMIT")
        return found[0]
    except sqlite3.DatabaseError as exc:
        raise AuditError(f"cannot release {name!r} in {path}: {exc}") from None
    finally:
        conn.close()


def claims_text(found: Sequence[Claim]) -> list[str]:
    if not found:
        return ["no name has been claimed at the SSH door or the web door"]
    lines = [f"{'name':<24} {'claimed':<16} {'tables':>6}  held by"]
    for claim in found:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(claim.claimed))
        lines.append(f"{claim.name:<24} {when:<16} {claim.tables:>6}  {claim.holder}")
    return lines


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    db = argparse.ArgumentParser(add_help=False)
    add_db_option(db)
    if argv[1:2] == ["release"]:
        parser = argparse.ArgumentParser(
            prog="tonk-server names release",
            parents=[db],
            formatter_class=HelpFormatter,
            description="Free a name claimed at the SSH door or the web door: the next key "
            "or browser that comes in under it claims it, and sits in the seats it holds. Safe "
            "while the server runs (it lets go of the name within seconds); a session already "
            "in keeps playing.",
        )
        parser.add_argument("name", metavar="NAME", help="the name, in any case")
        args = parser.parse_args(argv[2:])
        args.action = "release"
        return args
    parser = argparse.ArgumentParser(
        prog="tonk-server names",
        parents=[db],
        formatter_class=HelpFormatter,
        description="The names claimed at the SSH door and the web door, each with when, the "
        "number of tables it holds a seat at through a door, and what holds it: its key's "
        "fingerprint, or a web browser. Read-only; "
        "`tonk-server names release NAME` frees one.",
    )
    args = parser.parse_args(argv[1:])
    args.action = "list"
    return args


def main(argv: Sequence[str]) -> int:
    """Exit status: 0 done, 2 the database cannot be read or written, or no such name."""
    args = parse_args(argv)
    path: Path = args.db or default_db_path()
    try:
        if args.action == "release":
            claim = release(path, args.name)
            print(
                f"released {claim.name} ({claim.holder}): the next key or browser to come in "
                f"as {claim.name} claims it"
            )
            return 0
        with read_only(path) as conn:
            for line in claims_text(claims(conn)):
                print(line)
        return 0
    except AuditError as exc:
        print(f"tonk-server names: {exc}", file=sys.stderr)
        return 2
