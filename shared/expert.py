"""`expert`: decides by sampling deals of the cards its seat has not seen, consistent with
everything the seat has seen (a determinized, information-set Monte Carlo search), and playing
each choice out to the end of the hand under the table's rules and payments."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from math import comb

from .actions import Action, Discard, DrawStock, Drop, Hit, LaySpread, TakeDiscard
from .bots import VALUE, Live, SharpBot, card_uses, fallback, hand_count
from .cards import DECK, Card
from .hand import Hand
from .settlement import settle_drop
from .view import LegalActions, Phase, SeatView

_START = Phase.START  # under a module name: see the note at `_START` in view.py

#: A sampled deal: every seat's cards (the searching seat's as it holds them), the stock (its
#: top card last) and the pile (its top card last).
Deal = tuple[list[list[Card]], list[Card], list[Card]]


class ExpertBot(SharpBot):
    """Plays its spreads and hits as `sharp` does; weighs each real choice (drop, draw from
    the stock or take the discard; which card to throw) by dealing the unseen cards many ways
    and playing each choice out to the hand's end, every seat then playing the quick policy
    (`playout_action`), and takes the choice that wins the most by the table's settlement.
    It reads only its seat's view and events; the search's size is a number of samples, so a
    decision depends on the seed alone, never on the clock."""

    strategy = "expert"

    DEALS = 160  # at most this many deals of the unseen cards sampled for a decision
    CHECK_EVERY = 20  # deals between looks at whether one option is clearly best
    CLEAR = 3.0  # ... by this many standard errors of its lead
    CANDIDATES = 4  # random deals each sampled deal is picked from, by how likely it is
    DISCARDS = 3  # discards weighed by search: the best few by sharp's score
    DISCARD_SPAN = 6.0  # ... no worse than the best by more than this
    DROP_MAX = 25  # a drop above this count is never weighed
    PLAYOUT_LIMIT = 400  # actions before a playout is called even (a hand ends long before)

    # -- deciding -------------------------------------------------------------------------------

    def start_turn(self, view: SeatView, legal: LegalActions) -> Action:
        if view.stock_size == 0:
            return super().start_turn(view, legal)  # drawing ends the hand: nothing to weigh
        seat = view.turn
        hand = view.hand
        options: list[Action] = [DrawStock(seat)]
        if legal.drop and hand_count(hand) <= self.DROP_MAX:
            options.append(Drop(seat))
        top = view.discard_top
        if (
            legal.take_discard
            and top is not None
            and (
                card_uses(top, hand, view.spreads, view.rules)
                or VALUE[top.rank] < max(VALUE[card.rank] for card in hand)
            )
        ):
            options.append(TakeDiscard(seat))  # (a dead card no lower than any held is not)
        if len(options) == 1:
            return options[0]
        return self.search(view, options) or super().start_turn(view, legal)

    def choose_discard(self, view: SeatView, allowed: tuple[Card, ...]) -> Action:
        seat = view.turn
        if len(view.hand) == 1:
            return Discard(seat, view.hand[0])  # out on the discard
        scores = sorted(
            self.discard_scores(view.hand, Live(self.unseen(view)), allowed),
            key=lambda scored: (scored[0], -VALUE[scored[1].rank], -scored[1].rank),
        )
        best = scores[0][0]
        options: list[Action] = [
            Discard(seat, card)
            for score, card in scores[: self.DISCARDS]
            if score <= best + self.DISCARD_SPAN
        ]
        if len(options) > 1:
            chosen = self.search(view, options)
            if chosen is not None:
                return chosen
        return options[0]

    # -- searching ------------------------------------------------------------------------------

    def search(self, view: SeatView, options: Sequence[Action]) -> Action | None:
        """The option that wins the most over the sampled deals (None if the unseen cards
        cannot fill the hidden places: a seat that came in mid-hand may not know enough).
        Every option is played out on the same deals, so their differences are measured, not
        drowned in the deals' luck; sampling stops early once the leader is clearly ahead."""
        seat = view.turn
        rules = view.rules
        nets: list[list[int]] = [[] for _ in options]
        dealt = 0
        for hands, stock, pile in self.deals(view, self.DEALS):
            for option, found in zip(options, nets, strict=True):
                if isinstance(option, Drop):
                    settlement = settle_drop(rules, seat, hands, view.stakes, view.multiplier)
                    found.append(settlement.net(view.players)[seat])
                else:
                    hand = Hand.position(view, hands, stock, pile)
                    hand.apply(option)
                    found.append(play_out(hand, seat, self.PLAYOUT_LIMIT))
            dealt += 1
            if dealt % self.CHECK_EVERY == 0 and clearly_best(nets, self.CLEAR) is not None:
                break
        if not dealt:
            return None
        best = max(range(len(options)), key=lambda i: (sum(nets[i]), -i))
        return options[best]

    def deals(self, view: SeatView, count: int) -> Iterator[Deal]:
        """`count` deals of the unseen cards into the other hands (around the cards each is
        known to hold: taken from the pile and not yet played) and the stock; none if the
        unseen cards cannot fill those places. Players keep their low cards: each deal is
        picked from CANDIDATES random ones, a candidate being LIKELY_HIGH times as likely for
        each card it gives a player above what that player last threw away."""
        seat = view.turn
        unseen = self.unseen(view)
        places: list[tuple[int, list[Card], int, int]] = []  # (seat, known, hidden, thrown)
        for other in range(view.players):
            if other == seat:
                continue
            known = self.known.get(other, [])[: view.card_counts[other]]
            hidden = view.card_counts[other] - len(known)
            places.append((other, known, hidden, self.last_discard.get(other, 10)))
        needed = sum(hidden for _, _, hidden, _ in places) + view.stock_size
        size = len(unseen)
        if needed > size:
            return
        top = view.discard_top
        pile = list(self.pile)
        if top is None:
            pile = []
        elif not pile or pile[-1] != top or len(pile) != view.discard_size:
            pile = [top]  # the cards under the top were not all seen (came in mid-hand)
        random_ = self.rng.random
        likely_high = self.LIKELY_HIGH
        mine = list(view.hand)
        for _ in range(count):
            best: list[Card] = unseen
            best_key = -1.0
            for _ in range(self.CANDIDATES):
                # a partial shuffle deals `needed` random unseen cards to the front
                for k in range(needed):
                    j = k + int(random_() * (size - k))
                    unseen[k], unseen[j] = unseen[j], unseen[k]
                weight = 1.0
                at = 0
                for _, _, hidden, thrown in places:
                    for card in unseen[at : at + hidden]:
                        if VALUE[card.rank] > thrown:
                            weight *= likely_high
                    at += hidden
                # one of the candidates drawn with chance by weight (Efraimidis-Spirakis)
                key = random_() ** (1.0 / weight)
                if key > best_key:
                    best, best_key = unseen[:needed], key
            hands: list[list[Card]] = [mine] * view.players
            at = 0
            for other, known, hidden, _ in places:
                hands[other] = known + best[at : at + hidden]
                at += hidden
            yield hands, best[at:needed], pile


def clearly_best(nets: Sequence[Sequence[int]], clear: float) -> int | None:
    """The option whose mean net beats every other's by more than `clear` standard errors
    of their paired differences (the same deals), or None while none does."""
    n = len(nets[0])
    best = max(range(len(nets)), key=lambda i: sum(nets[i]))
    for other in range(len(nets)):
        if other == best:
            continue
        diffs = [a - b for a, b in zip(nets[best], nets[other], strict=True)]
        mean = sum(diffs) / n
        variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        if mean <= clear * (variance / n) ** 0.5:
            return None
    return best


def play_out(hand: Hand, seat: int, limit: int) -> int:
    """Play `hand` to its end with every seat on the quick policy; what `seat` nets."""
    for _ in range(limit):
        settlement = hand.settlement
        if settlement is not None:
            return settlement.net(hand.players)[seat]
        hand.apply(playout_action(hand))
    return 0


def playout_action(hand: Hand) -> Action:
    """The quick policy a playout plays for the seat to act, from that seat's cards and what
    is on the table: drop when the count is likely the lowest and the drop worth its risk by
    the rules' payments; take the top discard when it makes a spread or a hit; lay the biggest
    spread or hit; throw the highest card."""
    seat = hand.turn
    cards = hand.hands[seat]
    rules = hand.rules
    if hand.phase is _START:
        if not hand.hit_locks[seat] and playout_drops(hand, seat, hand_count(cards)):
            return Drop(seat)
        top = hand.discards[-1] if hand.discards else None
        if (
            top is not None
            and card_uses(top, cards, hand.spreads, rules)
            and (not rules.discard_must_use or hand.legal_actions(seat).take_discard)
        ):
            return TakeDiscard(seat)
        return DrawStock(seat)
    legal = hand.legal_actions(seat)
    if legal.spreads:
        return LaySpread(seat, max(legal.spreads, key=_spread_count))
    if legal.hits:
        card, spread = max(legal.hits, key=_hit_count)
        return Hit(seat, card, spread)
    if legal.discards:
        return Discard(seat, max(legal.discards, key=_card_count))
    return fallback(seat, legal)


#: A playout seat drops when its drop is worth at least this share of a won drop.
PLAYOUT_DROP_WORTH = 0.6


def playout_drops(hand: Hand, seat: int, mine: int) -> bool:
    """Whether a playout seat drops at `mine`: the chance that each other hand, as so many
    cards from the deck, counts more, against what a caught drop costs at this table."""
    if mine > 25:
        return False
    chance = 1.0
    for other, cards in enumerate(hand.hands):
        if other != seat:
            chance *= above(len(cards), mine)
    others = hand.players - 1
    worth = chance - (1 - chance) * hand.rules.caught_pays / others
    return worth >= PLAYOUT_DROP_WORTH


@functools.cache
def above(cards: int, total: int) -> float:
    """The chance that `cards` cards from a full deck count more than `total`."""
    ways = _sum_ways(cards)
    return sum(ways[total + 1 :]) / comb(len(DECK), cards)


@functools.cache
def _sum_ways(cards: int) -> tuple[int, ...]:
    """How many sets of `cards` cards of the deck count each total."""
    ways = [[0] * (10 * cards + 1) for _ in range(cards + 1)]
    ways[0][0] = 1
    for card in DECK:
        value = VALUE[card.rank]
        for k in range(cards, 0, -1):
            row, below = ways[k], ways[k - 1]
            for total in range(10 * cards, value - 1, -1):
                row[total] += below[total - value]
    return tuple(ways[cards])


def _spread_count(cards: tuple[Card, ...]) -> int:
    return hand_count(cards)


def _hit_count(hit: tuple[Card, int]) -> int:
    return VALUE[hit[0].rank]


def _card_count(card: Card) -> tuple[int, int]:
    return VALUE[card.rank], card.rank
