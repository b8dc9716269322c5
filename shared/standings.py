"""Standings across nights, pure: what one settled hand counts for each seat, what a night and
a period are, and each player's row added up from their totals by night (the server keeps those
totals; the clock comes in as a date)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from enum import StrEnum

from .records import record
from .settlement import Ending, Settlement
from .words import amount_text

#: A night runs from this hour to the same hour the next day, by the server's clock: a hand
#: dealt at 1 a.m. belongs to the evening before, as its players would say.
NIGHT_STARTS_HOUR = 6


class Period(StrEnum):
    """How far back the standings look, in nights (tonight's included)."""

    TONIGHT = "tonight"
    WEEK = "week"
    MONTH = "month"
    ALL = "all"


#: Each period's nights (None: every night), and its title for a person.
PERIOD_NIGHTS: dict[Period, int | None] = {
    Period.TONIGHT: 1,
    Period.WEEK: 7,
    Period.MONTH: 30,
    Period.ALL: None,
}
PERIOD_TITLES: dict[Period, str] = {
    Period.TONIGHT: "Tonight",
    Period.WEEK: "Last 7 days",
    Period.MONTH: "Last 30 days",
    Period.ALL: "All time",
}
PERIODS = {str(period): period for period in Period}


def name_key(name: str) -> str:
    """Names are the same without regard to case: `Ann` is `ann` (at the SSH door, where a
    name is claimed in any case, and in the standings)."""
    return name.strip().casefold()


def night_of(local: dt.datetime) -> dt.date:
    """The night a moment of the server's local time belongs to."""
    return (local - dt.timedelta(hours=NIGHT_STARTS_HOUR)).date()


def first_night(period: Period, tonight: dt.date) -> dt.date | None:
    """The first night a period counts (None: all of them)."""
    nights = PERIOD_NIGHTS[period]
    return None if nights is None else tonight - dt.timedelta(days=nights - 1)


# -- one hand ------------------------------------------------------------------------------------


@record
class HandCount:
    """What one settled hand counts for one seat."""

    won: bool
    drop_won: bool  # the seat dropped and won
    drop_caught: bool  # the seat dropped and was caught
    tonk_out: bool  # the seat went out with no discard
    deal_tonk: bool  # the seat won on the deal
    net: int  # what the seat won (positive) or paid


def hand_counts(settlement: Settlement, seats: int) -> tuple[HandCount, ...]:
    """Each seat's count of a settled hand of `seats` seats."""
    nets = settlement.net(seats)
    winners = set(settlement.winners)
    ending = settlement.ending
    out = []
    for seat in range(seats):
        won = seat in winners
        dropped = settlement.dropper == seat
        out.append(
            HandCount(
                won=won,
                drop_won=dropped and ending is Ending.DROP_WON,
                drop_caught=dropped and ending is Ending.DROP_CAUGHT,
                tonk_out=won and ending is Ending.TONK_OUT,
                deal_tonk=won and ending is Ending.DEAL_TONK,
                net=nets[seat],
            )
        )
    return tuple(out)


# -- the rows ------------------------------------------------------------------------------------


@record
class NightTotal:
    """One player's totals of one night in one unit, as the server keeps them. `key` is the
    name as compared (without regard to case), `name` the spelling of their latest hand and
    `last` when it was dealt."""

    bot: bool
    key: str
    name: str
    unit: str
    night: str  # ISO date
    last: float
    hands: int
    won: int
    drops_won: int
    drops_caught: int
    tonk_outs: int
    deal_tonks: int
    net: int


@record
class UnitNet:
    """A player's net in one unit over the period, and their best and worst night by it."""

    unit: str
    net: int
    best_night: str  # ISO date
    best: int
    worst_night: str
    worst: int


@record
class Standing:
    """One player's row: their counts over the period, and a net for each unit they played
    for (the one they played most hands in first)."""

    name: str
    hands: int
    won: int
    drops_won: int
    drops_caught: int
    tonk_outs: int
    deal_tonks: int
    nets: tuple[UnitNet, ...]

    def net_in(self, unit: str) -> int:
        return next((n.net for n in self.nets if n.unit == unit), 0)


def standings(
    totals: Iterable[NightTotal], names: dict[str, str] | None = None
) -> tuple[tuple[Standing, ...], tuple[Standing, ...], str | None]:
    """The people's rows and the bots' rows from the totals of the period's nights, and the
    unit most hands were played for (None: no hands). A name claimed at the door (`names`, by
    key) is shown as claimed. Rows are ordered by net in that unit, then hands won, then name."""
    names = names or {}
    by_player: dict[tuple[bool, str], list[NightTotal]] = {}
    hands_by_unit: dict[str, int] = {}
    for total in totals:
        by_player.setdefault((total.bot, total.key), []).append(total)
        hands_by_unit[total.unit] = hands_by_unit.get(total.unit, 0) + total.hands
    main = max(hands_by_unit, key=lambda u: (hands_by_unit[u], u)) if hands_by_unit else None
    people: list[Standing] = []
    bots: list[Standing] = []
    for (bot, key), rows in by_player.items():
        row = _standing(rows, names.get(key))
        (bots if bot else people).append(row)
    order = main or ""
    people.sort(key=lambda s: (-s.net_in(order), -s.won, s.name.casefold()))
    bots.sort(key=lambda s: (-s.net_in(order), -s.won, s.name.casefold()))
    return tuple(people), tuple(bots), main


def _standing(rows: Sequence[NightTotal], claimed: str | None) -> Standing:
    latest = max(rows, key=lambda r: r.last)
    by_unit: dict[str, dict[str, int]] = {}
    unit_hands: dict[str, int] = {}
    for r in rows:
        nights = by_unit.setdefault(r.unit, {})
        nights[r.night] = nights.get(r.night, 0) + r.net
        unit_hands[r.unit] = unit_hands.get(r.unit, 0) + r.hands
    nets = []
    for unit in sorted(unit_hands, key=lambda u: (-unit_hands[u], u)):
        nights = by_unit[unit]
        # Ties go to the earlier night: the record stands until it is beaten.
        best = min(nights, key=lambda n: (-nights[n], n))
        worst = min(nights, key=lambda n: (nights[n], n))
        nets.append(UnitNet(unit, sum(nights.values()), best, nights[best], worst, nights[worst]))
    return Standing(
        name=claimed or latest.name,
        hands=sum(r.hands for r in rows),
        won=sum(r.won for r in rows),
        drops_won=sum(r.drops_won for r in rows),
        drops_caught=sum(r.drops_caught for r in rows),
        tonk_outs=sum(r.tonk_outs for r in rows),
        deal_tonks=sum(r.deal_tonks for r in rows),
        nets=tuple(nets),
    )


# -- as text -------------------------------------------------------------------------------------


def night_text(night: str) -> str:
    """A night for a person: "Fri 27 Nov"."""
    day = dt.date.fromisoformat(night)
    return f"{day:%a} {day.day} {day:%b}"


def signed(amount: int) -> str:
    """A net as a number: "+3", "-2", "0"."""
    return f"{amount:+d}" if amount else "0"


def net_text(amount: int, unit: str) -> str:
    """A net with its unit: "+3 chips", "-1 penny"."""
    text = amount_text(amount, unit)
    return f"+{text}" if amount > 0 else text


def nights_text(zone: str) -> str:
    """What a night is, in words."""
    hour = f"{NIGHT_STARTS_HOUR}:00"
    return f"nights by the server's clock ({zone}), each from {hour} to {hour} the next day"
