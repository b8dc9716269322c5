"""Spreads: what makes a book or a run, what may be hit onto one, and finding them in a hand."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from itertools import combinations, pairwise

from ..records import record
from .cards import RANK_NAMES, Card, Suit, format_cards
from .rules import HouseRules


class SpreadKind(Enum):
    BOOK = "book"
    RUN = "run"


@record
class Spread:
    """A spread on the table. `cards` are in display order; `hits` says who hit which card."""

    id: int
    owner: int
    kind: SpreadKind
    cards: tuple[Card, ...]
    hits: tuple[tuple[Card, int], ...] = ()

    def hit_by(self, card: Card) -> int | None:
        for hit_card, seat in self.hits:
            if hit_card == card:
                return seat
        return None

    @property
    def described(self) -> str:
        """`book of jacks`, `run 8♠ 9♠ 10♠` (its cards as the table shows them)."""
        if self.kind is SpreadKind.BOOK:
            rank = RANK_NAMES[self.cards[0].rank]
            return f"book of {rank}{'es' if rank.endswith('x') else 's'}"
        return f"run {format_cards(self.cards, False)}"

    def with_hit(self, card: Card, seat: int, ace_high: bool) -> Spread:
        cards = order_spread((*self.cards, card), self.kind, ace_high)
        return Spread(self.id, self.owner, self.kind, cards, (*self.hits, (card, seat)))


def _run_ranks_ok(ranks: list[int]) -> bool:
    ranks.sort()
    return all(b - a == 1 for a, b in pairwise(ranks))


def spread_kind(cards: Sequence[Card], rules: HouseRules) -> SpreadKind | None:
    """BOOK for 3-4 of a rank, RUN for 3+ consecutive in one suit (aces low; with
    `ace_high_runs` also Q-K-A, never K-A-2); None if the cards are no spread."""
    n = len(cards)
    if n < 3:
        return None
    first = cards[0]
    if all(card.rank == first.rank for card in cards):
        return SpreadKind.BOOK if n <= 4 else None
    if is_run(cards, rules.ace_high_runs):
        return SpreadKind.RUN
    return None


def is_run(cards: Sequence[Card], ace_high: bool) -> bool:
    if len(cards) < 3:
        return False
    suit = cards[0].suit
    if any(card.suit is not suit for card in cards):
        return False
    ranks = [card.rank for card in cards]
    if len(set(ranks)) != len(ranks):
        return False
    if _run_ranks_ok(ranks):
        return True
    return ace_high and 1 in ranks and _run_ranks_ok([14 if r == 1 else r for r in ranks])


def order_spread(cards: Iterable[Card], kind: SpreadKind, ace_high: bool) -> tuple[Card, ...]:
    """Display order: a run low to high (the ace last when it is played high), a book by suit."""
    items = list(cards)
    if kind is SpreadKind.BOOK:
        return tuple(sorted(items, key=lambda c: c.index))
    ranks = [c.rank for c in items]
    if ace_high and 1 in ranks and not _run_ranks_ok(list(ranks)):
        return tuple(sorted(items, key=lambda c: 14 if c.rank == 1 else c.rank))
    return tuple(sorted(items, key=lambda c: c.rank))


def can_hit(spread: Spread, card: Card, rules: HouseRules) -> bool:
    """Whether `card` may be added to `spread`: a run extended at either end, or a book of
    three made four (when `hit_books`)."""
    if spread.kind is SpreadKind.BOOK:
        return rules.hit_books and len(spread.cards) == 3 and card.rank == spread.cards[0].rank
    if card.suit is not spread.cards[0].suit:
        return False
    # A card extending a run is next in rank to one of its cards (or an ace next to a king).
    rank = card.rank
    for other in spread.cards:
        if other.rank - rank in (1, -1):
            break
    else:
        if not (rules.ace_high_runs and rank in (1, 13)):
            return False
    return is_run((*spread.cards, card), rules.ace_high_runs)


def find_spreads(hand: Sequence[Card], rules: HouseRules) -> list[tuple[Card, ...]]:
    """Every spread that can be laid from `hand` (books of 3 and 4, runs of every length),
    each in display order."""
    found: list[tuple[Card, ...]] = []
    # Asked for every legal-action question, mostly about hands that hold no spread. The hand
    # written as bits (bit 16 * suit + rank) tells at once whether a rank may be held three
    # times and whether a suit has three ranks in a row; only then are the cards grouped.
    bits = 0
    for card in hand:
        bits |= 1 << (_SUIT_SHIFT[card.suit] + card.rank)
    spades, hearts = bits & 0xFFFF, bits >> 16 & 0xFFFF
    diamonds, clubs = bits >> 32 & 0xFFFF, bits >> 48
    # the ranks held in at least three suits: books
    books = (spades & hearts & (diamonds | clubs)) | ((spades | hearts) & diamonds & clubs)
    if books:
        for rank in dict.fromkeys([card.rank for card in hand]):
            if books >> rank & 1:
                ordered = sorted([c for c in hand if c.rank == rank], key=_deck_index)
                for size in range(3, len(ordered) + 1):
                    found.extend(combinations(ordered, size))
    ace_high = rules.ace_high_runs
    if ace_high:
        bits |= (bits & _ACES) << 13  # an ace also sits above its suit's king
    if not bits & (bits >> 1) & (bits >> 2):
        return found
    by_suit: dict[object, list[Card]] = {}
    for card in hand:
        by_suit.setdefault(card.suit, []).append(card)
    for group in by_suit.values():
        if len(group) < 3:
            continue
        ranks_in_suit = {c.rank: c for c in group}
        highs = [14] if ace_high and 1 in ranks_in_suit else []
        keys = sorted(ranks_in_suit) + highs
        # maximal stretches of consecutive ranks, then every sub-stretch of length >= 3
        stretch: list[int] = []
        stretches: list[list[int]] = []
        for key in keys:
            if stretch and key != stretch[-1] + 1:
                stretches.append(stretch)
                stretch = []
            stretch.append(key)
        stretches.append(stretch)
        for run in stretches:
            for start in range(len(run)):
                for end in range(start + 3, len(run) + 1):
                    part = run[start:end]
                    if 14 in part and 1 in part:
                        continue
                    found.append(tuple(ranks_in_suit[1 if k == 14 else k] for k in part))
    return found


def _deck_index(card: Card) -> int:
    return card.index


#: Where each suit's ranks sit when `find_spreads` writes a hand as bits; 16 bits a suit leave
#: bit 0 and bit 15 of each suit empty, so three bits in a row never straddle two suits.
_SUIT_SHIFT = {suit: 16 * i for i, suit in enumerate(Suit)}
_ACES = sum(1 << (shift + 1) for shift in _SUIT_SHIFT.values())
