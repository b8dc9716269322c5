"""Hand records: (rules, seats, dealer, stakes, multiplier, deck order, actions), plain and
small, from which a hand replays to exactly the same state and settlement."""

from __future__ import annotations

import json
import random

import pytest
from rulekit import card, cards, deal, play, play_randomly, rules_of, snapshot
from tonk.shared.game.actions import Discard, DrawStock, Drop, IllegalAction, LaySpread
from tonk.shared.game.cards import format_cards
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.rules import PRESETS

RECORD_KEYS = {"rules", "players", "dealer", "stakes", "multiplier", "deck", "actions"}


def through_json(hand: Hand) -> HandRecord:
    text = json.dumps(hand.record().to_dict())
    return HandRecord.from_dict(json.loads(text))


def same_hand(one: Hand, two: Hand) -> None:
    assert snapshot(one) == snapshot(two)
    for seat in (*range(one.players), None):
        assert one.view(seat) == two.view(seat)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_record_through_json_replays_to_the_same_state_and_settlement(preset: str) -> None:
    rng = random.Random(f"record-{preset}")
    for _ in range(25):
        players = rng.randint(2, PRESETS[preset].players)
        stakes = tuple(rng.randint(1, 5) for _ in range(players))
        if PRESETS[preset].stake_mode.value == "table":
            stakes = stakes[:1]
        hand = Hand(
            PRESETS[preset].with_options({"hit_lock": rng.randint(0, 2)}),
            players,
            rng.randrange(players),
            stakes,
            rng=rng,
            multiplier=rng.choice([1, 2]),
        )
        play_randomly(hand, rng)
        record = through_json(hand)
        assert record == hand.record()
        replayed = record.replay()
        same_hand(replayed, hand)
        assert replayed.settlement == hand.settlement


def test_a_record_replays_a_hand_in_progress_too() -> None:
    hand = deal("speno", ["10s 8d 8h 5s 4c", "Kc 10c 3c 2s Ah", "Qh 8c 6d 2d 2c"], up="5c",
                stock="6s Ac", stakes=(1, 2, 3))  # fmt: skip
    play(hand, [DrawStock(0), Discard(0, card("10s")), DrawStock(1)])
    replayed = through_json(hand).replay()
    same_hand(replayed, hand)
    # ...and it plays on from there exactly like the original
    for h in (hand, replayed):
        h.apply(Discard(1, card("Kc")))
    same_hand(replayed, hand)


def test_a_record_is_small_plain_data() -> None:
    hand = deal("speno", ["10s 8d 8h 5s 4c", "Kc 10c 3c 2s Ah", "Qh 8c 6d 2d 2c"], up="5c",
                stock="6s Ac 7s 8s 3s 7h", stakes=(1, 1, 1))  # fmt: skip
    play(hand, [DrawStock(0), Discard(0, card("10s")), DrawStock(1), Discard(1, card("Kc")),
                DrawStock(2), Discard(2, card("Qh")), DrawStock(0),
                LaySpread(0, cards("8d 8h 8s")), Discard(0, card("6s")), Drop(1)])  # fmt: skip
    data = hand.record().to_dict()
    assert set(data) == RECORD_KEYS
    assert data["rules"] == {"preset": "speno"}
    assert data["deck"] == format_cards(hand.deck_order)
    assert data["actions"][0] == {"type": "draw_stock", "seat": 0}
    assert data["actions"][7] == {"type": "spread", "seat": 0, "cards": ["8d", "8h", "8s"]}
    assert len(json.dumps(data)) < 1000


def test_records_of_random_hands_stay_small() -> None:
    rng = random.Random(5)
    for _ in range(20):
        hand = Hand(PRESETS["pagat"], 4, 0, (1,), rng=rng)
        play_randomly(hand, rng)
        size = len(json.dumps(hand.record().to_dict()))
        assert size < 300 + 60 * len(hand.actions)


def test_a_record_keeps_the_rule_overrides_stakes_and_multiplier() -> None:
    rules = rules_of("speno", hit_lock=2, several_deal_tonks="void_double")
    hand = Hand(rules, 3, 1, (2, 3, 4), rng=random.Random(1), multiplier=4)
    record = through_json(hand)
    assert record.rules == rules
    assert record.stakes == (2, 3, 4)
    assert record.multiplier == 4
    assert record.dealer == 1
    assert record.players == 3


def test_a_deal_tonk_hand_replays_with_no_actions() -> None:
    hand = deal("classic", ["Kc Qc Jc 10c 9c", "Ah 2h 3h 4h 6d"], up="7s")
    assert hand.ended
    record = through_json(hand)
    assert record.actions == ()
    assert record.replay().settlement == hand.settlement


def test_a_refused_action_is_not_recorded() -> None:
    hand = deal("classic", ["10s 8d 8h 5s 4c", "Kc 10c 3c 2s Ah"], up="5c")
    with pytest.raises(IllegalAction):
        hand.apply(Discard(0, card("10s")))
    assert hand.record().actions == ()


def test_a_tampered_record_fails_to_replay() -> None:
    hand = deal("classic", ["10s 8d 8h 5s 4c", "Kc 10c 3c 2s Ah"], up="5c")
    play(hand, [DrawStock(0), Discard(0, card("10s"))])
    data = hand.record().to_dict()
    data["actions"][1]["card"] = "Kc"  # seat 0 never held the Kc
    with pytest.raises(IllegalAction):
        HandRecord.from_dict(data).replay()
    data["actions"][1] = {"type": "shuffle", "seat": 0}
    with pytest.raises(IllegalAction) as caught:
        HandRecord.from_dict(data)
    assert caught.value.code == "bad_action"
