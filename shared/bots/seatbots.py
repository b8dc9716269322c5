"""The interface a bot plays through (`Bot`), what every bot shares (it follows one seat's
events and chooses from that seat's legal actions, never seeing more), and the `easy` bot.
`sharp` is in sharp.py, `expert` in expert.py, the registry of strategies in bots.py."""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from operator import attrgetter
from typing import Protocol

from ..game.actions import Action, Discard, DrawStock, Drop, Event, Hit, LaySpread, TakeDiscard
from ..game.cards import RANK_VALUE, Card, count
from ..game.rules import HouseRules
from ..game.spreads import Spread, can_hit
from ..game.view import NO_ACTIONS, LegalActions, Phase, SeatView

# Actions are values, and a bot hands back the same few over and over: each is made once
# (functools.cache) instead of on every turn, where building a frozen dataclass is slow.
_drop = functools.cache(Drop)
_draw_stock = functools.cache(DrawStock)
_take_discard = functools.cache(TakeDiscard)
_discard = functools.cache(Discard)


class Bot(Protocol):
    """A player in one seat. It is told the events its seat saw and asked for an action with
    its seat's view; it never sees another seat's cards."""

    strategy: str
    #: Whether a decision may take long (milliseconds of search, not microseconds): the server
    #: asks such a bot off its event loop, so other tables are not kept waiting meanwhile.
    slow: bool

    def observe(self, events: Sequence[Event]) -> None:
        """Events as this seat sees them (`Event.for_seat`)."""

    def choose(self, view: SeatView) -> Action:
        """An action from `view.legal()`; called only when `view.my_turn`."""


class BotError(ValueError):
    """A bot was handed something it must not see, or asked to act when it cannot."""


class SeatBot:
    """What every bot shares: it follows its seat's events, refuses anything that would show it
    more than its seat may see, and resets its memory on each deal."""

    strategy = "base"
    slow = False  # see Bot.slow
    tracks = False  # whether `see` wants every event

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seat: int | None = None
        self._dealing = False

    def observe(self, events: Sequence[Event]) -> None:
        tracks = self.tracks
        for event in events:
            if event.private:
                if event.kind == "deal":
                    if not self._dealing:
                        self._dealing = True
                        self.seat = None
                        self.new_hand()
                    if event.cards:
                        if self.seat is not None:
                            raise BotError("a bot may see only its own seat's deal")
                        self.seat = event.seat
                else:
                    self._dealing = False
                    if event.cards and event.seat != self.seat:
                        if self.seat is not None:
                            raise BotError("a bot may see only the events its seat sees")
                        self.seat = event.seat  # joined mid-hand: its own draw tells its seat
            else:
                self._dealing = False
            if tracks:
                self.see(event)

    def new_hand(self) -> None:
        """Forget the last hand."""

    def see(self, event: Event) -> None:
        """Take note of one event."""

    def choose(self, view: SeatView) -> Action:
        if not isinstance(view, SeatView):
            raise BotError("a bot chooses from its seat's view (a SeatView), nothing else")
        legal = view.legal()
        # legal() answers NO_ACTIONS whenever it is not this seat's turn, so my_turn (a property,
        # slow to read in CPython 3.11) is only asked then.
        if legal is NO_ACTIONS and not view.my_turn:
            raise BotError("it is not this bot's turn")
        return self.decide(view, legal)

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
        return _draw_stock(seat)
    if legal.discards:
        return _discard(seat, max(legal.discards, key=lambda c: (c.value, c.rank)))
    if legal.spreads:
        return LaySpread(seat, legal.spreads[0])
    if legal.hits:
        card, spread = legal.hits[0]
        return Hit(seat, card, spread)
    if legal.take_discard:
        return _take_discard(seat)
    if legal.drop:
        return _drop(seat)
    raise BotError("no legal action")


def _spread_value(cards: Sequence[Card]) -> int:
    return sum([RANK_VALUE[card.rank] for card in cards])


def _hit_value(hit: tuple[Card, int]) -> int:
    return RANK_VALUE[hit[0].rank]


def richest_lay(seat: int, legal: LegalActions) -> Action | None:
    """The open spread that sheds the most, else the open hit that does; None if neither."""
    if legal.spreads:
        return LaySpread(seat, max(legal.spreads, key=_spread_value))
    if legal.hits:
        card, spread = max(legal.hits, key=_hit_value)
        return Hit(seat, card, spread)
    return None


class EasyBot(SeatBot):
    """Sensible, legal and quick: takes the discard only when it makes a spread or a hit now,
    lays every spread and hit it can, discards its highest card, drops at a low count."""

    strategy = "easy"
    DROP_AT = 8

    def decide(self, view: SeatView, legal: LegalActions) -> Action:
        seat = view.turn
        hand = view.hand
        if view.phase is Phase.START:
            if legal.drop and count(hand) <= self.DROP_AT:
                return _drop(seat)
            top = view.discard_top
            if (
                legal.take_discard
                and top is not None
                and card_uses(top, hand, view.spreads, view.rules)
            ):
                return _take_discard(seat)
            return fallback(seat, legal)
        if (lay := richest_lay(seat, legal)) is not None:
            return lay
        if legal.discards:
            return _discard(seat, max(legal.discards, key=attrgetter("rank")))
        return fallback(seat, legal)
