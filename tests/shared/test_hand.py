"""The hand, turn by turn: the deal, the turn structure, every way a hand ends in play, refused
actions (which change nothing), and the optional turn rules hit_lock, discard_must_use and
no_rediscard."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from rulekit import card, cards, deal, play, rules_of, snapshot
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
from tonk.shared.game.hand import Hand, cut_for_deal
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending
from tonk.shared.game.spreads import Spread, SpreadKind
from tonk.shared.game.view import Phase, why_not

# Three seats, seat 2 deals, seat 0 plays first. Nobody tonks on the deal under any preset.
SEAT0 = "5c 6c 7c Ks Qd"  # 38, a run of clubs
SEAT1 = "8c 2h 3d 9s Jh"  # 32, the 8c hits seat 0's run
SEAT2 = "Js Jd 4s 4h 10d"  # 38
STOCK = "Qh 10h 9d 10s 3h 2s"


def three(rules: str = "classic", **options: object) -> Hand:
    return deal(rules_of(rules, **options), [SEAT0, SEAT1, SEAT2], up="2c", stock=STOCK)


def draw(hand: Hand, seat: int) -> Card:
    """Draw from the stock and return the card drawn (seen through the drawer's events)."""
    events = hand.apply(DrawStock(seat))
    return events[0].cards[0]


def pass_turn(hand: Hand) -> Card:
    """The seat to act draws from the stock and discards what it drew."""
    seat = hand.turn
    drawn = draw(hand, seat)
    hand.apply(Discard(seat, drawn))
    return drawn


def refused(hand: Hand, action: Action, code: str) -> str:
    """Assert the action is refused with `code`, a readable reason, and nothing changed."""
    before = snapshot(hand)
    with pytest.raises(IllegalAction) as caught:
        hand.apply(action)
    assert caught.value.code == code
    reason = caught.value.reason
    assert reason and reason == str(caught.value)
    assert "Card(" not in reason and "Spread(" not in reason
    assert snapshot(hand) == before
    return reason


# -- the deal ------------------------------------------------------------------------------


def test_deal_gives_five_cards_one_at_a_time_clockwise_from_the_dealers_left() -> None:
    hand = Hand(PRESETS["classic"], 3, 1, (1,), deck=DECK)
    # Seat 2 is left of dealer 1: it gets the 1st, 4th, 7th... card; the dealer gets every 3rd.
    assert hand.hands[2] == list(DECK[0:15:3])
    assert hand.hands[0] == list(DECK[1:15:3])
    assert hand.hands[1] == list(DECK[2:15:3])


def test_the_next_card_is_turned_up_and_the_rest_is_the_stock() -> None:
    hand = Hand(PRESETS["pagat"], 4, 0, (1,), deck=DECK)
    view = hand.view(None)
    assert view.discard_top == DECK[20]
    assert view.discard_size == 1
    assert view.stock_size == 52 - 21
    assert draw(hand, 1) == DECK[21], "the stock is drawn in deck order"
    assert draw_after_discard(hand) == DECK[22]


def draw_after_discard(hand: Hand) -> Card:
    seat = hand.turn
    hand.apply(Discard(seat, hand.hands[seat][0]))
    return draw(hand, hand.turn)


@pytest.mark.parametrize(
    ("players", "dealer", "first"), [(2, 0, 1), (2, 1, 0), (4, 1, 2), (4, 3, 0)]
)
def test_play_starts_with_the_player_to_the_dealers_left(
    players: int, dealer: int, first: int
) -> None:
    hand = Hand(PRESETS["classic"], players, dealer, (1,), deck=DECK)
    assert not hand.ended
    assert hand.turn == first
    assert hand.phase is Phase.START


def test_seats_must_fit_the_rules_and_stakes_the_stake_mode() -> None:
    with pytest.raises(ValueError, match="2 to 4"):
        Hand(PRESETS["classic"], 5, 0, (1,), deck=DECK)
    with pytest.raises(ValueError):
        Hand(PRESETS["pagat"], 1, 0, (1,), deck=DECK)
    with pytest.raises(ValueError, match="seat"):
        Hand(PRESETS["classic"], 3, 3, (1,), deck=DECK)
    with pytest.raises(ValueError, match="same stake"):
        Hand(PRESETS["classic"], 3, 0, (1, 2, 1), deck=DECK)
    with pytest.raises(ValueError, match="stake per seat"):
        Hand(PRESETS["speno"], 3, 0, (1,), deck=DECK)
    with pytest.raises(ValueError):
        Hand(PRESETS["classic"], 3, 0, (1,), deck=DECK[:51])
    assert Hand(PRESETS["speno"], 3, 0, (1, 2, 5), deck=DECK).stakes == (1, 2, 5)
    assert Hand(PRESETS["classic"], 3, 0, (2,), deck=DECK).stakes == (2, 2, 2)


def test_the_same_seed_deals_the_same_hand() -> None:
    one = Hand(PRESETS["classic"], 4, 0, (1,), rng=random.Random(11))
    two = Hand(PRESETS["classic"], 4, 0, (1,), rng=random.Random(11))
    assert one.deck_order == two.deck_order
    assert sorted(one.deck_order) == sorted(DECK)


def test_cut_for_deal_high_card_deals_ace_low_and_ties_cut_again() -> None:
    recut_seen = False
    for seed in range(200):
        cut = cut_for_deal(4, random.Random(seed))
        cutting = set(range(4))
        for round_ in cut.rounds:
            assert {s for s, c in enumerate(round_) if c is not None} == cutting
            high = max(c.rank for c in round_ if c is not None)  # ace is rank 1: low
            cutting = {s for s, c in enumerate(round_) if c is not None and c.rank == high}
        assert cutting == {cut.dealer}
        recut_seen = recut_seen or len(cut.rounds) > 1
    assert recut_seen, "some seed in 200 gives a tie for high card"


# -- a turn --------------------------------------------------------------------------------


def test_drawing_from_the_stock_takes_its_top_card_into_the_hand() -> None:
    hand = three()
    assert draw(hand, 0) == card("Qh")
    assert card("Qh") in hand.hands[0]
    assert len(hand.hands[0]) == 6
    assert hand.view(0).stock_size == 52 - 3 * 5 - 1 - 1
    assert hand.phase is Phase.PLAY


def test_taking_the_discard_takes_only_the_top_card() -> None:
    hand = three()
    pass_turn(hand)  # seat 0 discards the Qh it drew, on top of the 2c
    hand.apply(TakeDiscard(1))
    assert card("Qh") in hand.hands[1]
    assert card("2c") not in hand.hands[1]
    assert hand.view(1).discard_top == card("2c")
    assert hand.view(1).taken_discard == card("Qh")


def test_drop_is_allowed_only_before_drawing() -> None:
    hand = three()
    assert hand.legal_actions(0).drop
    draw(hand, 0)
    assert not hand.legal_actions(0).drop
    reason = refused(hand, Drop(0), "wrong_phase")
    assert "drawn" in reason


def test_a_seat_draws_once_a_turn() -> None:
    hand = three()
    draw(hand, 0)
    refused(hand, DrawStock(0), "wrong_phase")
    refused(hand, TakeDiscard(0), "wrong_phase")


@pytest.mark.parametrize(
    "action",
    [LaySpread(0, cards("5c 6c 7c")), Discard(0, card("Ks")), Hit(0, card("5c"), 1)],
)
def test_spread_hit_and_discard_come_only_after_drawing(action: Action) -> None:
    reason = refused(three(), action, "wrong_phase")
    assert "draw" in reason


def test_a_spread_leaves_the_hand_and_no_longer_counts() -> None:
    hand = three()
    draw(hand, 0)
    events = hand.apply(LaySpread(0, cards("7c 5c 6c")))
    assert [e.kind for e in events] == ["spread"]
    assert hand.hands[0] == list(cards("Ks Qd Qh"))
    assert hand.hand_count(0) == 30
    (spread,) = hand.view(1).spreads
    assert spread.owner == 0
    assert spread.cards == cards("5c 6c 7c")
    assert events[0].spread == spread.id


def test_a_player_may_hit_anybodys_spread_and_is_shown_as_its_hitter() -> None:
    hand = three()
    draw(hand, 0)
    hand.apply(LaySpread(0, cards("5c 6c 7c")))
    hand.apply(Discard(0, card("Qh")))
    draw(hand, 1)
    spread_id = hand.spreads[0].id
    assert (card("8c"), spread_id) in hand.legal_actions(1).hits
    hand.apply(Hit(1, card("8c"), spread_id))
    (spread,) = hand.view(2).spreads
    assert spread.owner == 0
    assert spread.cards == cards("5c 6c 7c 8c")
    assert spread.hit_by(card("8c")) == 1
    assert hand.hand_count(1) == 2 + 3 + 9 + 10 + 10


def test_spreads_and_hits_any_number_any_order_then_one_discard_ends_the_turn() -> None:
    hand = deal(
        "classic",
        ["5c 6c 7c Js Qd", "8c 2h 2d Jh Qh", "Kh Kd 9c 4h 10d"],
        up="3d",
        stock="10s 2s Ks",
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("5c 6c 7c")), Discard(0, card("10s"))])
    draw(hand, 1)  # 2s: a hit, then a spread
    play(hand, [Hit(1, card("8c"), 1), LaySpread(1, cards("2h 2d 2s"))])
    assert hand.turn == 1 and hand.phase is Phase.PLAY
    assert set(hand.legal_actions(1).discards) == set(cards("Jh Qh"))
    hand.apply(Discard(1, card("Qh")))
    assert hand.turn == 2
    draw(hand, 2)  # Ks: a spread, then a hit on another player's spread
    play(hand, [LaySpread(2, cards("Kh Kd Ks")), Hit(2, card("9c"), 1)])
    hand.apply(Discard(2, card("10d")))
    assert hand.turn == 0
    assert [s.cards for s in hand.spreads] == [
        cards("5c 6c 7c 8c 9c"),
        cards("2s 2h 2d"),  # a book shows in suit order
        cards("Ks Kh Kd"),
    ]
    assert [s.owner for s in hand.spreads] == [0, 1, 2]
    assert hand.spreads[0].hits == ((card("8c"), 1), (card("9c"), 2))
    assert [len(h) for h in hand.hands] == [2, 1, 1]


def test_discard_ends_the_turn_and_play_passes_to_the_left() -> None:
    hand = three()
    for expected in (0, 1, 2, 0, 1):
        assert hand.turn == expected
        pass_turn(hand)
        assert hand.phase is Phase.START
    assert hand.turn == 2
    assert hand.view(None).discard_top == card("3h")


def test_a_discard_names_its_card_by_value_not_by_object() -> None:
    # Hand looks a discarded card up by identity first, then by equality.
    hand = three()
    hand.apply(DrawStock(0))
    held = hand.hands[0][2]
    twin = Card(held.rank, held.suit)
    assert twin is not held
    hand.apply(Discard(0, twin))
    assert held not in hand.hands[0] and hand.view(None).discard_top == held
    hand.apply(DrawStock(1))
    with pytest.raises(IllegalAction, match="you do not hold"):
        hand.apply(Discard(1, twin))


# -- endings in play -----------------------------------------------------------------------


def test_tonk_out_spreading_every_card_ends_the_hand_at_once_with_no_discard() -> None:
    hand = deal("classic", ["5c 6c 7c Ks Kd", SEAT1, SEAT2], up="2c", stock="Kh")
    draw(hand, 0)
    hand.apply(LaySpread(0, cards("5c 6c 7c")))
    events = hand.apply(LaySpread(0, cards("Ks Kd Kh")))
    assert [e.kind for e in events] == ["spread", "tonk_out", "hand_end"]
    assert hand.ended
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.TONK_OUT
    assert hand.settlement.winners == (0,)
    assert hand.legal_actions(0).kinds() == frozenset()
    refused(hand, Discard(0, card("Kh")), "hand_over")


def test_tonk_out_hitting_away_the_last_cards() -> None:
    hand = deal("classic", ["5c 6c 7c Ks Qd", "8c 9c 4c 2h 2d", SEAT2], up="2c", stock="Qh 2s")
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("5c 6c 7c")), Discard(0, card("Qh"))])
    draw(hand, 1)
    play(hand, [LaySpread(1, cards("2h 2d 2s")), Hit(1, card("8c"), 1), Hit(1, card("9c"), 1)])
    assert not hand.ended
    events = hand.apply(Hit(1, card("4c"), 1))
    assert [e.kind for e in events] == ["hit", "tonk_out", "hand_end"]
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.TONK_OUT
    assert hand.settlement.winners == (1,)


def test_out_on_a_discard_wins_when_the_last_card_is_discarded() -> None:
    hand = deal("classic", ["5c 6c 7c 8c Qd", "Kc 2h 3d 9s Jh", SEAT2], up="2c", stock="9c")
    draw(hand, 0)
    hand.apply(LaySpread(0, cards("5c 6c 7c 8c 9c")))
    assert not hand.ended
    events = hand.apply(Discard(0, card("Qd")))
    assert [e.kind for e in events] == ["discard", "out_on_discard", "hand_end"]
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.OUT_ON_DISCARD
    assert hand.settlement.winners == (0,)


def test_drop_ends_the_hand_and_counts_every_hand() -> None:
    hand = three()
    events = hand.apply(Drop(0))
    assert [e.kind for e in events] == ["drop", "hand_end"]
    assert events[0].count == 38
    assert hand.settlement is not None
    assert hand.settlement.counts == (38, 32, 38)
    assert hand.settlement.dropper == 0
    assert hand.settlement.ending is Ending.DROP_CAUGHT


def run_down_stock(hand: Hand) -> None:
    while hand.view(None).stock_size:
        pass_turn(hand)


def two_seats_for_stock_out() -> Hand:
    return deal("classic", ["2s 4h 6d 8c Qs", "3s 5h 7d 9c Ks"], up="Jc")  # 30 and 34


def test_with_the_stock_empty_play_goes_on_while_players_take_the_discard() -> None:
    hand = two_seats_for_stock_out()
    run_down_stock(hand)
    assert not hand.ended
    seat = hand.turn
    legal = hand.legal_actions(seat)
    assert legal.take_discard and legal.draw_stock and legal.drop
    top = hand.view(seat).discard_top
    assert top is not None
    hand.apply(TakeDiscard(seat))
    hand.apply(Discard(seat, top))
    assert not hand.ended
    assert hand.turn == 1 - seat


def test_wanting_to_draw_from_an_empty_stock_ends_the_hand_lowest_count_wins() -> None:
    hand = two_seats_for_stock_out()
    run_down_stock(hand)
    seat = hand.turn
    events = hand.apply(DrawStock(seat))
    assert [e.kind for e in events] == ["stock_out", "hand_end"]
    assert events[0].seat == seat
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.STOCK_OUT
    assert hand.settlement.counts == (30, 34)
    assert hand.settlement.winners == (0,)
    assert hand.record().actions[-1] == DrawStock(seat)


def test_the_stock_runs_out_only_when_someone_wants_to_draw_from_it() -> None:
    hand = two_seats_for_stock_out()
    run_down_stock(hand)
    # The last stock card was drawn and discarded: the hand goes on until the next draw.
    assert hand.phase is Phase.START
    assert hand.view(None).stock_size == 0


# -- refused actions change nothing ---------------------------------------------------------


def after_seat0_draws() -> Hand:
    hand = three()
    draw(hand, 0)
    return hand


def after_seat0_spreads() -> Hand:
    hand = after_seat0_draws()
    hand.apply(LaySpread(0, cards("5c 6c 7c")))
    return hand


DRAWN, SPREAD = after_seat0_draws, after_seat0_spreads
REFUSALS: list[tuple[str, Callable[[], Hand], Action, str, str]] = [
    ("another seat, start", three, DrawStock(1), "not_your_turn", "not your turn"),
    ("another seat drops", three, Drop(2), "not_your_turn", "not your turn"),
    ("another seat, play", DRAWN, Discard(1, card("8c")), "not_your_turn", "turn"),
    ("no such seat", three, DrawStock(3), "bad_seat", "no seat 3"),
    ("negative seat", three, Drop(-1), "bad_seat", "no seat"),
    ("spread cards not held", DRAWN, LaySpread(0, cards("8c 9c 10c")), "not_in_hand", "8♣ 9♣ 10♣"),
    ("spread partly held", DRAWN, LaySpread(0, cards("5c 6c 7c 8c")), "not_in_hand", "hold 8♣"),
    ("not a spread", DRAWN, LaySpread(0, cards("Ks Qd Qh")), "not_a_spread", "K♠ Q♦ Q♥ is not"),
    ("too short", DRAWN, LaySpread(0, cards("5c 6c")), "not_a_spread", "not a spread"),
    ("card twice", DRAWN, LaySpread(0, cards("5c 5c 6c")), "not_a_spread", "twice"),
    ("hit card not held", SPREAD, Hit(0, card("8c"), 1), "not_in_hand", "hold 8♣"),
    ("hit no spread", SPREAD, Hit(0, card("Ks"), 9), "no_such_spread", "spread 9"),
    ("hit does not fit", SPREAD, Hit(0, card("Ks"), 1), "cannot_hit", "onto seat 1's run 5♣"),
    ("discard not held", DRAWN, Discard(0, card("2c")), "not_in_hand", "hold 2♣"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "action", "code", "phrase"),
    [r[1:] for r in REFUSALS],
    ids=[r[0] for r in REFUSALS],
)
def test_a_refused_action_says_why_and_changes_nothing(
    setup: Callable[[], Hand], action: Action, code: str, phrase: str
) -> None:
    hand = setup()
    assert refused(hand, action, code).count(phrase) >= 1


@pytest.mark.parametrize(
    ("setup", "action"),
    [r[1:3] for r in REFUSALS if 0 <= r[2].seat < 3],
    ids=[r[0] for r in REFUSALS if 0 <= r[2].seat < 3],
)
def test_a_seat_hears_why_not_from_its_own_view_in_the_hands_words(
    setup: Callable[[], Hand], action: Action
) -> None:
    hand = setup()
    names = ["Kim", "Ada", "Bix"]
    reason = why_not(hand.view(action.seat), action, names)
    with pytest.raises(IllegalAction) as refusal:
        hand.apply(action)
    assert reason == refusal.value.text(names, action.seat)


def test_a_refused_hit_names_the_spread_as_the_player_sees_it() -> None:
    hand = after_seat0_spreads()
    with pytest.raises(IllegalAction) as refusal:
        hand.apply(Hit(0, card("Ks"), 1))
    assert refusal.value.text(["Kim", "Ada", "Bix"], 0) == (
        "K♠ cannot be hit onto your run 5♣ 6♣ 7♣: it does not extend that spread"
    )
    assert refusal.value.text(["Kim", "Ada", "Bix"], 2).startswith(
        "K♠ cannot be hit onto Kim's run 5♣ 6♣ 7♣"
    )
    book = Spread(4, 1, SpreadKind.BOOK, cards("Jc Jd Jh"))
    assert book.described == "book of jacks"
    assert Spread(5, 1, SpreadKind.BOOK, cards("6c 6d 6h")).described == "book of sixes"


def test_no_action_is_taken_after_the_hand_ends() -> None:
    hand = three()
    hand.apply(Drop(0))
    for action in (Drop(1), DrawStock(1), TakeDiscard(1), Discard(1, card("8c"))):
        assert "over" in refused(hand, action, "hand_over")
    for seat in range(3):
        assert hand.legal_actions(seat).kinds() == frozenset()


def test_only_the_seat_to_act_has_legal_actions() -> None:
    hand = three()
    assert hand.legal_actions(0).kinds() == {"drop", "draw_stock", "take_discard"}
    assert hand.legal_actions(1).kinds() == frozenset()
    assert hand.legal_actions(2).kinds() == frozenset()
    assert hand.view(1).legal().kinds() == frozenset()
    assert hand.view(None).legal().kinds() == frozenset()


def test_a_book_of_three_cannot_be_hit_without_hit_books_and_the_reason_says_so() -> None:
    hand = deal(
        "speno",
        ["Ks Kd Kh 2c 3d", "Kc 9h 8s 7d 6s", "4s 4h 10d Jh Qc"],
        up="2h",
        stock="Qd Jc",
        stakes=(1, 1, 1),
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("Ks Kd Kh")), Discard(0, card("Qd"))])
    draw(hand, 1)
    assert hand.legal_actions(1).hits == ()
    assert "book of three" in refused(hand, Hit(1, card("Kc"), 1), "cannot_hit")


# -- hit_lock ("hit and hold") -------------------------------------------------------------


def seat1_hits_seat0(hit_lock: int) -> Hand:
    """Seat 0 spreads 5c 6c 7c; seat 1 hits the 8c onto it; seat 2 passes. Seat 0 to act."""
    hand = three("classic", hit_lock=hit_lock)
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("5c 6c 7c")), Discard(0, card("Qh"))])
    drawn = draw(hand, 1)
    play(hand, [Hit(1, card("8c"), 1), Discard(1, drawn)])
    pass_turn(hand)
    assert hand.turn == 0
    return hand


def test_a_player_whose_spread_is_hit_may_not_drop_on_their_next_turn() -> None:
    hand = seat1_hits_seat0(hit_lock=1)
    assert hand.view(2).hit_locks == (1, 0, 0)
    legal = hand.legal_actions(0)
    assert not legal.drop
    assert legal.draw_stock and legal.take_discard
    assert "hit" in refused(hand, Drop(0), "hit_locked")
    pass_turn(hand)  # the locked turn: draw and discard
    assert hand.view(0).hit_locks == (0, 0, 0)
    pass_turn(hand)
    pass_turn(hand)
    assert hand.legal_actions(0).drop
    hand.apply(Drop(0))
    assert hand.ended


def test_hit_lock_n_keeps_the_drop_locked_for_n_turns() -> None:
    hand = seat1_hits_seat0(hit_lock=3)
    for locked_turn in range(3):
        assert not hand.legal_actions(0).drop, f"locked turn {locked_turn + 1}"
        refused(hand, Drop(0), "hit_locked")
        for _ in range(3):
            pass_turn(hand)
    assert hand.legal_actions(0).drop


def test_without_hit_lock_a_player_whose_spread_is_hit_may_drop() -> None:
    hand = seat1_hits_seat0(hit_lock=0)
    assert hand.view(0).hit_locks == (0, 0, 0)
    assert hand.legal_actions(0).drop
    hand.apply(Drop(0))
    assert hand.ended


def test_hitting_your_own_spread_does_not_lock_you() -> None:
    hand = deal(
        rules_of("classic", hit_lock=2),
        ["5c 6c 7c 8c Qd", "Kc 2h 3d 9s Jh", SEAT2],
        up="2c",
        stock="Qh",
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("5c 6c 7c")), Hit(0, card("8c"), 1), Discard(0, card("Qh"))])
    assert hand.view(0).hit_locks == (0, 0, 0)


def test_a_new_hit_locks_the_owner_again() -> None:
    hand = deal(
        rules_of("classic", hit_lock=1), [SEAT0, "8c 9c 3d 9s Jh", SEAT2], up="2c", stock="Qh"
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("5c 6c 7c")), Discard(0, card("Qh"))])
    drawn = draw(hand, 1)
    play(hand, [Hit(1, card("8c"), 1), Discard(1, drawn)])
    pass_turn(hand)
    pass_turn(hand)  # seat 0's locked turn
    assert hand.view(0).hit_locks == (0, 0, 0)
    drawn = draw(hand, 1)
    play(hand, [Hit(1, card("9c"), 1), Discard(1, drawn)])
    assert hand.view(0).hit_locks == (1, 0, 0)
    pass_turn(hand)
    assert not hand.legal_actions(0).drop


# -- discard_must_use ----------------------------------------------------------------------

# Seat 0 spreads 3c 4c 5c and discards 7c; seat 1 holds the 6c.
MUST_SEAT0 = "3c 4c 5c 7c Kd"


def seat1_may_take_7c(seat1: str, **options: object) -> Hand:
    hand = deal(
        rules_of("classic", **options),
        [MUST_SEAT0, seat1, "Jh Jd 4s 4d 10d"],
        up="2c",
        stock="Qh Qs",
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("3c 4c 5c")), Discard(0, card("7c"))])
    assert hand.view(1).discard_top == card("7c")
    return hand


def test_discard_must_use_refuses_taking_a_discard_that_cannot_be_used() -> None:
    hand = seat1_may_take_7c("9h 10h 2d 2s Ks", discard_must_use=True)
    assert not hand.legal_actions(1).take_discard
    assert "7♣" in refused(hand, TakeDiscard(1), "must_use")
    assert hand.legal_actions(1).draw_stock


def test_discard_must_use_allows_taking_a_discard_that_makes_a_spread() -> None:
    hand = seat1_may_take_7c("7h 7d 2d 2s Ks", discard_must_use=True)
    assert hand.legal_actions(1).take_discard
    hand.apply(TakeDiscard(1))
    legal = hand.legal_actions(1)
    assert legal.discards == ()
    assert "7♣" in refused(hand, Discard(1, card("Ks")), "must_use")
    hand.apply(LaySpread(1, cards("7h 7d 7c")))
    assert set(hand.legal_actions(1).discards) == set(cards("2d 2s Ks"))
    hand.apply(Discard(1, card("Ks")))
    assert hand.turn == 2


def test_discard_must_use_allows_a_card_usable_only_after_another_hit() -> None:
    # The 7c cannot go onto 3c 4c 5c at once, but it can once the 6c is hit there.
    hand = seat1_may_take_7c("6c 9h 10s Js 2d", discard_must_use=True)
    assert hand.legal_actions(1).take_discard
    hand.apply(TakeDiscard(1))
    assert hand.legal_actions(1).hits == ((card("6c"), 1),)
    hand.apply(Hit(1, card("6c"), 1))
    hand.apply(Hit(1, card("7c"), 1))
    hand.apply(Discard(1, card("Js")))
    assert hand.spreads[0].cards == cards("3c 4c 5c 6c 7c")


def test_discard_must_use_refuses_a_move_that_would_strand_the_taken_card() -> None:
    hand = seat1_may_take_7c("6c 6h 6d 9h 2d", discard_must_use=True)
    hand.apply(TakeDiscard(1))
    legal = hand.legal_actions(1)
    assert cards("6c 6h 6d") not in legal.spreads
    assert (card("6c"), 1) in legal.hits
    reason = refused(hand, LaySpread(1, cards("6c 6h 6d")), "must_use")
    assert "7♣" in reason and "finish your turn" in reason


def test_discard_must_use_is_off_by_default() -> None:
    hand = seat1_may_take_7c("9h 10h 2d 2s Ks")
    hand.apply(TakeDiscard(1))
    hand.apply(Discard(1, card("7c")))
    assert hand.turn == 2


# -- no_rediscard --------------------------------------------------------------------------


def test_no_rediscard_refuses_discarding_the_card_just_taken() -> None:
    hand = seat1_may_take_7c("9h 10h 2d 2s Ks", no_rediscard=True)
    hand.apply(TakeDiscard(1))
    assert card("7c") not in hand.legal_actions(1).discards
    assert "7♣" in refused(hand, Discard(1, card("7c")), "no_rediscard")
    assert set(hand.legal_actions(1).discards) == set(cards("9h 10h 2d 2s Ks"))
    hand.apply(Discard(1, card("2s")))
    assert hand.turn == 2


def test_no_rediscard_applies_only_to_a_card_taken_from_the_pile() -> None:
    hand = seat1_may_take_7c("9h 10h 2d 2s Ks", no_rediscard=True)
    drawn = draw(hand, 1)
    assert drawn in hand.legal_actions(1).discards
    hand.apply(Discard(1, drawn))
    assert hand.turn == 2


def test_no_rediscard_refuses_a_move_that_leaves_only_the_taken_card_unplayable() -> None:
    # Seat 0 discards Kd; seat 1 takes it, spreads the 9s and hits 6c: the 7c is its last
    # card but the Kd. Hitting the 7c too would leave only the Kd, which it may not discard.
    hand = deal(
        rules_of("classic", no_rediscard=True),
        ["3c 4c 5c Kd Qs", "9h 9d 9s 6c 7c", "Jh Jd 4s 4d 10d"],
        up="2c",
        stock="Qh",
    )
    draw(hand, 0)
    play(hand, [LaySpread(0, cards("3c 4c 5c")), Discard(0, card("Kd"))])
    hand.apply(TakeDiscard(1))
    play(hand, [LaySpread(1, cards("9h 9d 9s")), Hit(1, card("6c"), 1)])
    assert hand.legal_actions(1).hits == ()
    assert "K♦" in refused(hand, Hit(1, card("7c"), 1), "must_use")
    assert hand.legal_actions(1).discards == (card("7c"),)
    hand.apply(Discard(1, card("7c")))
    assert hand.turn == 2
