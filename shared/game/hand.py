"""One hand of Tonk as a state machine: deal, deal tonks, turns, and every way a hand ends.

Driven by actions from seats; each accepted action returns the events it caused. A refused
action raises IllegalAction and changes nothing. A hand replays exactly from its record.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._speedups import new_event, new_seat_view, shuffled_deck
from .actions import (
    Action,
    Discard,
    DrawStock,
    Drop,
    Event,
    Hit,
    LaySpread,
    TakeDiscard,
    action_from_dict,
    action_to_dict,
)
from .cards import Card, count, format_cards, parse_cards, validate_deck
from .legality import LegalActions, Phase, check, legal_actions
from .rules import HouseRules, StakeMode
from .settlement import Settlement, settle_deal_tonks, settle_drop, settle_out, settle_stock_out
from .spreads import Spread, SpreadKind, order_spread
from .view import SeatView

HAND_SIZE = 5

# The phases and a stake mode under module names: see the note at `_START` in legality.py.
_START, _PLAY, _ENDED = Phase.START, Phase.PLAY, Phase.ENDED
_TABLE_STAKE = StakeMode.TABLE


@dataclass(frozen=True, slots=True)
class HandRecord:
    """Everything needed to replay a hand exactly: small, plain, serializable."""

    rules: HouseRules
    players: int
    dealer: int
    stakes: tuple[int, ...]
    multiplier: int
    deck: tuple[Card, ...]
    actions: tuple[Action, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "players": self.players,
            "dealer": self.dealer,
            "stakes": list(self.stakes),
            "multiplier": self.multiplier,
            "deck": format_cards(self.deck),
            "actions": [action_to_dict(a) for a in self.actions],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandRecord:
        return cls(
            rules=HouseRules.from_dict(data["rules"]),
            players=data["players"],
            dealer=data["dealer"],
            stakes=tuple(data["stakes"]),
            multiplier=data["multiplier"],
            deck=parse_cards(data["deck"]),
            actions=tuple(action_from_dict(a) for a in data["actions"]),
        )

    def deal(self) -> Hand:
        """The hand as it was dealt, before any action."""
        return Hand(
            self.rules,
            self.players,
            self.dealer,
            self.stakes,
            deck=self.deck,
            multiplier=self.multiplier,
        )

    def replay(self) -> Hand:
        """The hand played again from its deck order and actions."""
        return self.replay_steps()[0]

    def replay_steps(self) -> tuple[Hand, list[int]]:
        """The hand played again, and the index of each step's first event: the deal's (0),
        each action's, and one past the last action's (the next action's, yet to come)."""
        hand = self.deal()
        firsts = [0]
        for action in self.actions:
            firsts.append(len(hand.events))
            hand.apply(action)
        firsts.append(len(hand.events))
        return hand, firsts


@dataclass(frozen=True, slots=True)
class Cut:
    """The cut for the first dealer: each round's cards by seat (None: not cutting that round)."""

    rounds: tuple[tuple[Card | None, ...], ...]
    dealer: int


def cut_for_deal(players: int, rng: random.Random) -> Cut:
    """Everybody cuts; the high card deals (ace low); those tied for high cut again."""
    return cut_from(players, lambda: shuffled_deck(rng))


def cut_from(players: int, shuffled: Callable[[], list[Card]]) -> Cut:
    """The cut, each round from a deck `shuffled` gives: its first cards to the seats
    cutting, the lowest seat first; the high card deals (ace low); those tied cut again."""
    cutting = list(range(players))
    rounds: list[tuple[Card | None, ...]] = []
    while True:
        deck = shuffled()
        cards: list[Card | None] = [None] * players
        for i, seat in enumerate(cutting):
            cards[seat] = deck[i]
        rounds.append(tuple(cards))
        high = max(cards[s].rank for s in cutting)  # type: ignore[union-attr]
        cutting = [s for s in cutting if cards[s].rank == high]  # type: ignore[union-attr]
        if len(cutting) == 1:
            return Cut(tuple(rounds), cutting[0])


@dataclass(slots=True)
class Hand:
    """The whole state of one hand. Seats are numbered clockwise; play goes to the left
    (seat + 1). Only `apply` changes it."""

    rules: HouseRules
    players: int
    dealer: int
    stakes: tuple[int, ...]
    deck: Sequence[Card] | None = None
    rng: random.Random | None = None
    multiplier: int = 1
    hands: list[list[Card]] = field(init=False)
    stock: list[Card] = field(init=False)  # the top card is the last
    discards: list[Card] = field(init=False)  # the top card is the last
    # (the spreads and the hit locks are tuples, so that a view shares them as they are: they
    # change now and then, while a view is built on every action)
    spreads: tuple[Spread, ...] = field(init=False)
    turn: int = field(init=False)
    phase: Phase = field(init=False)
    taken_discard: Card | None = field(init=False)
    hit_locks: tuple[int, ...] = field(init=False)
    settlement: Settlement | None = field(init=False)
    events: list[Event] = field(init=False)
    actions: list[Action] = field(init=False)
    deck_order: tuple[Card, ...] = field(init=False)
    _next_spread: int = field(init=False)
    _turn_events: tuple[Event, ...] = field(init=False)  # by seat
    # How many cards each seat holds, kept as the hands change: a view shows it on every
    # action, and counting the hands each time cost a third of building the view.
    _sizes: list[int] = field(init=False)

    def __post_init__(self) -> None:
        rules = self.rules
        if not 2 <= self.players <= rules.players:
            raise ValueError(f"these rules seat 2 to {rules.players} players, not {self.players}")
        if not 0 <= self.dealer < self.players:
            raise ValueError(f"no seat {self.dealer} to deal")
        stakes = tuple(self.stakes)
        if rules.stake_mode is _TABLE_STAKE and len(stakes) == 1:
            stakes = stakes * self.players
        if len(stakes) != self.players or any(type(s) is not int or s < 0 for s in stakes):
            raise ValueError("give one stake for the table or one whole-number stake per seat")
        if rules.stake_mode is _TABLE_STAKE and len(set(stakes)) != 1:
            raise ValueError("with stake_mode = table every seat plays for the same stake")
        self.stakes = stakes
        if self.deck is not None:
            order = list(self.deck)
            validate_deck(order)
        else:
            order = shuffled_deck(self.rng or random.Random())
        self.deck_order = tuple(order)
        players = self.players
        # Dealt one at a time, clockwise, from the dealer's left: the k-th seat from the
        # dealer's left (k = 0, 1, ...) gets every `players`-th card from card k on.
        dealt = HAND_SIZE * players
        self.hands = [
            order[(seat - self.dealer - 1) % players : dealt : players] for seat in range(players)
        ]
        self._sizes = [len(cards) for cards in self.hands]
        up = order[dealt]
        self.discards = [up]
        self.stock = order[dealt + 1 :]
        self.stock.reverse()
        self.spreads = ()
        self._next_spread = 1
        self._turn_events = _turn_events_at(players)
        self.turn = (self.dealer + 1) % players
        self.phase = _START
        self.taken_discard = None
        self.hit_locks = (0,) * players
        self.settlement = None
        self.actions = []
        self.events = [
            new_event("deal", seat, tuple(cards), private=True)
            for seat, cards in enumerate(self.hands)
        ]
        self.events.append(new_event("up_card", cards=(up,)))
        tonks = [s for s in range(players) if rules.is_deal_tonk(count(self.hands[s]))]
        if tonks:
            for seat in tonks:
                cards = tuple(self.hands[seat])
                self.events.append(new_event("deal_tonk", seat, cards, count=count(cards)))
            self._end(settle_deal_tonks(rules, self.hands, tonks, self.stakes, self.multiplier))
        else:
            self.events.append(self._turn_events[self.turn])

    @classmethod
    def position(
        cls,
        view: SeatView,
        hands: Sequence[Sequence[Card]],
        stock: Sequence[Card],
        discards: Sequence[Card],
    ) -> Hand:
        """A hand in the middle of play: what `view` shows, with every hand's cards, the stock
        (its top card last) and the pile (its top card last) filled in. A bot searching what
        may follow builds one from a deal of the cards its seat has not seen; the hand plays on
        from there like any other, but has no deck order or actions to replay."""
        hand: Hand = object.__new__(cls)
        hand.rules = view.rules
        hand.players = view.players
        hand.dealer = view.dealer
        hand.stakes = view.stakes
        hand.deck = None
        hand.rng = None
        hand.multiplier = view.multiplier
        hand.hands = [list(cards) for cards in hands]
        hand._sizes = [len(cards) for cards in hands]
        hand.stock = list(stock)
        hand.discards = list(discards)
        hand.spreads = view.spreads
        hand.turn = view.turn
        hand.phase = view.phase
        hand.taken_discard = view.taken_discard
        hand.hit_locks = view.hit_locks
        hand.settlement = view.settlement
        hand.events = []
        hand.actions = []
        hand.deck_order = ()
        hand._next_spread = max((spread.id for spread in view.spreads), default=0) + 1
        hand._turn_events = _turn_events_at(view.players)
        return hand

    # -- reading ----------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.phase is _ENDED

    @property
    def discard_top(self) -> Card | None:
        return self.discards[-1] if self.discards else None

    def hand_count(self, seat: int) -> int:
        return count(self.hands[seat])

    def record(self) -> HandRecord:
        return HandRecord(
            self.rules,
            self.players,
            self.dealer,
            self.stakes,
            self.multiplier,
            self.deck_order,
            tuple(self.actions),
        )

    def view(self, seat: int | None) -> SeatView:
        """What `seat` may see; None for a spectator."""
        # SeatView(...) the quick way (see _speedups), its fields in order: a call by keyword
        # costs seven times as much as this one, and a view is asked for on every action.
        return new_seat_view(
            seat,  # seat
            self.rules,  # rules
            self.players,  # players
            self.dealer,  # dealer
            self.turn,  # turn
            self.phase,  # phase
            () if seat is None else tuple(self.hands[seat]),  # hand
            tuple(self._sizes),  # card_counts
            self.spreads,  # spreads
            self.discards[-1] if self.discards else None,  # discard_top
            len(self.discards),  # discard_size
            len(self.stock),  # stock_size
            self.hit_locks,  # hit_locks
            self.stakes,  # stakes
            self.multiplier,  # multiplier
            self.taken_discard,  # taken_discard
            self.settlement,  # settlement
            len(self.events),  # event_count
        )

    def events_for(self, seat: int | None, start: int = 0) -> list[Event]:
        """The events from `start` on, as `seat` may see them."""
        return [event.for_seat(seat) for event in self.events[start:]]

    def legal_actions(self, seat: int) -> LegalActions:
        if seat != self.turn or self.ended:
            return LegalActions()
        return legal_actions(
            self.rules,
            self.phase,
            tuple(self.hands[seat]),
            self.spreads,
            self.discards[-1] if self.discards else None,
            self.hit_locks[seat],
            self.taken_discard,
        )

    # -- playing ----------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply one action; return the events it caused. Raises IllegalAction, with a reason a
        player can read, and changes nothing, if the action is not allowed now (legality.py
        says why)."""
        found = check(self, self.hands[self.turn], action)
        start = len(self.events)
        try:
            step = _STEPS[type(action)]
        except KeyError:  # a subclass of an action class
            step = _step_of(action)
        step(self, action, found)
        self.actions.append(action)
        return self.events[start:]

    def _drop(self, action: Drop, _: int) -> None:
        seat = action.seat
        self.events.append(new_event("drop", seat, count=self.hand_count(seat)))
        self._end(settle_drop(self.rules, seat, self.hands, self.stakes, self.multiplier))

    def _draw_stock(self, action: DrawStock, _: int) -> None:
        seat = action.seat
        if not self.stock:
            self.events.append(new_event("stock_out", seat))
            self._end(settle_stock_out(self.rules, self.hands, self.stakes, self.multiplier))
            return
        card = self.stock.pop()
        self.hands[seat].append(card)
        self._sizes[seat] += 1
        self.phase = _PLAY
        self.events.append(new_event("draw_stock", seat, (card,), None, True))  # private

    def _take_discard(self, action: TakeDiscard, _: int) -> None:
        seat = action.seat
        card = self.discards.pop()
        self.hands[seat].append(card)
        self._sizes[seat] += 1
        self.taken_discard = card
        self.phase = _PLAY
        self.events.append(new_event("take_discard", seat, (card,)))

    def _spread(self, action: LaySpread, kind: SpreadKind) -> None:
        seat, cards = action.seat, action.cards
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
        self._sizes[seat] -= len(cards)
        spread = Spread(
            self._next_spread, seat, kind, order_spread(cards, kind, self.rules.ace_high_runs)
        )
        self._next_spread += 1
        self.spreads = (*self.spreads, spread)
        self.events.append(new_event("spread", seat, spread.cards, spread=spread.id))
        self._after_laying(seat)

    def _hit(self, action: Hit, at: int) -> None:
        seat, card, spread_id = action.seat, action.card, action.spread
        del self.hands[seat][at]
        self._sizes[seat] -= 1
        spreads = list(self.spreads)
        index = 0
        while spreads[index].id != spread_id:
            index += 1
        spread = spreads[index]
        spreads[index] = spread.with_hit(card, seat, self.rules.ace_high_runs)
        self.spreads = tuple(spreads)
        if spread.owner != seat and self.rules.hit_lock:
            self._lock(spread.owner, self.rules.hit_lock)
        self.events.append(new_event("hit", seat, (card,), spread=spread_id))
        self._after_laying(seat)

    def _after_laying(self, seat: int) -> None:
        if not self.hands[seat]:
            self.events.append(new_event("tonk_out", seat))
            self._end(
                settle_out(
                    self.rules, seat, self.players, self.stakes, self.multiplier, tonk_out=True
                )
            )

    def _discard(self, action: Discard, at: int) -> None:
        seat, card = action.seat, action.card
        hand = self.hands[seat]
        del hand[at]
        self._sizes[seat] -= 1
        self.discards.append(card)
        self.events.append(new_event("discard", seat, (card,)))
        if self.hit_locks[seat]:
            self._lock(seat, self.hit_locks[seat] - 1)
        if not hand:
            self.events.append(new_event("out_on_discard", seat))
            self._end(
                settle_out(
                    self.rules, seat, self.players, self.stakes, self.multiplier, tonk_out=False
                )
            )
            return
        self.turn = (seat + 1) % self.players
        self.phase = _START
        self.taken_discard = None
        self.events.append(self._turn_events[self.turn])

    def _lock(self, seat: int, turns: int) -> None:
        locks = list(self.hit_locks)
        locks[seat] = turns
        self.hit_locks = tuple(locks)

    def _end(self, settlement: Settlement) -> None:
        self.settlement = settlement
        self.phase = _ENDED
        self.events.append(new_event("hand_end"))


#: How each kind of action changes the hand, once `check` has let it through, given what the
#: check found (where the card of a discard or a hit is in the hand, the kind of a spread).
_STEPS: dict[type, Callable[[Hand, Any, Any], None]] = {
    Drop: Hand._drop,
    DrawStock: Hand._draw_stock,
    TakeDiscard: Hand._take_discard,
    LaySpread: Hand._spread,
    Hit: Hand._hit,
    Discard: Hand._discard,
}


def _step_of(action: Action) -> Callable[[Hand, Any, Any], None]:
    """The step for an instance of a subclass of an action class."""
    return next(step for kind, step in _STEPS.items() if isinstance(action, kind))


@functools.cache
def _turn_events_at(players: int) -> tuple[Event, ...]:
    """The event that it is a seat's turn, by seat: values, the same in every hand, so made
    once (one is recorded every turn)."""
    return tuple(new_event("turn", seat) for seat in range(players))
