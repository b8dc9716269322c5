"""Cards: values, parsing and formatting, the deck, the seeded shuffle, stacked decks."""

from __future__ import annotations

import random

import pytest
from tonk.shared import _speedups
from tonk.shared.game.cards import (
    DECK,
    Card,
    CardError,
    Suit,
    count,
    format_cards,
    parse_card,
    parse_cards,
    shuffled_deck,
    stacked_deck,
    validate_deck,
)


def test_deck_is_52_distinct_cards_without_jokers() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert {c.rank for c in DECK} == set(range(1, 14))
    assert {c.suit for c in DECK} == set(Suit)


def test_ace_counts_one_two_to_ten_face_value_picture_cards_ten() -> None:
    assert parse_card("Ah").value == 1
    for rank in range(2, 11):
        assert Card(rank, Suit.CLUBS).value == rank
    assert [parse_card(t).value for t in ("Js", "Qd", "Kc")] == [10, 10, 10]


def test_deck_totals_340_points() -> None:
    assert count(DECK) == 4 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 * 4)


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("10s", 10, Suit.SPADES),
        ("Ts", 10, Suit.SPADES),
        ("Qh", 12, Suit.HEARTS),
        ("Ac", 1, Suit.CLUBS),
        ("4c", 4, Suit.CLUBS),
        ("Kd", 13, Suit.DIAMONDS),
        ("jd", 11, Suit.DIAMONDS),
        ("10♠", 10, Suit.SPADES),
        ("10S", 10, Suit.SPADES),
        (" 2h ", 2, Suit.HEARTS),
    ],
)
def test_card_text_is_read_in_every_accepted_form(text: str, rank: int, suit: Suit) -> None:
    assert parse_card(text) == Card(rank, suit)


@pytest.mark.parametrize("text", ["", "s", "1", "11s", "0h", "Zs", "10x", "Qq", "AA", "14c"])
def test_card_text_that_is_no_card_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(CardError, match="like 10s"):
        parse_card(text)


def test_card_rank_outside_ace_to_king_is_refused() -> None:
    with pytest.raises(CardError):
        Card(0, Suit.SPADES)
    with pytest.raises(CardError):
        Card(14, Suit.SPADES)


def test_every_card_formats_and_parses_back_to_itself() -> None:
    for c in DECK:
        assert parse_card(str(c)) == c
        assert parse_card(c.pretty()) == c
        assert parse_card(c.pretty(ascii_only=True)) == c


def test_cards_format_with_ten_as_10_and_suit_symbols() -> None:
    hand = parse_cards("10s Qh Ac 4c 9d")
    assert format_cards(hand) == "10s Qh Ac 4c 9d"
    assert format_cards(hand, ascii_only=False) == "10♠ Q♥ A♣ 4♣ 9♦"
    assert format_cards(hand, ascii_only=True) == "10S QH AC 4C 9D"
    assert parse_card("Kd").name == "king of diamonds"


def test_parse_cards_reads_text_or_a_list() -> None:
    assert (
        parse_cards("10s 8d")
        == parse_cards(["10s", "8d"])
        == (Card(10, Suit.SPADES), Card(8, Suit.DIAMONDS))
    )
    assert parse_cards("") == ()


def test_card_index_numbers_the_deck_0_to_51() -> None:
    assert [c.index for c in DECK] == list(range(52))
    assert all(DECK[c.index] is c for c in DECK)


def test_count_of_a_hand_is_the_sum_of_its_values() -> None:
    assert count(parse_cards("10s 8d 8h 5s 4c")) == 35
    assert count(parse_cards("Kc 10c 3c 2s Ah")) == 26
    assert count(()) == 0


def test_the_same_seed_shuffles_the_same_deck() -> None:
    one = shuffled_deck(random.Random(7))
    two = shuffled_deck(random.Random(7))
    other = shuffled_deck(random.Random(8))
    assert one == two
    assert one != other
    assert sorted(one) == sorted(DECK)


def test_a_shuffled_deck_is_in_the_order_random_shuffle_gives() -> None:
    # (a seed and its deck order are kept with a game: the order must not change)
    for seed in range(500):
        deck = list(DECK)
        random.Random(seed).shuffle(deck)
        assert shuffled_deck(random.Random(seed)) == deck


def test_the_quick_shuffle_gives_the_plain_ones_order() -> None:
    # (the hand deals from the quick one: shared/_speedups.py)
    for seed in range(2000):
        assert _speedups.shuffled_deck(random.Random(seed)) == shuffled_deck(random.Random(seed))
    rng, twin = random.Random(3), random.Random(3)
    for _ in range(50):  # and leaves the generator where the plain one does
        assert _speedups.shuffled_deck(rng) == shuffled_deck(twin)


def test_validate_deck_wants_each_card_once() -> None:
    validate_deck(list(DECK))
    with pytest.raises(CardError):
        validate_deck(list(DECK[:51]))
    with pytest.raises(CardError):
        validate_deck([*DECK[:51], DECK[0]])


def test_stacked_deck_deals_one_at_a_time_from_the_dealers_left() -> None:
    hands = [
        parse_cards("Ks Kh Kd Kc Qs"),
        parse_cards("As 2s 3s 4s 5s"),
        parse_cards("Ah 2h 3h 4h 5h"),
    ]
    order = stacked_deck(hands, dealer=0, up_card=parse_card("9c"), stock=parse_cards("8c 7c"))
    # Seat 1 (dealer's left) gets the first card, then seat 2, then the dealer, round by round.
    assert order[:6] == list(parse_cards("As Ah Ks 2s 2h Kh"))
    assert order[15] == parse_card("9c")
    assert order[16:18] == list(parse_cards("8c 7c"))
    validate_deck(order)


def test_stacked_deck_refuses_a_card_twice_or_a_short_hand() -> None:
    with pytest.raises(CardError):
        stacked_deck(
            [parse_cards("As 2s 3s 4s 5s"), parse_cards("As 2h 3h 4h 5h")], 0, parse_card("9c")
        )
    with pytest.raises(CardError):
        stacked_deck(
            [parse_cards("As 2s 3s 4s"), parse_cards("Ah 2h 3h 4h 5h")], 0, parse_card("9c")
        )


def test_cards_sort_by_rank_then_suit_in_deck_order() -> None:
    assert sorted(parse_cards("Kc As Ac 2h Ah")) == list(parse_cards("As Ah Ac 2h Kc"))
    assert parse_card("Ac") > parse_card("As")
    assert parse_card("2s") >= parse_card("Ac")
    assert parse_card("Ks") <= parse_card("Ks")


def test_cards_are_equal_by_rank_and_suit_whatever_object_holds_them() -> None:
    queen = parse_card("Qs")
    twin = Card(12, Suit.SPADES)
    assert twin is not queen and twin == queen
    assert [twin] == [queen] and twin in [parse_card("2c"), queen]
    assert hash(twin) == hash(queen) and {queen: 1}[twin] == 1
    assert queen != parse_card("Qh") and queen != Card(11, Suit.SPADES)
    assert queen != "Qs" and queen != (12, Suit.SPADES)
    assert sorted([parse_card("Kh"), twin, parse_card("As")]) == list(parse_cards("As Qs Kh"))
