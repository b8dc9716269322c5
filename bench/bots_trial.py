"""Paired trial of versions of `expert` against `sharp`: each version is a copy of
shared/bots/expert.py, changed, and every deal is played by each version from the same deck, dealer
and bots' seeds, so that the versions' difference is measured, not drowned in the deals' luck.

    python bench/bots_trial.py pagat:3 600 1414 shared/bots/expert.py /tmp/changed_expert.py

As in bench_bots.py, each deal is played twice with the bots' seats swapped; a deal's edge is
the expert seats' mean net per hand less the sharp seats', over its two plays. Printed for each
version: its edge with a 95% interval, and (after the first) its difference from the first,
deal by deal, with a 95% interval. BENCHMARKS.md's "Bots" section quotes these differences.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from bench_bots import interval, swapped_deal
from tonk.shared.bots.bots import SharpBot
from tonk.shared.game.cards import shuffled_deck
from tonk.shared.game.rules import PRESETS


def load_version(path: Path) -> type[SharpBot]:
    """The ExpertBot class of a copy of shared/bots/expert.py (its relative imports read as
    imports from tonk.shared.bots and, a level up, tonk.shared)."""
    source = path.read_text().replace("from ..", "from tonk.shared.")
    source = source.replace("from .", "from tonk.shared.bots.")
    module = ModuleType(path.stem)
    exec(compile(source, str(path), "exec"), module.__dict__)
    bot: type[SharpBot] = module.ExpertBot
    return bot


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("table", help="preset:players, e.g. pagat:3")
    parser.add_argument("deals", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("versions", nargs="+", type=Path, help="copies of shared/bots/expert.py")
    args = parser.parse_args(argv)
    preset, players_text = args.table.split(":")
    players = int(players_text)
    rules = PRESETS[preset]
    versions = [load_version(path) for path in args.versions]
    rng = random.Random(args.seed)
    edges: list[list[float]] = [[] for _ in versions]
    cpu = [0.0] * len(versions)
    for number in range(args.deals):
        deck = shuffled_deck(rng)
        dealer = number % players
        seeds = [rng.getrandbits(64) for _ in range(players)]
        for index, expert in enumerate(versions):
            started = time.process_time()
            edge, _ = swapped_deal(rules, players, dealer, deck, seeds, expert)
            edges[index].append(edge)
            cpu[index] += time.process_time() - started
    print(f"{args.table}, {args.deals} deals, seed {args.seed}")
    for index, path in enumerate(args.versions):
        mean, half = interval(edges[index])
        line = f"  {path!s:40} edge {mean:+.3f} ± {half:.3f}  CPU {cpu[index]:.0f} s"
        if index:
            differences = [a - b for a, b in zip(edges[index], edges[0], strict=True)]
            difference, difference_half = interval(differences)
            line += f"  against the first {difference:+.3f} ± {difference_half:.3f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
