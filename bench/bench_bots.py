"""Benchmark of the bots: `expert` against `sharp` under every preset at 2, 3 and 4 players,
with 95% intervals, and the CPU time of every `sharp` and `expert` decision.

    python bench/bench_bots.py [--deals 600] [--sharp-hands 200] [--write BENCHMARKS.md]

Each deal is played twice, the seats' bots swapped (expert, sharp, expert, ... and then sharp,
expert, sharp, ...), from the same deck and dealer, so that the luck of the deal cancels and
what is left is the bots' difference. A deal's figure is the mean net per hand of its expert
seats less that of its sharp seats, over its two plays; the interval is the mean of those
figures plus or minus 1.96 standard errors. The tables' matches run in --jobs processes, each
pinned to one core where the OS allows it (a table's result does not depend on how many);
decision times are the thread's CPU time. With --write, the results replace the
"## Bots" section of the file (the rest of the file is kept).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import loadkit as lk
from tonk.shared.bots.bots import Bot, SharpBot
from tonk.shared.bots.expert import ExpertBot
from tonk.shared.game.actions import Action
from tonk.shared.game.cards import Card, shuffled_deck
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.view import Phase, SeatView
from tonk.shared.sim.play import play_hand

HEADING = "## Bots"
TABLES = [(preset, players) for preset in PRESETS for players in (2, 3, 4)]


@dataclass
class Times:
    """CPU seconds of each decision, at the start of a turn and after drawing."""

    start: list[float] = field(default_factory=list)
    play: list[float] = field(default_factory=list)

    @property
    def all(self) -> list[float]:
        return self.start + self.play


def timed(cls: type[SharpBot], times: Times) -> Callable[[random.Random], Bot]:
    """A maker of `cls` bots whose every decision's CPU time goes into `times`."""

    class Timed(cls):  # type: ignore[valid-type,misc]
        def choose(self, view: SeatView) -> Action:
            started = time.thread_time()
            action: Action = super().choose(view)
            spent = time.thread_time() - started
            (times.start if view.phase is Phase.START else times.play).append(spent)
            return action

    return Timed


@dataclass
class Match:
    preset: str
    players: int
    deals: int
    edge: float  # expert seats' net per hand less sharp seats', mean over deals
    half: float  # 95% interval half-width of `edge`
    expert: float  # an expert seat's net per hand
    expert_half: float
    cpu: float  # seconds


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The mean of `values` and its 95% interval's half-width (1.96 standard errors)."""
    return statistics.mean(values), 1.96 * statistics.stdev(values) / len(values) ** 0.5


def swapped_deal(
    rules: HouseRules,
    players: int,
    dealer: int,
    deck: list[Card],
    seeds: Sequence[int],
    expert_bot: Callable[[random.Random], Bot],
) -> tuple[float, float]:
    """One deal played twice from the same deck, dealer and bots' seeds, the seats' bots
    swapped (expert, sharp, ... then sharp, expert, ...): the expert seats' mean net per hand
    less the sharp seats', and an expert seat's net per hand, each over the two plays."""
    edge = 0.0
    mine = 0.0
    for swap in (0, 1):
        bots = [
            (expert_bot if (seat + swap) % 2 == 0 else SharpBot)(random.Random(seeds[seat]))
            for seat in range(players)
        ]
        hand = Hand(rules, players, dealer, (1,) * players, deck=deck)
        play_hand(hand, bots)
        assert hand.settlement is not None
        net = hand.settlement.net(players)
        experts = [net[s] for s in range(players) if (s + swap) % 2 == 0]
        sharps = [net[s] for s in range(players) if (s + swap) % 2 == 1]
        edge += (statistics.mean(experts) - statistics.mean(sharps)) / 2
        mine += statistics.mean(experts) / 2
    return edge, mine


def expert_against_sharp(preset: str, players: int, deals: int, seed: int, times: Times) -> Match:
    rules = PRESETS[preset]
    rng = random.Random(seed)
    expert_bot = timed(ExpertBot, times)
    edges: list[float] = []
    expert_nets: list[float] = []
    started = time.process_time()
    for number in range(deals):
        deck = shuffled_deck(rng)
        dealer = number % players
        seeds = [rng.getrandbits(64) for _ in range(players)]
        edge, mine = swapped_deal(rules, players, dealer, deck, seeds, expert_bot)
        edges.append(edge)
        expert_nets.append(mine)
    cpu = time.process_time() - started
    return Match(
        preset,
        players,
        deals,
        *interval(edges),
        *interval(expert_nets),
        cpu,
    )


def match_task(task: tuple[str, int, int, int]) -> tuple[Match, Times]:
    """One table's match in a worker process: the match and its expert decisions' times."""
    preset, players, deals, seed = task
    times = Times()
    return expert_against_sharp(preset, players, deals, seed, times), times


def pin_worker() -> None:
    """Each worker on a core of its own (the n-th worker on the n-th allowed core)."""
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        identity = multiprocessing.current_process()._identity
        index = (identity[0] - 1) if identity else 0
        os.sched_setaffinity(0, {cpus[index % len(cpus)]})


def sharp_decision_times(hands: int, seed: int) -> Times:
    """Every decision of sharp bots playing each other at every preset and 2 to 4 seats."""
    times = Times()
    sharp_bot = timed(SharpBot, times)
    rng = random.Random(seed)
    for preset, players in TABLES:
        for number in range(hands):
            bots = [sharp_bot(random.Random(rng.getrandbits(64))) for _ in range(players)]
            hand = Hand(PRESETS[preset], players, number % players, (1,) * players, rng=rng)
            play_hand(hand, bots)
    return times


def time_rows(name: str, times: Times) -> list[str]:
    rows = []
    for part, values in (("start of turn", times.start), ("after drawing", times.play)):
        rows.append(time_row(f"{name}, {part}", values))
    rows.append(time_row(f"{name}, all", times.all))
    return rows


def time_row(name: str, values: Sequence[float]) -> str:
    med, p99, top = statistics.median(values), lk.percentile(sorted(values), 99), max(values)
    line = f"| {name} | {len(values)} | {lk.ms(med)} | {lk.ms(p99)} | {lk.ms(top)} |"
    print(line)
    return line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=600, help="deals per table, each played twice")
    parser.add_argument("--sharp-hands", type=int, default=200, help="hands per table timing sharp")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--jobs", type=int, default=1, help="processes for the matches, each on its own core"
    )
    parser.add_argument(
        "--tables", help="only these tables, e.g. classic:2,speno:4 (default every preset at 2-4)"
    )
    parser.add_argument("--write", type=Path, help="update this file's Bots section")
    args = parser.parse_args(argv)
    tables = TABLES
    if args.tables:
        tables = [(t.split(":")[0], int(t.split(":")[1])) for t in args.tables.split(",")]

    pinned = f"matches in {args.jobs} process(es), each pinned to a core"
    command = "python bench/bench_bots.py " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = [
        f"Machine: {lk.machine()}; {pinned}. Measured {time.strftime('%Y-%m-%d')}.",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"`expert` against `sharp`: {args.deals} deals a table (seed {args.seed}), each played "
        "twice with the bots' seats swapped (expert, sharp, expert, ... then sharp, expert, "
        "sharp, ...) from the same deck and dealer, stake 1. *Edge*: the expert seats' mean net "
        "per hand less the sharp seats', per deal; *expert*: an expert seat's net per hand; "
        "each with its 95% interval (mean ± 1.96 standard errors over the deals). Target: the "
        "edge's interval above zero at every table.",
        "",
        "| rules | players | deals | edge | 95% interval | expert net per hand | 95% interval "
        "| above zero | CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    expert_times = Times()
    above = 0
    tasks = [
        (preset, players, args.deals, args.seed + number)
        for number, (preset, players) in enumerate(tables)
    ]
    with multiprocessing.Pool(args.jobs, initializer=pin_worker) as pool:
        results = pool.map(match_task, tasks, chunksize=1)
    for match, times in results:
        expert_times.start += times.start
        expert_times.play += times.play
        preset, players = match.preset, match.players
        low, high = match.edge - match.half, match.edge + match.half
        met = low > 0
        above += met
        line = (
            f"| {preset} | {players} | {match.deals} | {match.edge:+.3f} | "
            f"[{low:+.3f}, {high:+.3f}] | {match.expert:+.3f} | "
            f"[{match.expert - match.expert_half:+.3f}, {match.expert + match.expert_half:+.3f}] "
            f"| {'yes' if met else 'no'} | {match.cpu:.0f} s |"
        )
        print(line, flush=True)
        lines.append(line)
    edges = [match.edge for match, _ in results]
    pooled_half = sum((match.half) ** 2 for match, _ in results) ** 0.5 / len(results)
    pooled = statistics.mean(edges)
    lines += [
        "",
        f"Above zero at {above} of {len(tables)} tables. Over all {len(tables)} tables together "
        f"(the mean of their edges, the tables independent): {pooled:+.3f} "
        f"[{pooled - pooled_half:+.3f}, {pooled + pooled_half:+.3f}].",
        "",
    ]

    lk.pin_to_one_core()
    sharp_times = sharp_decision_times(args.sharp_hands, args.seed)
    lines += [
        "CPU time of one decision (the whole `choose`, legal actions included; thread CPU "
        "time, so a busy machine does not inflate it). `expert`: every decision it made in "
        "the matches above; `sharp`: every decision of sharp bots playing each other, "
        f"{args.sharp_hands} hands at each preset at 2, 3 and 4 players. Target for `expert`: "
        "p99 under 50 ms.",
        "",
        "| bot, decisions | count | median | p99 | max |",
        "|---|---|---|---|---|",
        *time_rows("expert", expert_times),
        *time_rows("sharp", sharp_times),
        "",
    ]
    section = "\n".join(lines)
    if args.write:
        lk.write_section(args.write, HEADING, section)
        print(f"wrote the {HEADING[3:]!r} section of {args.write}")
    else:
        print()
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
