"""Benchmark of the game core: hands per second between `easy` bots (4 seats, classic), the
cost of one `sharp` decision, and how `sharp` does against `easy`.

    python bench/bench_core.py [--hands 20000] [--match 10000] [--write BENCHMARKS.md]

Runs in one process pinned to one core where the OS allows it. With --write, the results
replace the "## Game core" section of the file (the rest of the file is kept).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from tonk.shared.bots.bots import SharpBot, make_bot
from tonk.shared.game.actions import Action
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.view import SeatView
from tonk.shared.sim.play import play_hand, simulate

HEADING = "## Game core"


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def machine() -> str:
    cpu = lk.cpu_name(platform.processor() or platform.machine())
    return (
        f"{cpu}, nproc {os.cpu_count()}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.release()}"
    )


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


def easy_breakdown(hands: int) -> dict[str, float]:
    """Where an easy hand's time goes, in microseconds per hand: the same loop as
    `play_hand`, each part timed by the wall clock, the shares then scaled to the CPU time the
    whole loop took (so that a busy shared machine does not inflate them)."""
    clock = time.perf_counter
    cpu_start = time.process_time()
    rules = PRESETS["classic"]
    rng = random.Random(5)
    bots = [make_bot("easy", random.Random(seat)) for seat in range(4)]
    parts = dict.fromkeys(("deal", "view", "legal", "bot", "apply", "observe"), 0.0)
    actions = 0
    for number in range(hands):
        t0 = clock()
        hand = Hand(rules, 4, number % 4, (1,), rng=rng)
        parts["deal"] += clock() - t0
        for seat, bot in enumerate(bots):
            bot.observe(hand.events_for(seat))
        while not hand.ended:
            seat = hand.turn
            t0 = clock()
            view = hand.view(seat)
            t1 = clock()
            view.legal()
            t2 = clock()
            action = bots[seat].choose(view)  # asks view.legal() again: subtract it below
            t3 = clock()
            events = hand.apply(action)
            t4 = clock()
            hidden = [event.for_seat(None) for event in events]
            for other, bot in enumerate(bots):
                bot.observe(events if other == seat else hidden)
            t5 = clock()
            actions += 1
            parts["view"] += t1 - t0
            parts["legal"] += t2 - t1
            parts["bot"] += (t3 - t2) - (t2 - t1)
            parts["apply"] += t4 - t3
            parts["observe"] += t5 - t4
    cpu = time.process_time() - cpu_start
    scale = cpu / sum(parts.values())
    per_hand = {name: total * scale / hands * 1e6 for name, total in parts.items()}
    per_hand["actions"] = actions / hands
    return per_hand


@dataclass
class DecisionTimes:
    start: list[float]
    play: list[float]

    @property
    def all(self) -> list[float]:
        return sorted(self.start + self.play)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sharp_decision_times(hands: int) -> DecisionTimes:
    """Time every decision of two sharp bots playing two easy bots (classic, 4 seats): the
    whole `choose`, legal actions included, in CPU time (the machine may be shared)."""
    times = DecisionTimes([], [])

    class TimedSharp(SharpBot):
        def choose(self, view: SeatView) -> Action:
            started = time.thread_time()
            action = super().choose(view)
            spent = time.thread_time() - started
            (times.start if view.phase.value == "start" else times.play).append(spent)
            return action

    rng = random.Random(99)
    bots = [
        TimedSharp(random.Random(0)),
        make_bot("easy", random.Random(1)),
        TimedSharp(random.Random(2)),
        make_bot("easy", random.Random(3)),
    ]
    for number in range(hands):
        play_hand(Hand(PRESETS["classic"], 4, number % 4, (1,), rng=rng), bots)
    return times


def sharp_against_easy(hands: int, preset: str, players: int) -> tuple[float, float, float]:
    """Net stakes per seat per hand for sharp and for easy, and the hands per second."""
    start = time.process_time()
    result = simulate(PRESETS[preset], players, hands, 2024, ["sharp", "easy"])
    rate = hands / (time.process_time() - start)
    sharp = [net for bot, net in zip(result.bots, result.net, strict=True) if bot == "sharp"]
    easy = [net for bot, net in zip(result.bots, result.net, strict=True) if bot == "easy"]
    return sum(sharp) / len(sharp) / hands, sum(easy) / len(easy) / hands, rate


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="easy hands per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of easy hands")
    parser.add_argument("--decision-hands", type=int, default=400, help="hands timing sharp")
    parser.add_argument("--match", type=int, default=10000, help="sharp against easy hands")
    parser.add_argument("--write", type=Path, help="update this file's Game core section")
    args = parser.parse_args(argv)

    pinned = pin_to_one_core()
    command = "python bench/bench_core.py " + " ".join(sys.argv[1:] if argv is None else list(argv))
    lines = [
        HEADING,
        "",
        f"Machine: {machine()}; {pinned}.",
        "",
        f"Command: `{command.strip()}`",
        "",
    ]

    best, median, actions = easy_hands_per_second(args.hands, args.repeats)
    lines += [
        "Hands per second between 4 `easy` bots under `classic`, by process CPU time (one "
        "process, one core; each hand dealt, played through `SeatView`s and `legal()`, "
        "settled and put in the ledger):",
        "",
        "| runs | hands per run | best | median | actions per hand |",
        "|---|---|---|---|---|",
        f"| {args.repeats} | {args.hands} | {best:,.0f} | {median:,.0f} | {actions:.1f} |",
        "",
    ]
    print(f"easy hands/s: best {best:,.0f}, median {median:,.0f} ({actions:.1f} actions/hand)")
    parts = easy_breakdown(min(args.hands, 5000))
    per_action = parts.pop("actions")
    lines += [
        f"Where an `easy` hand's CPU time goes ({per_action:.1f} actions a hand; microseconds "
        "per hand, each part timed inside the simulator's loop; the timers add to every part, "
        f"so the sum is more than the {1e6 / best:.0f} microseconds an untimed hand takes):",
        "",
        "| deal | build the seat's view | legal actions | bot's own choice | apply the action "
        "| bots observe the events | sum |",
        "|---|---|---|---|---|---|---|",
        "| "
        + " | ".join(f"{value:.0f}" for value in parts.values())
        + f" | {sum(parts.values()):.0f} |",
        "",
    ]
    print("easy hand breakdown (us per hand):", {k: round(v) for k, v in parts.items()})
    shares = {name: value / sum(parts.values()) for name, value in parts.items()}
    lines += [
        f"The target is 5,000 hands per second; this is {best / 5000:.0%} of it, about "
        f"{1e6 / best / actions:.1f} microseconds an action. "
        "Nothing was skipped to get there: every action still builds a frozen `SeatView` for "
        "the seat to act, asks it for its `LegalActions`, lets the bot choose from them, "
        "applies the action (the hand checks it again and records its events) and shows the "
        "events to all four bots. What took the hand from 2,470 hands per second (each change"
        " measured by CPU time and by instructions under valgrind): frozen values the hand "
        "makes on every action (views, events) built field by field in a writable subclass "
        "that is then given the frozen class (`_speedups.new_seat_view`, `new_event`) instead "
        "of through a frozen dataclass's `__init__`, which pays `object.__setattr__` per field; "
        "phases and spread kinds read from module names, as CPython 3.11 looks every "
        "`Phase.START` up through the `__getattr__` hook of Enum's metaclass, and fewer "
        "properties and class attributes read on every action (3.11 does not specialize those "
        "reads); values that repeat (turn events, the hidden copies of private events, the "
        "bots' draws and discards) made once; `find_spreads` reading the hand as bits; a suit "
        "hashed by identity in C rather than by Enum's Python `__hash__`; the deck shuffled "
        "without `random.shuffle`'s Python call per card (`_speedups.shuffled_deck`: the same "
        "order, held to it by a test). Each trick was measured alone and those that pay are "
        "kept, typed, in one private module, `shared/_speedups.py` (the suit's hash in "
        'cards.py), so that the modules of the rules read like the rules (section "Speed '
        'tricks, one at a time"). '
        "What limits it now is CPython's cost per step, spread evenly: "
        f"applying actions {shares['apply']:.0%}, legal actions {shares['legal']:.0%}, "
        f"showing events to the bots {shares['observe']:.0%}, building views "
        f"{shares['view']:.0%}, the bot's own choice {shares['bot']:.0%}, the deal "
        f"{shares['deal']:.0%} (the table above). "
        "Much more would take fewer Python steps an action than the bot API (a view, "
        "`legal()`, `choose`, `apply`, and `observe` for every bot) leaves; the profile has "
        "no single cost left to remove.",
        "",
    ]

    times = sharp_decision_times(args.decision_hands)
    rows = [("start of turn", times.start), ("after drawing", times.play), ("all", times.all)]
    lines += [
        f"CPU cost of one `sharp` decision (its whole `choose`, legal actions included), from "
        f"{args.decision_hands} hands of 2 `sharp` against 2 `easy` under `classic`:",
        "",
        "| decisions | count | median | p99 | max |",
        "|---|---|---|---|---|",
    ]
    for name, values in rows:
        med, p99, top = statistics.median(values), percentile(values, 0.99), max(values)
        lines.append(f"| {name} | {len(values)} | {ms(med)} | {ms(p99)} | {ms(top)} |")
        print(f"sharp {name}: n={len(values)} median {ms(med)} p99 {ms(p99)} max {ms(top)}")
    lines.append("")

    if args.match:
        lines += [
            f"`sharp` against `easy` ({args.match} hands, seed 2024, seats alternating "
            "sharp, easy, ...): net stakes per seat per hand (stake 1).",
            "",
            "| rules | players | sharp | easy | hands/s |",
            "|---|---|---|---|---|",
        ]
        for preset, players in (("classic", 4), ("speno", 5), ("classic", 2)):
            sharp, easy, rate = sharp_against_easy(args.match, preset, players)
            lines.append(f"| {preset} | {players} | {sharp:+.3f} | {easy:+.3f} | {rate:,.0f} |")
            print(f"{preset} x{players}: sharp {sharp:+.3f} easy {easy:+.3f} per seat per hand")
        lines.append("")

    section = "\n".join(lines)
    if args.write:
        write_section(args.write, section)
        print(f"wrote the {HEADING[3:]!r} section of {args.write}")
    else:
        print()
        print(section)
    return 0


def write_section(path: Path, section: str, heading: str = HEADING) -> None:
    """Replace the `heading` section of `path` (or add it), keeping every other section."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        new = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        kept_after = lines[end:]
        new = "\n".join([*lines[:start], *section.rstrip("\n").splitlines()])
        if kept_after:
            new += "\n\n" + "\n".join(kept_after)
        new += "\n"
    path.write_text(new)


if __name__ == "__main__":
    sys.exit(main())
