"""The history's replay, in the core: a recorded hand into steps, each exactly the view and the
events its seat had live, and a spectator's with no hand in it."""

from __future__ import annotations

import random

import pytest
from historykit import DEALER, ENDINGS, scripted
from rulekit import play_randomly
from tonk.shared.game.cards import parse_cards
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.history import (
    HandSummary,
    HistoryStep,
    Occupants,
    hand_steps,
    hand_summary,
    seat_in,
)
from tonk.shared.game.rules import PRESETS


def recorded(seed: int, preset: str = "classic", players: int = 3) -> HandRecord:
    rng = random.Random(seed)
    hand = Hand(PRESETS[preset], players, players - 1, (1,) * players, rng=rng)
    play_randomly(hand, rng)
    return hand.record()


@pytest.mark.parametrize("seat", [0, 1, 2, None])
@pytest.mark.parametrize("seed", range(12))
def test_each_step_is_the_view_and_the_events_the_seat_had_live(seed, seat):
    record = recorded(seed)
    steps = hand_steps(record, seat)
    assert len(steps) == len(record.actions) + 1
    live = record.deal()
    assert steps[0].view == live.view(seat)
    for action, step in zip(record.actions, steps[1:], strict=True):
        start = len(live.events)
        live.apply(action)
        assert step.view == live.view(seat)
        assert list(step.events) == live.events_for(seat, start)
    assert steps[-1].view.settlement == live.settlement is not None
    if seat is None:
        assert all(not step.view.hand for step in steps)
        assert all(not e.cards for step in steps for e in step.events if e.private)


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_step_reads_back_from_the_wire_as_itself(ending):
    hand = scripted("speno", ending)
    deck = parse_cards(hand.deck)
    record = HandRecord(PRESETS["speno"], 3, DEALER, (1, 1, 1), 1, deck, hand.actions)
    for step in hand_steps(record, 1):
        wire = step.to_wire()
        assert "rules" not in wire["view"]
        assert HistoryStep.from_wire(wire, PRESETS["speno"]) == step


def test_the_seat_is_the_askers_name_in_that_hand_and_none_for_anyone_else():
    names = ["Ann", "Ben", "Cy"]
    assert seat_in(names, "Ben") == 1
    assert seat_in(names, "ben") is None  # names are matched exactly, as the ledger keys them
    assert seat_in(names, "Zed") is None
    assert seat_in(names, None) is None


def test_a_summary_names_the_winners_and_payments_by_name():
    record = recorded(3)
    hand = record.replay()
    assert hand.settlement is not None
    seating = Occupants(("Ann", "Ben", "Cy"))
    summary = hand_summary(4, seating, record.to_dict(), hand.settlement.to_dict())
    assert summary.dealer == 2 and summary.multiplier == 1 and summary.number == 4
    assert summary.winners == tuple(["Ann", "Ben", "Cy"][s] for s in hand.settlement.winners)
    assert summary.payments == tuple(
        (["Ann", "Ben", "Cy"][x.payer], ["Ann", "Ben", "Cy"][x.payee], x.amount)
        for x in hand.settlement.payments
    )
    assert summary.occupants == () and summary.dealer_name == "Cy"


#: Cy's seat (2) went to a bot from step 3 on, and back to Cy from step 6; Ann's seat (0) went
#: to Bix from step 5.
CHANGED = Occupants(("Ann", "Ben", "Cy"), ((3, 2, "Ada (bot)"), (5, 0, "Bix (bot)"), (6, 2, "Cy")))


def test_the_occupants_say_who_held_each_seat_at_each_step():
    assert CHANGED.names_at(0) == CHANGED.names_at(2) == ("Ann", "Ben", "Cy")
    assert CHANGED.names_at(3) == CHANGED.names_at(4) == ("Ann", "Ben", "Ada (bot)")
    assert CHANGED.names_at(5) == ("Bix (bot)", "Ben", "Ada (bot)")
    assert CHANGED.final == CHANGED.names_at(6) == ("Bix (bot)", "Ben", "Cy")
    assert [CHANGED.seat_at("Cy", step) for step in range(8)] == [2, 2, 2, None, None, None, 2, 2]
    assert [CHANGED.seat_at("Ann", step) for step in (0, 4, 5, 9)] == [0, 0, None, None]
    assert CHANGED.seat_of("Ann") == 0 and CHANGED.seat_of("Ada (bot)") == 2
    assert CHANGED.seat_of("Zed") is None and CHANGED.seat_of(None) is None
    rows = CHANGED.to_wire()
    assert rows == [
        [0, 0, "Ann"],
        [0, 5, "Bix (bot)"],
        [2, 0, "Cy"],
        [2, 3, "Ada (bot)"],
        [2, 6, "Cy"],
    ]
    assert Occupants.from_wire(CHANGED.final, rows) == CHANGED
    assert Occupants.from_wire(CHANGED.final, [*rows, [7, 2, "Zed"], [-1, 0, "Zed"]]) == CHANGED
    assert Occupants(("Ann", "Ben")).to_wire() == []


def test_the_occupants_give_an_updates_holders_by_the_first_event_of_each_step():
    """Steps (the deal, then each action) to event indices: step 3's first event is the 11th
    (index 10), and a change made after the last action holds from the next event on."""
    firsts = [0, 4, 7, 10, 12, 15, 17]  # the deal's 4 events, then each action's (5 of them)
    assert CHANGED.holders(firsts) == [
        (2, 0, "Cy"),
        (2, 10, "Ada (bot)"),
        (0, 0, "Ann"),
        (0, 15, "Bix (bot)"),
        (2, 17, "Cy"),  # (step 6: after the last action, from event 17, the next)
    ]
    assert CHANGED.holders(firsts[:5]) == [  # (a hand of 3 actions: steps 5 and 6 after them)
        (2, 0, "Cy"),
        (2, 10, "Ada (bot)"),
        (0, 0, "Ann"),
        (0, 12, "Bix (bot)"),
        (2, 12, "Cy"),
    ]
    assert Occupants(("Ann", "Ben")).holders(firsts) == []
    assert Occupants(("Ann",), ((2, 4, "Zed"),)).holders(firsts) == []  # (no such seat)


def test_a_summary_names_the_payers_as_the_hand_ended_and_the_dealer_as_it_was_dealt():
    record = recorded(3)
    hand = record.replay()
    assert hand.settlement is not None
    summary = hand_summary(4, CHANGED, record.to_dict(), hand.settlement.to_dict())
    assert summary.names == ("Bix (bot)", "Ben", "Cy")
    assert summary.dealer_name == "Cy"
    assert summary.seating == CHANGED
    assert summary.payments == tuple(
        (summary.names[x.payer], summary.names[x.payee], x.amount) for x in hand.settlement.payments
    )
    assert HandSummary.from_wire(summary.to_wire()) == summary


@pytest.mark.parametrize("seed", range(6))
def test_a_seat_that_changed_hands_is_seen_from_only_while_it_was_held(seed):
    record = recorded(seed)
    for name in ("Ann", "Cy", "Ada (bot)"):
        steps = hand_steps(record, None, lambda step, name=name: CHANGED.seat_at(name, step))
        live = record.deal()
        for number, step in enumerate(steps):
            held = CHANGED.seat_at(name, number)
            if number:
                start = len(live.events)
                live.apply(record.actions[number - 1])
                assert list(step.events) == live.events_for(held, start)
            assert step.view == live.view(held), (name, number)
