"""Cards as values: parsing, formatting, counting, the deck and its seeded shuffle."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum


class Suit(Enum):
    """The four suits, in the order a fresh deck is built."""

    SPADES = "s"
    HEARTS = "h"
    DIAMONDS = "d"
    CLUBS = "c"

    # A speed trick, kept here rather than in _speedups.py: a suit is a singleton, so it is
    # hashed by identity, in C (Enum's own __hash__ is a Python function, and cards, which hash
    # their rank and suit, are hashed in sets and dicts on every turn); without it tonk-sim
    # does 4.9% more instructions a hand (BENCHMARKS.md, "The last three tricks"). It cannot
    # move: _speedups.py imports this module, so it could only set the hash once this module
    # has run, and by then the dicts below keyed by suit (_SUIT_ORDER, _TEXT, ...) are built
    # with Enum's hash, and would miss every lookup after it.
    __hash__ = object.__hash__

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOLS[self]

    @property
    def name_plural(self) -> str:
        return self.name.lower()

    # Cards sort by rank, then suit in deck order; a Suit must therefore be ordered too.
    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Suit):
            return NotImplemented
        return _SUIT_ORDER[self] < _SUIT_ORDER[other]

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Suit):
            return NotImplemented
        return _SUIT_ORDER[self] > _SUIT_ORDER[other]

    def __le__(self, other: object) -> bool:
        return self == other or self < other

    def __ge__(self, other: object) -> bool:
        return self == other or self > other


_SUIT_SYMBOLS = {Suit.SPADES: "♠", Suit.HEARTS: "♥", Suit.DIAMONDS: "♦", Suit.CLUBS: "♣"}
_RANK_TEXT = {1: "A", 11: "J", 12: "Q", 13: "K"}
_RANK_PARSE = {"A": 1, "J": 11, "Q": 12, "K": 13, "T": 10, "10": 10, "1": 1}
#: What a card of each rank counts in a hand, indexed by rank: ace 1, 2 to 10 their face value,
#: J Q K 10. The one place card values are written.
RANK_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
RANK_NAMES = {
    1: "ace",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "jack",
    12: "queen",
    13: "king",
}


class CardError(ValueError):
    """A card's text could not be read."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card. Ranks run 1 (ace) to 13 (king)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise CardError(f"rank must be 1-13, not {self.rank}")

    @property
    def value(self) -> int:
        """What the card counts in a hand (see RANK_VALUE)."""
        return RANK_VALUE[self.rank]

    @property
    def index(self) -> int:
        """A stable number 0-51, for compact encodings."""
        return _SUIT_ORDER[self.suit] * 13 + self.rank - 1

    @property
    def rank_text(self) -> str:
        return _RANK_TEXT.get(self.rank, str(self.rank))

    def __str__(self) -> str:
        return _TEXT[self.suit][self.rank]

    def __repr__(self) -> str:
        return f"Card({self})"

    def pretty(self, ascii_only: bool = False) -> str:
        """`10♠` with a suit symbol, or `10S` for terminals that draw symbols badly."""
        if ascii_only:
            return f"{self.rank_text}{self.suit.value.upper()}"
        return f"{self.rank_text}{self.suit.symbol}"

    @property
    def name(self) -> str:
        return f"{RANK_NAMES[self.rank]} of {self.suit.name_plural}"


_SUIT_ORDER = {suit: i for i, suit in enumerate(Suit)}
_SUIT_PARSE = {suit.value: suit for suit in Suit} | {suit.symbol: suit for suit in Suit}

#: The 52 cards in fresh-deck order (spades A-K, hearts, diamonds, clubs); `DECK[card.index]`.
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in Suit for rank in range(1, 14))
_BY_TEXT: dict[str, Card] = {}
# The text of every card, by suit and rank, worked out once: `10s`, `Qh`. Every view and event
# sent carries cards as text, several hundred a second per table under load, and formatting
# each one (an f-string of two properties) was a tenth of the server's event loop.
_TEXT: dict[Suit, tuple[str, ...]] = {
    suit: ("", *(f"{_RANK_TEXT.get(rank, str(rank))}{suit.value}" for rank in range(1, 14)))
    for suit in Suit
}


def parse_card(text: str) -> Card:
    """Read `10s`, `Ts`, `Qh`, `Ac`, `4c`, `10♠` or `10S`; raise CardError otherwise."""
    key = text.strip()
    cached = _BY_TEXT.get(key)
    if cached is not None:
        return cached
    if len(key) < 2:
        raise CardError(f"not a card: {text!r} (write a rank and a suit, like 10s, Qh, Ac)")
    rank_part, suit_part = key[:-1].upper(), key[-1]
    suit = _SUIT_PARSE.get(suit_part.lower()) or _SUIT_PARSE.get(suit_part)
    rank = _RANK_PARSE.get(rank_part)
    if rank is None and rank_part.isascii() and rank_part.isdigit() and 2 <= int(rank_part) <= 10:
        rank = int(rank_part)
    if suit is None or rank is None:
        raise CardError(f"not a card: {text!r} (write a rank and a suit, like 10s, Qh, Ac)")
    card = DECK[_SUIT_ORDER[suit] * 13 + rank - 1]
    _BY_TEXT[key] = card
    return card


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Read several cards, from `"10s 8d 8h"` or from a list of card texts."""
    parts = text.split() if isinstance(text, str) else list(text)
    return tuple(parse_card(part) for part in parts)


def format_cards(cards: Iterable[Card], ascii_only: bool | None = None) -> str:
    """`10s 8d 8h`, or with `ascii_only` given, the pretty form of each card."""
    if ascii_only is None:
        text = _TEXT
        # A list, not a generator: join makes a list from a generator anyway.
        return " ".join([text[card.suit][card.rank] for card in cards])
    return " ".join(card.pretty(ascii_only) for card in cards)


def count(cards: Iterable[Card]) -> int:
    """The count of a hand: the sum of its cards' values."""
    # A plain loop over a table of values, a quarter of the cost of sum() over `card.value`
    # (counted at every deal, and for every hand shown at a drop or a stock-out).
    total = 0
    for card in cards:
        total += RANK_VALUE[card.rank]
    return total


def shuffled_deck(rng: random.Random) -> list[Card]:
    """A full deck in an order drawn from `rng`: the same seed gives the same order."""
    deck = list(DECK)
    rng.shuffle(deck)
    return deck


def validate_deck(deck: Sequence[Card]) -> None:
    """Raise CardError unless `deck` is the 52 distinct cards."""
    if len(deck) != 52 or len(set(deck)) != 52:
        raise CardError("a deck order must list each of the 52 cards exactly once")


def stacked_deck(
    hands: Sequence[Sequence[Card]],
    dealer: int,
    up_card: Card,
    stock: Sequence[Card] = (),
) -> list[Card]:
    """A deck order that deals `hands` (indexed by seat), turns up `up_card`, and puts `stock`
    on top of the stock in that order; the cards left over follow in fresh-deck order.

    Used by tests, replays and teaching, to set up a known position.
    """
    players = len(hands)
    if any(len(hand) != 5 for hand in hands):
        raise CardError("each hand must have 5 cards")
    order: list[Card] = []
    for round_ in range(5):
        for offset in range(1, players + 1):
            order.append(hands[(dealer + offset) % players][round_])
    order.append(up_card)
    order.extend(stock)
    used = set(order)
    if len(used) != len(order):
        raise CardError("a card appears twice in the stacked deck")
    order.extend(card for card in DECK if card not in used)
    return order
