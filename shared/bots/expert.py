"""`expert`: decides by sampling deals of the cards its seat has not seen, consistent with
everything the seat has seen (a determinized, information-set Monte Carlo search), and playing
each choice out to the end of the hand under the table's rules and payments."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from math import comb, sqrt

from ..game.actions import Action, Discard, DrawStock, Drop, Event, TakeDiscard
from ..game.cards import DECK, RANK_VALUE, Card, count
from ..game.hand import Hand
from ..game.rules import HouseRules
from ..game.settlement import settle_drop
from ..game.view import LegalActions, Phase, SeatView
from .seatbots import card_uses, fallback, makes_spread, richest_lay
from .sharp import Live, SharpBot

#: A sampled deal: every seat's cards (the searching seat's as it holds them), the stock (its
#: top card last) and the pile (its top card last).
Deal = tuple[list[list[Card]], list[Card], list[Card]]


class ExpertBot(SharpBot):
    """Starts from what `sharp` would do, and puts two choices to a search: whether to drop
    or go on (when sharp would go on; at four players and more when sharp would drop too),
    and which of the few best discards to throw. The search
    deals the unseen cards many ways, plays each option out to the hand's end on the same
    deals, every seat then playing the quick policy (`playout_action`), and settles each ending
    by the table's rules and stakes; sharp's choice stands unless another wins clearly more.
    It reads only its seat's view and events; the search's size is a number of samples, so a
    decision depends on the seed alone, never on the clock."""

    strategy = "expert"
    slow = True  # a search per real choice: up to tens of milliseconds

    DEALS = 320  # at most this many deals of the unseen cards sampled for a decision
    PLAYOUTS = 320  # ... and at most this many playouts (each option played out on each deal)
    CHECK_EVERY = 20  # deals between looks at whether one option is clearly best
    CLEAR = 3.0  # ... by this many standard errors of its lead
    SURE = 2.0  # search overrules sharp's choice only when ahead of it by this many
    DISCARDS = 3  # discards weighed by search: the best few by sharp's score
    DISCARD_SPAN = 6.0  # ... no worse than the best by more than this
    DROP_MAX = 25  # a drop above this count is never weighed
    PLAYOUT_LIMIT = 400  # actions before a playout is called even (a hand ends long before)
    KEPT_DRAW = 0.75  # the chance that a draw let a player swap a high card for a lower one
    HEADS_UP_DROP_WORTH = 0.9  # sharp's drop bar (DROP_WORTH) at two players: see drop_bar
    THREE_DROP_WORTH = 0.9  # ... at three (at four and more, sharp's own)
    PLAYOUT_DROP_WORTH = 0.6  # a playout seat's drop bar (see `playout_drops`)
    THREE_PLAYOUT_DROP_WORTH = 0.8  # ... at three players (see drop_bar)
    WEIGH_DROPS_FROM = 4  # from this many players sharp's drops are searched too (0: never)
    # Opponent hand estimation (see `likelihood`): the chance a sampled hand is kept for each
    # top discard its player passed over that would have made a spread with it, and for each
    # card it threw that would have; 1: not read.
    PASSED_FITS = 1.0
    THROWN_FITS = 1.0
    REDRAWS = 4  # ... at most this many deals drawn for each one kept

    def new_hand(self) -> None:
        super().new_hand()
        self.drawn: dict[int, int] = {}  # draws from the stock by seat this hand
        self.passed: dict[int, list[Card]] = {}  # top discards each seat drew instead of
        self.thrown: dict[int, list[Card]] = {}  # cards each seat discarded

    def see(self, event: Event) -> None:
        if event.kind == "draw_stock" and event.seat is not None:
            self.drawn[event.seat] = self.drawn.get(event.seat, 0) + 1
            if self.pile:
                self.passed.setdefault(event.seat, []).append(self.pile[-1])
        elif event.kind == "discard" and event.seat is not None:
            self.thrown.setdefault(event.seat, []).append(event.cards[0])
        super().see(event)

    def likelihood(self, seat: int, cards: Sequence[Card], rules: HouseRules) -> float:
        """How likely a sampled hand `cards` of `seat` is, by what its player did: a top
        discard it passed over, or a card it threw, that would have made a spread with these
        cards makes them less likely (PASSED_FITS, THROWN_FITS each time)."""
        chance = 1.0
        for card in self.passed.get(seat, ()):
            if card not in cards and makes_spread(card, cards, rules):
                chance *= self.PASSED_FITS
        for card in self.thrown.get(seat, ()):
            if makes_spread(card, cards, rules):
                chance *= self.THROWN_FITS
        return chance

    # -- deciding -------------------------------------------------------------------------------

    def drop_bar(self, view: SeatView) -> float:
        """At two and three players a drop must be worth more than `sharp` asks: against
        players who play as people do (the panel), the expert won more with this bar, on
        deals and opponents held back from the tuning, and stayed ahead of `sharp` head to
        head (docs/benchmarks-journal.md, "Bots against the panel"; at three players only with
        the playouts' seats dropping less, THREE_PLAYOUT_DROP_WORTH). At four players no bar tried
        did better than `sharp`'s, so there it is `sharp`'s, and a drop it finds is put to the
        search (WEIGH_DROPS_FROM, see `start_turn`)."""
        if view.players == 2:
            return self.HEADS_UP_DROP_WORTH
        if view.players == 3:
            return self.THREE_DROP_WORTH
        return self.DROP_WORTH

    def start_turn(self, view: SeatView, legal: LegalActions) -> Action:
        sharp = super().start_turn(view, legal)
        # When sharp would go on, a drop is put to the search. Below four players sharp's
        # drops stand: the search weighs going on by playouts of a quick policy that plays
        # below sharp, and overruling them lost in trial matches. At four players (where the
        # bar is sharp's own) going on is put to the search against sharp's drop, which stands
        # unless going on wins clearly more: against players who play as people do that won
        # more, on deals and opponents held back from the tuning (docs/benchmarks-journal.md,
        # "Bots against the panel").
        if isinstance(sharp, Drop):
            if self.WEIGH_DROPS_FROM and view.players >= self.WEIGH_DROPS_FROM:
                return self.search(view, [sharp, self.go_on(view, legal)])
            return sharp
        if (
            view.stock_size == 0  # drawing ends the hand: nothing to weigh
            or not legal.drop
            or count(view.hand) > self.DROP_MAX
        ):
            return sharp
        return self.search(view, [sharp, Drop(view.turn)])

    def choose_discard(self, view: SeatView, allowed: tuple[Card, ...]) -> Action:
        seat = view.turn
        live = Live(self.unseen(view))
        _, sharp = self.best_discard(view.hand, live, allowed)
        if sharp is None or len(view.hand) == 1:
            return Discard(seat, allowed[0] if sharp is None else sharp)  # (the last: out)
        scores = sorted(self.discard_scores(view.hand, live, allowed), key=_score_then_high)
        best = scores[0][0]
        options: list[Action] = [Discard(seat, sharp)]
        for score, card in scores[: self.DISCARDS]:
            if card != sharp and score <= best + self.DISCARD_SPAN:
                options.append(Discard(seat, card))
        if len(options) == 1:
            return options[0]
        return self.search(view, options)

    # -- searching ------------------------------------------------------------------------------

    def search(self, view: SeatView, options: Sequence[Action]) -> Action:
        """Of `options` (the first being sharp's choice), the one that wins the most over the
        sampled deals; sharp's choice unless another is ahead of it by SURE standard errors
        (and when the unseen cards cannot fill the hidden places: a seat that came in
        mid-hand may not know enough). Every option is played out on the same deals, so their
        differences are measured, not drowned in the deals' luck; sampling stops early once
        one option is clearly ahead of every other."""
        nets: list[list[int]] = [[] for _ in options]
        dealt = 0
        played = sum(not isinstance(option, Drop) for option in options)  # (a drop is settled)
        deals = min(self.DEALS, self.PLAYOUTS // max(1, played))
        for outcome in self.outcomes(view, options, deals):
            for net, found in zip(outcome, nets, strict=True):
                found.append(net)
            dealt += 1
            if dealt % self.CHECK_EVERY == 0 and clearly_best(nets, self.CLEAR) is not None:
                break
        if not dealt:
            return options[0]
        best = max(range(len(options)), key=lambda i: (sum(nets[i]), -i))
        if best and not ahead(nets[best], nets[0], self.SURE):
            return options[0]
        return options[best]

    def outcomes(
        self, view: SeatView, options: Sequence[Action], deals: int
    ) -> Iterator[list[int]]:
        """What the seat to act nets by each of `options`, on each of at most `deals` sampled
        deals in turn: a drop settled on the deal, anything else played out to the hand's end."""
        seat = view.turn
        rules = view.rules
        playout_bar = (
            self.THREE_PLAYOUT_DROP_WORTH if view.players == 3 else self.PLAYOUT_DROP_WORTH
        )
        for hands, stock, pile in self.deals(view, deals):
            nets: list[int] = []
            for option in options:
                if isinstance(option, Drop):
                    settlement = settle_drop(rules, seat, hands, view.stakes, view.multiplier)
                    nets.append(settlement.net(view.players)[seat])
                else:
                    hand = Hand.position(view, hands, stock, pile)
                    hand.apply(option)
                    nets.append(play_out(hand, seat, self.PLAYOUT_LIMIT, playout_bar))
            yield nets

    def deals(self, view: SeatView, count: int) -> Iterator[Deal]:
        """`count` deals of the unseen cards into the other hands (around the cards each is
        known to hold: taken from the pile and not yet played) and the stock; none if the
        unseen cards cannot fill those places. Players keep their low cards: a player who has
        drawn from the stock n times is dealt the lowest of its hidden places' number plus
        about three quarters of n random cards (each draw was a chance to throw a high card
        away, KEPT_DRAW the chance that it did: with every draw counted, the deals made the
        other hands count less than they did, and a drop look worse than it was), the rest
        going back to the stock. With PASSED_FITS or THROWN_FITS below 1, a deal is kept only
        by the chance its hands give what their players did (`likelihood`), up to REDRAWS
        deals drawn for each one asked."""
        seat = view.turn
        unseen = self.unseen(view)
        places: list[tuple[int, list[Card], int, int]] = []  # (seat, known, hidden, drawn)
        for other in range(view.players):
            if other == seat:
                continue
            known = self.known.get(other, [])[: view.card_counts[other]]
            hidden = view.card_counts[other] - len(known)
            places.append((other, known, hidden, self.drawn.get(other, 0)))
        hidden_all = sum(hidden for _, _, hidden, _ in places)
        needed = hidden_all + view.stock_size
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
        kept_draw = self.KEPT_DRAW
        mine = list(view.hand)
        rules = view.rules
        weighs = self.PASSED_FITS < 1 or self.THROWN_FITS < 1
        kept = drawn_deals = 0
        while kept < count and drawn_deals < count * self.REDRAWS:
            drawn_deals += 1
            # a partial shuffle deals `needed` random unseen cards to the front
            for k in range(needed):
                j = k + int(random_() * (size - k))
                unseen[k], unseen[j] = unseen[j], unseen[k]
            hands: list[list[Card]] = [mine] * view.players
            rest = unseen[hidden_all:needed]
            at = 0
            for other, known, hidden, drawn in places:
                low = sum([random_() < kept_draw for _ in range(drawn)])
                extra = min(low, len(rest))
                offered = unseen[at : at + hidden] + rest[:extra]
                at += hidden
                if extra:
                    offered.sort(key=_card_count)
                    rest[:extra] = offered[hidden:]
                hands[other] = known + offered[:hidden]
            if weighs:
                chance = 1.0
                for other, _, _, _ in places:
                    chance *= self.likelihood(other, hands[other], rules)
                if random_() >= chance:
                    continue  # (a deal its players' moves make unlikely, kept by its chance)
            for k in range(len(rest) - 1, 0, -1):  # the cards sent back go anywhere in it
                j = int(random_() * (k + 1))
                rest[k], rest[j] = rest[j], rest[k]
            kept += 1
            yield hands, rest, pile


def clearly_best(nets: Sequence[Sequence[int]], clear: float) -> int | None:
    """The option whose mean net beats every other's by more than `clear` standard errors
    of their paired differences (the same deals), or None while none does."""
    best = max(range(len(nets)), key=lambda i: sum(nets[i]))
    for other in range(len(nets)):
        if other != best and not ahead(nets[best], nets[other], clear):
            return None
    return best


def ahead(these: Sequence[int], those: Sequence[int], by: float) -> bool:
    """Whether nets `these` beat `those` (on the same deals) by more than `by` standard errors
    of their differences."""
    n = len(these)
    if n < 2:
        return False
    diffs = [a - b for a, b in zip(these, those, strict=True)]
    mean = sum(diffs) / n
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > by * sqrt(variance / n)


def play_out(hand: Hand, seat: int, limit: int, drop_worth: float) -> int:
    """Play `hand` to its end with every seat on the quick policy (dropping at `drop_worth`);
    what `seat` nets."""
    for _ in range(limit):
        settlement = hand.settlement
        if settlement is not None:
            return settlement.net(hand.players)[seat]
        hand.apply(playout_action(hand, drop_worth))
    return 0


def playout_action(hand: Hand, drop_worth: float) -> Action:
    """The quick policy a playout plays for the seat to act, from that seat's cards and what
    is on the table: drop when the count is likely the lowest and the drop worth `drop_worth`
    of a won drop by the rules' payments (`playout_drops`); take the top discard when it makes
    a spread or a hit; lay the biggest spread or hit; throw the highest card."""
    seat = hand.turn
    cards = hand.hands[seat]
    rules = hand.rules
    if hand.phase is Phase.START:
        if not hand.hit_locks[seat] and playout_drops(hand, seat, count(cards), drop_worth):
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
    if (lay := richest_lay(seat, legal)) is not None:
        return lay
    if legal.discards:
        return Discard(seat, max(legal.discards, key=_card_count))
    return fallback(seat, legal)


def playout_drops(hand: Hand, seat: int, mine: int, drop_worth: float) -> bool:
    """Whether a playout seat drops at `mine`: the chance that each other hand, as so many
    cards from the deck, counts more, against what a caught drop costs at this table, is
    worth at least `drop_worth` of a won drop."""
    if mine > 25:
        return False
    chance = 1.0
    for other, cards in enumerate(hand.hands):
        if other != seat:
            chance *= above(len(cards), mine)
    others = hand.players - 1
    worth = chance - (1 - chance) * hand.rules.caught_pays / others
    return worth >= drop_worth


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
        value = RANK_VALUE[card.rank]
        for k in range(cards, 0, -1):
            row, below = ways[k], ways[k - 1]
            for total in range(10 * cards, value - 1, -1):
                row[total] += below[total - value]
    return tuple(ways[cards])


def _card_count(card: Card) -> tuple[int, int]:
    return RANK_VALUE[card.rank], card.rank


def _score_then_high(scored: tuple[float, Card]) -> tuple[float, int, int]:
    score, card = scored
    return score, -RANK_VALUE[card.rank], -card.rank
