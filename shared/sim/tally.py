"""Adding up a simulation's hands: the tally kept hand by hand, the result and its report with
95% intervals, and paired comparisons of two runs on the same deals."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, NamedTuple

from ..game.cards import Card, format_cards
from ..game.hand import HAND_SIZE
from ..game.ledger import Ledger
from ..game.rules import HouseRules
from ..game.settlement import Ending, Settlement
from ..stats import Mean, percentile, rounded, wilson

ENDINGS = tuple(ending.value for ending in Ending)
_ENDING_CODE = {ending: code for code, ending in enumerate(ENDINGS)}
#: The kinds of tonk on the deal: one seat's high or low total, or several seats at once.
TONK_KINDS = ("high", "low", "several")


class HandSummary(NamedTuple):
    """One simulated hand: its number (from 0), dealer, stake multiplier, deck order, how it was
    settled, and how long it lasted. (A named tuple, not a frozen dataclass: one is made every
    hand, and a tuple is made several times faster.)"""

    number: int
    dealer: int
    multiplier: int
    deck: tuple[Card, ...]
    settlement: Settlement
    turns: int
    actions: int
    stock_left: int

    @property
    def players(self) -> int:
        return len(self.settlement.counts)

    @property
    def deal(self) -> tuple[tuple[Card, ...], ...]:
        """Each seat's five cards as dealt, one at a time from the dealer's left."""
        players = self.players
        dealt = HAND_SIZE * players
        return tuple(
            self.deck[(seat - self.dealer - 1) % players : dealt : players]
            for seat in range(players)
        )

    @property
    def up_card(self) -> Card:
        return self.deck[HAND_SIZE * self.players]

    @property
    def ending(self) -> str:
        return self.settlement.ending.value

    def tonk_kind(self, rules: HouseRules) -> str | None:
        """For a hand ended on the deal: `several` seats, one seat's `high` total or its `low`
        one. None for a hand that was played."""
        if self.settlement.ending not in (Ending.DEAL_TONK, Ending.VOID):
            return None
        counts = [c for c in self.settlement.counts if c is not None]
        if len(counts) > 1:
            return "several"
        return "high" if counts[0] >= rules.deal_tonk_high else "low"

    @property
    def caught(self) -> int | None:
        """For a caught drop, how many players were at or below the dropper."""
        if self.settlement.ending is not Ending.DROP_CAUGHT:
            return None
        return len(self.settlement.catchers)

    @property
    def drop_turn(self) -> int | None:
        """The turn (from 1) on which a player dropped, for a hand ended by a drop."""
        return self.turns if self.settlement.dropper is not None else None

    def record(self, rules: HouseRules, players: int, variant: str) -> dict[str, Any]:
        """The hand as plain data, one line of the per-hand export."""
        s = self.settlement
        return {
            "variant": variant,
            "hand": self.number + 1,
            "dealer": self.dealer,
            "multiplier": self.multiplier,
            "deal": [format_cards(cards) for cards in self.deal],
            "up_card": str(self.up_card),
            "ending": self.ending,
            "tonk": self.tonk_kind(rules),
            "winners": list(s.winners),
            "dropper": s.dropper,
            "caught": self.caught,
            "counts": list(s.counts),
            "payments": [[p.payer, p.payee, p.amount] for p in s.payments],
            "net": s.net(players),
            "turns": self.turns,
            "drop_turn": self.drop_turn,
            "actions": self.actions,
            "stock_left": self.stock_left,
        }


def position_label(position: int, players: int) -> str:
    """`1st to act (dealer's left)`, `2nd to act`, ..., `dealer (last to act)`."""
    if position == players - 1:
        return "dealer (last to act)"
    ordinal = {0: "1st", 1: "2nd", 2: "3rd"}.get(position, f"{position + 1}th")
    return f"{ordinal} to act" + (" (dealer's left)" if position == 0 else "")


# -- adding up -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """Everything a run's report needs, added up hand by hand. Each hand's ending, dealer,
    turns and nets are kept (compactly, in arrays): the means and intervals are worked out from
    them when asked for, and paired comparisons and pictures read them hand by hand."""

    rules: HouseRules
    players: int
    hands: int = 0
    actions: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    tonk_kinds: Counter[str] = field(default_factory=Counter)
    caught: Counter[int] = field(default_factory=Counter)
    money: Counter[str] = field(default_factory=Counter)
    turns: Counter[int] = field(default_factory=Counter)
    drop_turns: Counter[int] = field(default_factory=Counter)
    stock_low: int = 0
    seat_wins: list[int] = field(init=False)
    position_wins: list[int] = field(init=False)
    ending_codes: bytearray = field(default_factory=bytearray)
    hand_turns: array[int] = field(default_factory=lambda: array("l"))
    dealers: bytearray = field(default_factory=bytearray)
    nets: list[array[int]] = field(init=False)

    def __post_init__(self) -> None:
        n = self.players
        self.seat_wins = [0] * n
        self.position_wins = [0] * n
        self.nets = [array("q") for _ in range(n)]

    def add(self, hand: HandSummary) -> None:
        # (Kept short: it runs once a hand, and a simulated hand takes about 200 microseconds.)
        players = self.players
        s = hand.settlement
        ending = s.ending.value
        self.hands += 1
        self.actions += hand.actions
        self.endings[ending] += 1
        turns = hand.turns
        if turns == 0:
            kind = hand.tonk_kind(self.rules)
            assert kind is not None
            self.tonk_kinds[kind] += 1
        elif s.dropper is not None:
            self.drop_turns[turns] += 1
            caught = hand.caught
            if caught is not None:
                self.caught[caught] += 1
        if s.payments:
            self.money[ending] += sum([p.amount for p in s.payments])
        self.turns[turns] += 1
        if turns and hand.stock_left < players:
            self.stock_low += 1
        net = s.net(players)
        for seat_nets, value in zip(self.nets, net, strict=True):
            seat_nets.append(value)
        dealer = hand.dealer
        for winner in s.winners:
            self.seat_wins[winner] += 1
            self.position_wins[(winner - dealer - 1) % players] += 1
        self.ending_codes.append(_ENDING_CODE[ending])
        self.hand_turns.append(turns)
        self.dealers.append(dealer)

    def seat_net(self, seat: int) -> Mean:
        """A seat's net per hand, with its interval."""
        mean = Mean()
        mean.extend(self.nets[seat])
        return mean

    def position_net(self, position: int) -> Mean:
        """The net per hand of the seat at `position` from the dealer, with its interval."""
        mean = Mean()
        mean.extend(self.position_nets(position))
        return mean

    def position_nets(self, position: int) -> Iterator[int]:
        """The net of the seat at `position` from the dealer, hand by hand."""
        players = self.players
        nets = self.nets
        for number, dealer in enumerate(self.dealers):
            yield nets[(dealer + 1 + position) % players][number]

    def running_net(self, seat: int) -> list[int]:
        """A seat's balance after each hand, from 0."""
        return [0, *accumulate(self.nets[seat])]


def _rate(count: int, trials: int) -> dict[str, Any]:
    return {
        "hands": count,
        "rate": round(count / trials, 6) if trials else None,
        "ci95": rounded(wilson(count, trials), 6),
    }


def _mean(mean: Mean, places: int = 4) -> dict[str, Any]:
    value = mean.mean
    return {
        "mean": None if value is None else round(value, places),
        "ci95": rounded(mean.ci95(), places),
    }


def _net(mean: Mean) -> dict[str, Any]:
    figures = _mean(mean)
    return {"net_per_hand": figures["mean"], "ci95": figures["ci95"]}


def distribution(counts: Counter[int]) -> dict[str, Any]:
    """A distribution held as counts: its mean with interval, percentiles, and the counts."""
    mean = Mean()
    for value, n in counts.items():
        mean.n += n
        mean.total += value * n
        mean.squares += value * value * n
    return {
        **_mean(mean, 3),
        **{f"p{q}": percentile(counts, q / 100) for q in (10, 25, 50, 75, 90, 99)},
        "max": max(counts) if counts else None,
        "counts": {str(value): counts[value] for value in sorted(counts)},
    }


@dataclass(frozen=True, slots=True)
class SimResult:
    """What a simulation came to: how the hands ended, and each seat's net stakes and wins."""

    rules: HouseRules
    players: int
    seed: int
    bots: tuple[str, ...]
    hands: int
    endings: dict[str, int]
    net: tuple[int, ...]
    wins: tuple[int, ...]
    actions: int
    first_dealer: int
    ledger: Ledger
    stakes: tuple[int, ...]
    tally: Tally

    def to_dict(self) -> dict[str, Any]:
        tally = self.tally
        hands = self.hands
        return {
            "hands": hands,
            "players": self.players,
            "rules": self.rules.name,
            "rules_options": self.rules.to_dict(),
            "seed": self.seed,
            "endings": dict(self.endings),
            "ending_rates": {e: _rate(self.endings[e], hands) for e in ENDINGS},
            "deal_tonks": {kind: _rate(tally.tonk_kinds[kind], hands) for kind in TONK_KINDS},
            "caught_by": {str(k): _rate(tally.caught[k], hands) for k in range(1, self.players)},
            "money": {
                e: {
                    "stakes": tally.money[e],
                    "per_hand": round(tally.money[e] / hands, 6) if hands else None,
                }
                for e in ENDINGS
            },
            "seats": [
                {
                    "seat": seat,
                    "bot": bot,
                    "stake": self.stakes[seat],
                    "net": net,
                    "wins": wins,
                    **_net(tally.seat_net(seat)),
                    "win_rate": _rate(wins, hands)["rate"],
                    "win_ci95": _rate(wins, hands)["ci95"],
                }
                for seat, (bot, net, wins) in enumerate(
                    zip(self.bots, self.net, self.wins, strict=True)
                )
            ],
            "by_position": [
                {
                    "position": position,
                    "label": position_label(position, self.players),
                    "net": int(tally.position_net(position).total),
                    **_net(tally.position_net(position)),
                    "wins": tally.position_wins[position],
                    "win_rate": _rate(tally.position_wins[position], hands)["rate"],
                    "win_ci95": _rate(tally.position_wins[position], hands)["ci95"],
                }
                for position in range(self.players)
            ],
            "hand_turns": distribution(tally.turns),
            "drop_turns": distribution(tally.drop_turns),
            "stock_low": {"below": self.players, **_rate(tally.stock_low, hands)},
            "actions": self.actions,
            "first_dealer": self.first_dealer,
        }


# -- paired comparisons --------------------------------------------------------------------------


def _difference(mean: Mean) -> dict[str, Any]:
    value = mean.mean
    return {
        "difference": None if value is None else round(value, 6),
        "ci95": rounded(mean.ci95(), 6),
    }


def compare(base: SimResult, other: SimResult) -> dict[str, Any]:
    """`other` less `base`, hand by hand on the same deals, with 95% intervals on the mean
    difference: each ending's rate, each seat's and each position's net per hand, and the
    hand's length in turns. Raises ValueError unless both runs played the same deals."""
    for name in ("seed", "players", "hands", "first_dealer"):
        if getattr(base, name) != getattr(other, name):
            raise ValueError(f"the runs differ in {name}: they did not play the same deals")
    a, b = base.tally, other.tally
    endings = {}
    for code, ending in enumerate(ENDINGS):
        mean = Mean()
        for x, y in zip(a.ending_codes, b.ending_codes, strict=True):
            mean.add((y == code) - (x == code))
        endings[ending] = _difference(mean)
    seats = []
    for seat in range(base.players):
        mean = Mean()
        mean.extend(y - x for x, y in zip(a.nets[seat], b.nets[seat], strict=True))
        seats.append({"seat": seat, "net_per_hand": _difference(mean)})
    positions = []
    for position in range(base.players):
        mean = Mean()
        mean.extend(
            y - x for x, y in zip(a.position_nets(position), b.position_nets(position), strict=True)
        )
        positions.append(
            {
                "position": position,
                "label": position_label(position, base.players),
                "net_per_hand": _difference(mean),
            }
        )
    turns = Mean()
    turns.extend(y - x for x, y in zip(a.hand_turns, b.hand_turns, strict=True))
    same = sum(
        1
        for x, y, tx, ty in zip(
            a.ending_codes, b.ending_codes, a.hand_turns, b.hand_turns, strict=True
        )
        if x == y and tx == ty
    )
    return {
        "base": base.rules.to_dict(),
        "rules": other.rules.to_dict(),
        "endings": endings,
        "seats": seats,
        "by_position": positions,
        "hand_turns": _difference(turns),
        "hands_alike": same,
    }
