"""Hands of known endings recorded in a real database through the store's own statements (as a
table writes them when it deals and settles), for the standings tests."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tonk.server.store import store as st
from tonk.shared.game.settlement import Ending, Payment, Settlement

#: A seat: (name, kind).
Seat = tuple[str, str]


def settlement(
    ending: Ending,
    winners: Sequence[int],
    payments: Sequence[tuple[int, int, int]],
    seats: int,
    dropper: int | None = None,
) -> Settlement:
    return Settlement(
        ending,
        tuple(winners),
        tuple(Payment(*payment) for payment in payments),
        (None,) * seats,
        (None,) * seats,
        dropper=dropper,
    )


def table_ops(table_id: int, seats: Sequence[Seat], unit: str = "chips") -> list[st.Op]:
    """A table and its seats, as the server writes them when it is made and starts."""
    ops = [st.insert_table(table_id, f"t{table_id}", {"unit": unit, "stake": 1}, 0.0, 0)]
    ops += [
        st.put_seat(table_id, st.SavedSeat(n, name, kind, None, None, 1))
        for n, (name, kind) in enumerate(seats)
    ]
    return ops


def hand_ops(
    table_id: int,
    number: int,
    seats: Sequence[Seat],
    settled: Settlement,
    started: float,
    unit: str = "chips",
    counted: bool = True,
) -> list[st.Op]:
    """A hand dealt at `started` and settled, as a table writes it (and, if `counted`, counted
    into the standings as a table of this version does)."""
    names = [name for name, _ in seats]
    payments = [(names[p.payer], names[p.payee], p.amount) for p in settled.payments]
    ops = [st.insert_hand(table_id, number, {}, names, started)]
    ops += st.settle_hand(table_id, number, {}, settled.to_dict(), started + 60, payments, {})
    if counted:
        kinds = [kind for _, kind in seats]
        ops += st.count_hand(table_id, number, names, kinds, unit, settled)
    return ops


def local(year: int, month: int, day: int, hour: int, minute: int = 0) -> float:
    """Epoch seconds of a moment of local time."""
    return dt.datetime(year, month, day, hour, minute).timestamp()


@contextmanager
def time_zone(zone: str) -> Iterator[None]:
    """The process's local time zone set to `zone` for a while (SQLite reads it too)."""
    import os

    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


async def write(path: Path, ops: list[st.Op]) -> None:
    """Open the database at `path` with the real store, write `ops`, close it."""
    store = st.Store(path)
    store.open()
    try:
        await store.write(ops)
    finally:
        await store.close()
