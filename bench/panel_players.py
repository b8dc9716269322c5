"""The panel: opponents that play Tonk the way people at a kitchen table do, each in a style
of its own, for measuring the shipped bots against (bench/panel.py). A measuring instrument,
not a strategy to pick at a table: none of them is in the bot registry.

They are written from how people play, not from `sharp`: a person remembers the last few
discards, not every card; misjudges a count a little; likes pairs; takes a discard that fits
the hand; and drops at a count that feels low. Each plays through `SeatBot`, so it sees only
its own seat's view and events, and draws any randomness from its own seeded source."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence

from tonk.shared.bots.bots import Bot, make_bot
from tonk.shared.bots.seatbots import SeatBot, card_uses, fallback, richest_lay
from tonk.shared.bots.sharp import best_lay
from tonk.shared.game.actions import Action, Discard, DrawStock, Drop, Event, TakeDiscard
from tonk.shared.game.cards import RANK_VALUE, Card, count
from tonk.shared.game.view import LegalActions, Phase, SeatView


def pairs_with(card: Card, hand: Sequence[Card]) -> bool:
    """Whether another card of `hand` has `card`'s rank."""
    return any(other.rank == card.rank and other != card for other in hand)


def next_to(card: Card, hand: Sequence[Card], reach: int = 1) -> bool:
    """Whether another card of `hand` is of `card`'s suit and at most `reach` ranks away."""
    return any(
        other.suit is card.suit and 0 < abs(other.rank - card.rank) <= reach for other in hand
    )


class Person(SeatBot):
    """What the panel's players share: a short memory of the discards, a drop at a count that
    feels low enough, a liking for pairs and suited neighbours when choosing what to throw,
    and a few slips. Each style is a subclass setting the numbers below (and, for the few
    things a style does differently, overriding a method)."""

    strategy = "person"
    tracks = True

    MEMORY = 4  # the last discards remembered
    DROP_AT: int | None = 8  # drops at or below this count (None: never)
    MISJUDGE = 0  # misjudges its own count by up to this many points either way when dropping
    PAIR_KEEP = 3.0  # points a card is worth keeping for being one of a pair
    NEIGHBOUR_KEEP = 2.0  # ... for a suited neighbour one rank away (half that for two)
    LOW_SWAP = 2  # takes a discard counting this or less when holding a high card (0: never)
    SLIP = 0.0  # the chance of throwing its second choice instead of its first
    TAKE_TURNS = 8  # takes a discard it only likes (no spread or hit) up to this own turn

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.new_hand()

    def new_hand(self) -> None:
        self.recent: deque[tuple[int, Card]] = deque(maxlen=self.MEMORY)  # (seat, card)
        self.taken: dict[int, Card] = {}  # the last discard each seat picked up
        self.draws = 0  # own draws this hand (from the stock or the pile): its turns so far
        self.thrown: set[Card] = set()  # its own discards this hand: it does not take one back

    def see(self, event: Event) -> None:
        seat = event.seat
        if seat is None:
            return
        if event.kind == "discard":
            self.recent.append((seat, event.cards[0]))
            if seat == self.seat:
                self.thrown.add(event.cards[0])
        elif event.kind == "take_discard":
            self.taken[seat] = event.cards[0]
        if seat == self.seat and event.kind in ("draw_stock", "take_discard"):
            self.draws += 1

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, view: SeatView, legal: LegalActions) -> Action:
        seat = view.turn
        if view.phase is Phase.START:
            if legal.drop and self.drops(view):
                return Drop(seat)
            top = view.discard_top
            if legal.take_discard and top is not None and self.takes(view, top):
                return TakeDiscard(seat)
            if legal.draw_stock:
                return DrawStock(seat)
            return fallback(seat, legal)
        if self.lays_now(view) and (lay := richest_lay(seat, legal)) is not None:
            return lay
        if legal.discards:
            return Discard(seat, self.throw(view, legal.discards))
        return fallback(seat, legal)

    def turn(self, view: SeatView) -> int:
        """Its turn of the hand: 1 on its first."""
        return self.draws + (view.phase is Phase.START)

    def drop_at(self, view: SeatView) -> int | None:
        """The count it would drop at, or below, this turn."""
        return self.DROP_AT

    def drops(self, view: SeatView) -> bool:
        limit = self.drop_at(view)
        if limit is None:
            return False
        mine = count(view.hand)
        if self.MISJUDGE:
            mine += self.rng.randint(-self.MISJUDGE, self.MISJUDGE)
        return mine <= limit

    def takes(self, view: SeatView, top: Card) -> bool:
        """Whether to take the top discard rather than draw blind: when it makes a spread or a
        hit, or (`fancies`) for what else the style likes in a card, though never a card it
        threw itself, nor for a liking once the hand has gone on long (the stock must run
        down, or two players could pass the same cards back and forth for ever)."""
        if card_uses(top, view.hand, view.spreads, view.rules):
            return True
        if view.stock_size == 0:
            return False  # the next draw ends the hand: only a card laid at once helps
        if top in self.thrown or self.turn(view) > self.TAKE_TURNS:
            return False
        return self.fancies(view, top)

    def fancies(self, view: SeatView, top: Card) -> bool:
        """Whether it likes the top discard though it makes no spread or hit now: a low card
        while it holds a high one."""
        if self.LOW_SWAP and RANK_VALUE[top.rank] <= self.LOW_SWAP:
            return any(RANK_VALUE[card.rank] >= 9 for card in view.hand)
        return False

    def lays_now(self, view: SeatView) -> bool:
        """Whether to lay its spreads and hits now (most people lay them as soon as they can)."""
        return True

    def keep_worth(self, card: Card, view: SeatView) -> float:
        """Points a card is worth keeping beyond its count: pairs and suited neighbours, a pair
        worth half when a card of its rank is among the discards it recalls (a dead draw, as
        far as it knows)."""
        hand = view.hand
        worth = 0.0
        thrown = {c for _, c in self.recent}
        if pairs_with(card, hand):
            dead = any(c.rank == card.rank for c in thrown)
            worth += self.PAIR_KEEP / (2 if dead else 1)
        if next_to(card, hand, 1):
            worth += self.NEIGHBOUR_KEEP
        elif next_to(card, hand, 2):
            worth += self.NEIGHBOUR_KEEP / 2
        return worth

    def throw(self, view: SeatView, allowed: Sequence[Card]) -> Card:
        """The card to discard: the one worth least to keep (its count less what it is worth
        keeping), a high card first of equals; now and then the second choice."""
        ranked = sorted(
            allowed,
            key=lambda c: (RANK_VALUE[c.rank] - self.keep_worth(c, view), c.rank),
            reverse=True,
        )
        if self.SLIP and len(ranked) > 1 and self.rng.random() < self.SLIP:
            return ranked[1]
        return ranked[0]


class Cautious(Person):
    """Drops only when very low (5 or less), otherwise keeps its count down: throws its
    highest cards, takes a low discard for a high card."""

    strategy = "cautious"
    DROP_AT = 5
    PAIR_KEEP = 2.0
    NEIGHBOUR_KEEP = 1.0
    LOW_SWAP = 3


class Eager(Person):
    """Drops as soon as the count feels probably low: 15 or less on its first two turns, 12
    after, misjudging its count by a point or so."""

    strategy = "eager"
    MISJUDGE = 1
    PAIR_KEEP = 1.0
    NEIGHBOUR_KEEP = 0.5
    EARLY = 15
    LATER = 12

    def drop_at(self, view: SeatView) -> int:
        return self.EARLY if self.turn(view) <= 2 else self.LATER


class NeverDrops(Person):
    """Never drops: plays for its spreads and for going out, keeping pairs and runs-in-the-
    making, and takes a discard that pairs a card."""

    strategy = "never-drops"
    DROP_AT = None
    PAIR_KEEP = 5.0
    NEIGHBOUR_KEEP = 3.0
    LOW_SWAP = 0

    def fancies(self, view: SeatView, top: Card) -> bool:
        return pairs_with(top, (*view.hand, top))


class Hoarder(Person):
    """Keeps its pairs, whatever they count, and takes every discard that pairs one of its
    cards or sits next to one in its suit; drops at 7 or less."""

    strategy = "hoarder"
    DROP_AT = 7
    PAIR_KEEP = 8.0
    NEIGHBOUR_KEEP = 3.0
    LOW_SWAP = 0

    def fancies(self, view: SeatView, top: Card) -> bool:
        hand = view.hand
        return pairs_with(top, (*hand, top)) or next_to(top, hand)


class TonkOut(Person):
    """Plays for the tonk out: holds its spreads in hand and lays them down only when that
    leaves it at most one card (out now), or late in the hand (after its sixth turn, or when
    the stock is short or someone is down to two cards); keeps every card that would spread
    or hit; drops only at 3 or less."""

    strategy = "tonk-out"
    DROP_AT = 3
    PAIR_KEEP = 4.0
    NEIGHBOUR_KEEP = 3.0
    LOW_SWAP = 0
    LATE_TURN = 6

    def lays_now(self, view: SeatView) -> bool:
        seat = view.turn
        _, rest, _ = best_lay(view.hand, view.spreads, view.rules, seat)
        if len(rest) <= 1:
            return True
        short = min(n for s, n in enumerate(view.card_counts) if s != seat) <= 2
        return self.turn(view) > self.LATE_TURN or view.stock_size < 2 * view.players or short

    def keep_worth(self, card: Card, view: SeatView) -> float:
        worth = super().keep_worth(card, view)
        rest = [c for c in view.hand if c != card]
        if card_uses(card, rest, view.spreads, view.rules):
            worth += 10.0  # part of a spread it holds, or a hit it keeps for later
        return worth


class Middling(Person):
    """A bit of everything, as a typical player: drops at about 10, less with more players
    and more on its first turn, misjudging its count by up to 2; keeps pairs and neighbours;
    takes a discard that fits or a low one for a high card; avoids throwing the next player a
    card near the one they last picked up; slips one discard in ten."""

    strategy = "middling"
    MISJUDGE = 2
    SLIP = 0.1
    MEMORY = 3

    def drop_at(self, view: SeatView) -> int:
        limit = 10 - 2 * (view.players - 2)
        return limit + 2 if self.turn(view) == 1 else limit

    def fancies(self, view: SeatView, top: Card) -> bool:
        if super().fancies(view, top):
            return True
        return RANK_VALUE[top.rank] <= 5 and pairs_with(top, (*view.hand, top))

    def keep_worth(self, card: Card, view: SeatView) -> float:
        worth = super().keep_worth(card, view)
        wanted = self.taken.get((view.turn + 1) % view.players)
        if wanted is not None and (
            wanted.rank == card.rank
            or (wanted.suit is card.suit and abs(wanted.rank - card.rank) <= 2)
        ):
            worth += 3.0  # the next player is collecting these
        return worth


#: The panel's own players by name, each a maker of a bot from its random source.
PEOPLE: dict[str, type[Person]] = {
    cls.strategy: cls for cls in (Cautious, Eager, NeverDrops, Hoarder, TonkOut, Middling)
}


def _registry(name: str) -> Callable[[random.Random], Bot]:
    def make(rng: random.Random) -> Bot:
        return make_bot(name, rng)

    return make


#: The whole panel: the six people and, beside them, the shipped `easy` and `sharp`.
PANEL: dict[str, Callable[[random.Random], Bot]] = {
    **PEOPLE,
    "easy": _registry("easy"),
    "sharp": _registry("sharp"),
}
#: Held back from tuning (see BENCHMARKS.md, "Bots against the panel"): a tuned bot is checked
#: against these on the held-out deals, never tuned against them.
HELD_OUT = ("tonk-out", "middling")
TUNING = tuple(name for name in PANEL if name not in HELD_OUT)
