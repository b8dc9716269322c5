"""The game core's speed tricks, fenced here so that the modules of the rules read like the
rules they encode. Each was measured (BENCHMARKS.md, "Game core") and is kept because it still
pays on the easy-bot benchmark; nothing here decides a rule.

- `maker(Frozen)`: builds a frozen dataclass without its `__init__` (a class swap).
- `shuffle(deck, rng)`: `rng.shuffle(deck)`'s very order, without its Python call per card.
- `index_of(cards, card)`: a card's place in a list, found by identity before equality.
- `card_eq`: Card.__eq__, twice as quick as the one dataclass writes.
- `identity_hash`: a Suit's hash (a suit is a singleton), in C rather than Enum's Python one.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

from .records import record_defaults, record_fields

T = TypeVar("T")


def maker(frozen: type[T]) -> Callable[..., T]:
    """A function that builds a `frozen` (a frozen slots dataclass, or a record) from its
    fields, taking the same arguments as `frozen(...)` (defaults included), about four times as
    quickly.

    Why: a frozen dataclass's __init__ sets each field through object.__setattr__, about four
    times the cost of a plain store in CPython (an 18-field SeatView takes 1.2 us that way, 0.3
    us this way), and the hand builds a view, an event or two and the legal actions on every
    action. The function makes an empty instance of a subclass that takes plain stores, sets
    every field, then gives it its real class (`value.__class__ = frozen`): what comes out is
    an ordinary frozen value, equal to the one `frozen(...)` makes. The subclass adds no
    slots, so CPython allows the __class__ assignment; nothing else ever sees it.
    """
    writable = type(
        f"Writable{frozen.__name__}",
        (frozen,),
        {
            "__slots__": (),
            "__init__": object.__init__,  # made empty, filled in field by field
            # both, or CPython falls back to looking __setattr__ up on every store
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
        },
    )
    if is_dataclass(frozen):
        declared = [(each.name, each.default) for each in fields(frozen)]
    else:  # a record (records.py)
        given = record_defaults(frozen)
        declared = [(name, given.get(name, MISSING)) for name in record_fields(frozen)]
    params: list[str] = []
    defaults: dict[str, Any] = {}
    for name, default in declared:
        if default is not MISSING:
            defaults[f"_d_{name}"] = default
            params.append(f"{name}=_d_{name}")
        else:
            params.append(name)
    body = "".join(f"    v.{name} = {name}\n" for name, _ in declared)
    source = (
        f"def make_{frozen.__name__}({', '.join(params)}):\n"
        "    v = _writable()\n"
        f"{body}"
        "    v.__class__ = _frozen\n"
        "    return v\n"
    )
    namespace: dict[str, Any] = {"_writable": writable, "_frozen": frozen, **defaults}
    exec(source, namespace)  # as dataclasses itself writes __init__
    made: Callable[..., T] = namespace[f"make_{frozen.__name__}"]
    return made


def shuffle(deck: list[Any], rng: random.Random) -> None:
    """Shuffle `deck` in place into the very order `rng.shuffle(deck)` gives: Fisher-Yates,
    each index drawn with getrandbits of its bit length, again while out of range, as
    Random.shuffle does, written out without its Python call per card (which cost 3% of a
    simulated hand), and with each place's bit length worked out once for every deck of
    that size (a quarter of what is left). A test holds this to `rng.shuffle` for many seeds
    and sizes."""
    getrandbits = rng.getrandbits
    for i, bits in _draws(len(deck)):
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        deck[i], deck[j] = deck[j], deck[i]


@functools.cache
def _draws(size: int) -> tuple[tuple[int, int], ...]:
    """Each place `shuffle` draws a card for, from the last down to the second, with the bit
    length of the number of places it draws from (`i + 1`)."""
    return tuple((i, (i + 1).bit_length()) for i in range(size - 1, 0, -1))


def index_of(cards: Sequence[Any], card: object) -> int:
    """Where `card` is in `cards`, or -1. Looked for by identity first: a seat plays the very
    card objects its view holds, while `in` and list.index call Card.__eq__ (a Python function)
    on every card they pass. An equal card that is not the same object is still found (a hand
    never holds two equal cards)."""
    at = 0
    for held in cards:  # (a counter of its own: enumerate's tuples cost a third more)
        if held is card:
            return at
        at += 1  # noqa: SIM113 (quicker than enumerate, above)
    try:
        return cards.index(card)
    except ValueError:
        return -1


def card_eq(self: Any, other: object) -> Any:
    """Card's `==`: the same card object, or the same rank and suit. The one dataclass writes
    compares two tuples it builds, twice the cost; `card in hand` calls it for every card it
    passes, and the core and the bots ask that many times a turn."""
    if self is other:
        return True
    if other.__class__ is not self.__class__:
        return NotImplemented
    return self.rank == other.rank and self.suit is other.suit  # type: ignore[attr-defined]


#: A Suit's hash. A suit is a singleton compared by identity, so it may be hashed by identity
#: too: Enum's own __hash__ is a Python function (the hash of the member's name), and suits and
#: cards (a card hashes its rank and suit) are looked up in dicts and sets on every turn.
identity_hash = object.__hash__
