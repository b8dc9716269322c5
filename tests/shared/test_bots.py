"""Bots: they see only their seat, choose only legal actions under every rule set, end hands,
and `sharp` beats `easy`."""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from rulekit import deal
from tonk.shared.bots.bots import BOT_STRATEGIES, BotError, ExpertBot, SharpBot, make_bot
from tonk.shared.bots.sharp import best_lay
from tonk.shared.game.actions import Action, DrawStock, Drop, Event, Hit, LaySpread, TakeDiscard
from tonk.shared.game.cards import Card, count, parse_card, parse_cards, shuffled_deck
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.settlement import Ending
from tonk.shared.game.spreads import Spread, SpreadKind
from tonk.shared.game.view import Phase, SeatView
from tonk.shared.sim.play import play_hand, simulate

OPTIONS: list[dict[str, Any]] = [
    {},
    {"hit_lock": 1},
    {"hit_lock": 3},
    {"discard_must_use": True},
    {"no_rediscard": True},
    {"hit_books": False},
    {"hit_books": True},
    {"ace_high_runs": True},
    {"hit_lock": 2, "discard_must_use": True, "no_rediscard": True, "ace_high_runs": True},
]


def play_checked(rules: HouseRules, players: int, hands: int, seed: int) -> int:
    """Play hands between alternating sharp and easy bots, checking every action against the
    seat's legal actions before it is applied. Returns the number of actions."""
    rng = random.Random(seed)
    bots = [
        make_bot(BOT_STRATEGIES[seat % 2], random.Random(seed * 10 + seat))
        for seat in range(players)
    ]
    actions = 0
    for number in range(hands):
        hand = Hand(rules, players, number % players, (1,) * players, rng=rng)
        for seat, bot in enumerate(bots):
            bot.observe(hand.events_for(seat))
        while not hand.ended:
            seat = hand.turn
            view = hand.view(seat)
            action = bots[seat].choose(view)
            assert action in view.legal().actions(seat), (action, view)
            start = len(hand.events)
            hand.apply(action)
            actions += 1
            assert actions < 100_000, "a hand did not end"
            for other, bot in enumerate(bots):
                bot.observe(hand.events_for(other, start))
    return actions


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "as-preset")
def test_bots_choose_only_legal_actions_under_every_preset_and_option(
    preset: str, options: dict[str, Any]
) -> None:
    rules = PRESETS[preset].with_options(options)
    players = 5 if rules.players >= 5 else 4
    assert play_checked(rules, players, 25, seed=len(preset) + len(options)) > 0


def test_bots_play_legally_heads_up() -> None:
    assert play_checked(PRESETS["classic"].with_options({"no_rediscard": True}), 2, 40, 3) > 0


def test_make_bot_knows_every_strategy_and_refuses_others() -> None:
    for strategy in BOT_STRATEGIES:
        assert make_bot(strategy, random.Random(1)).strategy == strategy
    with pytest.raises(BotError, match="unknown bot 'clever'"):
        make_bot("clever", random.Random(1))


def test_a_bot_is_never_given_the_hand_only_its_seat_view() -> None:
    hand = Hand(PRESETS["classic"], 4, 0, (1,), rng=random.Random(4))
    assert not hand.ended
    for strategy in BOT_STRATEGIES:
        bot = make_bot(strategy, random.Random(1))
        bot.observe(hand.events_for(hand.turn))
        with pytest.raises(BotError, match="SeatView"):
            bot.choose(hand)  # type: ignore[arg-type]
        with pytest.raises(BotError, match="not this bot's turn"):
            bot.choose(hand.view(None))
        action = bot.choose(hand.view(hand.turn))
        assert action in hand.legal_actions(hand.turn).actions(hand.turn)


@pytest.mark.parametrize("strategy", BOT_STRATEGIES)
def test_a_bot_refuses_events_showing_another_seats_cards(strategy: str) -> None:
    hand = Hand(PRESETS["classic"], 4, 0, (1,), rng=random.Random(4))
    bot = make_bot(strategy, random.Random(1))
    with pytest.raises(BotError, match="only its own seat"):
        bot.observe(hand.events)  # every seat's deal, unhidden
    bot = make_bot(strategy, random.Random(1))
    bot.observe(hand.events_for(2))
    start = len(hand.events)
    hand.apply(DrawStock(1))
    with pytest.raises(BotError, match="events its seat sees"):
        bot.observe(hand.events[start:])  # seat 1's drawn card, shown to seat 2


def empty_stock_position(rules: HouseRules, up: str) -> Hand:
    """Seat 1 to act, the stock used up, the top discard useless to everybody."""
    hands = [
        "Kc Qd 9s 7h 5c",
        "Ks Kh 9h 7c 5d",
        "Jd Jc 9d 7s 4c",
        "Qh Jh 9c 6s 4d",
    ]
    hand = deal(rules, hands, up=up, dealer=0)
    hand.stock.clear()  # as if every stock card had been drawn and thrown
    return hand


@pytest.mark.parametrize("strategy", BOT_STRATEGIES)
def test_bots_end_the_hand_when_the_stock_is_empty(strategy: str) -> None:
    rules = PRESETS["classic"]
    hand = empty_stock_position(rules, "2h")
    bot = make_bot(strategy, random.Random(1))
    bot.observe(hand.events_for(1))
    action = bot.choose(hand.view(1))
    assert action == DrawStock(1)
    hand.apply(action)
    assert hand.settlement is not None and hand.settlement.ending is Ending.STOCK_OUT


@pytest.mark.parametrize("strategy", BOT_STRATEGIES)
def test_bots_take_from_an_empty_stock_table_only_a_discard_they_lay_at_once(
    strategy: str,
) -> None:
    hand = empty_stock_position(PRESETS["classic"], "Kd")  # seat 1 books its kings with it
    bots = [make_bot(strategy, random.Random(seat)) for seat in range(4)]
    play_hand(hand, bots)
    assert [a.kind for a in hand.actions] == ["take_discard", "spread", "discard", "draw_stock"]
    assert hand.settlement is not None and hand.settlement.ending is Ending.STOCK_OUT
    assert hand.settlement.winners == (1,)


@pytest.mark.parametrize("strategy", ["easy", "sharp"])
def test_every_hand_ends_and_some_run_the_stock_out(strategy: str) -> None:
    # play_hand raises if a hand goes on past 10,000 actions
    result = simulate(PRESETS["pagat"], 5, 200, 9, [strategy])
    assert sum(result.endings.values()) == 200
    assert result.endings["stock_out"] > 0


@pytest.mark.slow
def test_every_hand_of_experts_ends() -> None:
    # (fewer hands: an expert thinks a thousand times longer than the others; its play at an
    # empty stock is test_bots_end_the_hand_when_the_stock_is_empty's)
    result = simulate(PRESETS["pagat"], 5, 20, 9, ["expert"])
    assert sum(result.endings.values()) == 20


def test_sharp_lays_the_combination_that_removes_the_most_count() -> None:
    rules = PRESETS["classic"]
    hand = parse_cards("5h 6h 7h 7s 7d")
    removed, left, step = best_lay(hand, (), rules, 0)
    # the book of sevens (21) beats the run 5-6-7 (18)
    assert removed == 21 and sorted(left) == sorted(parse_cards("5h 6h"))
    assert isinstance(step, LaySpread) and sorted(step.cards) == sorted(parse_cards("7h 7s 7d"))
    table = (Spread(4, 2, SpreadKind.RUN, parse_cards("8h 9h 10h")),)
    # the four sevens (28) leave the 6h; three sevens, then 7h and 6h hit onto the run: out
    removed, left, step = best_lay(parse_cards("7h 7s 7d 7c 6h"), table, rules, 0)
    assert removed == 34 and left == ()


def test_sharp_hits_a_spread_on_the_table_and_tonks_out() -> None:
    rules = PRESETS["classic"]
    table = (Spread(1, 3, SpreadKind.BOOK, parse_cards("Qs Qh Qd")),)
    removed, left, step = best_lay(parse_cards("Qc"), table, rules, 0)
    assert removed == 10 and left == () and step == Hit(0, parse_card("Qc"), 1)
    no_book_hits = rules.with_options({"hit_books": False})
    assert best_lay(parse_cards("Qc"), table, no_book_hits, 0) == (0, parse_cards("Qc"), None)


def sharp_at(hand: Hand) -> SharpBot:
    bot = make_bot("sharp", random.Random(2))
    assert isinstance(bot, SharpBot)
    bot.observe(hand.events_for(hand.turn))
    return bot


def test_sharp_takes_a_discard_that_makes_a_spread_and_draws_past_a_high_dead_one() -> None:
    hands = [
        "Kc Qd 8s 7h 5c",
        "Ks 9h 9c 2d 3s",
        "Kh Jc 9d 7s 4c",
        "Kd Jh 8c 6s 4d",
    ]
    rules = PRESETS["classic"]
    takes = deal(rules, hands, up="9s", dealer=0)
    assert sharp_at(takes).choose(takes.view(1)) == TakeDiscard(1)
    dead = deal(rules, hands, up="Qs", dealer=0)
    assert sharp_at(dead).choose(dead.view(1)) == DrawStock(1)


def low_and_high() -> tuple[Hand, Hand]:
    """Seat 1 to act first (classic, four seats, Qs up) holding 9 (As 2h Ac 2d 3s), a sure
    lowest, and holding 40 (Ks 10h 9c 8d 3s); the other hands the same."""
    hands = ["Kc Qd 9s 7h 5c", "As 2h Ac 2d 3s", "Kh Jc 9d 7s 4c", "Kd Jh 8c 6s 4d"]
    low = deal("classic", hands, up="Qs", dealer=0)
    hands[1] = "Ks 10h 9c 8d 3s"
    return low, deal("classic", hands, up="Qs", dealer=0)


def test_sharp_drops_a_tiny_count_and_not_a_big_one() -> None:
    low, high = low_and_high()
    bot = sharp_at(low)
    assert bot.chance_lowest(low.view(1), 9, bot.unseen(low.view(1))) > 0.9
    assert bot.choose(low.view(1)) == Drop(1)
    bot = sharp_at(high)
    assert bot.chance_lowest(high.view(1), 40, bot.unseen(high.view(1))) < 0.05
    assert bot.choose(high.view(1)) != Drop(1)


def test_sharp_counts_cards_an_opponent_took_from_the_pile() -> None:
    hands = [
        "Kc Qd 9s 7h 5c",
        "Ks 10h 9c 8d 3s",
        "Ah 2c 3d 7s 4c",
        "Kd Jh 8c 6s 4d",
    ]
    rules = PRESETS["classic"]
    hand = deal(rules, hands, up="Qs", dealer=0)
    bot = make_bot("sharp", random.Random(3))
    assert isinstance(bot, SharpBot)
    bot.observe(hand.events_for(0))
    for action in (DrawStock(1),):
        start = len(hand.events)
        hand.apply(action)
        bot.observe(hand.events_for(0, start))
    drawn = hand.hands[1][-1]
    start = len(hand.events)
    hand.apply(hand.legal_actions(1).actions(1)[-1])  # seat 1 discards its last card
    bot.observe(hand.events_for(0, start))
    start = len(hand.events)
    hand.apply(TakeDiscard(2))
    bot.observe(hand.events_for(0, start))
    taken = hand.hands[2][-1]
    assert bot.known[2] == [taken]
    assert taken not in bot.unseen(hand.view(0))
    assert drawn in bot.unseen(hand.view(0)) or drawn == taken
    # a new deal forgets the last hand
    again = Hand(rules, 4, 1, (1,), rng=random.Random(8))
    bot.observe(again.events_for(0))
    assert bot.known == {} and bot.pile == [again.discards[-1]]


def test_sharp_beats_easy_over_a_fixed_seed_match() -> None:
    result = simulate(PRESETS["classic"], 4, 500, 2024, ["sharp", "easy"])
    sharp = (result.net[0] + result.net[2]) / 2 / result.hands
    easy = (result.net[1] + result.net[3]) / 2 / result.hands
    assert sharp > 0.15 and easy < -0.15, (sharp, easy)
    assert result.wins[0] + result.wins[2] > 1.3 * (result.wins[1] + result.wins[3])


def test_a_sharp_decision_is_the_same_from_the_same_seed() -> None:
    first = simulate(PRESETS["speno"], 3, 60, 5, ["sharp"])
    second = simulate(PRESETS["speno"], 3, 60, 5, ["sharp"])
    assert first.to_dict() == second.to_dict()
    assert first.ledger.to_dict() == second.ledger.to_dict()


def test_play_phase_lays_before_discarding() -> None:
    hands = [
        "Kc Qd 9s 7h 5c",
        "5s 5h 5d Kh 2c",
        "Ah Jc 3d 7s 4c",
        "Kd Jh 8c 6s 4d",
    ]
    rules = PRESETS["classic"]
    for strategy in BOT_STRATEGIES:
        hand = deal(rules, hands, up="Qs", stock="9d", dealer=0)
        bot = make_bot(strategy, random.Random(1))
        bot.observe(hand.events_for(1))
        hand.apply(DrawStock(1))
        assert hand.view(1).phase is Phase.PLAY
        action = bot.choose(hand.view(1))
        assert isinstance(action, LaySpread)
        assert sorted(action.cards) == sorted(parse_cards("5s 5h 5d"))


@pytest.mark.parametrize("strategy", BOT_STRATEGIES)
def test_a_bot_seated_mid_hand_plays_on_from_the_view(strategy: str) -> None:
    rules = PRESETS["classic"]
    hand = Hand(rules, 4, 0, (1,), rng=random.Random(12))
    earlier = make_bot("easy", random.Random(0))
    earlier.observe(hand.events_for(1))
    hand.apply(earlier.choose(hand.view(1)))
    late = make_bot(strategy, random.Random(5))  # saw nothing of the deal
    late.observe(hand.events_for(1, len(hand.events) - 1))
    action = late.choose(hand.view(1))
    assert action in hand.legal_actions(1).actions(1)
    with pytest.raises(BotError, match="events its seat sees"):
        late.observe([Event("draw_stock", 2, (parse_card("2c"),), private=True)])


Ask = Callable[[SeatView], SeatView]


class ShadowedSharp(SharpBot):
    """A sharp bot playing a hand, with twins that follow the same events and are asked, at
    each turn where it may drop, what they would do from the same view changed by `asks` (other
    rules, other stakes). The twins are reseeded alike before each question, so only the
    change tells their answers apart."""

    def __init__(self, rng: random.Random, asks: Sequence[Ask], drops: list[int]) -> None:
        super().__init__(rng)
        self.asks = asks
        self.drops = drops
        self.twins = [SharpBot(random.Random(0)) for _ in asks]

    def observe(self, events: Sequence[Event]) -> None:
        super().observe(events)
        for twin in self.twins:
            twin.observe(events)

    def choose(self, view: SeatView) -> Action:
        if view.phase is Phase.START and view.legal().drop:
            self.drops[0] += 1
            for k, (twin, ask) in enumerate(zip(self.twins, self.asks, strict=True)):
                twin.rng.seed(view.event_count)
                self.drops[k + 1] += twin.choose(ask(view)) == Drop(view.turn)
        return super().choose(view)


def shadow_drops(
    rules: HouseRules, players: int, hands: int, seed: int, asks: Sequence[Ask]
) -> list[int]:
    """[turns where a drop was open, then each twin's drops] over `hands` seeded hands."""
    drops = [0] * (len(asks) + 1)
    rng = random.Random(seed)
    for number in range(hands):
        bots = [
            ShadowedSharp(random.Random(seed * 1000 + number * 10 + seat), asks, drops)
            for seat in range(players)
        ]
        play_hand(Hand(rules, players, number % players, (1,) * players, rng=rng), bots)
    return drops


def with_rules(rules: HouseRules) -> Ask:
    return lambda view: dataclasses.replace(view, rules=rules)


def with_stakes(mine: int, others: int) -> Ask:
    return lambda view: dataclasses.replace(
        view, stakes=tuple(mine if seat == view.seat else others for seat in range(view.players))
    )


@pytest.mark.slow
def test_sharp_drops_less_often_when_a_caught_drop_costs_more() -> None:
    classic = PRESETS["classic"]
    cheap = with_rules(classic.with_options({"caught_pays": 2}))
    costly = with_rules(classic.with_options({"caught_pays": 6}))
    turns, cheap_drops, costly_drops = shadow_drops(classic, 3, 300, 6, [cheap, costly])
    # the same positions, the same samples: only what a caught drop costs differs
    assert turns > 2000 and cheap_drops > 200
    assert costly_drops < 0.9 * cheap_drops, (cheap_drops, costly_drops)


@pytest.mark.slow
def test_sharp_drops_more_often_when_its_own_seat_stake_is_higher() -> None:
    # Under stake_mode = seat a won drop is paid at the dropper's stake, a caught one at each
    # catcher's: a seat whose stake is three times the others' risks less for what it wins.
    speno = PRESETS["speno"]
    asks = [with_stakes(1, 1), with_stakes(3, 3), with_stakes(3, 1)]
    turns, even, even_higher, mine_higher = shadow_drops(speno, 3, 300, 7, asks)
    assert turns > 2000 and even > 200
    assert even_higher == even  # one stake for all, whatever its size: the same decisions
    assert mine_higher > 1.1 * even, (even, mine_higher)


# -- expert ---------------------------------------------------------------------------------


def first_turn(rules: HouseRules, players: int, deck: Sequence[Card], dealer: int = 0) -> Hand:
    return Hand(rules, players, dealer, (1,) * players, deck=deck)


def expert_choice(hand: Hand, seed: int) -> Action:
    bot = make_bot("expert", random.Random(seed))
    bot.observe(hand.events_for(hand.turn))
    return bot.choose(hand.view(hand.turn))


def hidden_swapped(
    deck: Sequence[Card], players: int, dealer: int, rng: random.Random
) -> list[Card]:
    """`deck` with every card the first seat to act cannot see shuffled among themselves: its
    own five, the up card and the stock's top card (which it may draw) stay where they are."""
    first = (dealer + 1) % players
    offset = (first - dealer - 1) % players
    dealt = 5 * players
    fixed = {offset + players * k for k in range(5)} | {dealt, dealt + 1}
    free = [i for i in range(len(deck)) if i not in fixed]
    cards = [deck[i] for i in free]
    rng.shuffle(cards)
    out = list(deck)
    for i, card in zip(free, cards, strict=True):
        out[i] = card
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("pagat", 3), ("speno", 4)])
def test_expert_decides_from_its_seats_view_alone(preset: str, players: int) -> None:
    """Two deals the seat to act cannot tell apart (other hands and the stock differ, what it
    sees does not) get the same decisions from the same seed, before and after its draw."""
    rules = PRESETS[preset]
    rng = random.Random(41)
    differed = 0
    for number in range(12):
        deck = shuffled_deck(rng)
        other = hidden_swapped(deck, players, 0, rng)
        hands = [first_turn(rules, players, d) for d in (deck, other)]
        if hands[0].ended or hands[1].ended:
            continue  # a tonk on the deal: nothing to decide
        differed += hands[0].hands != hands[1].hands
        seat = hands[0].turn
        assert hands[0].view(seat) == hands[1].view(seat)
        choices = [expert_choice(hand, number) for hand in hands]
        assert choices[0] == choices[1]
        for hand in hands:
            hand.apply(DrawStock(seat))
        assert hands[0].view(seat) == hands[1].view(seat)
        assert expert_choice(hands[0], number) == expert_choice(hands[1], number)
    assert differed >= 8


def test_expert_drops_a_sure_winner_and_draws_with_a_high_count() -> None:
    low, high = low_and_high()
    assert expert_choice(low, 1) == Drop(1)
    assert expert_choice(high, 1) == DrawStock(1)


@pytest.mark.slow
def test_expert_drops_less_often_when_a_caught_drop_costs_more() -> None:
    """The first decision of seeded heads-up deals dealt 15 to 25, asked under caught_pays 2
    and 8: the expert settles each sampled drop by the table's rules, so the costlier catch
    is avoided."""
    classic = PRESETS["classic"]
    cheap, costly = (classic.with_options({"caught_pays": n}) for n in (2, 8))
    rng = random.Random(8)
    asked = drops_cheap = drops_costly = 0
    while asked < 40:
        hand = first_turn(classic, 2, shuffled_deck(rng))
        if hand.ended or not 15 <= count(hand.hands[hand.turn]) <= 25:
            continue
        asked += 1
        view = hand.view(hand.turn)
        for rules in (cheap, costly):
            bot = make_bot("expert", random.Random(asked))
            bot.observe(hand.events_for(hand.turn))
            dropped = bot.choose(dataclasses.replace(view, rules=rules)) == Drop(hand.turn)
            if rules is cheap:
                drops_cheap += dropped
            else:
                drops_costly += dropped
    assert drops_cheap >= 20
    assert drops_costly < 0.7 * drops_cheap, (drops_cheap, drops_costly)


@dataclasses.dataclass(frozen=True)
class DropQuestion:
    """The start of a turn where a drop is legal, in a hand of sharp bots: the seat's view and
    the events it saw, the seed its fresh bots are asked with, and whether a fresh sharp bot
    with that seed drops."""

    view: SeatView
    events: tuple[Event, ...]
    seed: int
    sharp: bool

    def expert_drops(self, expert: type[ExpertBot] = ExpertBot) -> bool:
        """Whether a fresh expert bot (`expert`) with the same seed drops."""
        bot = expert(random.Random(self.seed))
        bot.observe(self.events)
        return bot.choose(self.view) == Drop(self.view.turn)


@functools.cache
def drop_questions(preset: str, players: int, hands: int, seed: int) -> tuple[DropQuestion, ...]:
    """The start of every turn where a drop is legal and the stock is not empty, in `hands`
    seeded hands of sharp bots, with whether a fresh sharp bot drops there. (Values, made once
    for the tests that ask the same: an expert's answer is asked of each question as a test
    needs it, each from a fresh bot, so one answer never depends on another being asked.)"""
    rules = PRESETS[preset]
    rng = random.Random(seed)
    found = []
    for number in range(hands):
        hand = Hand(rules, players, number % players, (1,) * players, rng=rng)
        players_bots = [
            make_bot("sharp", random.Random(rng.getrandbits(32))) for _ in range(players)
        ]
        for seat, bot in enumerate(players_bots):
            bot.observe(hand.events_for(seat))
        while not hand.ended:
            seat = hand.turn
            view = hand.view(seat)
            if view.phase is Phase.START and view.legal().drop and view.stock_size:
                asked = rng.getrandbits(32)
                events = tuple(hand.events_for(seat))
                sharp = make_bot("sharp", random.Random(asked))
                sharp.observe(events)
                found.append(DropQuestion(view, events, asked, sharp.choose(view) == Drop(seat)))
            start = len(hand.events)
            hand.apply(players_bots[seat].choose(view))
            for other, bot in enumerate(players_bots):
                bot.observe(hand.events_for(other, start))
    return tuple(found)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("pagat", 4), ("classic", 4)])
def test_expert_weighs_sharps_drops_and_going_on_at_four_players(preset: str, players: int) -> None:
    """At four players the expert's drop bar is sharp's, and both ways are put to its search:
    where sharp goes on, a drop, which it sometimes finds worth more; where sharp drops, going
    on, which must win clearly more to overrule the drop, so it keeps most of sharp's drops
    and passes some."""
    questions = drop_questions(preset, players, 40, 13)
    sharp_drops = sum(q.sharp for q in questions)
    kept = sum(q.expert_drops() for q in questions if q.sharp)
    assert sharp_drops >= 20
    assert sharp_drops * 0.6 <= kept < sharp_drops, (kept, sharp_drops)
    assert any(q.expert_drops() for q in questions if not q.sharp)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("pagat", 4), ("classic", 4)])
def test_expert_keeps_every_sharp_drop_where_it_does_not_weigh_them(
    preset: str, players: int
) -> None:
    """The drops the expert passes at four players (above) are its search's doing: with
    sharp's drops left standing (WEIGH_DROPS_FROM 0, as below four players) it makes every
    one on the same deals."""
    questions = drop_questions(preset, players, 40, 13)
    assert sum(q.sharp for q in questions) >= 20
    assert all(q.expert_drops(ExpertKeepsDrops) for q in questions if q.sharp)


class ExpertKeepsDrops(ExpertBot):
    WEIGH_DROPS_FROM = 0


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("pagat", 3)])
def test_expert_passes_some_drops_sharp_would_make_at_two_and_three_players(
    preset: str, players: int
) -> None:
    """At two and three players the expert asks more of a drop than sharp does (its drop
    bar), so some of the drops sharp makes it does not."""
    questions = drop_questions(preset, players, 40, 13)
    assert sum(q.sharp for q in questions) >= 20
    assert any(not q.expert_drops() for q in questions if q.sharp)


class ExpertNoPlayoutDropsAtThree(ExpertBot):
    THREE_PLAYOUT_DROP_WORTH = 2.0  # (no drop is worth more than a won one)


@pytest.mark.parametrize(("players", "changes"), [(3, True), (4, False)])
def test_expert_playouts_drop_by_the_three_player_bar_at_three_players_only(
    players: int, changes: bool
) -> None:
    """At three players the seats of the expert's playouts drop by THREE_PLAYOUT_DROP_WORTH,
    at four by PLAYOUT_DROP_WORTH: an expert whose three-player playouts never drop plays
    going on out to other ends at three players, and to the same ends at four."""
    rng = random.Random(24)
    differed = 0
    for number in range(4):
        hand = first_turn(PRESETS["classic"], players, shuffled_deck(rng))
        if hand.ended:
            continue
        seat = hand.turn
        found = []
        for expert in (ExpertBot, ExpertNoPlayoutDropsAtThree):
            bot = expert(random.Random(number))
            bot.observe(hand.events_for(seat))
            found.append(list(bot.outcomes(hand.view(seat), [DrawStock(seat)], 20)))
        differed += found[0] != found[1]
    assert (differed > 0) == changes


def test_expert_deals_other_hands_about_what_they_count() -> None:
    """Players keep their low cards, so the expert deals a player who has drawn the lowest of
    more cards than it holds; but not every draw lets a player throw a higher card than it
    drew. Over the turns of seeded hands of sharp bots, the hands it deals to players who
    have drawn twice or more count on average within a point and a half of what they do
    (counting every draw, the deals ran about two points low, and drops looked worse than
    they were)."""
    rng = random.Random(29)
    misses: list[float] = []
    for number in range(40):
        hand = Hand(PRESETS["pagat"], 3, number % 3, (1,) * 3, rng=rng)
        seats = [make_bot("sharp", random.Random(rng.getrandbits(32))) for _ in range(3)]
        for seat, bot in enumerate(seats):
            bot.observe(hand.events_for(seat))
        while not hand.ended:
            seat = hand.turn
            view = hand.view(seat)
            if view.phase is Phase.START:
                expert = make_bot("expert", random.Random(7))
                assert isinstance(expert, ExpertBot)
                expert.observe(hand.events_for(seat))
                for other in range(3):
                    if other != seat and expert.drawn.get(other, 0) >= 2:
                        dealt = [count(cards[other]) for cards, _, _ in expert.deals(view, 50)]
                        misses.append(sum(dealt) / len(dealt) - count(hand.hands[other]))
            start = len(hand.events)
            hand.apply(seats[seat].choose(view))
            for other, bot in enumerate(seats):
                bot.observe(hand.events_for(other, start))
    assert len(misses) > 150
    assert abs(sum(misses) / len(misses)) < 1.5, sum(misses) / len(misses)


@pytest.mark.slow
def test_an_expert_decision_is_the_same_from_the_same_seed() -> None:
    first = simulate(PRESETS["pagat"], 3, 12, 5, ["expert", "sharp"])
    second = simulate(PRESETS["pagat"], 3, 12, 5, ["expert", "sharp"])
    assert first.to_dict() == second.to_dict()
    assert first.ledger.to_dict() == second.ledger.to_dict()


@pytest.mark.e2e
def test_tonk_sim_plays_the_expert() -> None:
    tonk_sim = Path(sys.executable).with_name("tonk-sim")
    assert tonk_sim.exists(), "tonk-sim is not installed: pip install -e ."
    helped = subprocess.run(
        [tonk_sim, "--help"], capture_output=True, text=True, timeout=120, check=True
    )
    assert "expert" in helped.stdout
    done = subprocess.run(
        [tonk_sim, "--players", "3", "--hands", "6", "--bots", "expert,sharp", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [seat["bot"] for seat in data["seats"]] == ["expert", "sharp", "expert"]
    assert sum(data["endings"].values()) == 6


def test_a_position_built_from_a_view_and_the_hidden_cards_plays_on_like_the_hand() -> None:
    rules = PRESETS["black-tonk"]
    for seed in range(20):
        hand = Hand(rules, 3, seed % 3, (1,) * 3, rng=random.Random(seed))
        bots = [make_bot("sharp", random.Random(seed + seat)) for seat in range(3)]
        for seat, bot in enumerate(bots):
            bot.observe(hand.events_for(seat))
        steps = 0
        while not hand.ended and steps < 4:  # a few moves in: spreads, a pile, a turn begun
            start = len(hand.events)
            hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
            for seat, bot in enumerate(bots):
                bot.observe(hand.events_for(seat, start))
            steps += 1
        if hand.ended:
            continue
        view = hand.view(hand.turn)
        copy = Hand.position(view, hand.hands, hand.stock, hand.discards)
        assert copy.view(hand.turn) == dataclasses.replace(view, event_count=0)
        while not hand.ended:
            action = bots[hand.turn].choose(hand.view(hand.turn))
            start = len(hand.events)
            hand.apply(action)
            copy.apply(action)
            for seat, bot in enumerate(bots):
                bot.observe(hand.events_for(seat, start))
        assert copy.settlement == hand.settlement
