"""`tonk-sim`: bots play hand after hand from a seed; prints a table, or one JSON object."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from tonk.shared.bots import BOT_STRATEGIES, BotError
from tonk.shared.rules import HouseRules, RulesError
from tonk.shared.settlement import Ending
from tonk.shared.sim import SimResult, seat_bots, simulate
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


class UsageError(Exception):
    """A bad command line: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tonk-sim",
        description="Play Tonk hands between bots and report how they ended and who won.",
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
        help=f"each seat's bot, comma-separated, repeated to fill the table "
        f"({', '.join(BOT_STRATEGIES)}; default easy)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, HouseRules, list[str]]:
    """The arguments, checked: raises UsageError with a one-line reason."""
    args = build_parser().parse_args(argv)
    try:
        rules = HouseRules.load(args.rules)
    except RulesError as exc:
        raise UsageError(str(exc)) from None
    if not 2 <= args.players <= rules.players:
        raise UsageError(
            f"--players must be 2 to {rules.players} under {rules.name}, not {args.players}"
        )
    if args.hands < 0:
        raise UsageError(f"--hands cannot be negative, not {args.hands}")
    bots = [name.strip() for name in args.bots.split(",")]
    try:
        seat_bots(bots, args.players)
    except BotError as exc:
        raise UsageError(f"--bots: {exc}") from None
    return args, rules, bots


def result_data(result: SimResult, seconds: float) -> dict[str, Any]:
    """The JSON report: the simulation's result plus how fast it ran."""
    data = result.to_dict()
    data["seconds"] = round(seconds, 3)
    data["hands_per_second"] = round(result.hands / seconds, 1) if seconds > 0 else None
    return data


def result_table(result: SimResult, seconds: float) -> Table:
    table = Table(
        title=f"{plural(result.hands, 'hand')} of {result.rules.name}, {result.players} players, "
        f"seed {result.seed}"
    )
    table.add_column("hands ended by")
    table.add_column("hands", justify="right")
    table.add_column("share", justify="right")
    for key, label in ENDING_LABELS.items():
        n = result.endings[key]
        share = f"{100 * n / result.hands:.1f}%" if result.hands else "-"
        table.add_row(label, str(n), share)
    seats = Table(show_edge=True)
    seats.add_column("seat", justify="right")
    seats.add_column("bot")
    seats.add_column("net stakes", justify="right")
    seats.add_column("per hand", justify="right")
    seats.add_column("wins", justify="right")
    for seat, (bot, net, wins) in enumerate(zip(result.bots, result.net, result.wins, strict=True)):
        per_hand = f"{net / result.hands:+.3f}" if result.hands else "-"
        seats.add_row(str(seat), bot, f"{net:+d}", per_hand, str(wins))
    speed = f"{result.hands / seconds:,.0f}" if seconds > 0 else "-"
    outer = Table.grid(padding=(1, 0))
    outer.add_row(table)
    outer.add_row(seats)
    outer.add_row(f"{speed} hands per second ({result.actions:,} actions in {seconds:.2f} s)")
    return outer


def run(argv: Sequence[str] | None = None) -> int:
    err = Console(stderr=True)
    try:
        args, rules, bots = parse_args(argv)
    except UsageError as exc:
        print(f"tonk-sim: error: {exc}", file=sys.stderr)
        return 2
    show_progress = sys.stderr.isatty() and args.hands > 0
    start = time.perf_counter()
    if show_progress:
        with Progress(
            TextColumn("playing"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("hands", total=args.hands)

            def advance(done: int, total: int) -> None:
                progress.update(task, completed=done)

            result = simulate(
                rules,
                args.players,
                args.hands,
                args.seed,
                bots,
                progress=advance,
                progress_every=max(1, min(500, args.hands // 100)),
            )
    else:
        result = simulate(rules, args.players, args.hands, args.seed, bots)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps(result_data(result, seconds)))
    else:
        Console().print(result_table(result, seconds))
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
