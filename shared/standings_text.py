"""The standings across nights as lines of text, the same for the client's screen and for
`tonk-server standings`: a title, then the people and the bots, each a table that fits 80
columns (names cut with an ellipsis; a player's other units on lines of their own)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from .game.standings import (
    PERIOD_TITLES,
    PERIODS,
    Period,
    Standing,
    UnitNet,
    night_text,
    nights_text,
    signed,
)
from .records import record
from .wire.server_messages import Standings


@record
class Column:
    over: str  # the heading's first line
    heading: str
    width: int
    number: bool  # right-aligned


COLUMNS = (
    Column("", "Player", 14, False),
    Column("", "Hands", 5, True),
    Column("", "Won", 4, True),
    Column("Drops", "won", 4, True),
    Column("", "caught", 6, True),
    Column("Tonks", "out", 4, True),
    Column("", "deal", 4, True),
    Column("", "Net", 6, True),
    Column("Best", "night", 11, False),
    Column("Worst", "night", 11, False),
)


class Kind(StrEnum):
    """What a line is (the client styles each kind its own way)."""

    TITLE = "title"
    NOTE = "note"
    SECTION = "section"
    HEADING = "heading"
    ROW = "row"
    BLANK = "blank"


Line = tuple[str, Kind]


def sentence(text: str) -> str:
    """`text` with a capital first letter (and the rest as it is)."""
    return text[:1].upper() + text[1:]


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, an ellipsis marking a cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _line(cells: Sequence[str]) -> str:
    parts = []
    for column, cell in zip(COLUMNS, cells, strict=True):
        cell = cut(cell, column.width)
        parts.append(cell.rjust(column.width) if column.number else cell.ljust(column.width))
    return " ".join(parts).rstrip()


def headings() -> list[str]:
    """The two heading lines; a heading's first line may run over the columns after it
    (`Drops` over `won` and `caught`)."""
    over = ""
    start = 0
    for column in COLUMNS:
        if column.over:
            over = over.ljust(start) + column.over
        start += column.width + 1
    return [over, _line([c.heading for c in COLUMNS])]


def _night(night: str, net: int) -> str:
    day = night_text(night).split(" ", 1)[1]  # "27 Nov": the weekday would not fit
    return f"{day} {signed(net)}"


def _net_cells(net: UnitNet) -> list[str]:
    return [signed(net.net), _night(net.best_night, net.best), _night(net.worst_night, net.worst)]


def standing_lines(row: Standing, unit: str | None) -> list[str]:
    """A player's lines: their counts and their net in `unit` (the one the standings rank
    by), then a line for each other unit they played for, named in the name's column."""
    counts = [row.hands, row.won, row.drops_won, row.drops_caught, row.tonk_outs, row.deal_tonks]
    main = next((n for n in row.nets if n.unit == unit), None)
    first = [row.name, *(str(c) for c in counts)]
    lines = [_line(first + (_net_cells(main) if main else ["", "", ""]))]
    blank = [""] * len(counts)
    for net in row.nets:
        if net is not main:
            lines.append(_line([f"  in {net.unit}", *blank, *_net_cells(net)]))
    return lines


def standings_lines(answer: Standings) -> list[Line]:
    """Every line: what the period is, then the people, then the bots."""
    period = PERIODS.get(answer.period, Period.TONIGHT)
    if answer.since is None:
        span = "every night"
    elif period is Period.TONIGHT:
        span = f"the night of {night_text(answer.tonight)}"
    else:
        span = f"{night_text(answer.since)} to {night_text(answer.tonight)}"
    unit = "" if answer.unit is None else f" · net in {answer.unit}"
    out: list[Line] = [
        (f"{PERIOD_TITLES[period]}: {span}{unit}", Kind.TITLE),
        (f"{sentence(nights_text(answer.zone))}.", Kind.NOTE),
    ]
    if not answer.people and not answer.bots:
        return [*out, ("", Kind.BLANK), ("No hands were played in that time.", Kind.ROW)]
    for title, rows in (("People", answer.people), ("Bots", answer.bots)):
        if not rows:
            continue
        out += [("", Kind.BLANK), (title, Kind.SECTION)]
        out += [(heading, Kind.HEADING) for heading in headings()]
        out += [(line, Kind.ROW) for row in rows for line in standing_lines(row, answer.unit)]
    if answer.more:
        out += [("", Kind.BLANK), ("(only the best ranked are listed: there are more)", Kind.NOTE)]
    return out
