"""`tonk-sim`: bots play hand after hand from a seed; prints tables with 95% intervals (and
pictures), or one JSON object; sweeps an option or compares rule sets on the same deals; exports
every hand; shares the hands out between processes."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from tonk.shared.bots.bots import BOT_STRATEGIES, BotError
from tonk.shared.game.rules import HouseRules, RulesError, option_named, parse_option
from tonk.shared.sim.play import (
    BATCH_SIZE,
    Batch,
    BatchRunner,
    BotFactory,
    HandSummary,
    SimResult,
    compare,
    play_batch,
    registry_bot,
    seat_bots,
    seat_stakes,
    simulate,
)

from .export import Exporter
from .text import comparison_table, pictures, result_data, result_table

EXPORT_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


class UsageError(Exception):
    """A bad command line: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every system
        return os.cpu_count() or 1


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tonk-sim",
        description="Play Tonk hands between bots and report how they ended and who won, "
        "with 95% confidence intervals.",
    )
    parser.add_argument(
        "--rules",
        default="classic",
        help="a preset (classic, black-tonk, speno, pagat) or a TOML rules file (default classic)",
    )
    parser.add_argument("--players", type=int, default=4, help="seats at the table (default 4)")
    parser.add_argument("--hands", type=int, default=1000, help="hands to play (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    parser.add_argument(
        "--bots",
        default="easy",
        help=f"each seat's bot, comma-separated, repeated to fill the table: "
        f"{', '.join(BOT_STRATEGIES)}, or module:Class for a bot of your own (default easy)",
    )
    parser.add_argument(
        "--stakes",
        default="1",
        help="the stake: one number, or one per seat, comma-separated, under stake_mode = seat "
        "(default 1)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes to play in (default: the cores there are); the results are the same "
        "for any number",
    )
    variants = parser.add_mutually_exclusive_group()
    variants.add_argument(
        "--sweep",
        metavar="OPTION=V1,V2,...",
        help="play the same deals under each value of one option, and show each value's "
        "difference from the first",
    )
    variants.add_argument(
        "--compare",
        metavar="RULES",
        action="append",
        help="play the same deals under another rule set (a preset or TOML file; may be "
        "given more than once), and show its difference from --rules",
    )
    parser.add_argument(
        "--export",
        metavar="PATH",
        help="write every hand to PATH: JSON Lines (.jsonl) or CSV (.csv)",
    )
    parser.add_argument(
        "--plot", action="store_true", help="draw hand lengths and running nets in the terminal"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


@dataclass(frozen=True, slots=True)
class Plan:
    """A checked command line: the rule sets to play (the first is the base), their labels, the
    bots, stakes, jobs and where to export."""

    args: argparse.Namespace
    variants: tuple[tuple[str, HouseRules], ...]
    bots: tuple[str, ...]
    stakes: tuple[int, ...]
    jobs: int
    export: Path | None
    sweep: tuple[str, tuple[Any, ...]] | None


def _load_rules(text: str, flag: str) -> HouseRules:
    try:
        return HouseRules.load(text)
    except RulesError as exc:
        raise UsageError(f"{flag}: {exc}" if flag != "--rules" else str(exc)) from None


def parse_args(argv: Sequence[str] | None) -> Plan:
    """The arguments, checked: raises UsageError with a one-line reason."""
    args = build_parser().parse_args(argv)
    rules = _load_rules(args.rules, "--rules")
    variants: list[tuple[str, HouseRules]] = [(rules.name, rules)]
    sweep = None
    if args.sweep is not None:
        option, equals, values = args.sweep.partition("=")
        option = option.strip()
        if not equals or not values.strip():
            raise UsageError("--sweep takes OPTION=V1,V2,... (for example deal_tonk_low=10,12,15)")
        try:
            option_named(option)
            parsed = tuple(parse_option(option, v) for v in values.split(","))
            variants = [
                (f"{option}={text.strip()}", rules.with_options({option: value}))
                for text, value in zip(values.split(","), parsed, strict=True)
            ]
        except RulesError as exc:
            raise UsageError(f"--sweep: {exc}") from None
        sweep = (option, parsed)
    for other in args.compare or ():
        label = Path(other).name if other.endswith(".toml") else other
        variants.append((label, _load_rules(other, "--compare")))
    for label, each in variants:
        if not 2 <= args.players <= each.players:
            raise UsageError(
                f"--players must be 2 to {each.players} under {label}, not {args.players}"
            )
    if args.hands < 0:
        raise UsageError(f"--hands cannot be negative, not {args.hands}")
    bots = [name.strip() for name in args.bots.split(",")]
    try:
        specs = seat_bots(bots, args.players, resolve_bot)
    except BotError as exc:
        raise UsageError(f"--bots: {exc}") from None
    try:
        numbers = [int(s) for s in args.stakes.split(",")]
        stakes = seat_stakes(rules, args.players, numbers)
        for _, each in variants:
            seat_stakes(each, args.players, numbers)
    except ValueError as exc:
        reason = str(exc) if "stake" in str(exc) else "stakes are whole numbers"
        raise UsageError(f"--stakes: {reason}") from None
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, not {jobs}")
    export = None
    if args.export is not None:
        export = Path(args.export)
        if export.suffix.lower() not in EXPORT_FORMATS:
            raise UsageError("--export: name a .jsonl (JSON Lines) or .csv file")
    return Plan(args, tuple(variants), specs, stakes, jobs, export, sweep)


# -- bots of one's own ---------------------------------------------------------------------------


def resolve_bot(spec: str) -> BotFactory:
    """A bot of the registry by name, or `module:Class`: a class (or any callable) taking a
    `random.Random` and returning a bot (see docs/simulating.md). Raises BotError."""
    if ":" not in spec:
        return registry_bot(spec)
    return _import_bot(spec)


@functools.cache
def _import_bot(spec: str) -> BotFactory:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise BotError(f"{spec!r}: give a bot as module:Class")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a module beside the command, as `python -m` finds
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise BotError(f"cannot import {module_name!r} for bot {spec!r}: {exc}") from None
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise BotError(f"module {module_name!r} has no {attribute!r}")
    if not callable(found):
        raise BotError(f"{spec!r} is not a class")
    try:
        sample = found(random.Random(0))
    except Exception as exc:
        raise BotError(f"{spec!r}(random.Random()) failed: {exc}") from None
    for method in ("observe", "choose"):
        if not callable(getattr(sample, method, None)):
            raise BotError(f"{spec!r} makes no bot: it has no {method}() method")
    factory: BotFactory = found
    return factory


# -- processes -----------------------------------------------------------------------------------


def _play_in_worker(batch: Batch) -> list[HandSummary]:
    return play_batch(batch, [resolve_bot(spec) for spec in batch.table.bots])


def process_runner(jobs: int) -> BatchRunner:
    """Plays batches in `jobs` fresh processes, yielding them in order."""

    def run(batches: Sequence[Batch]) -> Iterator[list[HandSummary]]:
        # spawn, not fork: the progress bar's thread is running in this process.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(jobs, len(batches)) or 1, mp_context=context) as pool:
            yield from pool.map(_play_in_worker, batches)

    return run


# -- running -------------------------------------------------------------------------------------


def run_plan(
    plan: Plan, progress: Callable[[int, int], None] | None = None
) -> tuple[list[SimResult], float]:
    """Play every variant on the same deals; export as they go. Returns the results and the
    seconds it took."""
    args = plan.args
    total = args.hands * len(plan.variants)
    batches = max(1, -(-args.hands // BATCH_SIZE))
    runner = process_runner(plan.jobs) if min(plan.jobs, batches) > 1 else None
    out: IO[str] | None = None
    exporter = None
    if plan.export is not None:
        out = open(plan.export, "w", encoding="utf-8", newline="")  # noqa: SIM115
        exporter = Exporter(out, EXPORT_FORMATS[plan.export.suffix.lower()], args.players)
    results = []
    start = time.perf_counter()
    try:
        for index, (label, rules) in enumerate(plan.variants):
            done_before = index * args.hands
            on_hand = None
            if exporter is not None:

                def on_hand(
                    hand: HandSummary,
                    label: str = label,
                    rules: HouseRules = rules,
                    writer: Exporter = exporter,
                ) -> None:
                    writer.write(hand.record(rules, args.players, label))

            def advance(done: int, _: int, before: int = done_before) -> None:
                if progress is not None:
                    progress(before + done, total)

            results.append(
                simulate(
                    rules,
                    args.players,
                    args.hands,
                    args.seed,
                    plan.bots,
                    stakes=plan.stakes,
                    resolve=resolve_bot,
                    runner=runner,
                    progress=advance,
                    on_hand=on_hand,
                )
            )
    finally:
        if out is not None:
            out.close()
    return results, time.perf_counter() - start


def run(argv: Sequence[str] | None = None) -> int:
    err = Console(stderr=True)
    try:
        plan = parse_args(argv)
    except UsageError as exc:
        print(f"tonk-sim: error: {exc}", file=sys.stderr)
        return 2
    args = plan.args
    try:
        if sys.stderr.isatty() and args.hands > 0:
            with Progress(
                TextColumn("playing"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("hands", total=args.hands * len(plan.variants))

                def advance(done: int, total: int) -> None:
                    bar.update(task, completed=done)

                results, seconds = run_plan(plan, advance)
        else:
            results, seconds = run_plan(plan)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        print(f"tonk-sim: error: cannot write{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        # A bot of one's own that breaks (or makes an illegal move) stops the run, said in a line.
        if not any(":" in bot for bot in plan.bots):
            raise
        print(f"tonk-sim: error: a bot failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    labels = [label for label, _ in plan.variants]
    differences = [compare(results[0], other) for other in results[1:]]
    if args.json:
        if len(results) == 1:
            data = result_data(results[0], seconds)
        else:
            data = {
                "variants": labels,
                "sweep": None
                if plan.sweep is None
                else {"option": plan.sweep[0], "values": list(plan.sweep[1])},
                "runs": [result_data(r, seconds / len(results)) for r in results],
                "differences": [
                    {"variant": label, **diff}
                    for label, diff in zip(labels[1:], differences, strict=True)
                ],
                "seconds": round(seconds, 3),
            }
        data["jobs"] = plan.jobs
        print(json.dumps(data))
    else:
        console = Console()
        if len(results) == 1:
            console.print(result_table(results[0], seconds))
        else:
            console.print(comparison_table(labels, results, differences))
            console.print(f"{args.hands * len(results):,} hands in {seconds:.2f} s")
        if args.plot and args.hands > 0:
            width = max(40, min(console.width, 120))
            colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
            print(pictures(labels, results, width, colour))
    return 0


def main() -> None:
    try:
        code = run()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`tonk-sim --json | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
