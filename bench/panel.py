"""The shipped bots measured against the panel of people-like players (panel_players.py):
each bot's mean result in stakes per hand against the panel, with 95% intervals, at each
table (rules and players), and the paired differences expert less sharp and sharp less easy.

    python bench/panel.py [--deals 300] [--players 2,3,4] [--rules classic,speno]
        [--bots easy,sharp,expert] [--seed 1] [--jobs 2] [--json run.json] [--write BENCHMARKS.md]
    python bench/panel.py --from-json run.json more.json --write BENCHMARKS.md

A deal is a deck, a dealer and a line-up of players-1 panel opponents (drawn without
replacement from the panel, from the deal's own random source: the same for every bot and
rule set). It is played once for each seat the measured bot can take, the opponents keeping
their order around the table, so that the bot plays every position from the dealer; each
player's random source is seeded by the deal alone, so every bot meets the same deals, the
same opponents and the same opponents' choices until its own play differs. A deal's figure is
the bot's mean net over those seatings; a bot's result is the mean over the deals, with the
mean plus or minus 1.96 standard errors; a difference of two bots is taken deal by deal.

The deals are numbered: `--start` and `--deals` say which, so a later run can add deals to a
cell (`--cells classic:2,...`) and `--from-json` adds the runs' deals up (a deal counted once).
`--panel tuning` or `--panel held-out` plays against part of the panel only (see HELD_OUT in
panel_players.py and BENCHMARKS.md). Work is shared out over `--jobs` processes in blocks of
deals; the figures do not depend on how many.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from panel_players import HELD_OUT, PANEL, TUNING
from tonk.shared.bots.bots import BOT_STRATEGIES, Bot, make_bot
from tonk.shared.game.cards import shuffled_deck
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending
from tonk.shared.sim.play import play_hand
from tonk.shared.stats import Mean

HEADING = "## Bots against the panel: the figures"
BLOCK = 20  # deals in one unit of work
PANELS = {"all": tuple(PANEL), "tuning": TUNING, "held-out": HELD_OUT}


@dataclass(frozen=True)
class Work:
    """Deals `start` to `stop - 1` of one table, played by one bot."""

    bot: str
    preset: str
    players: int
    seed: int
    panel: str
    start: int
    stop: int


@dataclass
class DealResult:
    """One deal for one bot: its mean net over the seatings, its drops and caught drops (of
    the `players` seatings), and the line-up it met."""

    net: float
    drops: int
    caught: int
    lineup: tuple[str, ...]


def deal_setup(
    seed: int, players: int, number: int, panel: Sequence[str]
) -> tuple[list[Any], int, tuple[str, ...], list[int]]:
    """Deal `number`'s deck, dealer, line-up of opponents and players' seeds (the measured
    bot's last): from the seed, the players and the deal's number alone, so every bot and
    every rule set meets the same."""
    rng = random.Random(f"panel:{seed}:{players}:{number}")
    deck = shuffled_deck(rng)
    lineup = tuple(rng.sample(sorted(panel), players - 1))
    seeds = [rng.getrandbits(64) for _ in range(players)]
    return deck, number % players, lineup, seeds


def play_deal(
    bot: Callable[[random.Random], Bot],
    preset: str,
    players: int,
    seed: int,
    number: int,
    panel: Sequence[str],
) -> DealResult:
    """The deal played once with `bot` in each seat, the line-up around it in order."""
    rules = PRESETS[preset]
    deck, dealer, lineup, seeds = deal_setup(seed, players, number, panel)
    total = drops = caught = 0
    for mine in range(players):
        bots: list[Bot] = [bot(random.Random(seeds[-1]))] * players
        for k, name in enumerate(lineup):
            bots[(mine + 1 + k) % players] = PANEL[name](random.Random(seeds[k]))
        hand = Hand(rules, players, dealer, (1,) * players, deck=deck)
        play_hand(hand, bots)
        settlement = hand.settlement
        assert settlement is not None
        total += settlement.net(players)[mine]
        if settlement.dropper == mine:
            drops += 1
            caught += settlement.ending is Ending.DROP_CAUGHT
    return DealResult(total / players, drops, caught, lineup)


def parse_bot(spec: str) -> tuple[str, dict[str, Any]]:
    """A bot to measure: a registry name, or a variant of one with some of its numbers
    changed, `expert:DROP_WORTH=0.6+KEPT_DRAW=0.5` (what section 2's trials are run with).
    Raises ValueError for an unknown bot or number."""
    name, _, changes = spec.partition(":")
    if name not in BOT_STRATEGIES:
        raise ValueError(f"unknown bot {name!r}; the bots are {', '.join(BOT_STRATEGIES)}")
    cls = type(make_bot(name, random.Random(0)))
    overrides: dict[str, Any] = {}
    for change in split(changes.replace("+", ",")):
        attribute, _, text = change.partition("=")
        current = getattr(cls, attribute, None)
        if not attribute.isupper() or not isinstance(current, int | float) or not text:
            raise ValueError(f"{name} has no number {attribute!r} to change")
        overrides[attribute] = type(current)(float(text) if isinstance(current, float) else text)
    return name, overrides


def measured(spec: str) -> Callable[[random.Random], Bot]:
    """A maker of the bot `spec` names (see parse_bot)."""
    name, overrides = parse_bot(spec)
    if not overrides:

        def make(rng: random.Random) -> Bot:
            return make_bot(name, rng)

        return make
    cls = type(make_bot(name, random.Random(0)))
    variant: Callable[[random.Random], Bot] = type(f"{cls.__name__}Variant", (cls,), overrides)
    return variant


def bot_order(spec: str) -> tuple[int, str]:
    """Bots weakest first, each variant after the bot it changes."""
    return BOT_STRATEGIES.index(spec.partition(":")[0]), spec


def bot_pairs(bots: Sequence[str]) -> list[tuple[str, str]]:
    """The paired differences reported: expert less sharp, sharp less easy, and each variant
    less the bot it changes."""
    pairs = [(a, b) for a, b in (("expert", "sharp"), ("sharp", "easy")) if {a, b} <= set(bots)]
    for spec in bots:
        base = spec.partition(":")[0]
        if spec != base and base in bots:
            pairs.append((spec, base))
    return pairs


def run_work(work: Work) -> tuple[Work, list[DealResult], float]:
    """A block of deals in a worker process: each deal's result, and the CPU seconds."""
    started = time.process_time()
    bot = measured(work.bot)
    panel = PANELS[work.panel]
    results = [
        play_deal(bot, work.preset, work.players, work.seed, number, panel)
        for number in range(work.start, work.stop)
    ]
    return work, results, time.process_time() - started


# -- adding up -----------------------------------------------------------------------------------


@dataclass
class Cell:
    """One table's deals, by number, for each bot, and the CPU seconds spent on each bot."""

    deals: dict[str, dict[int, DealResult]] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)


Cells = dict[tuple[str, int], Cell]


def add(cells: Cells, work: Work, results: Sequence[DealResult], cpu: float) -> None:
    cell = cells.setdefault((work.preset, work.players), Cell())
    deals = cell.deals.setdefault(work.bot, {})
    for number, result in zip(range(work.start, work.stop), results, strict=True):
        deals[number] = result
    cell.cpu[work.bot] = cell.cpu.get(work.bot, 0.0) + cpu


def to_json(cells: Cells, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        **meta,
        "cells": [
            {
                "rules": preset,
                "players": players,
                "cpu": cell.cpu,
                "bots": {
                    bot: {
                        str(number): [r.net, r.drops, r.caught, list(r.lineup)]
                        for number, r in sorted(deals.items())
                    }
                    for bot, deals in cell.deals.items()
                },
            }
            for (preset, players), cell in cells.items()
        ],
    }


def from_json(data: dict[str, Any], cells: Cells) -> None:
    for item in data["cells"]:
        cell = cells.setdefault((item["rules"], item["players"]), Cell())
        for bot, deals in item["bots"].items():
            found = cell.deals.setdefault(bot, {})
            for number, (net, drops, caught, lineup) in deals.items():
                found[int(number)] = DealResult(net, drops, caught, tuple(lineup))
        for bot, cpu in item["cpu"].items():
            cell.cpu[bot] = cell.cpu.get(bot, 0.0) + cpu


def interval(values: Iterable[float]) -> tuple[int, float, float, float]:
    """(how many, mean, low, high) with the 95% interval."""
    mean = Mean()
    mean.extend(values)
    ci = mean.ci95()
    value = mean.mean or 0.0
    low, high = ci if ci is not None else (value, value)
    return mean.n, value, low, high


def figure(values: Iterable[float]) -> str:
    n, value, low, high = interval(values)
    return f"{value:+.3f} [{low:+.3f}, {high:+.3f}]" if n else "-"


def paired(cell: Cell, a: str, b: str) -> list[float]:
    """`a` less `b`, deal by deal, over the deals both played."""
    mine, theirs = cell.deals.get(a, {}), cell.deals.get(b, {})
    return [mine[n].net - theirs[n].net for n in sorted(mine.keys() & theirs.keys())]


def table_lines(cells: Cells, bots: Sequence[str]) -> list[str]:
    """The results table: each bot's net per hand, the paired differences, expert's drops."""
    pairs = bot_pairs(bots)
    header = ["rules", "players", "deals"]
    header += [f"{bot} per hand [95%]" for bot in bots]
    header += [f"{a} - {b} [95%]" for a, b in pairs]
    last = bots[-1]
    header += [f"{last} drops / caught"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    order = {preset: i for i, preset in enumerate(PRESETS)}
    for preset, players in sorted(cells, key=lambda key: (order[key[0]], key[1])):
        cell = cells[preset, players]
        counts = sorted({len(cell.deals.get(bot, {})) for bot in bots})
        row = [preset, str(players), "/".join(str(c) for c in counts)]
        row += [figure(r.net for r in cell.deals.get(bot, {}).values()) for bot in bots]
        row += [figure(paired(cell, a, b)) for a, b in pairs]
        results = cell.deals.get(last, {}).values()
        hands = players * len(results)
        if hands:
            drops = sum(r.drops for r in results) / hands
            caught = sum(r.caught for r in results) / hands
            row.append(f"{drops:.0%} / {caught:.0%}")
        else:
            row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def by_opponent_lines(cells: Cells, a: str, b: str) -> list[str]:
    """`a` less `b` over every table, split by the panel player at the table (a deal counts
    for each of its opponents)."""
    diffs: dict[str, list[float]] = {}
    for cell in cells.values():
        mine, theirs = cell.deals.get(a, {}), cell.deals.get(b, {})
        for number in mine.keys() & theirs.keys():
            for name in mine[number].lineup:
                diffs.setdefault(name, []).append(mine[number].net - theirs[number].net)
    lines = [f"| opponent at the table | deals | {a} - {b} [95%] |", "|---|---|---|"]
    for name in PANEL:
        if name in diffs:
            lines.append(f"| {name} | {len(diffs[name])} | {figure(diffs[name])} |")
    return lines


def overall(cells: Cells, a: str, b: str) -> str:
    """The mean of the tables' paired differences, its interval from theirs (independent)."""
    means, halves = [], []
    for cell in cells.values():
        n, value, low, high = interval(paired(cell, a, b))
        if n:
            means.append(value)
            halves.append((high - low) / 2)
    if not means:
        return "-"
    mean = sum(means) / len(means)
    half = sum(h * h for h in halves) ** 0.5 / len(means)
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}] over {len(means)} tables"


def report(cells: Cells, bots: Sequence[str], meta: dict[str, Any]) -> list[str]:
    cpu = sum(sum(cell.cpu.values()) for cell in cells.values())
    lines = [
        f"Machine: {lk.machine()}. Seeds: {', '.join(str(s) for s in meta['seeds'])}; "
        f"panel: {meta['panel']}. CPU in all: {cpu:.0f} s.",
        "",
        *table_lines(cells, bots),
        "",
    ]
    pairs = bot_pairs(bots)
    for a, b in pairs:
        lines.append(f"{a} - {b}, the tables together: {overall(cells, a, b)}.")
    lines.append("")
    for a, b in pairs:
        if (a, b) != ("sharp", "easy"):  # (plain enough from the table)
            lines += [*by_opponent_lines(cells, a, b), ""]
    return lines


# -- running -------------------------------------------------------------------------------------


def works(
    bots: Sequence[str],
    tables: Sequence[tuple[str, int]],
    seed: int,
    panel: str,
    start: int,
    deals: int,
) -> list[Work]:
    """The blocks of work, the slow bot's first (so the processes finish together)."""
    order = sorted(bots, key=bot_order, reverse=True)
    return [
        Work(bot, preset, players, seed, panel, first, min(first + BLOCK, start + deals))
        for bot in order
        for preset, players in tables
        for first in range(start, start + deals, BLOCK)
    ]


def split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deals", type=int, default=300, help="deals a table (each bot)")
    parser.add_argument("--start", type=int, default=0, help="the first deal's number")
    parser.add_argument("--players", default="2,3,4", help="table sizes, e.g. 2,3,4")
    parser.add_argument("--rules", default=",".join(PRESETS), help="presets, e.g. classic,speno")
    parser.add_argument("--cells", help="only these tables, e.g. classic:2,speno:4")
    parser.add_argument(
        "--bots",
        help="the bots measured (default easy,sharp,expert; with --from-json, those saved); "
        "a variant changes numbers of one: expert:DROP_WORTH=0.6+KEPT_DRAW=0.5",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--panel", choices=tuple(PANELS), default="all")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--json", type=Path, help="save every deal's figures here")
    parser.add_argument("--from-json", type=Path, nargs="+", help="report saved runs instead")
    parser.add_argument("--write", type=Path, help="replace this file's panel section")
    args = parser.parse_args(argv)

    bots = [] if args.bots is None else args.bots.split(",")
    for spec in bots:
        try:
            parse_bot(spec)
        except ValueError as exc:
            parser.error(str(exc))
    cells: Cells = {}
    if args.from_json:
        seeds: set[int] = set()
        panels: set[str] = set()
        for path in args.from_json:
            data = json.loads(path.read_text())
            from_json(data, cells)
            seeds.update(data["seeds"])
            panels.add(data["panel"])
        meta = {"seeds": sorted(seeds), "panel": ", ".join(sorted(panels))}
        bots = bots or sorted({bot for cell in cells.values() for bot in cell.deals})
    else:
        if args.cells:
            tables = [(c.split(":")[0], int(c.split(":")[1])) for c in split(args.cells)]
        else:
            tables = [(p, int(n)) for p in split(args.rules) for n in split(args.players)]
        for preset, players in tables:
            if preset not in PRESETS:
                parser.error(f"unknown rules {preset!r}; the presets are {', '.join(PRESETS)}")
            if not 2 <= players <= PRESETS[preset].players:
                parser.error(f"{preset} seats 2 to {PRESETS[preset].players}, not {players}")
            if players - 1 > len(PANELS[args.panel]):
                parser.error(
                    f"the {args.panel} panel has {len(PANELS[args.panel])} players: too few"
                    f" for {players - 1} opponents at {preset}:{players}"
                )
        if args.deals < 2:
            parser.error("at least 2 deals a table (an interval needs two)")
        meta = {"seeds": [args.seed], "panel": args.panel}
        bots = bots or ["easy", "sharp", "expert"]
        todo = works(bots, tables, args.seed, args.panel, args.start, args.deals)
        with multiprocessing.Pool(max(1, args.jobs)) as pool:
            for done, (work, results, cpu) in enumerate(pool.imap_unordered(run_work, todo), 1):
                add(cells, work, results, cpu)
                if args.json:  # (after every block: a run cut short keeps what it played)
                    args.json.write_text(json.dumps(to_json(cells, meta)))
                print(
                    f"[{done}/{len(todo)}] {work.bot} {work.preset}:{work.players} "
                    f"deals {work.start}-{work.stop - 1} {cpu:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    bots.sort(key=bot_order)
    lines = report(cells, bots, meta)
    print("\n".join([HEADING, "", *lines]))
    if args.write:
        lk.write_section(args.write, HEADING, "\n".join(lines))
        print(f"wrote the {HEADING[3:]!r} section of {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
