"""The core's rules for waiting for a friend: who may have a seat played for now and how many
votes it takes, the count of what happened while a player was away and its words, the bell's
delay and the countdown's clock."""

from __future__ import annotations

import pytest
from tonk.shared.game.session import SessionError, play_for_now
from tonk.shared.game.waiting import AwayTally, away_text, bell_after, clock_text, votes_needed
from tonk.shared.terms import SeatStatus
from tonk.shared.wire import protocol as p

C, D, A, B = SeatStatus.CONNECTED, SeatStatus.DISCONNECTED, SeatStatus.AWAY, SeatStatus.BOT
NAMES = ["Ann", "Bob", "Cy", "Dee"]


def ask(asker, absent, statuses, creator, votes=frozenset()):
    here = [s in (C, A) for s in statuses]
    return play_for_now(asker, absent, statuses, here, NAMES[: len(statuses)], creator, votes)


def test_the_creator_here_decides_alone_and_nobody_else_may():
    assert ask(0, 1, [C, D, C], creator=0).now
    with pytest.raises(SessionError) as refused:
        ask(2, 1, [C, D, C], creator=0)
    assert refused.value.code == p.NOT_CREATOR and "Ann" in refused.value.message


def test_with_the_creator_gone_a_majority_of_the_players_here_decides():
    # Ann (the creator) is gone; Bob, Cy and Dee vote: two of three decide.
    first = ask(1, 0, [D, C, C, C], creator=0)
    assert not first.now and first.votes == {1} and first.needed == 2
    second = ask(2, 0, [D, C, C, C], creator=0, votes=first.votes)
    assert second.now
    # A voter who lost the connection is no longer counted.
    stale = ask(2, 0, [D, D, C, C], creator=0, votes=frozenset({1}))
    assert not stale.now and stale.votes == {2} and stale.needed == 2


@pytest.mark.parametrize(
    ("statuses", "absent", "words"),
    [
        ([C, C], 1, "Bob is here"),
        ([C, A], 1, "played for already"),
        ([C, B], 1, "a bot's"),
        ([C, SeatStatus.EMPTY], 1, "is empty"),
    ],
)
def test_only_a_seat_whose_player_lost_the_connection(statuses, absent, words):
    with pytest.raises(SessionError) as refused:
        ask(0, absent, statuses, creator=0)
    assert refused.value.code == p.BAD_VALUE and words in refused.value.message


def test_no_such_seat_and_no_second_vote():
    with pytest.raises(SessionError) as refused:
        ask(0, 3, [C, D], creator=0)
    assert refused.value.code == p.NO_SUCH_SEAT
    with pytest.raises(SessionError) as refused:
        ask(1, 0, [D, C, C], creator=0, votes=frozenset({1}))
    assert "voted" in refused.value.message


def test_votes_needed_counts_the_players_here_but_the_absent_one():
    assert votes_needed([False, True], 0) == 1
    assert votes_needed([False, True, True], 0) == 2
    assert votes_needed([False, True, True, True], 0) == 2
    assert votes_needed([True, True, True, True], 0) == 2


def test_a_tally_counts_turns_not_moves_and_the_hand_in_plays_events():
    tally = AwayTally(balance=5)
    tally.played(3, 1, range(4, 5))  # a draw
    tally.played(3, 1, range(5, 7))  # the discard of the same turn
    tally.played(3, 2, range(9, 11))
    assert tally.turns == 2 and tally.played_for == [4, 5, 6, 9, 10]
    tally.hand_ended(3, "Ann")
    tally.played(4, 1, range(2, 4))
    assert tally.turns == 3 and tally.hand == 4 and tally.played_for == [2, 3]
    assert tally.anything and not AwayTally(0).anything


def test_the_words_of_while_you_were_away():
    assert away_text(3, [(7, "Ann")], -2, "chips", "Bob") == (
        "While you were away: 3 turns played for you; hand 7 won by Ann; you -2 chips"
    )
    assert away_text(1, [], 0, "chips", "Bob") == "While you were away: 1 turn played for you"
    assert away_text(0, [(2, "Bob"), (3, None)], 1, "chips", "Bob") == (
        "While you were away: 0 turns played for you; hand 2 won by you; hand 3 won by nobody;"
        " you +1 chip"
    )


def test_the_bell_waits_twenty_seconds_or_half_the_turn_timer():
    assert bell_after(None) == 20
    assert bell_after(60) == 20
    assert bell_after(6) == 3


def test_the_countdown_reads_as_a_clock():
    assert clock_text(107) == "1:47"
    assert clock_text(4.2) == "0:05"
    assert clock_text(-3) == "0:00"
