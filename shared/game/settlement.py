"""Settling a hand: who pays whom for each way a hand can end."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from ..records import record
from .cards import Card, count, format_cards, parse_cards
from .rules import HouseRules, SeveralDealTonks, StakeMode


class Ending(Enum):
    """How a hand ended. Every hand ends exactly one of these ways."""

    DEAL_TONK = "deal_tonk"
    VOID = "void"
    TONK_OUT = "tonk_out"
    OUT_ON_DISCARD = "out_on_discard"
    DROP_WON = "drop_won"
    DROP_CAUGHT = "drop_caught"
    STOCK_OUT = "stock_out"

    @property
    def words(self) -> str:
        """How the hand ended, in words (the host's log, the simulator's report)."""
        return ENDING_WORDS[self]


ENDING_WORDS = {
    Ending.DEAL_TONK: "tonk on the deal",
    Ending.VOID: "void (several deal tonks)",
    Ending.TONK_OUT: "tonk out",
    Ending.OUT_ON_DISCARD: "out on a discard",
    Ending.DROP_WON: "drop won",
    Ending.DROP_CAUGHT: "drop caught",
    Ending.STOCK_OUT: "stock out",
}


@record
class Payment:
    payer: int
    payee: int
    amount: int


@record
class Settlement:
    """The end of a hand: how, who won, the payments (summing to zero), each seat's count where
    counts matter, the hands the rules reveal, and the stake multiplier for the next hand."""

    ending: Ending
    winners: tuple[int, ...]
    payments: tuple[Payment, ...]
    counts: tuple[int | None, ...]
    revealed: tuple[tuple[Card, ...] | None, ...]
    dropper: int | None = None
    next_multiplier: int = 1

    @property
    def catchers(self) -> tuple[tuple[int, int], ...]:
        """(count, seat) of each player who caught a drop (a count no higher than the
        dropper's), lowest first; none unless the drop was caught."""
        dropper = self.dropper
        if self.ending is not Ending.DROP_CAUGHT or dropper is None:
            return ()
        mine = self.counts[dropper]
        return tuple(
            sorted(
                (c, s)
                for s, c in enumerate(self.counts)
                if s != dropper and c is not None and mine is not None and c <= mine
            )
        )

    def net(self, seats: int) -> list[int]:
        """Each seat's gain (positive) or loss from this hand."""
        totals = [0] * seats
        for p in self.payments:
            totals[p.payer] -= p.amount
            totals[p.payee] += p.amount
        return totals

    def to_dict(self) -> dict[str, Any]:
        return {
            "ending": self.ending.value,
            "winners": list(self.winners),
            "payments": [[p.payer, p.payee, p.amount] for p in self.payments],
            "counts": list(self.counts),
            "revealed": [None if h is None else format_cards(h) for h in self.revealed],
            "dropper": self.dropper,
            "next_multiplier": self.next_multiplier,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settlement:
        return cls(
            ending=Ending(data["ending"]),
            winners=tuple(data["winners"]),
            payments=tuple(Payment(*p) for p in data["payments"]),
            counts=tuple(data["counts"]),
            revealed=tuple(None if h is None else parse_cards(h) for h in data["revealed"]),
            dropper=data.get("dropper"),
            next_multiplier=data.get("next_multiplier", 1),
        )


class Payer:
    """Sizes payments by the rules' stake mode: a table stake, or each seat's own."""

    def __init__(self, rules: HouseRules, stakes: Sequence[int], multiplier: int) -> None:
        self.rules = rules
        self.stakes = stakes
        self.multiplier = multiplier
        self.payments: list[Payment] = []

    def pay(self, payer: int, payee: int, times: int, *, payer_sized: bool = False) -> None:
        if self.rules.stake_mode is StakeMode.SEAT:
            stake = self.stakes[payer if payer_sized else payee]
        else:
            stake = self.stakes[0]
        amount = times * stake * self.multiplier
        if amount:
            self.payments.append(Payment(payer, payee, amount))


def settle_deal_tonks(
    rules: HouseRules,
    hands: Sequence[Sequence[Card]],
    tonks: Sequence[int],
    stakes: Sequence[int],
    multiplier: int,
) -> Settlement:
    """The hand is not played: one or more seats tonked on the deal."""
    seats = len(hands)
    payer = Payer(rules, stakes, multiplier)
    revealed = tuple(tuple(hands[s]) if s in tonks else None for s in range(seats))
    counts = tuple(count(hands[s]) if s in tonks else None for s in range(seats))
    several = len(tonks) > 1
    if several and rules.several_deal_tonks is not SeveralDealTonks.PAY_EACH:
        doubled = rules.several_deal_tonks is SeveralDealTonks.VOID_DOUBLE
        return Settlement(
            Ending.VOID, (), (), counts, revealed, next_multiplier=multiplier * 2 if doubled else 1
        )
    for winner in tonks:
        for other in range(seats):
            if other not in tonks:
                payer.pay(other, winner, rules.deal_tonk_pays, payer_sized=True)
    return Settlement(Ending.DEAL_TONK, tuple(tonks), tuple(payer.payments), counts, revealed)


def settle_out(
    rules: HouseRules,
    winner: int,
    seats: int,
    stakes: Sequence[int],
    multiplier: int,
    *,
    tonk_out: bool,
) -> Settlement:
    """A seat went out: with no discard (tonk out) or on its last discard."""
    payer = Payer(rules, stakes, multiplier)
    times = rules.tonk_out_pays if tonk_out else 1
    for other in range(seats):
        if other != winner:
            payer.pay(other, winner, times)
    ending = Ending.TONK_OUT if tonk_out else Ending.OUT_ON_DISCARD
    return Settlement(ending, (winner,), tuple(payer.payments), (None,) * seats, (None,) * seats)


def settle_drop(
    rules: HouseRules,
    dropper: int,
    hands: Sequence[Sequence[Card]],
    stakes: Sequence[int],
    multiplier: int,
) -> Settlement:
    """A seat dropped: every hand is shown and counted."""
    seats = len(hands)
    counts = [count(hand) for hand in hands]
    revealed = tuple(tuple(hand) for hand in hands)
    payer = Payer(rules, stakes, multiplier)
    mine = counts[dropper]
    others = [s for s in range(seats) if s != dropper]
    catchers = [s for s in others if counts[s] <= mine]
    if not catchers:
        for other in others:
            payer.pay(other, dropper, 1)
        return Settlement(
            Ending.DROP_WON, (dropper,), tuple(payer.payments), tuple(counts), revealed, dropper
        )
    lowest = min(counts[s] for s in others)
    winners = tuple(s for s in others if counts[s] == lowest)
    # Read literally, black-tonk's lowest is paid "from everyone else": the dropper too, on top
    # of what it pays as caught (every lowest player is at or below the dropper).
    literal = rules.caught_dropper_pays_lowest
    for catcher in catchers:
        extra = 1 if literal and catcher in winners else 0
        payer.pay(dropper, catcher, rules.caught_pays + extra)
    if rules.caught_others_pay_lowest:
        for winner in winners:
            for other in others:
                if other not in winners:
                    payer.pay(other, winner, 1)
    return Settlement(
        Ending.DROP_CAUGHT, winners, tuple(payer.payments), tuple(counts), revealed, dropper
    )


def settle_stock_out(
    rules: HouseRules,
    hands: Sequence[Sequence[Card]],
    stakes: Sequence[int],
    multiplier: int,
) -> Settlement:
    """Someone wanted to draw from an empty stock: the lowest count(s) win."""
    seats = len(hands)
    counts = [count(hand) for hand in hands]
    lowest = min(counts)
    winners = tuple(s for s in range(seats) if counts[s] == lowest)
    payer = Payer(rules, stakes, multiplier)
    for winner in winners:
        for other in range(seats):
            if other not in winners:
                payer.pay(other, winner, 1)
    revealed = tuple(tuple(hand) for hand in hands)
    return Settlement(Ending.STOCK_OUT, winners, tuple(payer.payments), tuple(counts), revealed)
