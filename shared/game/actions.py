"""What a seat can do on its turn, as values, and what the hand tells everyone happened."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..records import record
from .cards import Card, CardError, format_cards, parse_card, parse_cards


class IllegalAction(Exception):
    """An action the hand refused; `reason` is written for a player to read, its cards as the
    table shows them (`10♠ 2♣`). A reason naming a spread says whose it is where the reason has
    `{owner}`: `text(names, me)` fills that in as the player sees it ("your", "Ada's");
    `reason` says "seat N's"."""

    def __init__(self, reason: str, code: str = "illegal_action", owner: int | None = None) -> None:
        self.template = reason
        self.owner = owner
        self.code = code
        self.reason = self.text()
        super().__init__(self.reason)

    def text(self, names: Sequence[str] = (), me: int | None = None) -> str:
        """The reason for the player in seat `me`, with the seats' `names`."""
        owner = self.owner
        if owner is None:
            return self.template
        if owner == me:
            whose = "your"
        elif 0 <= owner < len(names) and names[owner]:
            whose = f"{names[owner]}'s"
        else:
            whose = f"seat {owner + 1}'s"
        return self.template.replace("{owner}", whose)


@record
class Drop:
    seat: int
    kind = "drop"


@record
class DrawStock:
    seat: int
    kind = "draw_stock"


@record
class TakeDiscard:
    seat: int
    kind = "take_discard"


@record
class LaySpread:
    seat: int
    cards: tuple[Card, ...]
    kind = "spread"


@record
class Hit:
    seat: int
    card: Card
    spread: int
    kind = "hit"


@record
class Discard:
    seat: int
    card: Card
    kind = "discard"


Action = Drop | DrawStock | TakeDiscard | LaySpread | Hit | Discard


def action_to_dict(action: Action) -> dict[str, Any]:
    """An action as it is stored (a hand's record, the database, the coach's advice):
    `{"type": "hit", "seat": 2, "card": "8s", ...}`, a spread's cards a list. (A client asks
    for one without its seat, as client_messages.action_request writes it.)"""
    data: dict[str, Any] = {"type": action.kind, "seat": action.seat}
    if isinstance(action, LaySpread):
        data["cards"] = [str(c) for c in action.cards]
    elif isinstance(action, Hit):
        data["card"] = str(action.card)
        data["spread"] = action.spread
    elif isinstance(action, Discard):
        data["card"] = str(action.card)
    return data


def action_from_dict(data: dict[str, Any]) -> Action:
    """Read a stored action back (a spread's cards a list of card texts, or one string as on
    the wire); raise IllegalAction(code="bad_action") for anything malformed."""
    try:
        kind = data["type"]
        seat = data["seat"]
        if type(seat) is not int:
            raise TypeError("seat")
        if kind == "drop":
            return Drop(seat)
        if kind == "draw_stock":
            return DrawStock(seat)
        if kind == "take_discard":
            return TakeDiscard(seat)
        if kind == "spread":
            cards = data["cards"]
            if not isinstance(cards, str) and (
                not isinstance(cards, list) or not all(isinstance(c, str) for c in cards)
            ):
                raise TypeError("cards")
            return LaySpread(seat, parse_cards(cards))
        if kind == "hit":
            spread = data["spread"]
            if type(spread) is not int or not isinstance(data["card"], str):
                raise TypeError("hit")
            return Hit(seat, parse_card(data["card"]), spread)
        if kind == "discard":
            if not isinstance(data["card"], str):
                raise TypeError("card")
            return Discard(seat, parse_card(data["card"]))
    except (KeyError, TypeError, CardError) as exc:
        raise IllegalAction(f"malformed action: {exc}", "bad_action") from None
    raise IllegalAction(f"unknown action {kind!r}", "bad_action")


@record
class Event:
    """One thing that happened in a hand, in order. A `private` event's cards are known only to
    `seat` (a draw from the stock, a deal); `for_seat` hides them from everyone else.

    Kinds: deal, up_card, deal_tonk, turn, drop, draw_stock, take_discard, spread, hit,
    discard, tonk_out, out_on_discard, stock_out, hand_end.
    """

    kind: str
    seat: int | None = None
    cards: tuple[Card, ...] = ()
    spread: int | None = None
    private: bool = False
    count: int | None = None

    def for_seat(self, seat: int | None) -> Event:
        if self.private and seat != self.seat:
            return _hidden_copy(self.kind, self.seat, self.spread, self.count)
        return self

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.seat is not None:
            data["seat"] = self.seat
        if self.cards:
            data["cards"] = format_cards(self.cards)
        if self.spread is not None:
            data["spread"] = self.spread
        if self.count is not None:
            data["count"] = self.count
        if self.private:
            data["private"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            kind=data["kind"],
            seat=data.get("seat"),
            cards=parse_cards(data.get("cards", "")),
            spread=data.get("spread"),
            private=data.get("private", False),
            count=data.get("count"),
        )


@functools.cache
def _hidden_copy(kind: str, seat: int | None, spread: int | None, count: int | None) -> Event:
    """A private event with its cards hidden: the same for every seat that may not see them,
    and in every hand (the private events are the deals and the draws from the stock), so
    made once."""
    return Event(kind, seat, (), spread, True, count)
