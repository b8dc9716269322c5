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

from .actions import (
    Action,
    Discard,
    DrawStock,
    Drop,
    Event,
    Hit,
    IllegalAction,
    LaySpread,
    TakeDiscard,
    action_from_dict,
    action_to_dict,
    make_event,
    writable_subclass,
)
from .cards import Card, count, format_cards, parse_cards, shuffled_deck, validate_deck
from .rules import HouseRules, StakeMode
from .settlement import (
    Settlement,
    settle_deal_tonks,
    settle_drop,
    settle_out,
    settle_stock_out,
)
from .spreads import Spread, can_hit, order_spread, spread_kind
from .view import LegalActions, Phase, SeatView, legal_actions, move_leaves_turn_finishable

HAND_SIZE = 5

# The phases under module names: see the note at `_START` in view.py.
_START, _PLAY, _ENDED = Phase.START, Phase.PLAY, Phase.ENDED
_WritableView = writable_subclass(SeatView)  # see writable_subclass: views are built often


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
        hand = self.deal()
        for action in self.actions:
            hand.apply(action)
        return hand


@dataclass(frozen=True, slots=True)
class Cut:
    """The cut for the first dealer: each round's cards by seat (None: not cutting that round)."""

    rounds: tuple[tuple[Card | None, ...], ...]
    dealer: int


def cut_for_deal(players: int, rng: random.Random) -> Cut:
    """Everybody cuts; the high card deals (ace low); those tied for high cut again."""
    cutting = list(range(players))
    rounds: list[tuple[Card | None, ...]] = []
    while True:
        deck = shuffled_deck(rng)
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
    spreads: list[Spread] = field(init=False)
    turn: int = field(init=False)
    phase: Phase = field(init=False)
    taken_discard: Card | None = field(init=False)
    hit_locks: list[int] = field(init=False)
    settlement: Settlement | None = field(init=False)
    events: list[Event] = field(init=False)
    actions: list[Action] = field(init=False)
    deck_order: tuple[Card, ...] = field(init=False)
    _next_spread: int = field(init=False)

    def __post_init__(self) -> None:
        rules = self.rules
        if not 2 <= self.players <= rules.players:
            raise ValueError(f"these rules seat 2 to {rules.players} players, not {self.players}")
        if not 0 <= self.dealer < self.players:
            raise ValueError(f"no seat {self.dealer} to deal")
        stakes = tuple(self.stakes)
        if rules.stake_mode is StakeMode.TABLE and len(stakes) == 1:
            stakes = stakes * self.players
        if len(stakes) != self.players or any(type(s) is not int or s < 0 for s in stakes):
            raise ValueError("give one stake for the table or one whole-number stake per seat")
        if rules.stake_mode is StakeMode.TABLE and len(set(stakes)) != 1:
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
        up = order[dealt]
        self.discards = [up]
        self.stock = order[dealt + 1 :]
        self.stock.reverse()
        self.spreads = []
        self._next_spread = 1
        self.turn = (self.dealer + 1) % players
        self.phase = _START
        self.taken_discard = None
        self.hit_locks = [0] * players
        self.settlement = None
        self.actions = []
        self.events = [
            make_event("deal", seat, tuple(cards), private=True)
            for seat, cards in enumerate(self.hands)
        ]
        self.events.append(make_event("up_card", cards=(up,)))
        tonks = [s for s in range(players) if rules.is_deal_tonk(count(self.hands[s]))]
        if tonks:
            for seat in tonks:
                cards = tuple(self.hands[seat])
                self.events.append(make_event("deal_tonk", seat, cards, count=count(cards)))
            self._end(settle_deal_tonks(rules, self.hands, tonks, self.stakes, self.multiplier))
        else:
            self.events.append(_turn_event(self.turn))

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
        hand.stock = list(stock)
        hand.discards = list(discards)
        hand.spreads = list(view.spreads)
        hand.turn = view.turn
        hand.phase = view.phase
        hand.taken_discard = view.taken_discard
        hand.hit_locks = list(view.hit_locks)
        hand.settlement = view.settlement
        hand.events = []
        hand.actions = []
        hand.deck_order = ()
        hand._next_spread = max((spread.id for spread in view.spreads), default=0) + 1
        return hand

    # -- reading ----------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.phase is _ENDED

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
        # Built field by field, every field of SeatView (see writable_subclass): the simulator
        # and the server ask for a view on every action.
        view: Any = _WritableView()
        view.seat = seat
        view.rules = self.rules
        view.players = self.players
        view.dealer = self.dealer
        view.turn = self.turn
        view.phase = self.phase
        view.hand = () if seat is None else tuple(self.hands[seat])
        view.card_counts = tuple(map(len, self.hands))
        view.spreads = tuple(self.spreads)
        view.discard_top = self.discards[-1] if self.discards else None
        view.discard_size = len(self.discards)
        view.stock_size = len(self.stock)
        view.hit_locks = tuple(self.hit_locks)
        view.stakes = self.stakes
        view.multiplier = self.multiplier
        view.taken_discard = self.taken_discard
        view.settlement = self.settlement
        view.event_count = len(self.events)
        view.__class__ = SeatView
        frozen: SeatView = view  # (no typing.cast: a call, on every action)
        return frozen

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
            tuple(self.spreads),
            self.discards[-1] if self.discards else None,
            self.hit_locks[seat],
            self.taken_discard,
        )

    # -- playing ----------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply one action; return the events it caused. Raises IllegalAction, with a reason a
        player can read, and changes nothing, if the action is not allowed now."""
        if self.phase is _ENDED:
            raise IllegalAction("the hand is over", "hand_over")
        seat = action.seat
        if not 0 <= seat < self.players:
            raise IllegalAction(f"there is no seat {seat}", "bad_seat")
        if seat != self.turn:
            raise IllegalAction("it is not your turn", "not_your_turn")
        start = len(self.events)
        opens_turn, step = _STEPS.get(type(action)) or _step_of(action)
        if opens_turn:
            if self.phase is not _START:
                raise IllegalAction(
                    "you have drawn this turn already: spread, hit or discard", "wrong_phase"
                )
        elif self.phase is not _PLAY:
            raise IllegalAction(
                "draw from the stock or take the top discard first (or drop)", "wrong_phase"
            )
        step(self, action)
        self.actions.append(action)
        return self.events[start:]

    def _drop(self, action: Drop) -> None:
        seat = action.seat
        if self.hit_locks[seat]:
            raise IllegalAction(
                "your spread was hit: you may not drop this turn (hit and hold)", "hit_locked"
            )
        self.events.append(make_event("drop", seat, count=self.hand_count(seat)))
        self._end(settle_drop(self.rules, seat, self.hands, self.stakes, self.multiplier))

    def _draw_stock(self, action: DrawStock) -> None:
        seat = action.seat
        if not self.stock:
            self.events.append(make_event("stock_out", seat))
            self._end(settle_stock_out(self.rules, self.hands, self.stakes, self.multiplier))
            return
        card = self.stock.pop()
        self.hands[seat].append(card)
        self.phase = _PLAY
        self.events.append(make_event("draw_stock", seat, (card,), private=True))

    def _take_discard(self, action: TakeDiscard) -> None:
        seat = action.seat
        if not self.discards:
            raise IllegalAction("the discard pile is empty", "empty_pile")
        card = self.discards[-1]
        hand = self.hands[seat]
        if (
            self.rules.discard_must_use
            and not legal_actions(
                self.rules, _START, tuple(hand), tuple(self.spreads), card, 0, None
            ).take_discard
        ):
            raise IllegalAction(
                f"you may take {card.pretty()} only if you can spread or hit it this turn",
                "must_use",
            )
        self.discards.pop()
        hand.append(card)
        self.taken_discard = card
        self.phase = _PLAY
        self.events.append(make_event("take_discard", seat, (card,)))

    def _check_finishable(self, seat: int, cards: tuple[Card, ...], onto: int | None) -> None:
        taken = self.taken_discard
        if taken is None or taken in cards or taken not in self.hands[seat]:
            return
        if not (self.rules.discard_must_use or self.rules.no_rediscard):
            return
        if not move_leaves_turn_finishable(
            self.rules, self.hands[seat], self.spreads, taken, cards, onto
        ):
            raise IllegalAction(
                f"that would leave you no way to finish your turn with {taken.pretty()}", "must_use"
            )

    def _take_from_hand(self, seat: int, cards: Sequence[Card]) -> None:
        hand = self.hands[seat]
        for card in cards:
            at = _position(hand, card)
            assert at >= 0, "the caller checks that every card is held"
            del hand[at]

    def _spread(self, action: LaySpread) -> None:
        seat, cards = action.seat, action.cards
        hand = self.hands[seat]
        if len(set(cards)) != len(cards):
            raise IllegalAction("a card appears twice in that spread", "not_a_spread")
        missing = [c for c in cards if _position(hand, c) < 0]
        if missing:
            raise IllegalAction(f"you do not hold {format_cards(missing, False)}", "not_in_hand")
        kind = spread_kind(cards, self.rules)
        if kind is None:
            raise IllegalAction(
                f"{format_cards(cards, False)} is not a spread: a book is 3 or 4 of a rank, "
                "a run 3 or more in a row in one suit"
                + (
                    " (aces low or high, never K-A-2)"
                    if self.rules.ace_high_runs
                    else " (aces low)"
                ),
                "not_a_spread",
            )
        self._check_finishable(seat, cards, None)
        self._take_from_hand(seat, cards)
        spread = Spread(
            self._next_spread, seat, kind, order_spread(cards, kind, self.rules.ace_high_runs)
        )
        self._next_spread += 1
        self.spreads.append(spread)
        self.events.append(make_event("spread", seat, spread.cards, spread=spread.id))
        self._after_laying(seat)

    def _hit(self, action: Hit) -> None:
        seat, card, spread_id = action.seat, action.card, action.spread
        at = _position(self.hands[seat], card)
        if at < 0:
            raise IllegalAction(f"you do not hold {card.pretty()}", "not_in_hand")
        index = next((i for i, s in enumerate(self.spreads) if s.id == spread_id), None)
        if index is None:
            raise IllegalAction(f"there is no spread {spread_id} on the table", "no_such_spread")
        spread = self.spreads[index]
        if not can_hit(spread, card, self.rules):
            why = (
                "a book of three may not be hit under these rules"
                if spread.kind.value == "book" and not self.rules.hit_books
                else "it does not extend that spread"
            )
            raise IllegalAction(
                f"{card.pretty()} cannot be hit onto {{owner}} {spread.described}: {why}",
                "cannot_hit",
                owner=spread.owner,
            )
        self._check_finishable(seat, (card,), spread_id)
        del self.hands[seat][at]
        self.spreads[index] = spread.with_hit(card, seat, self.rules.ace_high_runs)
        if spread.owner != seat and self.rules.hit_lock:
            self.hit_locks[spread.owner] = self.rules.hit_lock
        self.events.append(make_event("hit", seat, (card,), spread=spread_id))
        self._after_laying(seat)

    def _after_laying(self, seat: int) -> None:
        if not self.hands[seat]:
            self.events.append(make_event("tonk_out", seat))
            self._end(
                settle_out(
                    self.rules, seat, self.players, self.stakes, self.multiplier, tonk_out=True
                )
            )

    def _discard(self, action: Discard) -> None:
        seat, card = action.seat, action.card
        hand = self.hands[seat]
        at = _position(hand, card)
        if at < 0:
            raise IllegalAction(f"you do not hold {card.pretty()}", "not_in_hand")
        taken = self.taken_discard
        if taken is not None and taken in hand:
            if self.rules.discard_must_use:
                raise IllegalAction(
                    f"you took {taken.pretty()} from the pile: spread it or hit with it first",
                    "must_use",
                )
            if self.rules.no_rediscard and card == taken:
                raise IllegalAction(
                    f"you took {taken.pretty()} from the pile this turn: discard another card",
                    "no_rediscard",
                )
        del hand[at]
        self.discards.append(card)
        self.events.append(make_event("discard", seat, (card,)))
        if self.hit_locks[seat]:
            self.hit_locks[seat] -= 1
        if not hand:
            self.events.append(make_event("out_on_discard", seat))
            self._end(
                settle_out(
                    self.rules, seat, self.players, self.stakes, self.multiplier, tonk_out=False
                )
            )
            return
        self.turn = (seat + 1) % self.players
        self.phase = _START
        self.taken_discard = None
        self.events.append(_turn_event(self.turn))

    def _end(self, settlement: Settlement) -> None:
        self.settlement = settlement
        self.phase = _ENDED
        self.events.append(make_event("hand_end"))


def _position(cards: list[Card], card: Card) -> int:
    """Where `card` is in `cards`, or -1. Looked for by identity first: a seat plays the very
    card objects its view holds, while `in` and list.index call Card.__eq__ (a Python function)
    on every card they pass. An equal card that is not the same object is still found (a hand
    never holds two equal cards)."""
    for at, held in enumerate(cards):
        if held is card:
            return at
    try:
        return cards.index(card)
    except ValueError:
        return -1


#: How each kind of action is applied: whether it opens a turn (a drop or a draw; the others
#: come after the draw) and the Hand method that does it. `Hand.apply` looks the action's class
#: up here, quicker than a chain of isinstance checks on every action.
_STEPS: dict[type, tuple[bool, Callable[[Hand, Any], None]]] = {
    Drop: (True, Hand._drop),
    DrawStock: (True, Hand._draw_stock),
    TakeDiscard: (True, Hand._take_discard),
    LaySpread: (False, Hand._spread),
    Hit: (False, Hand._hit),
    Discard: (False, Hand._discard),
}


def _step_of(action: Action) -> tuple[bool, Callable[[Hand, Any], None]]:
    """The step for an instance of a subclass of an action class."""
    for cls, step in _STEPS.items():
        if isinstance(action, cls):
            return step
    return False, _not_an_action


def _not_an_action(hand: Hand, action: Any) -> None:
    raise AssertionError(f"not an action: {action!r}")


@functools.cache
def _turn_event(seat: int) -> Event:
    """The event that it is `seat`'s turn: a value, the same in every hand, so made once (one
    is recorded every turn)."""
    return make_event("turn", seat)
