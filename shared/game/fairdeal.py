"""A deal anyone can check (PROTOCOL.md, "A deal anyone can check"): the commitment to the
server's secret, the seed drawn from it and the players' values, the keyed shuffle of the deck,
and the seal a stored hand keeps. The cut and a client's check of a hand, which play through the
hand engine, are `dealcheck`'s (a client loads the engine only once it checks a hand).

Pure: the secret and the values come in as bytes or text; none is drawn here.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import DECK, Card

#: The first line of what the deal's seed is made from: names this scheme and its version.
SCHEME = "tonk-deal/1"
#: Bytes of the server's secret, and of each player's value.
SECRET_BYTES = 32
VALUE_BYTES = 32
#: Hex digits of a secret, a value, a commitment (SHA-256).
HEX_LEN = 64
_HEX = frozenset("0123456789abcdef")
_WORD = 2**32


class SealError(ValueError):
    """A secret, a value or a commitment that is not 64 lowercase hex digits."""


def read_hex(text: str, what: str = "value") -> bytes:
    """The 32 bytes of a secret, a value or a commitment written as 64 lowercase hex digits."""
    if len(text) != HEX_LEN or not set(text) <= _HEX:
        raise SealError(f"a {what} is {HEX_LEN} lowercase hex digits")
    return bytes.fromhex(text)


def commitment_of(secret: bytes) -> str:
    """What the server sends before the deal: SHA-256 of the secret, in lowercase hex."""
    return hashlib.sha256(secret).hexdigest()


def deal_seed(secret: bytes, table: int, hand: int, values: Mapping[int, str]) -> bytes:
    """HMAC-SHA256 keyed by the secret over the hand's name and the values used, one line
    each in the order of the seats: everything the deck and the cut are drawn from."""
    lines = [SCHEME, f"table {table}", f"hand {hand}"]
    lines += [f"seat {seat} {values[seat]}" for seat in sorted(values)]
    message = "".join(line + "\n" for line in lines).encode("ascii")
    return hmac.new(secret, message, hashlib.sha256).digest()


class KeyedStream:
    """Whole numbers drawn from HMAC-SHA256(seed, label + counter): block k (k = 0, 1, ...)
    is the HMAC of the label's ASCII bytes followed by k as 8 bytes big-endian; each block
    gives eight 32-bit big-endian words, in order."""

    __slots__ = ("_block", "_counter", "_label", "_seed", "_words")

    def __init__(self, seed: bytes, label: str) -> None:
        self._seed = seed
        self._label = label.encode("ascii")
        self._counter = 0
        self._words: list[int] = []

    def word(self) -> int:
        """The next 32-bit word."""
        if not self._words:
            block = hmac.new(
                self._seed, self._label + self._counter.to_bytes(8, "big"), hashlib.sha256
            ).digest()
            self._counter += 1
            # (reversed, so that pop() gives them first to last)
            self._words = [int.from_bytes(block[i : i + 4], "big") for i in range(28, -1, -4)]
        return self._words.pop()

    def below(self, n: int) -> int:
        """A number from 0 to n - 1, each as likely: words at or above the largest multiple of
        n under 2**32 are thrown away and another drawn; the one kept is taken modulo n."""
        limit = _WORD - _WORD % n
        while True:
            word = self.word()
            if word < limit:
                return word % n


def keyed_shuffle(stream: KeyedStream) -> list[Card]:
    """A fresh deck (spades A-K, hearts, diamonds, clubs) shuffled by Fisher-Yates: for i from
    51 down to 1, the card at i is swapped with the card at `stream.below(i + 1)`."""
    deck = list(DECK)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deck_of(seed: bytes) -> tuple[Card, ...]:
    """The hand's deck order (the first card dealt first): the stream labelled `deck`."""
    return tuple(keyed_shuffle(KeyedStream(seed, "deck")))


# -- the server's side: the seal kept with a hand --------------------------------------------


@dataclass(frozen=True, slots=True)
class Seal:
    """What a hand's deal was drawn from: its table and number, the server's secret, and the
    players' values used (seat, 64 hex digits), in seat order. Kept in the hand's record."""

    table: int
    hand: int
    secret: str
    values: tuple[tuple[int, str], ...] = ()

    @property
    def commitment(self) -> str:
        return commitment_of(read_hex(self.secret, "secret"))

    def seed(self) -> bytes:
        return deal_seed(read_hex(self.secret, "secret"), self.table, self.hand, dict(self.values))

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheme": SCHEME,
            "table": self.table,
            "hand": self.hand,
            "commitment": self.commitment,
            "secret": self.secret,
            "values": [[seat, value] for seat, value in self.values],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Seal:
        values = tuple((int(seat), str(value)) for seat, value in data["values"])
        return cls(int(data["table"]), int(data["hand"]), str(data["secret"]), values)


def seal_problem(
    data: Mapping[str, Any], table: int, hand: int, deck: Sequence[Card]
) -> str | None:
    """What is wrong with a stored hand's seal (None: nothing): the commitment is not the
    secret's, the seal names another hand, or the deck stored is not the one drawn from it."""
    try:
        seal = Seal.from_dict(data)
        secret = read_hex(seal.secret, "secret")
        for _, value in seal.values:
            read_hex(value)
    except (KeyError, TypeError, ValueError) as exc:
        return f"its seal cannot be read: {exc}"
    if data.get("commitment") != commitment_of(secret):
        return "the secret stored is not the one its commitment was made for"
    if (seal.table, seal.hand) != (table, hand):
        return f"its seal is for hand {seal.hand} at table {seal.table}"
    if tuple(deck) != deck_of(seal.seed()):
        return "its deck is not the one drawn from the secret and the players' values"
    return None


def fresh_value(entropy: Callable[[int], bytes]) -> str:
    """A player's value, from `entropy` (os.urandom at the edge), in lowercase hex."""
    return entropy(VALUE_BYTES).hex()
