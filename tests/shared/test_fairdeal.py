"""A deal anyone can check, in the core: the keyed shuffle as PROTOCOL.md writes it, the values
that change it, and the check that catches a deck changed after the commitment."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from dataclasses import replace

import pytest
from checkout import ROOT
from tonk.shared.game.actions import Discard, DrawStock, Drop
from tonk.shared.game.cards import DECK, format_cards
from tonk.shared.game.dealcheck import Shown, check_deal, cut_of
from tonk.shared.game.fairdeal import (
    KeyedStream,
    Seal,
    commitment_of,
    deal_seed,
    deck_of,
    keyed_shuffle,
    read_hex,
    seal_problem,
)
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import HouseRules

SECRET = bytes(range(32))
VALUES = {0: "11" * 32, 2: "22" * 32}


def _as_documented(secret: bytes, table: int, hand: int, values: dict[int, str]) -> list[str]:
    """The deck order written again from PROTOCOL.md's words alone, as another client would."""
    text = f"tonk-deal/1\ntable {table}\nhand {hand}\n"
    for seat in sorted(values):
        text += f"seat {seat} {values[seat]}\n"
    seed = hmac.new(secret, text.encode(), hashlib.sha256).digest()
    words: list[int] = []
    counter = 0

    def word() -> int:
        nonlocal counter
        if not words:
            block = hmac.new(seed, b"deck" + counter.to_bytes(8, "big"), hashlib.sha256).digest()
            counter += 1
            words.extend(int.from_bytes(block[k : k + 4], "big") for k in range(0, 32, 4))
        return words.pop(0)

    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    deck = [rank + suit for suit in "shdc" for rank in ranks]
    for i in range(51, 0, -1):
        n = i + 1
        while True:
            x = word()
            if x < 2**32 - 2**32 % n:
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def test_the_deck_is_the_one_protocol_md_describes() -> None:
    seed = deal_seed(SECRET, 7, 3, VALUES)
    assert format_cards(deck_of(seed)).split() == _as_documented(SECRET, 7, 3, VALUES)


def test_the_commitment_is_sha256_of_the_secret() -> None:
    assert commitment_of(SECRET) == hashlib.sha256(SECRET).hexdigest()
    assert len(commitment_of(SECRET)) == 64


def test_a_players_value_changes_the_deck() -> None:
    base = deck_of(deal_seed(SECRET, 1, 1, VALUES))
    changed = deck_of(deal_seed(SECRET, 1, 1, {**VALUES, 2: "23" + "22" * 31}))
    assert base != changed
    assert deck_of(deal_seed(SECRET, 1, 1, {0: VALUES[0]})) != base  # a value left out
    assert deck_of(deal_seed(SECRET, 1, 2, VALUES)) != base  # the next hand
    assert deck_of(deal_seed(SECRET, 2, 1, VALUES)) != base  # another table


@pytest.mark.parametrize(
    "values", [{}, {1: "ab" * 32}, VALUES, {s: f"{s}f" * 32 for s in range(5)}]
)
def test_any_set_of_values_makes_a_whole_deck(values: dict[int, str]) -> None:
    deck = deck_of(deal_seed(SECRET, 1, 1, values))
    assert sorted(deck) == sorted(DECK)


def test_a_word_past_the_last_whole_multiple_is_drawn_again() -> None:
    class Scripted(KeyedStream):
        def __init__(self, words: list[int]) -> None:
            super().__init__(b"", "x")
            self.script = words

        def word(self) -> int:
            return self.script.pop(0)

    # 2**32 is 1 past a multiple of 3: the top word alone would favour 0, so it is drawn again.
    stream = Scripted([2**32 - 1, 2**32 - 2, 7])
    assert stream.below(3) == (2**32 - 2) % 3
    assert stream.below(3) == 1
    assert stream.script == []


def test_each_card_comes_first_about_as_often() -> None:
    firsts = Counter(deck_of(deal_seed(SECRET, 1, hand, {}))[0] for hand in range(1, 5201))
    assert set(firsts) == set(DECK)
    assert min(firsts.values()) > 50 and max(firsts.values()) < 160


def test_the_cut_is_drawn_from_its_own_stream() -> None:
    seed = deal_seed(SECRET, 1, 1, VALUES)
    cut = cut_of(seed, 4)
    assert cut == cut_of(seed, 4)
    first = cut.rounds[0]
    assert list(first) == list(_first_cards_of_cut_stream(seed, 4))
    high = max(c.rank for c in cut.rounds[-1] if c is not None)
    assert cut.rounds[-1][cut.dealer] is not None and cut.rounds[-1][cut.dealer].rank == high


def _first_cards_of_cut_stream(seed: bytes, players: int) -> list[object]:
    return keyed_shuffle(KeyedStream(seed, "cut"))[:players]


# -- the check a client makes ---------------------------------------------------------------


def _played(deck: tuple[object, ...] | list[object], seat: int | None = 0) -> tuple[Hand, Shown]:
    rules = HouseRules()
    hand = Hand(rules, 2, 1, (1, 1), deck=deck)  # type: ignore[arg-type]
    while not hand.ended:
        turn = hand.turn
        if len(hand.actions) > 6:
            hand.apply(Drop(turn))
            break
        hand.apply(DrawStock(turn))
        if hand.ended:
            break
        hand.apply(Discard(turn, hand.hands[turn][-1]))
    shown = Shown(
        table=4,
        hand=2,
        commitment=commitment_of(SECRET),
        rules=rules,
        players=2,
        dealer=1,
        stakes=(1, 1),
        multiplier=1,
        seat=seat,
        events=tuple(hand.events_for(seat)),
        settlement=hand.settlement,
    )
    return hand, shown


def test_an_honest_deal_is_checked() -> None:
    deck = deck_of(deal_seed(SECRET, 4, 2, VALUES))
    for seat in (0, 1, None):
        _, shown = _played(list(deck), seat)
        assert check_deal(shown, SECRET.hex(), VALUES, own=VALUES[0] if seat == 0 else None) is None


def test_a_deck_changed_after_the_commitment_is_caught() -> None:
    deck = list(deck_of(deal_seed(SECRET, 4, 2, VALUES)))
    # The server swaps two cards: one of ours for one of the other player's.
    deck[0], deck[1] = deck[1], deck[0]
    _, shown = _played(deck, 0)
    problem = check_deal(shown, SECRET.hex(), VALUES)
    assert problem is not None and "deck drawn" in problem


def test_a_swap_deep_in_the_stock_is_caught_once_a_card_is_drawn_from_there() -> None:
    deck = list(deck_of(deal_seed(SECRET, 4, 2, VALUES)))
    deck[-1], deck[-2] = deck[-2], deck[-1]  # the stock's bottom: nobody draws it
    _, shown = _played(deck, 0)
    assert check_deal(shown, SECRET.hex(), VALUES) is None  # a change nobody could see
    deck = list(deck_of(deal_seed(SECRET, 4, 2, VALUES)))
    deck[11], deck[30] = deck[30], deck[11]  # the stock's top: drawn first
    _, shown = _played(deck, 1)
    assert check_deal(shown, SECRET.hex(), VALUES) is not None


def test_another_secret_or_a_value_dropped_is_caught() -> None:
    deck = deck_of(deal_seed(SECRET, 4, 2, VALUES))
    _, shown = _played(list(deck), 0)
    other = bytes(32).hex()
    assert "committed" in (check_deal(shown, other, VALUES) or "")
    assert "your value" in (check_deal(shown, SECRET.hex(), {2: VALUES[2]}, own=VALUES[0]) or "")
    # Dropping it and drawing the deck without it shows as another deck, even unasked.
    assert check_deal(shown, SECRET.hex(), {2: VALUES[2]}) is not None
    assert "cannot be read" in (check_deal(shown, "zz", VALUES) or "")


def test_a_cut_other_than_the_one_drawn_is_caught() -> None:
    seed = deal_seed(SECRET, 4, 2, VALUES)
    cut = cut_of(seed, 2)
    rounds = tuple(tuple(None if c is None else str(c) for c in r) for r in cut.rounds)
    _, shown = _played(list(deck_of(seed)), 0)
    assert check_deal(replace(shown, cut=(rounds, cut.dealer)), SECRET.hex(), VALUES) is None
    wrong = (rounds, 1 - cut.dealer)
    assert "cut" in (check_deal(replace(shown, cut=wrong), SECRET.hex(), VALUES) or "")


def test_a_stored_seal_is_checked_against_its_deck() -> None:
    seal = Seal(4, 2, SECRET.hex(), tuple(sorted(VALUES.items())))
    deck = deck_of(seal.seed())
    stored = seal.to_dict()
    assert seal_problem(stored, 4, 2, deck) is None
    assert Seal.from_dict(stored) == seal
    assert "deck" in (seal_problem(stored, 4, 2, tuple(reversed(deck))) or "")
    assert "hand 2" in (seal_problem(stored, 4, 3, deck) or "")
    forged = {**stored, "commitment": commitment_of(bytes(32))}
    assert "commitment" in (seal_problem(forged, 4, 2, deck) or "")
    assert "cannot be read" in (seal_problem({**stored, "secret": "x"}, 4, 2, deck) or "")


def test_hex_is_read_strictly() -> None:
    assert read_hex("ab" * 32) == bytes([0xAB]) * 32
    for bad in ("AB" * 32, "ab" * 31, "ab" * 33, "g" * 64):
        with pytest.raises(ValueError):
            read_hex(bad)


def test_protocol_md_s_worked_example_is_what_its_words_compute() -> None:
    """An independent client is written from PROTOCOL.md alone: its example is checked here
    with the shuffle written again from the document's words (`_as_documented`)."""
    doc = (ROOT / "PROTOCOL.md").read_text()
    example = doc.split("\nExample: secret", 1)[1].split("\n\n", 1)[0]
    commitment, seed = re.findall(r"`([0-9a-f]{64})`", example)
    begins = re.search(r"the deck begins\s+`([^`]+)`", example)
    cut = re.search(r"the cut is one round, `([^`]+)`, seat (\d) deals", example)
    assert begins and cut
    values = {0: "11" * 32, 2: "22" * 32}
    assert commitment == hashlib.sha256(SECRET).hexdigest()
    assert seed == deal_seed(SECRET, 7, 3, values).hex()
    deck = _as_documented(SECRET, 7, 3, values)
    assert begins[1].split() == deck[: len(begins[1].split())]
    drawn = cut_of(bytes.fromhex(seed), 3)
    assert [str(card) for card in drawn.rounds[0]] == cut[1].split()
    assert len(drawn.rounds) == 1 and drawn.dealer == int(cut[2])
