"""Bots: players that see exactly what one seat sees (its SeatView and its events) and choose
one of the legal actions. `make_bot("easy" | "sharp", rng)` builds one."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from .actions import Action, Discard, DrawStock, Drop, Event, Hit, LaySpread, TakeDiscard
from .cards import Card
from .rules import HouseRules
from .spreads import Spread, can_hit
from .view import LegalActions, Phase, SeatView

BOT_STRATEGIES = ("easy", "sharp")


class Bot(Protocol):
    """A player in one seat. It is told the events its seat saw and asked for an action with
    its seat's view; it never sees another seat's cards."""

    strategy: str

    def observe(self, events: Sequence[Event]) -> None:
        """Events as this seat sees them (`Event.for_seat`)."""

    def choose(self, view: SeatView) -> Action:
        """An action from `view.legal()`; called only when `view.my_turn`."""


class BotError(ValueError):
    """A bot was handed something it must not see, or asked to act when it cannot."""


def make_bot(strategy: str, rng: random.Random) -> Bot:
    """A bot playing `strategy` (one of BOT_STRATEGIES), drawing its randomness from `rng`."""
    if strategy == "easy":
        return EasyBot(rng)
    if strategy == "sharp":
        return SharpBot(rng)
    raise BotError(f"unknown bot {strategy!r}; the bots are {', '.join(BOT_STRATEGIES)}")


class SeatBot:
    """What every bot shares: it follows its seat's events, refuses anything that would show it
    more than its seat may see, and resets its memory on each deal."""

    strategy = "base"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seat: int | None = None
        self._dealing = False

    def observe(self, events: Sequence[Event]) -> None:
        for event in events:
            kind = event.kind
            if kind == "deal":
                if not self._dealing:
                    self._dealing = True
                    self.seat = None
                    self.new_hand()
                if event.cards:
                    if self.seat is not None and self.seat != event.seat:
                        raise BotError("a bot may see only its own seat's deal")
                    self.seat = event.seat
            else:
                self._dealing = False
                if event.private and event.cards and event.seat != self.seat:
                    raise BotError("a bot may see only the events its seat sees")
            self.see(event)

    def new_hand(self) -> None:
        """Forget the last hand."""

    def see(self, event: Event) -> None:
        """Take note of one event."""

    def choose(self, view: SeatView) -> Action:
        if not isinstance(view, SeatView):
            raise BotError("a bot chooses from its seat's view (a SeatView), nothing else")
        if not view.my_turn:
            raise BotError("it is not this bot's turn")
        return self.decide(view, view.legal())

    def decide(self, view: SeatView, legal: LegalActions) -> Action:
        raise NotImplementedError


def makes_spread(card: Card, hand: Sequence[Card], rules: HouseRules) -> bool:
    """Whether `card` with cards of `hand` would make a book or a run (`card` not in `hand`)."""
    rank = card.rank
    suit = card.suit
    same_rank = 0
    ranks: set[int] = set()
    for other in hand:
        if other.rank == rank:
            same_rank += 1
        elif other.suit is suit:
            ranks.add(other.rank)
    if same_rank >= 2:
        return True
    if len(ranks) < 2:
        return False
    keys = [rank]
    if rules.ace_high_runs:
        if 1 in ranks:
            ranks.add(14)
        if rank == 1:
            keys.append(14)
    for key in keys:
        below = key - 1 in ranks
        above = key + 1 in ranks
        if (below and (above or key - 2 in ranks)) or (above and key + 2 in ranks):
            return True
    return False


def card_uses(
    card: Card, hand: Sequence[Card], spreads: Sequence[Spread], rules: HouseRules
) -> bool:
    """Whether `card`, added to `hand`, would make a new spread or hit one on the table now."""
    for spread in spreads:
        if can_hit(spread, card, rules):
            return True
    return makes_spread(card, hand, rules)


def fallback(seat: int, legal: LegalActions) -> Action:
    """Some legal action, in the order a sensible player would think of them."""
    if legal.draw_stock:
        return DrawStock(seat)
    if legal.discards:
        return Discard(seat, max(legal.discards, key=lambda c: (c.value, c.rank)))
    if legal.spreads:
        return LaySpread(seat, legal.spreads[0])
    if legal.hits:
        card, spread = legal.hits[0]
        return Hit(seat, card, spread)
    if legal.take_discard:
        return TakeDiscard(seat)
    if legal.drop:
        return Drop(seat)
    raise BotError("no legal action")


class EasyBot(SeatBot):
    """Sensible, legal and quick: takes the discard only when it makes a spread or a hit now,
    lays every spread and hit it can, discards its highest card, drops at a low count."""

    strategy = "easy"
    DROP_AT = 8

    def decide(self, view: SeatView, legal: LegalActions) -> Action:
        seat = view.turn
        hand = view.hand
        if view.phase is Phase.START:
            if legal.drop and sum(c.value for c in hand) <= self.DROP_AT:
                return Drop(seat)
            top = view.discard_top
            if (
                legal.take_discard
                and top is not None
                and card_uses(top, hand, view.spreads, view.rules)
            ):
                return TakeDiscard(seat)
            return fallback(seat, legal)
        if legal.spreads:
            best = max(legal.spreads, key=lambda cards: sum(c.value for c in cards))
            return LaySpread(seat, best)
        if legal.hits:
            card, spread = max(legal.hits, key=lambda h: h[0].value)
            return Hit(seat, card, spread)
        if legal.discards:
            return Discard(seat, max(legal.discards, key=lambda c: (c.value, c.rank)))
        return fallback(seat, legal)


class SharpBot(EasyBot):
    """For now plays like `easy`; the counting, sampling strategy replaces this."""

    strategy = "sharp"
