"""`tonk-sim`: bots play hand after hand from a seed; prints tables with 95% intervals (and
pictures), or one JSON object; sweeps an option or compares rule sets on the same deals; exports
every hand; shares the hands out between processes."""

from __future__ import annotations

import argparse
import csv
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
from rich.table import Table
from tonk.shared.bots import BOT_STRATEGIES, BotError
from tonk.shared.rules import HouseRules, RulesError, option_named, parse_option
from tonk.shared.settlement import Ending
from tonk.shared.sim import (
    BATCH_SIZE,
    TONK_KINDS,
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
from tonk.shared.words import plural

ENDING_LABELS = {
    Ending.DEAL_TONK.value: "tonk on the deal",
    Ending.VOID.value: "void (several deal tonks)",
    Ending.TONK_OUT.value: "tonk out",
    Ending.OUT_ON_DISCARD.value: "out on a discard",
    Ending.DROP_WON.value: "drop won",
    Ending.DROP_CAUGHT.value: "drop caught",
    Ending.STOCK_OUT.value: "stock out",
}
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
    `random.Random` and returning a bot (see the README). Raises BotError."""
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


# -- the export ----------------------------------------------------------------------------------


def csv_columns(players: int) -> list[str]:
    seats = range(players)
    return [
        "variant", "hand", "dealer", "multiplier",
        *(f"deal_{s}" for s in seats), "up_card", "ending", "tonk", "winners", "dropper",
        "caught", *(f"count_{s}" for s in seats), "payments", *(f"net_{s}" for s in seats),
        "turns", "drop_turn", "actions", "stock_left",
    ]  # fmt: skip


def csv_row(record: dict[str, Any]) -> dict[str, str]:
    """A hand's record as a CSV row: lists of seats space-separated, payments as
    `payer>payee:amount`, nothing for None."""

    def cell(value: Any) -> str:
        return "" if value is None else str(value)

    row = {
        key: cell(record[key])
        for key in (
            "variant", "hand", "dealer", "multiplier", "up_card", "ending", "tonk", "dropper",
            "caught", "turns", "drop_turn", "actions", "stock_left",
        )
    }  # fmt: skip
    row["winners"] = " ".join(map(str, record["winners"]))
    row["payments"] = " ".join(f"{a}>{b}:{n}" for a, b, n in record["payments"])
    for seat, (cards, count, net) in enumerate(
        zip(record["deal"], record["counts"], record["net"], strict=True)
    ):
        row[f"deal_{seat}"] = cards
        row[f"count_{seat}"] = cell(count)
        row[f"net_{seat}"] = str(net)
    return row


def record_from_csv(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row read back as the hand's record."""

    def number(text: str) -> int | None:
        return None if text == "" else int(text)

    players = sum(1 for key in row if key.startswith("deal_"))
    payments = []
    for item in row["payments"].split():
        seats, _, amount = item.partition(":")
        payer, _, payee = seats.partition(">")
        payments.append([int(payer), int(payee), int(amount)])
    return {
        "variant": row["variant"],
        "hand": int(row["hand"]),
        "dealer": int(row["dealer"]),
        "multiplier": int(row["multiplier"]),
        "deal": [row[f"deal_{s}"] for s in range(players)],
        "up_card": row["up_card"],
        "ending": row["ending"],
        "tonk": row["tonk"] or None,
        "winners": [int(w) for w in row["winners"].split()],
        "dropper": number(row["dropper"]),
        "caught": number(row["caught"]),
        "counts": [number(row[f"count_{s}"]) for s in range(players)],
        "payments": payments,
        "net": [int(row[f"net_{s}"]) for s in range(players)],
        "turns": int(row["turns"]),
        "drop_turn": number(row["drop_turn"]),
        "actions": int(row["actions"]),
        "stock_left": int(row["stock_left"]),
    }


class Exporter:
    """Writes each hand as it is played, as JSON Lines or CSV."""

    def __init__(self, out: IO[str], kind: str, players: int) -> None:
        self.out = out
        self.kind = kind
        self.writer: csv.DictWriter[str] | None = None
        if kind == "csv":
            self.writer = csv.DictWriter(out, fieldnames=csv_columns(players))
            self.writer.writeheader()

    def write(self, record: dict[str, Any]) -> None:
        if self.writer is not None:
            self.writer.writerow(csv_row(record))
        else:
            self.out.write(json.dumps(record, separators=(",", ":")) + "\n")


# -- reports -------------------------------------------------------------------------------------


def result_data(result: SimResult, seconds: float) -> dict[str, Any]:
    """The JSON report: the simulation's result plus how fast it ran."""
    data = result.to_dict()
    data["stakes"] = list(result.stakes)
    data["seconds"] = round(seconds, 3)
    data["hands_per_second"] = round(result.hands / seconds, 1) if seconds > 0 else None
    return data


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _ci_pct(ci: list[float] | None) -> str:
    return "-" if ci is None else f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f}%"


def _ci(ci: list[float] | None, places: int = 2) -> str:
    return "-" if ci is None else f"{ci[0]:+.{places}f} to {ci[1]:+.{places}f}"


def _signed(value: float | None, places: int = 3) -> str:
    return "-" if value is None else f"{value:+.{places}f}"


def result_table(result: SimResult, seconds: float) -> Table:
    data = result.to_dict()
    endings = Table(
        title=f"{plural(result.hands, 'hand')} of {result.rules.name}, {result.players} players, "
        f"seed {result.seed}"
    )
    endings.add_column("hands ended by")
    endings.add_column("hands", justify="right")
    endings.add_column("share", justify="right")
    endings.add_column("95% CI", justify="right")
    endings.add_column("stakes paid", justify="right")
    for key, label in ENDING_LABELS.items():
        rate = data["ending_rates"][key]
        endings.add_row(
            label,
            str(rate["hands"]),
            _pct(rate["rate"]),
            _ci_pct(rate["ci95"]),
            str(data["money"][key]["stakes"]),
        )
    inside = Table(title="inside the endings")
    inside.add_column("")
    inside.add_column("hands", justify="right")
    inside.add_column("share", justify="right")
    inside.add_column("95% CI", justify="right")
    for kind in TONK_KINDS:
        rate = data["deal_tonks"][kind]
        label = "several tonks on the deal" if kind == "several" else f"deal tonk, {kind}"
        inside.add_row(label, str(rate["hands"]), _pct(rate["rate"]), _ci_pct(rate["ci95"]))
    for caught, rate in data["caught_by"].items():
        inside.add_row(
            f"drop caught by {caught}",
            str(rate["hands"]),
            _pct(rate["rate"]),
            _ci_pct(rate["ci95"]),
        )
    low = data["stock_low"]
    inside.add_row(
        f"stock under {low['below']} cards at the end",
        str(low["hands"]),
        _pct(low["rate"]),
        _ci_pct(low["ci95"]),
    )
    seats = Table(title="seats")
    for name in (
        "seat",
        "bot",
        "stake",
        "net stakes",
        "per hand",
        "95% CI",
        "wins",
        "win rate",
    ):
        seats.add_column(name, justify="left" if name == "bot" else "right")
    for seat in data["seats"]:
        seats.add_row(
            str(seat["seat"]),
            seat["bot"],
            str(seat["stake"]),
            f"{seat['net']:+d}",
            _signed(seat["net_per_hand"]),
            _ci(seat["ci95"]),
            str(seat["wins"]),
            _pct(seat["win_rate"]),
        )
    positions = Table(title="by position from the dealer")
    for name in ("position", "net stakes", "per hand", "95% CI", "win rate", "95% CI"):
        positions.add_column(name, justify="left" if name == "position" else "right")
    for position in data["by_position"]:
        positions.add_row(
            position["label"],
            f"{position['net']:+d}",
            _signed(position["net_per_hand"]),
            _ci(position["ci95"]),
            _pct(position["win_rate"]),
            _ci_pct(position["win_ci95"]),
        )
    length = Table(title="turns in a hand")
    for name in ("", "mean", "95% CI", "p10", "p50", "p90", "p99", "max"):
        length.add_column(name, justify="left" if not name else "right")
    for label, key in (("hand ends on turn", "hand_turns"), ("drop on turn", "drop_turns")):
        d = data[key]
        mean = "-" if d["mean"] is None else f"{d['mean']:.2f}"
        ci = "-" if d["ci95"] is None else f"{d['ci95'][0]:.2f} to {d['ci95'][1]:.2f}"
        length.add_row(label, mean, ci, *(str(d[p]) for p in ("p10", "p50", "p90", "p99", "max")))
    speed = f"{result.hands / seconds:,.0f}" if seconds > 0 else "-"
    outer = Table.grid(padding=(1, 0))
    for part in (endings, inside, seats, positions, length):
        outer.add_row(part)
    outer.add_row(f"{speed} hands per second ({result.actions:,} actions in {seconds:.2f} s)")
    return outer


def comparison_table(
    labels: Sequence[str], results: Sequence[SimResult], differences: Sequence[dict[str, Any]]
) -> Table:
    """Each variant's figures, and each one's difference from the first with its interval."""
    base = results[0]
    table = Table(
        title=f"{base.hands} hands, {base.players} players, seed {base.seed}, the same deals "
        f"under each rule set:\ndifferences from {labels[0]}, ± the 95% interval "
        "(endings in percentage points)"
    )
    table.add_column("")
    table.add_column(labels[0], justify="right")
    for label in labels[1:]:
        table.add_column(label, justify="right")
        table.add_column("difference", justify="right", no_wrap=True)
    data = [r.to_dict() for r in results]

    def row(label: str, values: list[str], diffs: list[dict[str, Any]], scale: float) -> None:
        cells = [values[0]]
        for value, diff in zip(values[1:], diffs, strict=True):
            ci = diff["ci95"]
            if ci is None:
                shown = "-"
            else:
                half = scale * (ci[1] - ci[0]) / 2
                shown = f"{scale * diff['difference']:+.2f} ± {half:.2f}"
            cells += [value, shown]
        table.add_row(label, *cells)

    for ending, label in ENDING_LABELS.items():
        row(
            label,
            [_pct(d["ending_rates"][ending]["rate"]) for d in data],
            [diff["endings"][ending] for diff in differences],
            100,
        )
    for seat in range(base.players):
        row(
            f"net/hand, seat {seat}",
            [_signed(d["seats"][seat]["net_per_hand"]) for d in data],
            [diff["seats"][seat]["net_per_hand"] for diff in differences],
            1,
        )
    for position in range(base.players):
        label = data[0]["by_position"][position]["label"].split(" (")[0]
        row(
            f"net/hand, {label}",
            [_signed(d["by_position"][position]["net_per_hand"]) for d in data],
            [diff["by_position"][position]["net_per_hand"] for diff in differences],
            1,
        )
    row(
        "turns in a hand",
        [
            "-" if d["hand_turns"]["mean"] is None else f"{d['hand_turns']['mean']:.2f}"
            for d in data
        ],
        [diff["hand_turns"] for diff in differences],
        1,
    )
    return table


def pictures(labels: Sequence[str], results: Sequence[SimResult], width: int, color: bool) -> str:
    """The distribution of hand lengths and each seat's running net, drawn by plotext."""
    import plotext  # only when asked for: it reads the terminal when imported

    figure = plotext.figure
    out = []
    figure.clear()
    figure.plot_size(width, 15)
    if len(results) == 1:
        counts = results[0].tally.turns
        turns = sorted(counts)
        figure.title("hands by the turn they ended on (0: a tonk on the deal)")
        figure.draw(figure.bar(turns, [counts[t] for t in turns]))
    else:
        figure.title("share of hands by the turn they ended on")
        for label, result in zip(labels, results, strict=True):
            counts = result.tally.turns
            turns = sorted(counts)
            signal = figure.signal(turns, [counts[t] / max(1, result.hands) for t in turns])
            signal.lines()
            signal.label(label)
            figure.draw(signal)
    figure.label("turns", axis="x")
    out.append(figure.build().string(colorless=not color))
    result = results[0]
    figure.clear()
    figure.plot_size(width, 15)
    figure.title(f"each seat's running net, stakes ({labels[0]})")
    step = max(1, result.hands // 400)
    for seat in range(result.players):
        series = result.tally.running_net(seat)
        xs = list(range(0, len(series), step))
        signal = figure.signal(xs, [series[x] for x in xs])
        signal.lines()
        signal.label(f"seat {seat} ({result.bots[seat]})")
        figure.draw(signal)
    figure.label("hands", axis="x")
    out.append(figure.build().string(colorless=not color))
    return "\n".join(out)


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
            print(pictures(labels, results, width, sys.stdout.isatty()))
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
