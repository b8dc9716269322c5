"""The standings across nights, read from the database: on a read-only connection of its own,
in a thread of its own (never on the event loop, never on the writer's), for a `standings`
request and for `tonk-server standings`."""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import datetime as dt
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tonk.shared.game.standings import (
    PERIODS,
    Period,
    PlayerTotal,
    UnitNet,
    UnitTotal,
    first_night,
    night_of,
    nights_text,
    standings,
)
from tonk.shared.standings_text import sentence, standings_lines
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

from .paths import default_db_path
from .reading import AuditError, read_only
from .store_schema import COUNTED, NIGHT_TOTALS_SCHEMA, count_every_hand

#: Seconds a read waits for the writer's lock on the database before it gives up.
READ_TIMEOUT = 5.0


class BadPeriod(ValueError):
    """A period the standings do not know."""


def period_of(word: str | None) -> Period:
    """The period a request names (None: tonight); BadPeriod if it names none."""
    if word is None:
        return Period.TONIGHT
    period = PERIODS.get(word)
    if period is None:
        raise BadPeriod(f"there is no period {word[:16]!r}: ask for one of {', '.join(PERIODS)}")
    return period


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can only read the database (sqlite3.OperationalError if the file is
    not there: a read never creates it)."""
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=READ_TIMEOUT)
    conn.execute("PRAGMA query_only=ON")
    return conn


# Added up in SQLite (which lets the GIL go while it works), so that the server's event loop
# is not kept waiting for the thread: what is left for Python is a row or two a player.
_PLAYERS = (
    "SELECT kind, folded, name, max(last), sum(hands), sum(won), sum(drops_won),"
    " sum(drops_caught), sum(tonk_outs), sum(deal_tonks) FROM night_totals{where}"
    " GROUP BY kind, folded"
)
# Each unit's net with its best and worst night (a tie: the earlier night).
_UNITS = (
    "SELECT kind, folded, unit, sum(hands), sum(net),"
    " max(CASE WHEN best = 1 THEN night END), max(CASE WHEN best = 1 THEN net END),"
    " max(CASE WHEN worst = 1 THEN night END), max(CASE WHEN worst = 1 THEN net END)"
    " FROM (SELECT kind, folded, unit, night, hands, net,"
    " row_number() OVER (PARTITION BY kind, folded, unit ORDER BY net DESC, night) AS best,"
    " row_number() OVER (PARTITION BY kind, folded, unit ORDER BY net, night) AS worst"
    " FROM night_totals{where}) GROUP BY kind, folded, unit"
)


def read_standings(conn: sqlite3.Connection, period: Period, now: float) -> m.Standings:
    """The standings for `period` as of `now` (epoch seconds), by the server's local time."""
    tonight = night_of(dt.datetime.fromtimestamp(now))
    since = first_night(period, tonight)
    where, args = ("", ()) if since is None else (" WHERE night >= ?", (since.isoformat(),))
    players = [
        PlayerTotal(kind == "bot", folded, name, *counts)
        for kind, folded, name, _, *counts in conn.execute(_PLAYERS.format(where=where), args)
    ]
    units = [
        UnitTotal(kind == "bot", folded, hands, UnitNet(unit, *net))
        for kind, folded, unit, hands, *net in conn.execute(_UNITS.format(where=where), args)
    ]
    claimed = dict(conn.execute("SELECT folded, name FROM ssh_names").fetchall())
    people, bots, unit = standings(players, units, claimed)
    rows = p.STANDINGS_ROWS
    return m.Standings(
        period=str(period),
        tonight=tonight.isoformat(),
        since=None if since is None else since.isoformat(),
        zone=time.strftime("%Z", time.localtime(now)) or "local time",
        unit=unit,
        people=people[:rows],
        bots=bots[:rows],
        more=len(people) > rows or len(bots) > rows,
    )


#: What has changed when the standings may have: the hands counted, and the names claimed.
_STAMP = (
    "SELECT (SELECT total(hands) FROM night_totals),"
    " (SELECT count(*) || ':' || coalesce(max(rowid), 0) FROM ssh_names)"
)


def standings_at(path: Path, period: Period, now: float) -> m.Standings:
    conn = connect_read_only(path)
    try:
        return read_standings(conn, period, now)
    finally:
        conn.close()


class StandingsReader:
    """Answers `standings` requests off the event loop, one read at a time in a thread of
    its own. A request that comes while the same period is being read shares that read, and
    an answer is read again only once a hand was counted or a name claimed since (or the
    night turned): asked over and over, the standings cost one small query each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tonk-standings")
        self._reading: dict[Period, asyncio.Future[m.Standings]] = {}
        # By period: (what the database held, tonight) and the answer read then (thread's).
        self._read: dict[Period, tuple[tuple[object, ...], m.Standings]] = {}

    async def read(self, period: Period) -> m.Standings:
        """The standings for `period` now; sqlite3.Error if the database cannot be read."""
        reading = self._reading.get(period)
        if reading is None:
            loop = asyncio.get_running_loop()
            reading = loop.run_in_executor(self._pool, self._answer, period, time.time())
            self._reading[period] = reading
            reading.add_done_callback(lambda _: self._reading.pop(period, None))
        return await asyncio.shield(reading)

    def _answer(self, period: Period, now: float) -> m.Standings:
        conn = connect_read_only(self.path)
        try:
            conn.execute("BEGIN")  # one snapshot for the stamp and the answer
            stamp = (*conn.execute(_STAMP).fetchone(), night_of(dt.datetime.fromtimestamp(now)))
            kept = self._read.get(period)
            if kept is not None and kept[0] == stamp:
                return kept[1]
            answer = read_standings(conn, period, now)
            self._read[period] = (stamp, answer)
            return answer
        finally:
            conn.close()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


# -- as text, for the host -----------------------------------------------------------------------


def standings_text(answer: m.Standings) -> str:
    """The standings as `tonk-server standings` prints them (as the client shows them)."""
    return "".join(line + "\n" for line, _ in standings_lines(answer))


# -- tonk-server standings -----------------------------------------------------------------------

#: The subcommand of `tonk-server` this module answers.
COMMAND = "standings"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tonk-server standings",
        description="The standings across nights of a tonk-server database, people and bots "
        "apart (safe while the server runs). " + sentence(nights_text("local time")) + ".",
    )
    parser.add_argument(
        "--period",
        choices=list(PERIODS),
        default=str(Period.TONIGHT),
        help="tonight, the last 7 nights (week), the last 30 (month) or all time (default tonight)",
    )
    parser.add_argument(
        "--db", type=Path, default=None, help=f"the SQLite database (default {default_db_path()})"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    """Exit status: 0 printed, 2 the database cannot be read."""
    args = parse_args(argv[1:] if argv and argv[0] == COMMAND else argv)
    path: Path = args.db or default_db_path()
    period = PERIODS[args.period]
    try:
        with read_only(path) as conn:
            answer = (
                read_standings(conn, period, time.time())
                if counted(conn)
                else _counted_in_memory(path, period)
            )
    except (AuditError, sqlite3.Error) as exc:
        print(f"tonk-server standings: {exc}", file=sys.stderr)
        return 2
    print(standings_text(answer), end="")
    return 0


def counted(conn: sqlite3.Connection) -> bool:
    """Whether the database's hands are counted in its night totals (a server made after
    the standings across nights has opened it)."""
    try:
        row = conn.execute("SELECT 1 FROM settings WHERE name = ?", (COUNTED,)).fetchone()
    except sqlite3.OperationalError:  # a database older than its settings
        return False
    return row is not None


def _counted_in_memory(path: Path, period: Period) -> m.Standings:
    """The standings of a database no server of this version has opened yet: its hands are
    counted into night totals in memory (the file is only read)."""
    conn = sqlite3.connect("file::memory:", uri=True)
    try:
        conn.execute("ATTACH DATABASE ? AS disk", (f"{path.resolve().as_uri()}?mode=ro",))
        conn.executescript(NIGHT_TOTALS_SCHEMA)
        conn.execute("CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        if not conn.execute("SELECT 1 FROM disk.sqlite_master WHERE name = 'ssh_names'").fetchone():
            conn.execute("CREATE TABLE ssh_names (folded TEXT, name TEXT)")
        count_every_hand(conn)
        return read_standings(conn, period, time.time())
    finally:
        conn.close()
