"""A table's history, answered from the database: a page of its settled hands with the ledger
settled up, or one hand step by step as the asker saw it (tonk.shared.game.history replays it).
Each answer is read, and replayed, in a thread on a read-only connection of its own, so that
no table waits on it."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tonk.shared.game.actions import IllegalAction
from tonk.shared.game.hand import HandRecord
from tonk.shared.game.history import Occupants, hand_steps, hand_summary
from tonk.shared.game.settle_up import settle_up
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

from ..errors import RequestError
from .reading import AuditError, read_only
from .store_schema import hand_occupants

_T = TypeVar("_T")

#: History reads at once, across a server (`Requests` holds its semaphore): more wait their
#: turn, so that a crowd asking cannot take every worker thread from the rest of the server
#: (the door's checks use them).
READERS = 2


async def history_page(
    readers: asyncio.Semaphore,
    path: Path,
    table: int,
    unit: str,
    before: int | None,
    limit: int,
    reply_to: int | None,
) -> m.HistoryPage:
    """The settled hands of `table` numbered below `before` (all: None), newest first, at
    most `limit`; the balances now and how they would settle up."""
    read = functools.partial(_page, table=table, unit=unit, before=before, limit=limit)
    async with readers:
        return await asyncio.to_thread(_reading, path, read, reply_to)


async def history_hand(
    readers: asyncio.Semaphore,
    path: Path,
    table: int,
    number: int,
    name: str | None,
    start: int,
    reply_to: int | None,
) -> m.HistoryHandSteps:
    """Hand `number` of `table` from its step `start`, as the player called `name` saw it if
    they sat in it (None, or a name not in it: as a spectator saw it)."""
    read = functools.partial(_hand, table=table, number=number, name=name, start=start)
    async with readers:
        return await asyncio.to_thread(_reading, path, read, reply_to)


def _reading(
    path: Path, read: Callable[[sqlite3.Connection, int | None], _T], reply_to: int | None
) -> _T:
    try:
        with read_only(path) as conn:
            return read(conn, reply_to)
    except (AuditError, sqlite3.Error):
        raise RequestError(
            p.STORAGE_ERROR, "the server could not read the table's history just now"
        ) from None


def _page(
    conn: sqlite3.Connection,
    reply_to: int | None,
    *,
    table: int,
    unit: str,
    before: int | None,
    limit: int,
) -> m.HistoryPage:
    below = p.MAX_ID + 1 if before is None else before
    rows = conn.execute(
        "SELECT number, record, names, settlement FROM hands"
        " WHERE table_id = ? AND settlement IS NOT NULL AND number < ?"
        " ORDER BY number DESC LIMIT ?",
        (table, below, limit + 1),
    ).fetchall()
    (total,) = conn.execute(
        "SELECT COUNT(*) FROM hands WHERE table_id = ? AND settlement IS NOT NULL", (table,)
    ).fetchone()
    hands = tuple(
        hand_summary(
            number,
            hand_occupants(conn, table, number, json.loads(names)),
            json.loads(record),
            json.loads(settlement),
        )
        for number, record, names, settlement in rows[:limit]
    )
    balances = dict(
        conn.execute(
            "SELECT name, balance FROM balances WHERE table_id = ? ORDER BY balance DESC, name",
            (table,),
        )
    )
    return m.HistoryPage(
        table,
        hands,
        total,
        len(rows) > limit,
        unit,
        balances,
        tuple(settle_up(balances)),
        reply_to,
    )


async def settled_record(
    readers: asyncio.Semaphore, path: Path, table: int, number: int
) -> tuple[HandRecord, Occupants]:
    """Settled hand `number` of `table`: its record, and who held each seat at each step."""
    read = functools.partial(_record, table=table, number=number)
    async with readers:
        return await asyncio.to_thread(_reading, path, read, None)


def _record(
    conn: sqlite3.Connection, reply_to: int | None, *, table: int, number: int
) -> tuple[HandRecord, Occupants]:
    row = conn.execute(
        "SELECT record, names, settlement FROM hands WHERE table_id = ? AND number = ?",
        (table, number),
    ).fetchone()
    if row is None:
        raise RequestError(p.NO_SUCH_HAND, f"this table has played no hand {number}", "hand")
    if row[2] is None:
        raise RequestError(
            p.NO_SUCH_HAND,
            f"hand {number} is still being played: it is in the history once it is over",
            "hand",
        )
    seating = hand_occupants(conn, table, number, json.loads(row[1]))
    try:
        return HandRecord.from_dict(json.loads(row[0])), seating
    except (KeyError, ValueError, TypeError):
        raise _unplayable(number) from None


def _unplayable(number: int) -> RequestError:
    return RequestError(p.STORAGE_ERROR, f"hand {number}'s record could not be played again")


def _hand(
    conn: sqlite3.Connection,
    reply_to: int | None,
    *,
    table: int,
    number: int,
    name: str | None,
    start: int,
) -> m.HistoryHandSteps:
    record, seating = _record(conn, reply_to, table=table, number=number)
    # Each step as the asker saw it live: from their seat while they held it (a seat that
    # changed hands during the hand was theirs for some steps only), as a spectator else.
    seat = seating.seat_of(name)
    try:
        steps = hand_steps(record, seat, lambda step: seating.seat_at(name, step))
    except (IllegalAction, KeyError, ValueError, TypeError):
        raise _unplayable(number) from None
    if start >= len(steps):
        raise RequestError(
            p.BAD_VALUE, f"hand {number} has {len(steps)} steps: from must be below that", "from"
        )
    return m.HistoryHandSteps(
        table,
        number,
        seat,
        seating.final,
        record.rules,
        tuple(steps[start : start + p.HISTORY_STEPS]),
        start,
        len(steps),
        tuple((seat, step, name) for seat, step, name in seating.to_wire()),
        reply_to,
    )
