"""What the lobby's frames cost to make: a `tables` page of 100 summaries and `lobby` messages
of 10, 100 and 1,000 changes, joined from summaries packed once (`shared/_speedups.py`, what
the server does) against the same message written as a dict and encoded whole
(`protocol.encode`). Each is checked to give the same bytes first.

    python bench/lobby_frames.py [--repeat 7]

The summaries are of full tables of four, with the classic rules (about 750 bytes each packed).
Each figure is the least of `--repeat` timings of a loop, in microseconds a frame.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

from tonk.shared import _speedups
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    PlayerSummary,
    SeatKind,
    SeatStatus,
    TableState,
    TableSummary,
)
from tonk.shared.wire.wire import Wire


def summary(table_id: int) -> TableSummary:
    players = tuple(
        PlayerSummary(seat, f"bot{table_id}s{seat}", SeatKind.BOT, "easy", SeatStatus.BOT, 1, 0)
        for seat in range(4)
    )
    return TableSummary(
        id=table_id,
        name=f"load {table_id}",
        rules=PRESETS["classic"].to_wire(),
        rules_name="classic",
        stake=1,
        unit="",
        seats=4,
        taken=4,
        free=0,
        state=TableState.PLAYING,
        spectators=0,
        turn_timer=None,
        hands=None,
        minutes=None,
        bot_pause=1.0,
        hands_played=table_id % 7,
        creator=None,
        dealer=table_id % 4,
        paused=None,
        players=players,
    )


def least_us(make: Callable[[], bytes], loops: int, repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        began = time.perf_counter()
        for _ in range(loops):
            make()
        timings.append((time.perf_counter() - began) / loops)
    return min(timings) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    wires: list[Wire] = [summary(t).to_wire() for t in range(1, 1001)]
    packed = [_speedups.packed(wire) for wire in wires]
    print(f"a summary: {len(packed[0])} bytes packed")
    cases: list[tuple[str, Callable[[], bytes], Callable[[], bytes], int]] = [
        (
            "a page of 100, with reply_to",
            lambda: _speedups.tables_frame(packed[:100], 0, True, 1000, 7),
            lambda: p.encode(
                {
                    "type": p.TABLES,
                    "after": 0,
                    "more": True,
                    "total": 1000,
                    "tables": wires[:100],
                    "reply_to": 7,
                }
            ),
            200,
        )
    ]
    for count in (10, 100, 1000):
        cases.append(
            (
                f"a lobby message of {count} changes",
                functools.partial(_speedups.lobby_frame, packed[:count], [1001]),
                functools.partial(
                    p.encode, {"type": p.LOBBY, "tables": wires[:count], "removed": [1001]}
                ),
                max(10, 2000 // count),
            )
        )
    print("| frame | joined from packed summaries | encoded whole | whole / joined |")
    print("|---|---|---|---|")
    for name, joined, whole, loops in cases:
        assert joined() == whole(), name
        fast, slow = least_us(joined, loops, args.repeat), least_us(whole, loops, args.repeat)
        print(f"| {name} | {fast:,.1f} us | {slow:,.1f} us | {slow / fast:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
