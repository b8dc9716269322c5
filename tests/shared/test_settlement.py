"""Settlement: who pays whom for every ending, with tables for ties, every several_deal_tonks
mode and the stake multiplier, and stake_mode = seat. Payments always sum to zero."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulekit import assert_zero_sum, cards, deal, payment_table, rules_of
from tonk.shared.game.actions import Drop
from tonk.shared.game.cards import DECK, Card
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.settlement import (
    Ending,
    Settlement,
    settle_deal_tonks,
    settle_drop,
    settle_out,
    settle_stock_out,
)

CLASSIC = rules_of("classic")
PAGAT = rules_of("pagat")  # caught_others_pay_lowest
SPENO = rules_of("speno")  # stake_mode = seat, tonk_out_pays = 1, pay_each


def hands_for(counts: Sequence[int]) -> list[list[Card]]:
    """Hands of distinct cards with the given counts (tens first, then one card for the rest)."""
    free = list(DECK)
    hands: list[list[Card]] = []
    for total in counts:
        hand: list[Card] = []
        while total > 0:
            value = min(total, 10)
            chosen = next((c for c in free if c.value == value), None)
            if chosen is None:  # none of that value left (five hands of 18): a lower one
                chosen = max((c for c in free if c.value < value), key=lambda c: c.value)
            value = chosen.value
            free.remove(chosen)
            hand.append(chosen)
            total -= value
        hands.append(hand)
    return hands


def drop(
    rules: HouseRules, dropper: int, counts: Sequence[int], stakes: Sequence[int] | None = None
) -> Settlement:
    settlement = settle_drop(
        rules, dropper, hands_for(counts), stakes or (1,) * len(counts), multiplier=1
    )
    assert settlement.counts == tuple(counts)
    assert_zero_sum(settlement, len(counts))
    return settlement


# -- drop won ------------------------------------------------------------------------------


def test_dropper_strictly_lowest_wins_one_stake_from_each_other_player() -> None:
    for rules in (CLASSIC, PAGAT):
        s = drop(rules, 0, [5, 10, 20, 6])
        assert s.ending is Ending.DROP_WON
        assert s.winners == (0,)
        assert s.dropper == 0
        assert payment_table(s) == {(1, 0, 1), (2, 0, 1), (3, 0, 1)}


def test_drop_won_pays_the_table_stake() -> None:
    s = settle_drop(CLASSIC, 1, hands_for([12, 3, 9]), (5, 5, 5), multiplier=1)
    assert payment_table(s) == {(0, 1, 5), (2, 1, 5)}


def test_drop_shows_every_hand() -> None:
    hands = hands_for([5, 10, 20])
    s = settle_drop(CLASSIC, 0, hands, (1, 1, 1), 1)
    assert s.revealed == tuple(tuple(h) for h in hands)


# -- drop caught ---------------------------------------------------------------------------


def test_caught_dropper_pays_double_to_everyone_at_or_below() -> None:
    s = drop(CLASSIC, 0, [10, 10, 5, 20])
    assert s.ending is Ending.DROP_CAUGHT
    assert s.dropper == 0
    assert s.winners == (2,)
    assert payment_table(s) == {(0, 1, 2), (0, 2, 2)}


def test_a_caught_drop_says_who_caught_it_lowest_count_first() -> None:
    s = drop(CLASSIC, 1, [12, 15, 4, 15, 30])
    assert s.ending is Ending.DROP_CAUGHT
    assert s.catchers == ((4, 2), (12, 0), (15, 3))  # (count, seat): at or below 15, not 30
    assert drop(CLASSIC, 0, [5, 10, 20]).catchers == ()  # a drop won is caught by nobody
    assert settle_out(CLASSIC, 0, 3, (1,), 1, tonk_out=True).catchers == ()


def test_dropper_who_ties_the_lowest_count_is_caught() -> None:
    s = drop(CLASSIC, 1, [7, 7, 30])
    assert s.ending is Ending.DROP_CAUGHT
    assert payment_table(s) == {(1, 0, 2)}


def test_caught_pays_sets_what_the_dropper_pays_each_catcher() -> None:
    s = drop(CLASSIC.with_options({"caught_pays": 3}), 0, [10, 9, 30])
    assert payment_table(s) == {(0, 1, 3)}


# Settlement tables for caught_others_pay_lowest: counts by seat, the dropper, the payments.
CAUGHT_TABLES: list[tuple[list[int], int, set[tuple[int, int, int]]]] = [
    # one lowest: the dropper pays double to each at or below; the rest pay the lowest 1
    ([10, 10, 5, 20], 0, {(0, 1, 2), (0, 2, 2), (1, 2, 1), (3, 2, 1)}),
    # tied lowest: each tied player is paid by every player who is neither dropper nor lowest
    ([10, 5, 5, 20], 0, {(0, 1, 2), (0, 2, 2), (3, 1, 1), (3, 2, 1)}),
    # the dropper ties the lowest: caught; the other player pays the lowest too
    ([5, 5, 9], 0, {(0, 1, 2), (2, 1, 1)}),
    # everybody else lower: the dropper pays all; the non-lowest pays the lowest
    ([30, 10, 15], 0, {(0, 1, 2), (0, 2, 2), (2, 1, 1)}),
    # all the others tie for lowest: nobody is left to pay them but the dropper
    ([20, 8, 8, 8], 0, {(0, 1, 2), (0, 2, 2), (0, 3, 2)}),
    # a dropper in the middle seat; five players, two tied lowest, two payers
    ([12, 9, 3, 3, 40], 1, {(1, 2, 2), (1, 3, 2), (0, 2, 1), (0, 3, 1), (4, 2, 1), (4, 3, 1)}),
]


@pytest.mark.parametrize(("counts", "dropper", "table"), CAUGHT_TABLES)
def test_caught_others_pay_lowest_payers_are_neither_dropper_nor_lowest(
    counts: list[int], dropper: int, table: set[tuple[int, int, int]]
) -> None:
    s = drop(PAGAT, dropper, counts)
    assert s.ending is Ending.DROP_CAUGHT
    assert payment_table(s) == table
    lowest = min(c for seat, c in enumerate(counts) if seat != dropper)
    assert s.winners == tuple(
        seat for seat, c in enumerate(counts) if seat != dropper and c == lowest
    )


@pytest.mark.parametrize(("counts", "dropper", "table"), CAUGHT_TABLES)
def test_without_caught_others_pay_lowest_only_the_dropper_pays(
    counts: list[int], dropper: int, table: set[tuple[int, int, int]]
) -> None:
    s = drop(CLASSIC, dropper, counts)
    assert payment_table(s) == {p for p in table if p[0] == dropper}


# The literal reading of 000 ("receives the basic stake from everyone else"): the dropper pays
# each lowest player 1 stake more; the others pay as above.
LITERAL = rules_of("black-tonk", caught_dropper_pays_lowest=True)


@pytest.mark.parametrize(("counts", "dropper", "table"), CAUGHT_TABLES)
def test_read_literally_the_dropper_also_pays_the_lowest_a_stake(
    counts: list[int], dropper: int, table: set[tuple[int, int, int]]
) -> None:
    s = drop(LITERAL, dropper, counts)
    lowest = set(s.winners)
    assert payment_table(s) == {
        (payer, payee, amount + (payer == dropper and payee in lowest))
        for payer, payee, amount in table
    }
    assert_zero_sum(s, len(counts))


def test_read_literally_a_caught_dropper_pays_the_lowest_by_the_receivers_stake() -> None:
    rules = rules_of("speno", caught_dropper_pays_lowest=True)
    hands = hands_for([10, 10, 5])
    s = settle_drop(rules, 0, hands, (1, 2, 5), 2)
    # caught by seat 1 (2 x its stake 2) and seat 2 (2 + 1 lowest, x its stake 5), doubled
    assert payment_table(s) == {(0, 1, 8), (0, 2, 30), (1, 2, 10)}


# -- going out -----------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "times"), [("classic", 2), ("pagat", 2), ("speno", 1)])
def test_tonk_out_wins_tonk_out_pays_from_each_player(preset: str, times: int) -> None:
    s = settle_out(rules_of(preset), 2, 4, (1, 1, 1, 1), 1, tonk_out=True)
    assert s.ending is Ending.TONK_OUT
    assert s.winners == (2,)
    assert payment_table(s) == {(0, 2, times), (1, 2, times), (3, 2, times)}
    assert s.revealed == (None,) * 4
    assert_zero_sum(s, 4)


def test_out_on_a_discard_wins_one_stake_from_each_player() -> None:
    for rules in (CLASSIC, PAGAT, SPENO):
        s = settle_out(rules, 0, 3, (3, 3, 3), 1, tonk_out=False)
        assert s.ending is Ending.OUT_ON_DISCARD
        assert payment_table(s) == {(1, 0, 3), (2, 0, 3)}
        assert s.revealed == (None, None, None)


# -- stock out -----------------------------------------------------------------------------

STOCK_OUT_TABLES: list[tuple[list[int], set[tuple[int, int, int]]]] = [
    ([12, 4, 30], {(0, 1, 1), (2, 1, 1)}),
    ([4, 4, 30, 9], {(2, 0, 1), (3, 0, 1), (2, 1, 1), (3, 1, 1)}),
    ([7, 7, 7], set()),
    ([0, 15], {(1, 0, 1)}),
]


@pytest.mark.parametrize(("counts", "table"), STOCK_OUT_TABLES)
def test_stock_out_lowest_counts_each_get_one_stake_from_every_player_not_lowest(
    counts: list[int], table: set[tuple[int, int, int]]
) -> None:
    s = settle_stock_out(PAGAT, hands_for(counts), (1,) * len(counts), 1)
    assert s.ending is Ending.STOCK_OUT
    assert s.counts == tuple(counts)
    assert s.winners == tuple(i for i, c in enumerate(counts) if c == min(counts))
    assert payment_table(s) == table
    assert all(h is not None for h in s.revealed)
    assert_zero_sum(s, len(counts))


# -- deal tonks ----------------------------------------------------------------------------


def deal_tonks(
    rules: HouseRules, counts: Sequence[int], stakes: Sequence[int] | None = None, mult: int = 1
) -> Settlement:
    hands = hands_for(counts)
    tonks = [s for s, c in enumerate(counts) if rules.is_deal_tonk(c)]
    s = settle_deal_tonks(rules, hands, tonks, stakes or (1,) * len(counts), mult)
    assert_zero_sum(s, len(counts))
    return s


def test_one_deal_tonk_wins_deal_tonk_pays_from_each_player() -> None:
    s = deal_tonks(CLASSIC, [20, 49, 30])
    assert s.ending is Ending.DEAL_TONK
    assert s.winners == (1,)
    assert payment_table(s) == {(0, 1, 2), (2, 1, 2)}
    s = deal_tonks(CLASSIC.with_options({"deal_tonk_pays": 3}), [20, 50, 30])
    assert payment_table(s) == {(0, 1, 3), (2, 1, 3)}


def test_deal_tonk_low_is_a_tonk_too() -> None:
    s = deal_tonks(rules_of("black-tonk"), [20, 15, 30])
    assert s.winners == (1,)
    assert payment_table(s) == {(0, 1, 2), (2, 1, 2)}


def test_a_deal_tonk_reveals_only_the_tonk_hands() -> None:
    s = deal_tonks(CLASSIC, [20, 49, 30])
    assert [h is not None for h in s.revealed] == [False, True, False]
    assert s.counts == (None, 49, None)


def test_several_deal_tonks_void_throws_the_hand_in_with_no_payments() -> None:
    s = deal_tonks(CLASSIC, [49, 20, 50, 30])
    assert s.ending is Ending.VOID
    assert s.winners == ()
    assert s.payments == ()
    assert s.next_multiplier == 1
    assert [h is not None for h in s.revealed] == [True, False, True, False]


def test_several_deal_tonks_pay_each_every_other_player_pays_every_tonk() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "pay_each"})
    s = deal_tonks(rules, [49, 20, 50, 30])
    assert s.ending is Ending.DEAL_TONK
    assert s.winners == (0, 2)
    assert payment_table(s) == {(1, 0, 2), (3, 0, 2), (1, 2, 2), (3, 2, 2)}
    assert s.next_multiplier == 1


def test_pay_each_with_everybody_tonking_pays_nothing() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "pay_each"})
    s = deal_tonks(rules, [49, 50])
    assert s.ending is Ending.DEAL_TONK
    assert s.payments == ()


def test_several_deal_tonks_void_double_doubles_the_next_hand() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "void_double"})
    s = deal_tonks(rules, [49, 20, 50])
    assert s.ending is Ending.VOID
    assert s.payments == ()
    assert s.next_multiplier == 2


def test_void_double_redoubles_each_consecutive_void() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "void_double"})
    assert deal_tonks(rules, [49, 20, 50], mult=2).next_multiplier == 4
    assert deal_tonks(rules, [49, 20, 50], mult=4).next_multiplier == 8


def test_a_single_deal_tonk_under_void_double_is_paid_at_the_multiplier() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "void_double"})
    s = deal_tonks(rules, [49, 20, 30], mult=2)
    assert payment_table(s) == {(1, 0, 4), (2, 0, 4)}
    assert s.next_multiplier == 1


def test_a_hand_that_ends_in_play_resets_the_multiplier() -> None:
    s = settle_drop(CLASSIC, 0, hands_for([3, 10]), (1, 1), multiplier=4)
    assert payment_table(s) == {(1, 0, 4)}
    assert s.next_multiplier == 1


def test_a_hand_started_with_multiplier_2_pays_double() -> None:
    # the same drop at multiplier 1 and 2, through a whole hand
    seats = ["Ac 2c 3d 4h 5s", "Kd Qd Jd 9h 8h", "Ks Qs Js 9s 8s"]  # 15, 47, 47
    for mult in (1, 2):
        hand = deal("classic", seats, up="2h", multiplier=mult)
        hand.apply(Drop(0))
        assert payment_table(hand.settlement) == {(1, 0, mult), (2, 0, mult)}
    tonk = ["Kc Qc Jc 10c 9c", "Ah 2h 3h 4h 6d", "Ad 2d 3c 4d 5d"]  # 49 tonks
    hand = deal("classic", tonk, up="7s", multiplier=2)
    assert payment_table(hand.settlement) == {(1, 0, 4), (2, 0, 4)}


# -- through a whole hand: deal tonks under each mode -------------------------------------

TWO_TONKS = [
    "Kc Qc Jc 10c 9c",
    "Ah 2h 3h 4h 6d",
    "Kd Qd Jd 10d 9d",
    "Ks Qs Js 10s 2s",
]  # 49 16 49 42


@pytest.mark.parametrize(
    ("mode", "ending", "table", "next_multiplier"),
    [
        ("void", Ending.VOID, set(), 1),
        ("void_double", Ending.VOID, set(), 2),
        ("pay_each", Ending.DEAL_TONK, {(1, 0, 2), (3, 0, 2), (1, 2, 2), (3, 2, 2)}, 1),
    ],
)
def test_several_deal_tonks_in_a_dealt_hand(
    mode: str, ending: Ending, table: set[tuple[int, int, int]], next_multiplier: int
) -> None:
    hand = deal(rules_of("pagat", several_deal_tonks=mode), TWO_TONKS, up="7s")
    assert hand.ended
    s = hand.settlement
    assert s is not None
    assert s.ending is ending
    assert payment_table(s) == table
    assert s.next_multiplier == next_multiplier
    assert [e.seat for e in hand.events if e.kind == "deal_tonk"] == [0, 2]
    assert [h is not None for h in s.revealed] == [True, False, True, False]
    assert hand.legal_actions(1).kinds() == frozenset()


# -- stake_mode = seat ---------------------------------------------------------------------

SEAT_STAKES = (1, 2, 5)


def test_seat_stakes_size_a_won_drop_by_the_receivers_stake() -> None:
    s = drop(SPENO, 2, [20, 30, 4], SEAT_STAKES)
    assert payment_table(s) == {(0, 2, 5), (1, 2, 5)}
    s = drop(SPENO, 0, [3, 30, 4], SEAT_STAKES)
    assert payment_table(s) == {(1, 0, 1), (2, 0, 1)}


def test_seat_stakes_size_a_caught_drop_by_each_receivers_stake() -> None:
    # seat 2 drops with 9 and is caught by seat 0 (4) and seat 1 (9): it pays each double its
    # own stake; seat 1 (neither dropper nor lowest) pays the lowest, seat 0, at seat 0's stake.
    s = drop(SPENO, 2, [4, 9, 9], SEAT_STAKES)
    assert payment_table(s) == {(2, 0, 2), (2, 1, 4), (1, 0, 1)}


def test_seat_stakes_size_a_stock_out_by_the_receivers_stake() -> None:
    s = settle_stock_out(SPENO, hands_for([10, 4, 4]), SEAT_STAKES, 1)
    assert payment_table(s) == {(0, 1, 2), (0, 2, 5)}


def test_seat_stakes_size_going_out_by_the_receivers_stake() -> None:
    s = settle_out(SPENO, 1, 3, SEAT_STAKES, 1, tonk_out=True)
    assert payment_table(s) == {(0, 1, 2), (2, 1, 2)}
    s = settle_out(SPENO, 2, 3, SEAT_STAKES, 1, tonk_out=False)
    assert payment_table(s) == {(0, 2, 5), (1, 2, 5)}


def test_seat_stakes_size_a_deal_tonk_by_the_payers_stake() -> None:
    s = deal_tonks(SPENO, [20, 30, 49], SEAT_STAKES)
    assert payment_table(s) == {(0, 2, 2), (1, 2, 4)}
    s = deal_tonks(SPENO, [15, 30, 49], SEAT_STAKES)  # pay_each: seat 1 pays both
    assert payment_table(s) == {(1, 0, 4), (1, 2, 4)}


def test_table_stakes_ignore_who_pays() -> None:
    s = settle_drop(PAGAT, 2, hands_for([4, 9, 9]), (3, 3, 3), 1)
    assert payment_table(s) == {(2, 0, 6), (2, 1, 6), (1, 0, 3)}


# -- always zero-sum, always plain data ----------------------------------------------------

COUNTS = st.lists(st.integers(0, 30), min_size=2, max_size=5)  # hands_for has tens enough


@settings(max_examples=200, deadline=None)
@given(
    counts=COUNTS,
    data=st.data(),
    preset=st.sampled_from(["classic", "black-tonk", "speno", "pagat"]),
    mult=st.sampled_from([1, 2, 4]),
)
def test_every_settlement_sums_to_zero(
    counts: list[int], data: st.DataObject, preset: str, mult: int
) -> None:
    rules = rules_of(preset)
    n = len(counts)
    stakes = tuple(data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)))
    if preset != "speno":
        stakes = (stakes[0],) * n
    seat = data.draw(st.integers(0, n - 1))
    hands = hands_for(counts)
    tonks = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    settlements = [
        settle_drop(rules, seat, hands, stakes, mult),
        settle_stock_out(rules, hands, stakes, mult),
        settle_out(rules, seat, n, stakes, mult, tonk_out=True),
        settle_out(rules, seat, n, stakes, mult, tonk_out=False),
        settle_deal_tonks(rules, hands, tonks, stakes, mult),
    ]
    for s in settlements:
        assert_zero_sum(s, n)
        assert Settlement.from_dict(s.to_dict()) == s


def test_settlement_round_trips_through_plain_data() -> None:
    s = drop(PAGAT, 0, [10, 5, 5, 20])
    data = s.to_dict()
    assert data["ending"] == "drop_caught"
    assert data["payments"] == [[p.payer, p.payee, p.amount] for p in s.payments]
    assert Settlement.from_dict(data) == s
    assert s.net(4) == [-4, 3, 3, -2]


def test_counts_show_the_cards_still_held() -> None:
    s = settle_drop(CLASSIC, 0, [list(cards("5s 4c")), list(cards("Kh 2d"))], (1, 1), 1)
    assert s.counts == (9, 12)
