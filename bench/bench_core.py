"""Benchmark of the game core: hands per second between `easy` bots (4 seats, classic), the
target of 5,000 a second on one core.

    python bench/bench_core.py [--hands 20000] [--repeats 3] [--write BENCHMARKS.md]

Runs in one process pinned to one core where the OS allows it. With --write, the results
replace the "## Game core" section of the file (the rest of the file is kept). `sharp`'s
decision times are measured by bench_bots.py, `sharp` against `easy` by `tonk-sim --bots
sharp,easy`; the breakdown of an `easy` hand's time was retired (docs/benchmarks-journal.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from tonk.shared.game.rules import PRESETS
from tonk.shared.sim.play import simulate

HEADING = "## Game core"
TARGET = 5000


def easy_hands_per_second(hands: int, repeats: int) -> tuple[float, float, float]:
    """(best, median, actions per hand) over `repeats` runs of `hands` hands, by the CPU time
    the process spent (the machine may be shared)."""
    rates = []
    actions = 0.0
    for run in range(repeats):
        start = time.process_time()
        result = simulate(PRESETS["classic"], 4, hands, 1 + run, ["easy"])
        rates.append(hands / (time.process_time() - start))
        actions = result.actions / hands
    return max(rates), statistics.median(rates), actions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="easy hands per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of easy hands")
    parser.add_argument("--write", type=Path, help="update this file's Game core section")
    args = parser.parse_args(argv)

    pinned = lk.pin_to_one_core()
    command = "python bench/bench_core.py " + " ".join(sys.argv[1:] if argv is None else list(argv))
    best, median, actions = easy_hands_per_second(args.hands, args.repeats)
    print(f"easy hands/s: best {best:,.0f}, median {median:,.0f} ({actions:.1f} actions/hand)")
    section = "\n".join(
        [
            f"Machine: {lk.machine()}; {pinned}. Measured {time.strftime('%Y-%m-%d')}.",
            "",
            f"Command: `{command.strip()}`",
            "",
            "Hands per second between 4 `easy` bots under `classic`, by process CPU time (one "
            "process, one core; each hand dealt, played through `SeatView`s and `legal()`, "
            "settled and put in the ledger):",
            "",
            "| runs | hands per run | best | median | actions per hand |",
            "|---|---|---|---|---|",
            f"| {args.repeats} | {args.hands} | {best:,.0f} | {median:,.0f} | {actions:.1f} |",
            "",
            f"The target is {TARGET:,} hands per second; this is {best / TARGET:.0%} of it, "
            f"about {1e6 / best / actions:.1f} microseconds an action. How it got there, and "
            "where an `easy` hand's time goes, is in the journal (docs/benchmarks-journal.md, "
            '"Game core: the breakdown, `sharp`\'s decisions, `sharp` against `easy`" and '
            '"Speed tricks, one at a time").',
        ]
    )
    if args.write:
        lk.write_section(args.write, HEADING, section)
        print(f"wrote the {HEADING[3:]!r} section of {args.write}")
    else:
        print(f"\n{HEADING}\n\n{section}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
