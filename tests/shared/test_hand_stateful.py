"""Random legal and illegal play under random rule sets keeps the hand's invariants: 52 cards
each in exactly one place, zero-sum payments, only the seat to act acts, a refused action changes
nothing, the legal actions are exactly what the hand accepts, no seat is ever stranded, every
hand ends, and a hand replays exactly from its record."""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from rulekit import random_action, snapshot, state, trial_copies
from tonk.shared.game.actions import (
    Action,
    Discard,
    DrawStock,
    Drop,
    Hit,
    IllegalAction,
    LaySpread,
    TakeDiscard,
)
from tonk.shared.game.cards import DECK, Card
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.spreads import Spread, can_hit, find_spreads, spread_kind
from tonk.shared.game.view import LegalActions, Phase, SeatView, legal_actions

pytestmark = pytest.mark.slow

# The 52 different cards of the deck.
ALL_CARDS = frozenset(DECK)

# A generous bound on one hand's actions: the stock holds at most 41 cards, and random play
# draws from an empty stock (ending the hand) most of the time.
MAX_ACTIONS_PER_HAND = 2000


def random_rules(rng: random.Random) -> HouseRules:
    preset = rng.choice(sorted(PRESETS))
    overrides: dict[str, Any] = {}
    for option, values in (
        ("hit_lock", [0, 0, 1, 2, 3]),
        ("discard_must_use", [False, True]),
        ("no_rediscard", [False, True]),
        ("ace_high_runs", [False, True]),
        ("hit_books", [False, True]),
        ("caught_others_pay_lowest", [False, True]),
        ("several_deal_tonks", ["void", "pay_each", "void_double"]),
        ("deal_tonk_low", ["none", 10, 15]),
        ("stake_mode", ["table", "seat"]),
    ):
        if rng.random() < 0.4:
            overrides[option] = rng.choice(values)
    return PRESETS[preset].with_options(overrides)


def key(action: Action) -> Hashable:
    """An action's identity for comparing with the legal list (a spread's order is free)."""
    if isinstance(action, LaySpread):
        if len(set(action.cards)) != len(action.cards):
            return ("spread with a card twice", action.cards)
        return ("spread", frozenset(action.cards))
    if isinstance(action, Hit):
        return ("hit", action.card, action.spread)
    if isinstance(action, Discard):
        return ("discard", action.card)
    return (action.kind,)


def legal_keys(legal: LegalActions, seat: int) -> set[Hashable]:
    return {key(a) for a in legal.actions(seat)}


# -- an independent oracle for "a move that would strand a seat is refused" ------------------


def _spreads_key(spreads: Sequence[Spread]) -> tuple[tuple[Card, ...], ...]:
    return tuple(s.cards for s in spreads)


def can_finish(
    rules: HouseRules, hand: tuple[Card, ...], spreads: tuple[Spread, ...], taken: Card | None
) -> bool:
    """Brute force: can a seat in the middle of its turn reach a legal end of it (a discard,
    or no cards left), trying every sequence of spreads and hits?"""

    @cache
    def search(held: frozenset[Card], table: tuple[tuple[Card, ...], ...]) -> bool:
        if not held:
            return True
        for c in held:
            if taken in held and (rules.discard_must_use or (rules.no_rediscard and c == taken)):
                continue
            return True  # a legal discard ends the turn
        laid = [Spread(i, 0, spread_kind(cs, rules) or _never(), cs) for i, cs in enumerate(table)]
        for cards in find_spreads(tuple(held), rules):
            if search(held - set(cards), (*table, cards)):
                return True
        for c in held:
            for i, spread in enumerate(laid):
                if can_hit(spread, c, rules):
                    after = list(table)
                    after[i] = spread.with_hit(c, 0, rules.ace_high_runs).cards
                    if search(held - {c}, tuple(after)):
                        return True
        return False

    return search(frozenset(hand), _spreads_key(spreads))


def _never() -> Any:
    raise AssertionError("a spread on the table is no spread")


def expected_play_moves(
    rules: HouseRules, held: tuple[Card, ...], spreads: tuple[Spread, ...], taken: Card | None
) -> set[Hashable]:
    """The spreads and hits that leave the seat a way to finish its turn."""
    out: set[Hashable] = set()
    for cards in find_spreads(held, rules):
        kind = spread_kind(cards, rules)
        assert kind is not None
        rest = tuple(c for c in held if c not in cards)
        if can_finish(rules, rest, (*spreads, Spread(-1, 0, kind, cards)), taken):
            out.add(("spread", frozenset(cards)))
    for c in held:
        for i, spread in enumerate(spreads):
            if can_hit(spread, c, rules):
                after = list(spreads)
                after[i] = spread.with_hit(c, 0, rules.ace_high_runs)
                rest = tuple(x for x in held if x != c)
                if can_finish(rules, rest, tuple(after), taken):
                    out.add(("hit", c, spread.id))
    return out


# -- the machine ---------------------------------------------------------------------------


class HandMachine(RuleBasedStateMachine):
    hand: Hand
    rng: random.Random

    @initialize(seed=st.integers(0, 2**32 - 1))
    def start(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.multiplier = 1
        self.hands_played = 0
        self.new_hand()

    def new_hand(self) -> None:
        rng = self.rng
        rules = random_rules(rng)
        players = rng.randint(2, rules.players)
        stakes = tuple(rng.randint(0, 4) for _ in range(players))
        if rules.stake_mode.value == "table":
            stakes = stakes[:1]
        self.hand = Hand(
            rules, players, rng.randrange(players), stakes, rng=rng, multiplier=self.multiplier
        )

    # -- playing ------------------------------------------------------------------------------

    @precondition(lambda self: not self.hand.ended)
    @rule()
    def legal_action(self) -> None:
        hand = self.hand
        action = random_action(hand, self.rng)
        assert key(action) in legal_keys(hand.legal_actions(action.seat), action.seat)
        hand.apply(action)

    @precondition(lambda self: not self.hand.ended)
    @rule(data=st.data())
    def any_action(self, data: st.DataObject) -> None:
        """An arbitrary action, legal or not: accepted exactly when it is listed as legal."""
        hand = self.hand
        action = self.arbitrary_action(data)
        listed = 0 <= action.seat < hand.players and key(action) in legal_keys(
            hand.legal_actions(action.seat), action.seat
        )
        before = snapshot(hand)
        try:
            hand.apply(action)
        except IllegalAction as refusal:
            assert not listed, f"{action} is listed as legal but was refused: {refusal.reason}"
            assert refusal.reason
            assert state(hand) == before, "a refused action changed the hand"
        else:
            assert listed, f"{action} was accepted but not listed as legal"
            assert action.seat == before["turn"], "only the seat to act can act"

    def arbitrary_action(self, data: st.DataObject) -> Action:
        hand = self.hand
        seat = data.draw(st.one_of(st.just(hand.turn), st.integers(-1, hand.players)), label="seat")
        held = hand.hands[seat] if 0 <= seat < hand.players else []
        from_hand: bool = data.draw(st.booleans())
        card_ = st.sampled_from(held) if held and from_hand else st.sampled_from(DECK)
        ids = [s.id for s in hand.spreads]
        on_table: bool = data.draw(st.booleans())
        spread_id = st.sampled_from(ids) if ids and on_table else st.integers(0, 9)
        kind = data.draw(st.sampled_from(["drop", "draw", "take", "spread", "hit", "discard"]))
        if kind == "drop":
            return Drop(seat)
        if kind == "draw":
            return DrawStock(seat)
        if kind == "take":
            return TakeDiscard(seat)
        if kind == "spread":
            cards = data.draw(st.lists(card_, min_size=0, max_size=5))
            return LaySpread(seat, tuple(cards))
        if kind == "hit":
            return Hit(seat, data.draw(card_), data.draw(spread_id))
        return Discard(seat, data.draw(card_))

    @precondition(lambda self: not self.hand.ended)
    @rule()
    def every_legal_action_is_accepted(self) -> None:
        hand = self.hand
        seat = hand.turn
        trials = trial_copies(hand)
        for action in hand.legal_actions(seat).actions(seat):
            next(trials).apply(action)  # raises if a listed action is refused

    @precondition(lambda self: not self.hand.ended)
    @rule()
    def play_to_the_end(self) -> None:
        hand = self.hand
        while not hand.ended:
            assert len(hand.actions) < MAX_ACTIONS_PER_HAND, "the hand did not end"
            hand.apply(random_action(hand, self.rng))

    @precondition(lambda self: self.hand.ended)
    @rule()
    def next_hand(self) -> None:
        settlement = self.hand.settlement
        assert settlement is not None
        self.multiplier = settlement.next_multiplier
        self.hands_played += 1
        self.new_hand()

    @rule()
    def replay_gives_the_same_state(self) -> None:
        hand = self.hand
        record = HandRecord.from_dict(hand.record().to_dict())
        assert state(record.replay()) == state(hand)

    @rule()
    def views_round_trip_and_hide_the_rest(self) -> None:
        hand = self.hand
        for seat in (*range(hand.players), None):
            view = hand.view(seat)
            assert SeatView.from_dict(view.to_dict()) == view
            assert view.hand == (() if seat is None else tuple(hand.hands[seat]))
            assert view.card_counts == tuple(len(h) for h in hand.hands)
            assert view.stock_size == len(hand.stock)
            assert view.legal() == (NO if seat is None else hand.legal_actions(seat))

    # -- invariants ---------------------------------------------------------------------------

    @invariant()
    def every_card_is_in_exactly_one_place(self) -> None:
        hand = self.hand
        places: list[Card] = [*hand.stock, *hand.discards]
        for held in hand.hands:
            places.extend(held)
        for spread in hand.spreads:
            places.extend(spread.cards)
        # (as Counter(places) == Counter(DECK): the 52 places hold the 52 different cards)
        assert len(places) == len(DECK)
        assert set(places) == ALL_CARDS

    @invariant()
    def payments_sum_to_zero(self) -> None:
        settlement = self.hand.settlement
        if settlement is not None:
            assert sum(settlement.net(self.hand.players)) == 0
            assert all(p.amount > 0 and p.payer != p.payee for p in settlement.payments)

    @invariant()
    def only_the_seat_to_act_can_act_and_it_is_never_stranded(self) -> None:
        hand = self.hand
        for seat in range(hand.players):
            legal = hand.legal_actions(seat)
            if hand.ended or seat != hand.turn:
                assert legal == NO
            else:
                assert legal.kinds(), "the seat to act has nothing it may do"
                if hand.phase is Phase.PLAY:
                    assert legal.discards or legal.spreads or legal.hits

    @invariant()
    def the_stranding_rule_refuses_exactly_the_moves_that_strand(self) -> None:
        hand = self.hand
        rules = hand.rules
        if hand.ended or not (rules.discard_must_use or rules.no_rediscard):
            return
        seat = hand.turn
        legal = hand.legal_actions(seat)
        if hand.phase is Phase.START:
            top = hand.discards[-1]
            may_take = not rules.discard_must_use or can_finish(
                rules, (*hand.hands[seat], top), tuple(hand.spreads), top
            )
            assert legal.take_discard is may_take
            return
        listed = {key(a) for a in legal.actions(seat) if not isinstance(a, Discard)}
        held = tuple(hand.hands[seat])
        assert listed == expected_play_moves(rules, held, tuple(hand.spreads), hand.taken_discard)

    @invariant()
    def every_hand_ends_within_the_bound(self) -> None:
        assert len(self.hand.actions) < MAX_ACTIONS_PER_HAND


NO = LegalActions()

HandMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_hand_state_machine = HandMachine.TestCase


# -- dense positions for the stranding rule ---------------------------------------------------


#: One or two of the suits, for `restricted_positions` (made once: building a strategy for each
#: example cost more than drawing from it).
SOME_SUITS = st.lists(st.sampled_from(sorted({c.suit for c in DECK}, key=str)),
                      min_size=1, max_size=2, unique=True)  # fmt: skip


@st.composite
def restricted_positions(
    draw: st.DrawFn,
) -> tuple[HouseRules, tuple[Card, ...], tuple[Spread, ...], Card]:
    """A seat mid-turn holding a card it took from the pile, among spreads of few suits: the
    positions where discard_must_use and no_rediscard bite."""
    must_use = draw(st.booleans())
    rules = PRESETS["classic"].with_options(
        {
            "discard_must_use": must_use,
            "no_rediscard": not must_use or draw(st.booleans()),
            "ace_high_runs": draw(st.booleans()),
            "hit_books": draw(st.booleans()),
        }
    )
    suits = draw(SOME_SUITS)
    used: set[Card] = set()
    spreads: list[Spread] = []
    for i in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            suit = draw(st.sampled_from(suits))
            start = draw(st.integers(1, 11))
            length = draw(st.integers(3, 4))
            laid = [c for c in DECK if c.suit is suit and start <= c.rank < start + length]
        else:
            rank = draw(st.integers(1, 13))
            laid = [c for c in DECK if c.rank == rank][:3]
        kind = spread_kind(laid, rules)
        if kind is None or used & set(laid):
            continue
        used |= set(laid)
        spreads.append(Spread(i + 1, 0, kind, tuple(laid)))
    pool = [c for c in DECK if c not in used and (c.suit in suits or c.rank in (5, 9))]
    # Cards a few steps beyond the ends of the runs: those open ways for each other.
    near = [
        c
        for c in pool
        for s in spreads
        if c.suit is s.cards[0].suit
        and s.cards[0].rank != s.cards[1].rank
        and -3 <= c.rank - s.cards[0].rank <= len(s.cards) + 2
    ]
    held = draw(st.lists(st.sampled_from(near or pool), min_size=1, max_size=4, unique=True))
    more = draw(st.lists(st.sampled_from(pool), max_size=6 - len(held), unique=True))
    held += [c for c in more if c not in held]
    taken = draw(st.sampled_from(held))
    return rules, tuple(held), tuple(spreads), taken


@settings(max_examples=400, deadline=None)
@given(position=restricted_positions())
def test_a_move_is_refused_exactly_when_it_would_strand_the_seat(
    position: tuple[HouseRules, tuple[Card, ...], tuple[Spread, ...], Card],
) -> None:
    rules, held, spreads, taken = position
    legal = legal_actions(rules, Phase.PLAY, held, spreads, None, 0, taken)
    listed = {key(a) for a in legal.actions(0) if not isinstance(a, Discard)}
    assert listed == expected_play_moves(rules, held, spreads, taken)
    # Taking the card is allowed exactly when the turn can then be finished.
    rest = tuple(c for c in held if c != taken)
    if not rest:
        return  # a seat at the start of its turn always holds a card
    start = legal_actions(rules, Phase.START, rest, spreads, taken, 0, None)
    assert start.take_discard is can_finish(rules, held, spreads, taken)
