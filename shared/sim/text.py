"""What `tonk-sim` prints: a run's figures as tables (with 95% intervals), rule sets side by
side, pictures of the running net, and the same figures as plain data for `--json`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from tonk.shared.game.settlement import Ending
from tonk.shared.game.words import plural
from tonk.shared.sim.play import TONK_KINDS, SimResult

ENDING_LABELS = {ending.value: ending.words for ending in Ending}


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
