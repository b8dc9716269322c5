"""`sharp`: counts what it has seen, plays its spreads and hits for the most count, keeps low
cards and near-spreads, and drops when its count is likely the lowest."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Sequence

from ..game.actions import Action, Event, Hit, LaySpread
from ..game.cards import DECK, RANK_VALUE, Card, Suit, count
from ..game.rules import HouseRules
from ..game.spreads import Spread, can_hit, find_spreads, order_spread, spread_kind
from ..game.view import LegalActions, Phase, SeatView
from .seatbots import (
    SeatBot,
    _discard,
    _draw_stock,
    _drop,
    _spread_value,
    _take_discard,
    card_uses,
    fallback,
    richest_lay,
)

#: A step of a laying plan: a new spread (its cards), or a hit (one card onto a spread's id).
Step = LaySpread | Hit


def best_lay(
    hand: tuple[Card, ...], table: tuple[Spread, ...], rules: HouseRules, seat: int
) -> tuple[int, tuple[Card, ...], Step | None]:
    """The spreads and hits from `hand` that remove the most count (then the most cards):
    (count removed, cards left, the first step). Hits may go onto spreads the plan lays."""
    best_removed = 0
    best_rest = hand
    best_step: Step | None = None
    for cards in find_spreads(hand, rules):
        rest = tuple([c for c in hand if c not in cards])
        kind = spread_kind(cards, rules)
        assert kind is not None
        laid = Spread(-1, seat, kind, order_spread(cards, kind, rules.ace_high_runs))
        removed, left, _ = best_lay(rest, (*table, laid), rules, seat)
        removed += _spread_value(cards)
        if removed > best_removed or (removed == best_removed and len(left) < len(best_rest)):
            best_removed, best_rest, best_step = removed, left, LaySpread(seat, cards)
    for card in hand:
        for i, spread in enumerate(table):
            if can_hit(spread, card, rules):
                rest = tuple([c for c in hand if c is not card])
                after = (
                    *table[:i],
                    spread.with_hit(card, seat, rules.ace_high_runs),
                    *table[i + 1 :],
                )
                removed, left, _ = best_lay(rest, after, rules, seat)
                removed += RANK_VALUE[card.rank]
                if removed > best_removed or (
                    removed == best_removed and len(left) < len(best_rest)
                ):
                    best_removed, best_rest, best_step = removed, left, Hit(seat, card, spread.id)
                break  # the same card onto another spread removes the same count
    return best_removed, best_rest, best_step


class Live:
    """The unseen cards by rank and by suit: what could still complete a near-spread."""

    __slots__ = ("by_rank", "by_suit")

    def __init__(self, cards: Sequence[Card]) -> None:
        self.by_rank = [0] * 15
        self.by_suit: dict[Suit, set[int]] = {suit: set() for suit in Suit}
        for card in cards:
            self.add(card)

    def add(self, card: Card) -> None:
        self.by_rank[card.rank] += 1
        self.by_suit[card.suit].add(card.rank)

    def remove(self, card: Card) -> None:
        self.by_rank[card.rank] -= 1
        self.by_suit[card.suit].discard(card.rank)

    def near(self, a: Card, b: Card) -> int:
        """What a pair is worth as a near-spread: its points times the live cards that
        would make it a book or a run."""
        if a.rank == b.rank:
            outs = self.by_rank[a.rank]
        elif a.suit is b.suit:
            low, high = (a.rank, b.rank) if a.rank < b.rank else (b.rank, a.rank)
            ranks = self.by_suit[a.suit]
            if high - low == 1:
                outs = (low - 1 in ranks) + (high + 1 in ranks)
            elif high - low == 2:
                outs = int(low + 1 in ranks)
            else:
                return 0
        else:
            return 0
        return outs * (RANK_VALUE[a.rank] + RANK_VALUE[b.rank])


def _uses_top(view: SeatView, legal: LegalActions) -> bool:
    """Whether the seat may take the top discard and could lay it at once."""
    top = view.discard_top
    return (
        legal.take_discard
        and top is not None
        and card_uses(top, view.hand, view.spreads, view.rules)
    )


def near_spreads(cards: Sequence[Card], live: Live) -> tuple[list[float], float]:
    """The worth of the near-spreads (pairs and suited neighbours that live cards could make a
    spread of) each card is part of, and of all of them together."""
    n = len(cards)
    near_each = [0.0] * n
    near_all = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            near = live.near(cards[i], cards[j])
            if near:
                near_each[i] += near
                near_each[j] += near
                near_all += near
    return near_each, near_all


class SharpBot(SeatBot):
    """Counts what it has seen, plays its spreads and hits for the most count, keeps low cards
    and near-spreads, takes the discard when it beats the expected stock card, and drops when
    sampling the unseen cards says a drop is worth enough by the table's own payments and
    stakes (what a caught drop costs against what a won one pays)."""

    strategy = "sharp"
    tracks = True

    SAMPLES = 120  # deals of the unseen cards sampled per drop question
    DROP_WORTH = 0.5  # drop when its expected winnings are at least this share of a won drop
    DROP_MAX = 20  # never drop above this count (no sampling needed)
    NEAR_WEIGHT = 0.2  # worth of a near-spread, per live card that completes it, per point
    TAKE_MARGIN = 0.5  # how much better than the expected stock card the discard must be
    LIKELY_HIGH = 0.3  # weight of a card above what its holder last discarded
    OUT = -100.0  # score of a hand that goes out

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.new_hand()

    def new_hand(self) -> None:
        self.pile: list[Card] = []
        self.known: dict[int, list[Card]] = {}
        self.last_discard: dict[int, int] = {}

    def see(self, event: Event) -> None:
        kind = event.kind
        seat = event.seat
        if kind == "discard" and seat is not None:
            card = event.cards[0]
            self.pile.append(card)
            self.last_discard[seat] = RANK_VALUE[card.rank]
            self._forget(seat, event.cards)
        elif kind == "take_discard" and seat is not None:
            card = event.cards[0]
            if self.pile and self.pile[-1] == card:
                self.pile.pop()
            self.known.setdefault(seat, []).append(card)
        elif kind in ("spread", "hit") and seat is not None:
            self._forget(seat, event.cards)
        elif kind == "up_card":
            self.pile.append(event.cards[0])

    def _forget(self, seat: int, cards: Sequence[Card]) -> None:
        held = self.known.get(seat)
        if held:
            for card in cards:
                if card in held:
                    held.remove(card)

    # -- what is unseen -------------------------------------------------------------------------

    def unseen(self, view: SeatView) -> list[Card]:
        """Cards this seat has not seen placed: in the stock or hidden in other hands."""
        seen = set(view.hand)
        seen.update(self.pile)
        if view.discard_top is not None:
            seen.add(view.discard_top)
        for spread in view.spreads:
            seen.update(spread.cards)
        for seat, cards in self.known.items():
            if seat != view.seat:
                seen.update(cards)
        return [card for card in DECK if card not in seen]

    def chance_lowest(self, view: SeatView, mine: int, unseen: Sequence[Card]) -> float:
        """The chance that every other seat counts more than `mine` (see `drop_outcomes`)."""
        won = total = 0.0
        for weight, catchers in self.drop_outcomes(view, mine, unseen, self.SAMPLES):
            total += weight
            if not catchers:
                won += weight
        return won / total if total else 0.0

    def drop_outcomes(
        self, view: SeatView, mine: int, unseen: Sequence[Card], samples: int
    ) -> Iterator[tuple[float, tuple[int, ...]]]:
        """Who would catch a drop at `mine`, over `samples` sampled deals of the unseen cards:
        (weight, the seats at or below `mine`) for each. A sample fills the other hands around
        their known cards with unseen cards at random, and weighs down cards higher than what
        their holder last threw away (players keep low cards)."""
        seat = view.seat
        sure: list[int] = []  # seats whose whole hand is known and at or below us
        others: list[tuple[int, int, int, int]] = []  # (seat, known count, hidden, last discard)
        for other in range(view.players):
            if other == seat:
                continue
            known = self.known.get(other, [])
            known_count = count(known)
            hidden = max(0, view.card_counts[other] - len(known))
            if hidden == 0:
                if known_count <= mine:
                    sure.append(other)
                continue
            others.append((other, known_count, hidden, self.last_discard.get(other, 10)))
        pool = [RANK_VALUE[card.rank] for card in unseen]
        size = len(pool)
        needed = sum(hidden for _, _, hidden, _ in others)
        if not others or needed > size:
            yield 1.0, tuple(sure)
            return
        random_ = self.rng.random
        low_weight = self.LIKELY_HIGH
        for _ in range(samples):
            # a partial shuffle deals `needed` random unseen cards to the front of the pool
            for k in range(needed):
                j = k + int(random_() * (size - k))
                pool[k], pool[j] = pool[j], pool[k]
            weight = 1.0
            catchers = list(sure)
            at = 0
            for other, known_count, hidden, top in others:
                part = pool[at : at + hidden]
                at += hidden
                if known_count + sum(part) <= mine:
                    catchers.append(other)
                for value in part:
                    if value > top:
                        weight *= low_weight
            yield weight, tuple(catchers)

    def drop_bar(self, view: SeatView) -> float:
        """The share of a won drop that a drop must be expected to win (DROP_WORTH)."""
        return self.DROP_WORTH

    def drop_worth(self, view: SeatView, mine: int, unseen: Sequence[Card]) -> float:
        """What dropping at `mine` is expected to win, as a share of what a won drop pays (1:
        surely won; below 0: expected to lose), by the table's own payments: each other seat
        pays a won drop 1 stake, a caught dropper pays `caught_pays` stakes to each seat at or
        below it, every payment sized by the receiver's stake (`stake_mode = seat`; the hand's
        multiplier scales both alike). Sampling stops once the answer is clearly either side of
        DROP_WORTH."""
        seat = view.turn
        stakes = view.stakes
        won = (view.players - 1) * stakes[seat]
        if won <= 0:
            return 0.0
        caught = view.rules.caught_pays / won
        bar = self.drop_bar(view)
        total = worth = squares = 0.0
        outcomes = self.drop_outcomes(view, mine, unseen, self.SAMPLES)
        for n, (weight, catchers) in enumerate(outcomes, 1):
            if catchers:
                value = 0.0
                for catcher in catchers:
                    value -= stakes[catcher]
                value *= caught
            else:
                value = 1.0
            total += weight
            worth += weight * value
            squares += weight * value * value
            if n % 30 == 0:
                mean = worth / total
                spread = 2.5 * (max(0.0, squares / total - mean * mean) / n) ** 0.5 + 0.03
                if abs(mean - bar) > spread:
                    break
        return worth / total if total else 0.0

    # -- judging a hand -------------------------------------------------------------------------

    def discard_scores(
        self, cards: Sequence[Card], live: Live, allowed: Collection[Card] | None = None
    ) -> list[tuple[float, Card]]:
        """Each discard (from `allowed`, default any) with the score of the hand it leaves:
        lower is better, the count held less the worth of its near-spreads (pairs and suited
        neighbours that live cards could make a spread of)."""
        n = len(cards)
        values = [RANK_VALUE[card.rank] for card in cards]
        total = sum(values)
        near_each, near_all = near_spreads(cards, live)
        weight = self.NEAR_WEIGHT
        scores = []
        for i, card in enumerate(cards):
            if allowed is not None and card not in allowed:
                continue
            score = self.OUT if n == 1 else total - values[i] - weight * (near_all - near_each[i])
            scores.append((score, card))
        return scores

    def best_discard(
        self, cards: Sequence[Card], live: Live, allowed: Collection[Card] | None = None
    ) -> tuple[float, Card | None]:
        """The discard that leaves the best hand (see `discard_scores`; of equal scores the
        higher card), and that hand's score."""
        best_score = float("inf")
        best: Card | None = None
        for score, card in self.discard_scores(cards, live, allowed):
            if score < best_score or (score == best_score and best is not None and card > best):
                best_score, best = score, card
        return best_score, best

    def after_draw(
        self,
        hand: tuple[Card, ...],
        table: tuple[Spread, ...],
        rules: HouseRules,
        seat: int,
        live: Live,
        forbid: Card | None,
    ) -> float:
        """The score of the hand after laying the best spreads and hits and discarding well."""
        _, rest, _ = best_lay(hand, table, rules, seat)
        if not rest:
            return self.OUT * 2
        if forbid is not None and forbid in rest:
            if len(rest) == 1:
                return float("inf")  # stuck with a card it may not discard
            score, _ = self.best_discard(rest, live, [c for c in rest if c != forbid])
            return score
        score, _ = self.best_discard(rest, live)
        return score

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, view: SeatView, legal: LegalActions) -> Action:
        if view.phase is Phase.START:
            return self.start_turn(view, legal)
        return self.play(view, legal)

    def start_turn(self, view: SeatView, legal: LegalActions) -> Action:
        seat = view.turn
        mine = count(view.hand)
        unseen = self.unseen(view)
        uses_top = _uses_top(view, legal)
        if view.stock_size == 0:
            # Drawing now ends the hand (lowest count wins, ties share), which never pays less
            # than a drop; the top discard only helps if it is laid at once.
            if uses_top:
                return _take_discard(seat)
            return _draw_stock(seat)
        if (
            legal.drop
            and mine <= self.DROP_MAX
            and self.drop_worth(view, mine, unseen) >= self.drop_bar(view)
        ):
            return _drop(seat)
        return self.draw_choice(view, legal, unseen, uses_top)

    def go_on(self, view: SeatView, legal: LegalActions) -> Action:
        """What this seat draws if it does not drop at the start of its turn."""
        return self.draw_choice(view, legal, self.unseen(view), _uses_top(view, legal))

    def draw_choice(
        self, view: SeatView, legal: LegalActions, unseen: list[Card], uses_top: bool
    ) -> Action:
        """The stock or the top discard, whichever leaves the better hand."""
        seat = view.turn
        top = view.discard_top
        if legal.take_discard and top is not None and legal.draw_stock:
            if self.prefers_discard(view, top, unseen, uses_top):
                return _take_discard(seat)
            return _draw_stock(seat)
        return fallback(seat, legal)

    def prefers_discard(
        self, view: SeatView, top: Card, unseen: list[Card], uses_top: bool
    ) -> bool:
        """Whether the top discard leaves a better hand than the stock card is expected to."""
        hand = view.hand
        if not uses_top and RANK_VALUE[top.rank] >= max(RANK_VALUE[c.rank] for c in hand):
            return False  # a dead card no lower than anything held
        seat = view.turn
        rules = view.rules
        table = view.spreads
        live = Live(unseen)
        forbid = top if rules.no_rediscard or rules.discard_must_use else None
        take = self.after_draw((*hand, top), table, rules, seat, live, forbid)
        if not unseen:
            return True
        return take < self.expected_stock_score(hand, table, rules, seat, live, unseen) - (
            self.TAKE_MARGIN
        )

    def expected_stock_score(
        self,
        hand: tuple[Card, ...],
        table: tuple[Spread, ...],
        rules: HouseRules,
        seat: int,
        live: Live,
        unseen: Sequence[Card],
    ) -> float:
        """The mean score after drawing each unseen card (the stock's top is any of them)."""
        removed, _, _ = best_lay(hand, table, rules, seat)
        if removed or len(hand) < 2:
            return sum(
                self.after_draw((*hand, card), table, rules, seat, live, None) for card in unseen
            ) / len(unseen)
        # Nothing to lay now: a drawn card that makes no spread and no hit is simply kept or
        # thrown, so score it from the hand's near-spreads worked out once.
        n = len(hand)
        values = [RANK_VALUE[card.rank] for card in hand]
        held = sum(values)
        near_each, near_all = near_spreads(hand, live)
        weight = self.NEAR_WEIGHT
        total = 0.0
        for card in unseen:
            if card_uses(card, hand, table, rules):
                total += self.after_draw((*hand, card), table, rules, seat, live, None)
                continue
            with_card = [live.near(card, other) for other in hand]
            near_with = near_all + sum(with_card)
            best = held - weight * near_all  # throw the drawn card back
            count_with = held + RANK_VALUE[card.rank]
            for i in range(n):
                score = count_with - values[i] - weight * (near_with - near_each[i] - with_card[i])
                if score < best:
                    best = score
            total += best
        return total / len(unseen)

    def play(self, view: SeatView, legal: LegalActions) -> Action:
        seat = view.turn
        rules = view.rules
        hand = view.hand
        _, _, step = best_lay(hand, view.spreads, rules, seat)
        if isinstance(step, LaySpread) and step.cards in legal.spreads:
            return step
        if isinstance(step, Hit) and (step.card, step.spread) in legal.hits:
            return step
        # The plan is not open (a taken card must be used first): lay what is open.
        if step is not None and (lay := richest_lay(seat, legal)) is not None:
            return lay
        if legal.discards:
            return self.choose_discard(view, legal.discards)
        return fallback(seat, legal)

    def choose_discard(self, view: SeatView, allowed: tuple[Card, ...]) -> Action:
        """The discard ending this turn, from `allowed` (not empty)."""
        _, discard = self.best_discard(view.hand, Live(self.unseen(view)), allowed)
        return _discard(view.turn, allowed[0] if discard is None else discard)
