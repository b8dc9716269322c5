"""What one seat (or a spectator) may see of a hand, what it may do (from legality.py), and
why not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Action, IllegalAction
from .cards import Card, format_cards, parse_card, parse_cards
from .legality import NO_ACTIONS, LegalActions, Phase, check, legal_actions
from .rules import HouseRules
from .settlement import Settlement
from .spreads import Spread, SpreadKind

_ENDED = Phase.ENDED  # under a module name: see the note at `_START` in legality.py

__all__ = [
    "NO_ACTIONS",
    "LegalActions",
    "Phase",
    "SeatView",
    "legal_actions",
    "spread_from_dict",
    "spread_to_dict",
    "why_not",
]


@dataclass(frozen=True, slots=True)
class SeatView:
    """Exactly what `seat` may see; `seat` is None for a spectator, who sees no hand.

    Nothing here is hidden information: the stock and the discards under the top card are
    only counted, other hands only counted until the settlement reveals them.
    """

    seat: int | None
    rules: HouseRules
    players: int
    dealer: int
    turn: int
    phase: Phase
    hand: tuple[Card, ...]
    card_counts: tuple[int, ...]
    spreads: tuple[Spread, ...]
    discard_top: Card | None
    discard_size: int
    stock_size: int
    hit_locks: tuple[int, ...]
    stakes: tuple[int, ...]
    multiplier: int
    taken_discard: Card | None
    settlement: Settlement | None
    event_count: int

    @property
    def my_turn(self) -> bool:
        return self.seat is not None and self.seat == self.turn and self.phase is not _ENDED

    @property
    def plays_next(self) -> int | None:
        """The seat to play after the one whose turn it is (turns pass to the left); None once
        the hand is over (what the client's "you are next" reads)."""
        if self.phase is _ENDED:
            return None
        return (self.turn + 1) % self.players

    def legal(self) -> LegalActions:
        """The actions this seat may take now (none for a spectator or out of turn)."""
        if self.seat is None or self.seat != self.turn or self.phase is _ENDED:
            return NO_ACTIONS  # (my_turn spelt out: a bot asks on every action)
        return legal_actions(
            self.rules,
            self.phase,
            self.hand,
            self.spreads,
            self.discard_top,
            self.hit_locks[self.turn],
            self.taken_discard,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "rules": self.rules.to_wire(),
            "players": self.players,
            "dealer": self.dealer,
            "turn": self.turn,
            "phase": self.phase.value,
            "hand": format_cards(self.hand),
            "card_counts": list(self.card_counts),
            "spreads": [spread_to_dict(s) for s in self.spreads],
            "discard_top": None if self.discard_top is None else str(self.discard_top),
            "discard_size": self.discard_size,
            "stock_size": self.stock_size,
            "hit_locks": list(self.hit_locks),
            "stakes": list(self.stakes),
            "multiplier": self.multiplier,
            "taken_discard": None if self.taken_discard is None else str(self.taken_discard),
            "settlement": None if self.settlement is None else self.settlement.to_dict(),
            "event_count": self.event_count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], rules: HouseRules | None = None) -> SeatView:
        """Read a view back; `rules`, when the caller has read this view's rules already (they
        are the same in every view of a table), saves reading them again."""
        return cls(
            seat=data["seat"],
            rules=HouseRules.from_dict(data["rules"]) if rules is None else rules,
            players=data["players"],
            dealer=data["dealer"],
            turn=data["turn"],
            phase=Phase(data["phase"]),
            hand=parse_cards(data["hand"]),
            card_counts=tuple(data["card_counts"]),
            spreads=tuple(spread_from_dict(s) for s in data["spreads"]),
            discard_top=None if data["discard_top"] is None else parse_card(data["discard_top"]),
            discard_size=data["discard_size"],
            stock_size=data["stock_size"],
            hit_locks=tuple(data["hit_locks"]),
            stakes=tuple(data["stakes"]),
            multiplier=data["multiplier"],
            taken_discard=None
            if data["taken_discard"] is None
            else parse_card(data["taken_discard"]),
            settlement=None
            if data["settlement"] is None
            else Settlement.from_dict(data["settlement"]),
            event_count=data["event_count"],
        )


def spread_to_dict(spread: Spread) -> dict[str, Any]:
    return {
        "id": spread.id,
        "owner": spread.owner,
        "kind": spread.kind.value,
        "cards": format_cards(spread.cards),
        "hits": [[str(card), seat] for card, seat in spread.hits],
    }


def spread_from_dict(data: dict[str, Any]) -> Spread:
    return Spread(
        id=data["id"],
        owner=data["owner"],
        kind=SpreadKind(data["kind"]),
        cards=parse_cards(data["cards"]),
        hits=tuple((parse_card(card), seat) for card, seat in data["hits"]),
    )


def why_not(view: SeatView, action: Action, names: Sequence[str] = ()) -> str | None:
    """Why the seat whose view this is may not take `action` now, as the hand would refuse it
    (the same checks, the same words), or None if it may: a client explains a greyed key with
    it, without sending a move it knows is illegal. `names` are the seats' names, for a
    reason about another player's spread ("Ada's run"); without them it says "seat 2's"."""
    seat = view.seat
    if seat is None:
        raise ValueError("a spectator's view has no seat to act for")
    if action.seat != seat:
        raise ValueError(f"this is seat {seat}'s view, not seat {action.seat}'s")
    try:
        check(view, view.hand, action)
    except IllegalAction as refused:
        return refused.text(names, seat)
    return None
