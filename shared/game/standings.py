"""Standings across nights, pure: what one settled hand counts for each seat, what a night and
a period are, and each player's row added up from their totals by night (the server keeps those
totals; the clock comes in as a date)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from enum import StrEnum

from ..records import record
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
class PlayerTotal:
    """One player's counts over a period, as the server adds them up from its totals by night:
    `key` is the name as compared (without regard to case), `name` the spelling of their
    latest hand."""

    bot: bool
    key: str
    name: str
    hands: int
    won: int
    drops_won: int
    drops_caught: int
    tonk_outs: int
    deal_tonks: int


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
class UnitTotal:
    """One player's hands and net in one unit over a period, with the best and worst night."""

    bot: bool
    key: str
    hands: int
    net: UnitNet


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
    players: Iterable[PlayerTotal],
    units: Iterable[UnitTotal],
    claimed: dict[str, str] | None = None,
) -> tuple[tuple[Standing, ...], tuple[Standing, ...], str | None]:
    """The people's rows and the bots' rows of a period, and the unit most hands were played
    for (None: no hands). A name claimed at the door (`claimed`, by key) is shown as claimed.
    Rows are ranked by net in that unit, then by hands won, then by name."""
    claimed = claimed or {}
    nets: dict[tuple[bool, str], list[UnitTotal]] = {}
    hands_by_unit: dict[str, int] = {}
    for total in units:
        nets.setdefault((total.bot, total.key), []).append(total)
        hands_by_unit[total.net.unit] = hands_by_unit.get(total.net.unit, 0) + total.hands
    main = max(hands_by_unit, key=lambda u: (hands_by_unit[u], u)) if hands_by_unit else None
    people: list[Standing] = []
    bots: list[Standing] = []
    for player in players:
        mine = sorted(nets.get((player.bot, player.key), []), key=lambda t: (-t.hands, t.net.unit))
        row = Standing(
            name=claimed.get(player.key) or player.name,
            hands=player.hands,
            won=player.won,
            drops_won=player.drops_won,
            drops_caught=player.drops_caught,
            tonk_outs=player.tonk_outs,
            deal_tonks=player.deal_tonks,
            nets=tuple(t.net for t in mine),
        )
        (bots if player.bot else people).append(row)
    order = main or ""
    people.sort(key=lambda s: (-s.net_in(order), -s.won, s.name.casefold()))
    bots.sort(key=lambda s: (-s.net_in(order), -s.won, s.name.casefold()))
    return tuple(people), tuple(bots), main


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
