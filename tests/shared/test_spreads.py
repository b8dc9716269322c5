"""Spreads: books and runs, aces low (and high with ace_high_runs, never round the corner),
hitting, display order, and finding every spread in a hand."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rulekit import cards, rules_of
from tonk.shared.game.cards import DECK, Card
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.spreads import (
    Spread,
    SpreadKind,
    can_hit,
    find_spreads,
    order_spread,
    spread_kind,
)

CLASSIC = rules_of("classic")
ACE_HIGH = rules_of("classic", ace_high_runs=True)
NO_BOOK_HITS = rules_of("classic", hit_books=False)
BOOK, RUN = SpreadKind.BOOK, SpreadKind.RUN


def lay(text: str, rules: HouseRules = CLASSIC, owner: int = 0) -> Spread:
    laid = cards(text)
    kind = spread_kind(laid, rules)
    assert kind is not None
    return Spread(1, owner, kind, order_spread(laid, kind, rules.ace_high_runs))


# -- books -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Qs Qh Qd", "4s 4h 4d 4c", "As Ad Ac"])
def test_book_is_three_or_four_cards_of_one_rank(text: str) -> None:
    assert spread_kind(cards(text), CLASSIC) is BOOK


@pytest.mark.parametrize("text", ["Qs Qh", "Qs Qh Kd", "Qs Qh Qd Kd", "Js Qs Qh"])
def test_fewer_than_three_of_a_rank_or_a_stranger_is_no_book(text: str) -> None:
    assert spread_kind(cards(text), CLASSIC) is None


# -- runs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["5c 6c 7c", "8s 9s 10s Js", "7c 5c 6c", "9h Jh 10h Qh Kh"])
def test_run_is_three_or_more_consecutive_cards_of_one_suit_in_any_order(text: str) -> None:
    assert spread_kind(cards(text), CLASSIC) is RUN


@pytest.mark.parametrize("text", ["5c 6c", "5c 6c 7h", "5c 6c 8c", "5c 6c 6c", "5c 6c 7c 9c"])
def test_not_a_run_short_mixed_suits_gapped_or_doubled(text: str) -> None:
    assert spread_kind(cards(text), CLASSIC) is None


def test_aces_are_low_a_2_3_is_a_run() -> None:
    assert spread_kind(cards("Ah 2h 3h"), CLASSIC) is RUN
    assert spread_kind(cards("Ah 2h 3h"), ACE_HIGH) is RUN


def test_aces_low_only_q_k_a_is_no_run_by_default() -> None:
    for preset in ("classic", "black-tonk", "pagat"):
        assert spread_kind(cards("Qh Kh Ah"), PRESETS[preset]) is None
        assert spread_kind(cards("Jh Qh Kh Ah"), PRESETS[preset]) is None


def test_ace_high_runs_makes_q_k_a_a_run() -> None:
    assert spread_kind(cards("Qh Kh Ah"), ACE_HIGH) is RUN
    assert spread_kind(cards("Ah 10h Qh Jh Kh"), ACE_HIGH) is RUN
    assert spread_kind(cards("Qh Kh Ah"), PRESETS["speno"]) is RUN


@pytest.mark.parametrize("text", ["Kh Ah 2h", "Qh Kh Ah 2h", "Kh Ah 2h 3h"])
def test_k_a_2_is_never_a_run(text: str) -> None:
    assert spread_kind(cards(text), CLASSIC) is None
    assert spread_kind(cards(text), ACE_HIGH) is None


def test_the_whole_suit_ace_to_king_is_a_run() -> None:
    suit = [c for c in DECK if c.suit is DECK[0].suit]
    assert spread_kind(suit, CLASSIC) is RUN
    assert spread_kind(suit, ACE_HIGH) is RUN


# -- display order -----------------------------------------------------------------------------


def test_run_shows_low_to_high_with_a_high_ace_last() -> None:
    assert lay("7c 5c 6c").cards == cards("5c 6c 7c")
    assert lay("3h Ah 2h", ACE_HIGH).cards == cards("Ah 2h 3h")
    assert lay("Ah Qh Kh", ACE_HIGH).cards == cards("Qh Kh Ah")


def test_hitting_keeps_the_display_order() -> None:
    assert lay("Ah Qh Kh", ACE_HIGH).with_hit(cards("Jh")[0], 1, True).cards == cards("Jh Qh Kh Ah")
    assert lay("Jh Qh Kh", ACE_HIGH).with_hit(cards("Ah")[0], 1, True).cards == cards("Jh Qh Kh Ah")
    assert lay("2h 3h 4h", ACE_HIGH).with_hit(cards("Ah")[0], 1, True).cards == cards("Ah 2h 3h 4h")
    assert lay("Js 10s 9s").with_hit(cards("8s")[0], 2, False).cards == cards("8s 9s 10s Js")


def test_a_hit_card_is_shown_as_hit_by_its_hitter() -> None:
    spread = lay("Js 10s 9s", owner=0).with_hit(cards("8s")[0], 2, False)
    assert spread.owner == 0
    assert spread.hits == ((cards("8s")[0], 2),)
    assert spread.hit_by(cards("8s")[0]) == 2
    assert spread.hit_by(cards("9s")[0]) is None


# -- hitting -----------------------------------------------------------------------------------


def test_hitting_a_run_extends_it_at_either_end() -> None:
    run = lay("5c 6c 7c")
    assert can_hit(run, cards("4c")[0], CLASSIC)
    assert can_hit(run, cards("8c")[0], CLASSIC)


def test_a_run_cannot_be_hit_in_the_middle_off_the_end_or_in_another_suit() -> None:
    run = lay("5c 6c 7c")
    for text in ("6d", "9c", "3c", "8d", "5c", "6c"):
        assert not can_hit(run, cards(text)[0], CLASSIC)


def test_ace_hits_a_run_low_and_high_only_with_ace_high_runs() -> None:
    assert can_hit(lay("2d 3d 4d"), cards("Ad")[0], CLASSIC)
    assert not can_hit(lay("Jd Qd Kd"), cards("Ad")[0], CLASSIC)
    assert can_hit(lay("Jd Qd Kd", ACE_HIGH), cards("Ad")[0], ACE_HIGH)


def test_hitting_never_goes_round_the_corner() -> None:
    assert not can_hit(lay("Qd Kd Ad", ACE_HIGH), cards("2d")[0], ACE_HIGH)
    assert not can_hit(lay("Ad 2d 3d", ACE_HIGH), cards("Kd")[0], ACE_HIGH)
    assert can_hit(lay("Qd Kd Ad", ACE_HIGH), cards("Jd")[0], ACE_HIGH)


def test_hit_books_lets_a_book_of_three_become_four() -> None:
    book = lay("9s 9h 9d")
    assert can_hit(book, cards("9c")[0], CLASSIC)
    assert not can_hit(book, cards("10c")[0], CLASSIC)


def test_a_book_of_four_can_never_be_hit() -> None:
    full = lay("9s 9h 9d 9c")
    assert all(not can_hit(full, c, CLASSIC) for c in DECK)


def test_without_hit_books_a_book_of_three_cannot_be_hit() -> None:
    book = lay("9s 9h 9d", NO_BOOK_HITS)
    assert not can_hit(book, cards("9c")[0], NO_BOOK_HITS)
    assert not can_hit(book, cards("9c")[0], PRESETS["speno"])
    # but a book of four may still be laid at once
    assert spread_kind(cards("9s 9h 9d 9c"), NO_BOOK_HITS) is BOOK


# -- finding spreads ---------------------------------------------------------------------------


def _normal(found: list[tuple[Card, ...]]) -> set[frozenset[Card]]:
    return {frozenset(s) for s in found}


def test_find_spreads_lists_books_of_three_and_four() -> None:
    found = _normal(find_spreads(cards("7s 7h 7d 7c 2s"), CLASSIC))
    books = ("7s 7h 7d", "7s 7h 7c", "7s 7d 7c", "7h 7d 7c", "7s 7h 7d 7c")
    assert found == {frozenset(cards(t)) for t in books}


def test_find_spreads_lists_every_run_of_three_or_more() -> None:
    found = _normal(find_spreads(cards("3h 4h 5h 6h 9c"), CLASSIC))
    assert found == {frozenset(cards(t)) for t in ("3h 4h 5h", "4h 5h 6h", "3h 4h 5h 6h")}


def test_find_spreads_finds_q_k_a_only_with_ace_high_runs() -> None:
    hand = cards("Qh Kh Ah 2h 3h")
    assert _normal(find_spreads(hand, CLASSIC)) == {frozenset(cards("Ah 2h 3h"))}
    assert _normal(find_spreads(hand, ACE_HIGH)) == {
        frozenset(cards("Ah 2h 3h")),
        frozenset(cards("Qh Kh Ah")),
    }
    assert [list(s) for s in find_spreads(cards("Ah Kh Qh"), ACE_HIGH)] == [list(cards("Qh Kh Ah"))]


def test_find_spreads_finds_nothing_in_a_hand_without_spreads() -> None:
    assert find_spreads(cards("Qc 10s 9h 6h 5d"), CLASSIC) == []


HANDS = st.lists(st.sampled_from(DECK), min_size=0, max_size=7, unique=True)


@settings(max_examples=300, deadline=None)
@given(hand=HANDS, ace_high=st.booleans())
def test_find_spreads_finds_exactly_the_spreads_in_a_hand(hand: list[Card], ace_high: bool) -> None:
    rules = ACE_HIGH if ace_high else CLASSIC
    found = find_spreads(hand, rules)
    assert len(found) == len(_normal(found)), "no spread listed twice"
    expected = {
        frozenset(combo)
        for size in range(3, len(hand) + 1)
        for combo in combinations(hand, size)
        if spread_kind(combo, rules) is not None
    }
    assert _normal(found) == expected
    for spread in found:
        kind = spread_kind(spread, rules)
        assert kind is not None
        assert lay(" ".join(map(str, spread)), rules).cards == spread, "listed in display order"
