"""The coach's core (tonk.shared.bots.coach): the expert's view of one decision, from what the seat
had seen then and nothing more."""

from __future__ import annotations

import random

import pytest
from test_bots import hidden_swapped
from tonk.shared.bots.coach import NotADecision, advise, advise_record
from tonk.shared.bots.expert import ExpertBot
from tonk.shared.game.actions import Discard, DrawStock, Drop
from tonk.shared.game.cards import parse_card, parse_cards, shuffled_deck, stacked_deck
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire.advice import Advice

DEALER = 0


def record_of(preset: str, players: int, deck: list, actions: tuple = ()) -> HandRecord:
    return HandRecord(PRESETS[preset], players, DEALER, (1,) * players, 1, tuple(deck), actions)


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("pagat", 3), ("speno", 4)])
def test_the_coachs_answer_depends_on_nothing_the_seat_could_not_see(preset, players) -> None:
    """Two deals that differ only in cards the seat to act cannot see (the other hands, the
    stock under its draw) get the same answer from the same seed: before its move, at its draw
    and at its discard (a step of a hand looked back at, with the move it made)."""
    rng = random.Random(7)
    differed = 0
    for number in range(4):
        deck = shuffled_deck(rng)
        other = hidden_swapped(deck, players, DEALER, rng)
        first = Hand(PRESETS[preset], players, DEALER, (1,) * players, deck=deck)
        if first.ended or first.turn != 1 % players:
            continue
        seat = first.turn
        differed += (
            first.hands != Hand(PRESETS[preset], players, DEALER, (1,) * players, deck=other).hands
        )
        first.apply(DrawStock(seat))
        throw = Discard(seat, max(first.hands[seat], key=lambda c: c.value))
        for actions, at in (((), None), ((DrawStock(seat),), 0), ((DrawStock(seat), throw), 1)):
            answers = [
                advise_record(
                    record_of(preset, players, d, actions), seat, at, random.Random(number)
                )
                for d in (deck, other)
            ]
            assert answers[0] == answers[1]
            assert answers[0].deals > 0
    assert differed >= 3


def test_the_coach_says_a_sure_drop_was_missed_and_by_how_much() -> None:
    """Seat 1 held 9 (As 2h Ac 2d 3s), a sure lowest at four seats, and drew: the expert
    would have dropped, and the drop did better on average with an interval above zero."""
    hands = [
        parse_cards(h)
        for h in ("Kc Qd 9s 7h 5c", "As 2h Ac 2d 3s", "Kh Jc 9d 7s 4c", "Kd Jh 8c 6s 4d")
    ]
    deck = stacked_deck(hands, DEALER, parse_card("Qs"))
    record = record_of("classic", 4, deck, (DrawStock(1),))
    advice = advise_record(record, 1, 0, random.Random(1))
    assert advice.best == Drop(1) and advice.played == DrawStock(1)
    assert not advice.agrees and advice.sure and 0 < advice.low < advice.gain < advice.high
    assert {w.action for w in advice.weighed} >= {Drop(1), DrawStock(1)}
    assert Advice.from_wire(advice.to_wire()) == advice


def test_the_coach_weighs_only_the_decisions_of_the_seat_asking() -> None:
    hands = [parse_cards(h) for h in ("Kc Qd 9s 7h 5c", "As 2h Ac 2d 3s")]
    deck = stacked_deck(hands, DEALER, parse_card("Qs"))
    record = record_of("classic", 2, deck, (DrawStock(1),))
    with pytest.raises(NotADecision):
        advise_record(record, 0, 0, random.Random(1))  # seat 1's draw
    with pytest.raises(NotADecision):
        advise_record(record, 0, None, random.Random(1))  # seat 1 to discard now
    with pytest.raises(NotADecision):
        advise_record(record, 1, 5, random.Random(1))  # no such step


def test_the_coach_never_recommends_a_move_its_own_figures_rate_worse() -> None:
    """At the start of many turns, the move recommended is the one the coach's deals rate
    best of all it weighed, though the expert's own first choice (from its fewer deals at a
    table) is sometimes another."""
    rng = random.Random(3)
    overruled = 0
    for number in range(40):
        hand = Hand(PRESETS["classic"], 3, DEALER, (1,) * 3, deck=shuffled_deck(rng))
        if hand.ended:
            continue
        seat = hand.turn
        events, view = hand.events_for(seat, 0), hand.view(seat)
        advice = advise(events, view, DrawStock(seat), random.Random(number), deals=30)
        rated = {w.action: w.mean for w in advice.weighed}
        assert rated[advice.best] == max(rated.values()), advice
        assert advice.weighed[0].action == advice.best  # listed first, as PROTOCOL.md says
        expert = ExpertBot(random.Random(number))
        expert.observe(events)
        overruled += expert.choose(view) != advice.best
    assert overruled > 0
