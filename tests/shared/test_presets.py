"""Every difference between the presets in the rules table, shown by one hand that plays
differently under two presets."""

from __future__ import annotations

import pytest
from rulekit import card, cards, deal, payment_table, play
from tonk.shared.game.actions import Discard, DrawStock, Drop, Hit, IllegalAction, LaySpread
from tonk.shared.game.cards import DECK
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending


def stakes_for(preset: str, players: int) -> tuple[int, ...]:
    return (1,) * (players if PRESETS[preset].stake_mode.value == "seat" else 1)


def test_players_classic_seats_four_the_others_five() -> None:
    with pytest.raises(ValueError, match="2 to 4"):
        Hand(PRESETS["classic"], 5, 0, (1,), deck=DECK)
    for preset in ("black-tonk", "speno", "pagat"):
        hand = Hand(PRESETS[preset], 5, 0, stakes_for(preset, 5), deck=DECK)
        assert len(hand.hands) == 5
        assert hand.view(None).stock_size == 52 - 25 - 1


LOW_DEAL = ["Ac 2c 3d 4h 5s", "Kd Qd Jd 9h 8h", "Ks Qs Js 9s 8s"]  # 15, 47, 47


@pytest.mark.parametrize(
    ("preset", "tonk"),
    [("classic", False), ("pagat", False), ("black-tonk", True), ("speno", True)],
)
def test_deal_tonk_low_a_dealt_15_is_a_tonk_only_where_the_preset_says(
    preset: str, tonk: bool
) -> None:
    hand = deal(preset, LOW_DEAL, up="2h", stakes=stakes_for(preset, 3))
    assert hand.ended is tonk
    if tonk:
        assert hand.settlement is not None
        assert hand.settlement.ending is Ending.DEAL_TONK
        assert payment_table(hand.settlement) == {(1, 0, 2), (2, 0, 2)}
    else:
        assert hand.turn == 0
        assert hand.legal_actions(0).drop


TWO_HIGH = ["Kc Qc Jc 10c 9c", "Ah 2h 3h 4h 6d", "Kd Qd Jd 10d 9d"]  # 49, 16, 49


@pytest.mark.parametrize(
    ("preset", "ending", "table"),
    [
        ("classic", Ending.VOID, set()),
        ("black-tonk", Ending.VOID, set()),
        ("pagat", Ending.VOID, set()),
        ("speno", Ending.DEAL_TONK, {(1, 0, 2), (1, 2, 2)}),
    ],
)
def test_several_deal_tonks_void_everywhere_but_speno_pays_each(
    preset: str, ending: Ending, table: set[tuple[int, int, int]]
) -> None:
    # Seat 1's 16 is no tonk under any preset; seats 0 and 2 tonk with 49.
    hand = deal(preset, TWO_HIGH, up="7s", stakes=stakes_for(preset, 3))
    assert hand.settlement is not None
    assert hand.settlement.ending is ending
    assert payment_table(hand.settlement) == table


TONK_OUT = ["5c 6c 7c Ks Kd", "8c 2h 3d 9s Jh", "Js Jd 4s 4h 10d"]


@pytest.mark.parametrize(
    ("preset", "times"), [("classic", 2), ("black-tonk", 2), ("pagat", 2), ("speno", 1)]
)
def test_tonk_out_pays_double_except_under_speno(preset: str, times: int) -> None:
    hand = deal(preset, TONK_OUT, up="2c", stock="Kh", stakes=stakes_for(preset, 3))
    play(hand, [DrawStock(0), LaySpread(0, cards("5c 6c 7c")), LaySpread(0, cards("Ks Kd Kh"))])
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.TONK_OUT
    assert payment_table(hand.settlement) == {(1, 0, times), (2, 0, times)}


CAUGHT = ["Ks 2c 3d 4h 5s", "Kd 4d 3h 2s Ac", "Kh Qh Js 9s 8s"]  # 24, 20, 47


@pytest.mark.parametrize(
    ("preset", "table"),
    [
        ("classic", {(0, 1, 2)}),
        ("black-tonk", {(0, 1, 2), (2, 1, 1)}),
        ("pagat", {(0, 1, 2), (2, 1, 1)}),
        ("speno", {(0, 1, 2), (2, 1, 1)}),
    ],
)
def test_caught_others_pay_lowest_off_only_in_classic(
    preset: str, table: set[tuple[int, int, int]]
) -> None:
    hand = deal(preset, CAUGHT, up="2h", stakes=stakes_for(preset, 3))
    hand.apply(Drop(0))
    assert hand.settlement is not None
    assert hand.settlement.ending is Ending.DROP_CAUGHT
    assert payment_table(hand.settlement) == table


BOOK = ["Qs Qd Qh 2c 3d", "Qc 9h 8s 7d 6s", "4s 4h 10d Jh Kc"]


@pytest.mark.parametrize(
    ("preset", "allowed"),
    [("classic", True), ("black-tonk", True), ("pagat", True), ("speno", False)],
)
def test_hit_books_a_book_of_three_may_be_hit_except_under_speno(
    preset: str, allowed: bool
) -> None:
    hand = deal(preset, BOOK, up="2h", stock="Kd Jc", stakes=stakes_for(preset, 3))
    play(hand, [DrawStock(0), LaySpread(0, cards("Qs Qd Qh")), Discard(0, card("Kd"))])
    hand.apply(DrawStock(1))
    assert ((card("Qc"), 1) in hand.legal_actions(1).hits) is allowed
    if allowed:
        hand.apply(Hit(1, card("Qc"), 1))
        assert len(hand.spreads[0].cards) == 4
    else:
        with pytest.raises(IllegalAction):
            hand.apply(Hit(1, card("Qc"), 1))


QKA = ["Qh Kh Ah 2c 3d", "Jh 9c 8s 7d 6s", "4s 4h 10d Js Kc"]


@pytest.mark.parametrize(
    ("preset", "allowed"),
    [("classic", False), ("black-tonk", False), ("pagat", False), ("speno", True)],
)
def test_ace_high_runs_q_k_a_is_a_run_only_under_speno(preset: str, allowed: bool) -> None:
    hand = deal(preset, QKA, up="2h", stock="Kd Jc", stakes=stakes_for(preset, 3))
    hand.apply(DrawStock(0))
    assert (cards("Qh Kh Ah") in hand.legal_actions(0).spreads) is allowed
    if not allowed:
        with pytest.raises(IllegalAction, match="not a spread"):
            hand.apply(LaySpread(0, cards("Ah Kh Qh")))
        return
    hand.apply(LaySpread(0, cards("Ah Kh Qh")))
    assert hand.spreads[0].cards == cards("Qh Kh Ah")
    play(hand, [Discard(0, card("Kd")), DrawStock(1), Hit(1, card("Jh"), 1)])
    assert hand.spreads[0].cards == cards("Jh Qh Kh Ah")


WON = ["Ks 2c 3d 4h Ac", "Kd 4d 3h 2s 9c", "Kh Qh Js 9s 8s"]  # 20, 28, 47


def test_stake_mode_table_one_stake_for_all_seat_each_receiver_sized() -> None:
    classic = deal("classic", WON, up="2h", stakes=(3,))
    classic.apply(Drop(0))
    assert payment_table(classic.settlement) == {(1, 0, 3), (2, 0, 3)}
    with pytest.raises(ValueError):
        deal("classic", WON, up="2h", stakes=(3, 1, 5))
    speno = deal("speno", WON, up="2h", stakes=(3, 1, 5))
    speno.apply(Drop(0))
    assert payment_table(speno.settlement) == {(1, 0, 3), (2, 0, 3)}
    # the same drop by the other seat's stake: seat 1 drops and is caught by seat 0
    speno = deal("speno", WON, up="2h", dealer=0, stakes=(3, 1, 5))
    speno.apply(Drop(1))
    assert payment_table(speno.settlement) == {(1, 0, 6), (2, 0, 3)}
