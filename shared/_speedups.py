"""The speed tricks that pay, fenced here; each has a plain twin its callers could use
instead, and a test holds the two to the same result.

- `new_seat_view` and `new_event`: the two frozen values the hand makes on every action, a
  seat's view and an event, built without the frozen dataclass's `__init__`.
- `shuffled_deck`: `cards.shuffled_deck`'s very order, without `Random.shuffle`'s Python call
  per card.
- `packed`, `tables_frame`, `lobby_frame`: the server's lobby packs each table's summary once
  per change, and a page or a `lobby` message is those bytes joined inside its map, the very
  frame `protocol.encode` makes of the message as a dict (the twin; a test holds the two).

Three more live where they act, as they cannot move here: a suit hashed by identity, in C
(game/cards.py, which this module imports: its dicts keyed by suit are built as it runs), the
records' code generator (records.py: the core's values, which this module imports, are
records), and the hand's phases read under module names (`_START`, `_PLAY`, `_ENDED` in
game/legality.py, which defines them and which this module imports, and in game/hand.py and
game/view.py): 7.4% of tonk-sim's instructions a hand (BENCHMARKS.md, "Tricks outside the
fence"). Every other enum member is read plainly (`SpreadKind.RUN`, `LinkState.OPEN`).

Measured by taking each trick out alone from tonk-sim and counting its instructions a hand
(BENCHMARKS.md, "Speed tricks, one at a time"): views through `SeatView(...)` cost 37% more,
events through `Event(...)` 12%, Enum's hash of a suit 5.5% (4.9% measured again since),
`Random.shuffle` 3.5%. The tricks that cost about 2% or less were retired (Card's `__eq__`
written out the last, at 2.1%), and so was the quick `LegalActions(...)` (5.8%): legality.py
builds them, and view.py imports legality, so that this module, which builds views, cannot be
imported by legality without an import circle.

Why the lobby's frames: msgpack packs a summary (a map of 21 fields and its players) in 3 to
5 us, so a page of 100 encoded whole takes 0.3 to 0.6 ms against 7 us joined from summaries
packed before; encoded whole, 200 lobby connections paging as fast as their limits allow held
1,000 paced tables up by one to two seconds (BENCHMARKS.md, "The last three tricks"). A msgpack
map or array is its header followed by its items' bytes, with no end marker, so joining packed
items gives the same bytes as packing the whole; the headers come from msgpack's own `Packer`.

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
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack

from .game.actions import Event
from .game.cards import DECK, Card
from .game.legality import Phase
from .game.rules import HouseRules
from .game.settlement import Settlement
from .game.spreads import Spread
from .game.view import SeatView
from .wire import protocol as p


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


# -- the lobby's frames, put together from summaries packed once --------------------------------

_packer = msgpack.Packer(use_bin_type=True)  # (packb makes a new Packer per call)
_pack = _packer.pack


def packed(value: Mapping[str, Any]) -> bytes:
    """`value` packed as it is packed inside a frame: a table's summary, packed once."""
    return _pack(value)


def tables_frame(
    summaries: Sequence[bytes], after: int, more: bool, total: int, reply_to: int | None
) -> bytes:
    """`protocol.encode` of the `tables` page of these packed summaries (`type`, `after`,
    `more`, `total`, `tables`, and `reply_to` if given, in that order)."""
    fields = [
        ("type", [_pack(p.TABLES)]),
        ("after", [_pack(after)]),
        ("more", [_pack(more)]),
        ("total", [_pack(total)]),
        ("tables", _array(summaries)),
    ]
    if reply_to is not None:
        fields.append(("reply_to", [_pack(reply_to)]))
    return _frame(fields)


def lobby_frame(summaries: Sequence[bytes], removed: list[int]) -> bytes:
    """`protocol.encode` of the `lobby` message of these packed summaries and removed ids."""
    return _frame(
        [("type", [_pack(p.LOBBY)]), ("tables", _array(summaries)), ("removed", [_pack(removed)])]
    )


def _array(items: Sequence[bytes]) -> list[bytes]:
    """The parts of a msgpack array of values packed already: its header, then the values
    (msgpack has no end marker: an array is its header followed by its items' bytes)."""
    return [_packer.pack_array_header(len(items)), *items]


def _frame(fields: list[tuple[str, list[bytes]]]) -> bytes:
    """The frame of the map of these keys and values (each value in parts packed already), in
    this order: the length, the map's header, then each key and its value, joined once."""
    parts = [_packer.pack_map_header(len(fields))]
    for key, value in fields:
        parts.append(_pack(key))
        parts.extend(value)
    size = sum(map(len, parts))
    return b"".join((size.to_bytes(p.HEADER_SIZE, "big"), *parts))
