"""The game core's speed tricks that pay, fenced here; each has a plain twin its callers could
use instead, and a test holds the two to the same result.

- `new_seat_view` and `new_event`: the two frozen values the hand makes on every action, a
  seat's view and an event, built without the frozen dataclass's `__init__`.
- `shuffled_deck`: `cards.shuffled_deck`'s very order, without `Random.shuffle`'s Python call
  per card.

One more lives in cards.py, which this module imports: a suit hashed by identity, in C.

Measured by taking each trick out alone from tonk-sim and counting its instructions a hand
(BENCHMARKS.md, "Speed tricks, one at a time"): views through `SeatView(...)` cost 37% more,
events through `Event(...)` 12%, Enum's hash of a suit 5.5%, `Random.shuffle` 3.5%. The tricks
that cost 2% or less were retired, and so was the quick `LegalActions(...)` (5.8%): legality.py
builds them, and view.py imports legality, so that this module, which builds views, cannot be
imported by legality without an import circle.

Why the values: a frozen value's `__init__` sets each field through `object.__setattr__`,
about four times the cost of a plain store in CPython 3.11 (an 18-field SeatView takes 1.2 us
that way, 0.3 us this way), and the hand makes a view for the seat to act and an event or two
on every action. Each of the two functions makes an empty instance of a writable subclass
(stores are plain there), sets every field, then gives it its real class: what comes out is an
ordinary frozen value, equal to the one the class makes. The subclass adds no slots, so CPython
allows the `__class__` assignment.

Each takes its class's fields in order, typed, so that mypy checks every call (a test holds
the parameters to the fields). The hand calls `new_seat_view` by position: with 18 keywords a
call costs about seven times as much in CPython 3.11 (1.4 us against 0.2).
"""

from __future__ import annotations

import functools
import random
from typing import Any

from .game.actions import Event
from .game.cards import DECK, Card
from .game.legality import Phase
from .game.rules import HouseRules
from .game.settlement import Settlement
from .game.spreads import Spread
from .game.view import SeatView


def _writable(frozen: type[Any]) -> type[Any]:
    """A subclass of `frozen` whose fields take plain stores and whose `__init__` does nothing."""
    return type(
        f"Writable{frozen.__name__}",
        (frozen,),
        {
            "__slots__": (),
            "__init__": object.__init__,
            # both, or CPython falls back to looking __setattr__ up on every store
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
        },
    )


_WritableSeatView = _writable(SeatView)
_WritableEvent = _writable(Event)


def new_seat_view(
    seat: int | None,
    rules: HouseRules,
    players: int,
    dealer: int,
    turn: int,
    phase: Phase,
    hand: tuple[Card, ...],
    card_counts: tuple[int, ...],
    spreads: tuple[Spread, ...],
    discard_top: Card | None,
    discard_size: int,
    stock_size: int,
    hit_locks: tuple[int, ...],
    stakes: tuple[int, ...],
    multiplier: int,
    taken_discard: Card | None,
    settlement: Settlement | None,
    event_count: int,
) -> SeatView:
    """`SeatView(...)`, the quick way."""
    view = _WritableSeatView()
    view.seat = seat
    view.rules = rules
    view.players = players
    view.dealer = dealer
    view.turn = turn
    view.phase = phase
    view.hand = hand
    view.card_counts = card_counts
    view.spreads = spreads
    view.discard_top = discard_top
    view.discard_size = discard_size
    view.stock_size = stock_size
    view.hit_locks = hit_locks
    view.stakes = stakes
    view.multiplier = multiplier
    view.taken_discard = taken_discard
    view.settlement = settlement
    view.event_count = event_count
    view.__class__ = SeatView
    made: SeatView = view
    return made


def new_event(
    kind: str,
    seat: int | None = None,
    cards: tuple[Card, ...] = (),
    spread: int | None = None,
    private: bool = False,
    count: int | None = None,
) -> Event:
    """`Event(...)`, the quick way."""
    event = _WritableEvent()
    event.kind = kind
    event.seat = seat
    event.cards = cards
    event.spread = spread
    event.private = private
    event.count = count
    event.__class__ = Event
    made: Event = event
    return made


def shuffled_deck(rng: random.Random) -> list[Card]:
    """`cards.shuffled_deck(rng)`, the quick way: Fisher-Yates as `Random.shuffle` does it,
    each place drawn with `getrandbits` of its bit length, again while out of range, written
    out without `Random.shuffle`'s Python call per card, each place's bit length worked out
    once."""
    deck = list(DECK)
    getrandbits = rng.getrandbits
    for i, bits in _draws(len(deck)):
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@functools.cache
def _draws(size: int) -> tuple[tuple[int, int], ...]:
    """Each place the shuffle draws a card for, from the last down to the second, with the bit
    length of the number of places it draws from (`i + 1`)."""
    return tuple((i, (i + 1).bit_length()) for i in range(size - 1, 0, -1))
