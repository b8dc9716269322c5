"""The rules of a rematch offer (tonk.shared.game.rematch), without a server: who is awaited, when
it goes ahead, when it is called off, and the standings added up across sessions."""

from __future__ import annotations

import pytest
from tonk.shared.game.rematch import (
    Answer,
    Outcome,
    RematchOffer,
    combined_standings,
    gone_at_the_offer,
    why_off,
)
from tonk.shared.game.session import SessionError
from tonk.shared.wire import protocol as p

A, B, C, BOT = "Ann", "Bob", "Cy", "Ada (bot)"


def offer(names=(A, B, BOT), bots=(False, False, True), gone=None, deadline=120.0):
    return RematchOffer.offered(
        list(names), list(bots), list(gone or [False] * len(names)), deadline
    )


def test_a_person_played_for_while_their_grace_runs_is_awaited_and_out_once_it_is_over():
    grace = 60.0
    # lost the link at 100: played for (away) until they come back
    assert not gone_at_the_offer(False, True, 100.0, grace, now=159.0)
    assert gone_at_the_offer(False, True, 100.0, grace, now=160.0)
    # left the table (no lost link to wait on), or away with no link
    assert gone_at_the_offer(False, True, None, grace, now=0.0)
    # at the table, or not away: awaited
    assert not gone_at_the_offer(True, True, 100.0, grace, now=500.0)
    assert not gone_at_the_offer(False, False, 100.0, grace, now=500.0)


def test_the_bots_stay_and_every_person_is_awaited():
    o = offer()
    assert o.answers == [Answer.AWAITED, Answer.AWAITED, Answer.BOT]
    assert o.outcome is Outcome.WAITING and o.awaited() == [A, B]


def test_it_goes_ahead_once_every_person_says_yes():
    o = offer()
    o.answer(0, True)
    assert o.outcome is Outcome.WAITING
    o.answer(1, True)
    assert o.outcome is Outcome.STARTED and o.staying() == [0, 1, 2]


def test_a_no_leaves_that_player_out_and_the_rest_play_on_with_the_bot():
    o = offer()
    o.answer(1, False)
    o.answer(0, True)
    assert o.outcome is Outcome.STARTED and o.staying() == [0, 2]


def test_one_person_left_alone_without_a_bot_is_called_off():
    o = offer((A, B), (False, False))
    o.answer(0, True)
    o.left(1)
    assert o.outcome is Outcome.OFF and why_off(o.answers) == "too few players said yes"


def test_nobody_saying_yes_calls_it_off():
    o = offer()
    o.answer(0, False)
    o.answer(1, False)
    assert o.outcome is Outcome.OFF and why_off(o.answers) == "nobody said yes"


def test_a_player_who_had_left_the_table_is_out_from_the_start():
    o = offer((A, B, C), (False, False, False), gone=[False, False, True])
    assert o.answers[2] is Answer.LEFT
    o.answer(0, True)
    o.answer(1, True)
    assert o.outcome is Outcome.STARTED and o.staying() == [0, 1]


def test_the_wait_running_out_leaves_out_whoever_has_not_answered():
    o = offer(deadline=10.0)
    o.answer(0, True)
    assert not o.expire(9.9) and o.outcome is Outcome.WAITING
    assert o.expire(10.0)
    assert o.answers[1] is Answer.LATE and o.outcome is Outcome.STARTED
    assert o.seconds_left(11.0) is None


def test_an_answer_may_change_but_not_be_given_twice_nor_after_the_decision():
    o = offer()
    o.answer(0, True)
    with pytest.raises(SessionError) as twice:
        o.answer(0, True)
    assert twice.value.code == p.NO_REMATCH
    o.answer(0, False)
    assert o.answers[0] is Answer.NO
    o.answer(1, False)
    assert o.outcome is Outcome.OFF
    with pytest.raises(SessionError, match="called off"):
        o.answer(1, True)
    with pytest.raises(SessionError, match="not in the rematch"):
        offer().answer(2, True)  # the bot's seat


def test_a_yes_whose_player_is_gone_when_it_goes_ahead_is_left_out():
    o = offer()
    o.answer(0, True)
    o.answer(1, True)
    o.without([1])
    assert o.answers[1] is Answer.LEFT and o.outcome is Outcome.STARTED
    assert o.staying() == [0, 2]


def test_an_offer_kept_and_read_back_is_the_same_offer():
    o = offer()
    o.answer(0, True)
    again = RematchOffer.from_dict(o.to_dict(), 55.0)
    assert again.answers == o.answers and again.names == o.names
    assert again.outcome is o.outcome and again.deadline == 55.0


def test_the_standings_add_up_across_sessions_most_ahead_first():
    first = {A: 3, B: -1, BOT: -2}
    second = {A: -4, B: 2, BOT: 2}
    assert combined_standings([first, second]) == [(B, 1), (BOT, 0), (A, -1)]
    # A player of the first session only is still in the totals.
    assert combined_standings([{A: 2, B: -2}, {A: 1, C: -1}]) == [(A, 3), (C, -1), (B, -2)]
