"""A session's rules, in the core: who may sit and for what stake, when a session starts, the
cut and the deal passing left, the next hand's multiplier, the ledger, and when it ends."""

from __future__ import annotations

import random

import pytest
from rulekit import cards, deal, rules_of
from tonk.shared.game.actions import DrawStock
from tonk.shared.game.hand import Hand, cut_for_deal
from tonk.shared.game.session import (
    BOT_NAMES,
    Absence,
    SeatRecord,
    Session,
    SessionError,
    bot_name,
    check_can_start,
    check_fixed_dealer,
    check_name_free,
    check_players,
    creators_stake,
    dealer_of,
    first_dealer,
    hand_stakes,
    next_creator,
    next_dealer,
    past_grace,
    pick_seat,
    played_for_at,
    renumbered,
    seat_stake,
    seat_stakes,
    seat_status,
    session_over,
    starts_itself,
    without_last_action,
)
from tonk.shared.game.settlement import settle_deal_tonks, settle_out
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import SeatKind, SeatStatus

CLASSIC = rules_of("classic")  # stake_mode = table
SPENO = rules_of("speno")  # stake_mode = seat


def refusal(exc: pytest.ExceptionInfo[SessionError]) -> tuple[str, str, str | None]:
    return exc.value.code, exc.value.message, exc.value.detail


# -- seats and stakes ----------------------------------------------------------------------------


def test_a_table_seats_from_two_players_to_as_many_as_the_rules_allow() -> None:
    for players in range(2, CLASSIC.players + 1):
        check_players(CLASSIC, players)
    for players in (0, 1, CLASSIC.players + 1):
        with pytest.raises(SessionError) as exc:
            check_players(CLASSIC, players)
        assert refusal(exc) == (
            p.BAD_TABLE,
            f"these rules seat 2 to {CLASSIC.players} players",
            "seats",
        )
    three = CLASSIC.with_options({"players": 3})
    with pytest.raises(SessionError):
        check_players(three, 4)


def test_a_fixed_dealer_must_be_one_of_the_seats() -> None:
    check_fixed_dealer(None, 3)
    check_fixed_dealer(2, 3)
    with pytest.raises(SessionError) as exc:
        check_fixed_dealer(3, 3)
    assert refusal(exc) == (p.BAD_TABLE, "there is no seat 3 to deal", "dealer")


def test_a_newcomer_gets_the_first_free_seat_or_the_free_one_asked_for() -> None:
    assert pick_seat([True, False, False], None) == 1
    assert pick_seat([True, False, False], 2) == 2
    with pytest.raises(SessionError) as exc:
        pick_seat([True, True], None)
    assert refusal(exc) == (p.TABLE_FULL, "every seat at this table is taken", None)
    with pytest.raises(SessionError) as exc:
        pick_seat([True, False], 0)
    assert refusal(exc) == (p.SEAT_TAKEN, "seat 0 is taken", None)
    for wanted in (-1, 2):
        with pytest.raises(SessionError) as exc:
            pick_seat([True, False], wanted)
        assert refusal(exc) == (p.NO_SUCH_SEAT, "this table has seats 0 to 1", None)


def test_nobody_at_a_table_shares_a_name() -> None:
    check_name_free(["ann", "", None], "bo")
    with pytest.raises(SessionError) as exc:
        check_name_free(["ann", "bo"], "bo")
    assert refusal(exc) == (p.NAME_TAKEN, "someone at this table is called bo", None)


def test_a_bot_takes_the_first_bot_name_free_at_its_table() -> None:
    assert bot_name(["ann", ""]) == f"{BOT_NAMES[0]} (bot)"
    assert bot_name([f"{BOT_NAMES[0]} (bot)", "ann"]) == f"{BOT_NAMES[1]} (bot)"
    assert bot_name([None, f"{BOT_NAMES[0]} (bot)", None]) == f"{BOT_NAMES[1]} (bot)"


def test_a_bot_is_not_named_after_a_player_at_its_table() -> None:
    # A player called Ada would otherwise play beside "Ada (bot)", in the list and the ledger.
    assert bot_name([BOT_NAMES[0], f"{BOT_NAMES[1]} (bot)"]) == f"{BOT_NAMES[2]} (bot)"
    assert bot_name([BOT_NAMES[0].lower()]) == f"{BOT_NAMES[1]} (bot)"
    assert bot_name([BOT_NAMES[1].upper(), BOT_NAMES[0]]) == f"{BOT_NAMES[2]} (bot)"


def test_a_creator_who_leaves_hands_the_table_to_the_first_other_player_here() -> None:
    assert next_creator(0, [True, False, True, True]) == 2
    assert next_creator(2, [True, False, True]) == 0
    assert next_creator(0, [True, False, False]) is None


def test_a_seat_has_a_stake_of_its_own_only_under_stake_mode_seat() -> None:
    assert seat_stake(SPENO, 2, "chips", 5) == 5
    assert seat_stake(SPENO, 2, "chips", None) == 2  # none given: the table's
    assert seat_stake(CLASSIC, 2, "chips", None) == 2
    with pytest.raises(SessionError) as exc:
        seat_stake(CLASSIC, 2, "beans", 5)
    assert exc.value.code == p.BAD_VALUE and exc.value.detail == "stake"
    assert "its stake of 2 beans" in exc.value.message


def test_the_creator_sits_with_a_stake_of_its_own_only_under_stake_mode_seat() -> None:
    assert creators_stake(SPENO, 4) == 4
    assert creators_stake(CLASSIC, 4) is None


def test_a_hand_is_dealt_for_the_table_stake_or_for_each_seats_own() -> None:
    assert hand_stakes(CLASSIC, 2, [1, 5, 3]) == (2,)
    assert hand_stakes(SPENO, 2, [1, 5, 3]) == (1, 5, 3)
    assert Session(SPENO, stake=2).hand_stakes([4, 4]) == (4, 4)


def test_seat_stakes_come_from_one_stake_or_one_per_seat_under_stake_mode_seat() -> None:
    assert seat_stakes(CLASSIC, 3, [2]) == (2, 2, 2)
    assert seat_stakes(SPENO, 3, [1, 2, 3]) == (1, 2, 3)
    for rules, stakes in ((CLASSIC, [1, 2, 3]), (SPENO, [1, 2]), (SPENO, [0]), (SPENO, [1.5])):
        with pytest.raises(ValueError):
            seat_stakes(rules, 3, stakes)  # type: ignore[arg-type]


# -- starting ------------------------------------------------------------------------------------


def test_a_session_needs_at_least_two_players() -> None:
    check_can_start(2)
    for taken in (0, 1):
        with pytest.raises(SessionError) as exc:
            check_can_start(taken)
        assert refusal(exc) == (p.NOT_ENOUGH_PLAYERS, "a session needs at least 2 players", None)


def test_a_full_table_starts_itself() -> None:
    assert starts_itself(4, 4)
    assert starts_itself(2, 2)
    assert not starts_itself(3, 4)  # a seat still open: the creator starts it
    assert not starts_itself(1, 1)  # never with fewer than two


def test_a_session_starts_with_every_player_in_the_ledger_at_zero() -> None:
    session = Session(CLASSIC)
    session.start(["ann", "bo"], now=1000.0)
    assert session.started == 1000.0
    assert session.ledger.balances == {"ann": 0, "bo": 0}


# -- who deals -----------------------------------------------------------------------------------


def test_the_first_dealer_is_found_by_the_cut() -> None:
    for seed in range(20):
        dealer, cut = first_dealer(4, random.Random(seed))
        assert cut == cut_for_deal(4, random.Random(seed))
        assert dealer == cut.dealer
        last = cut.rounds[-1]
        dealt = last[dealer]
        assert dealt is not None
        assert all(c is None or c.rank < dealt.rank for s, c in enumerate(last) if s != dealer)


def test_a_fixed_dealer_deals_first_without_a_cut() -> None:
    assert first_dealer(4, random.Random(1), fixed=2) == (2, None)
    dealer, cut = first_dealer(2, random.Random(1), fixed=3)  # no seat 3 at two: the cut
    assert cut is not None and dealer == cut.dealer


def test_the_deal_passes_to_the_left_after_each_hand() -> None:
    session = Session(CLASSIC, fixed_dealer=1)
    dealers = []
    for number in range(1, 7):
        deal = session.next_deal(3, lambda n=number: random.Random(n))
        assert deal.number == number
        assert deal.cut is None  # a fixed first dealer, then the deal passing left
        session.dealt(deal)
        dealers.append(deal.dealer)
    assert dealers == [1, 2, 0, 1, 2, 0]
    assert session.hand_number == 6
    assert [next_dealer(d, 3) for d in range(3)] == [1, 2, 0]


def test_the_first_deal_of_a_session_is_cut_for_and_only_the_first() -> None:
    session = Session(CLASSIC)
    first = session.next_deal(4, lambda: random.Random(7))
    assert first.cut == cut_for_deal(4, random.Random(7))
    assert session.next_deal(4, lambda: random.Random(7)) == first  # nothing changes until dealt
    session.dealt(first)

    def no_cut() -> random.Random:
        raise AssertionError("a generator for the cut asked for after the first hand")

    second = session.next_deal(4, no_cut)  # (a table's generator costs a seeding: not made)
    assert second.cut is None and second.dealer == next_dealer(first.dealer, 4)


def test_the_dealer_of_any_hand_is_the_first_dealer_passed_left_that_many_times() -> None:
    for first in range(4):
        dealer = first
        for number in range(9):
            assert dealer_of(first, number, 4) == dealer
            dealer = next_dealer(dealer, 4)


def test_the_seat_after_the_one_to_play_plays_next() -> None:
    hand = Hand(CLASSIC, 3, 0, (1,), rng=random.Random(4))
    assert hand.turn == 1  # the dealer's left acts first
    assert hand.view(2).plays_next == 2
    assert hand.view(None).plays_next == 2
    ended = deal(CLASSIC, ["5S 5H 5D 5C AS", "KS KH QS QH JS"], up="2C")  # 50: tonk
    ended_view = ended.view(0)
    assert ended.ended and ended_view.plays_next is None  # a tonk on the deal: nobody


# -- settling, the multiplier and the ledger -----------------------------------------------------


def test_a_settlement_changes_nothing_until_it_is_applied() -> None:
    session = Session(CLASSIC)
    session.start(["ann", "bo", "cy"], now=0.0)
    settled = session.settle(
        settle_out(CLASSIC, 1, 3, (2,), 1, tonk_out=False), ["ann", "bo", "cy"], 1.0
    )
    assert settled.payments == (("ann", "bo", 2), ("cy", "bo", 2))
    assert settled.balances == {"ann": -2, "bo": 4, "cy": -2}
    assert settled.played == 1 and settled.over is None
    assert session.ledger.balances == {"ann": 0, "bo": 0, "cy": 0}  # a write may yet fail
    assert session.hands_played == 0 and session.ledger.history == []
    session.settled(settled)
    assert session.ledger.balances == settled.balances
    assert session.hands_played == 1
    assert [e.hand_number for e in session.ledger.history] == [1]


def test_the_next_hand_is_played_at_the_multiplier_a_void_throw_in_leaves() -> None:
    rules = CLASSIC.with_options({"several_deal_tonks": "void_double"})
    session = Session(rules)
    names = ["ann", "bo", "cy"]
    session.start(names, now=0.0)
    hands = [cards("KS KH QS QH JS"), cards("5S 5H 5D 5C AS"), cards("KD KC QD QC 9S")]
    void = settle_deal_tonks(rules, hands, [0, 2], (1,), session.multiplier)
    session.settled(session.settle(void, names, 1.0))
    assert session.multiplier == 2
    again = settle_deal_tonks(rules, hands, [0, 2], (1,), session.multiplier)
    session.settled(session.settle(again, names, 2.0))
    assert session.multiplier == 4
    paid = settle_out(rules, 0, 3, (1,), session.multiplier, tonk_out=False)
    session.settled(session.settle(paid, names, 3.0))
    assert session.multiplier == 1
    assert session.ledger.balances == {"ann": 8, "bo": -4, "cy": -4}


def test_the_ledger_keeps_only_the_newest_hands_asked_for_but_every_stake() -> None:
    session = Session(CLASSIC)
    names = ["ann", "bo"]
    for _ in range(5):
        session.settled(
            session.settle(settle_out(CLASSIC, 0, 2, (1,), 1, tonk_out=False), names, 0.0), keep=2
        )
    assert [e.hand_number for e in session.ledger.history] == [4, 5]
    assert session.ledger.balances == {"ann": 5, "bo": -5}
    assert session.hands_played == 5


# -- the session's end ---------------------------------------------------------------------------


def test_a_session_ends_after_its_hands() -> None:
    assert session_over(2, 0.0, 10.0, hands=3) is None
    assert session_over(3, 0.0, 10.0, hands=3) == "hands"


def test_a_session_ends_after_its_minutes_from_the_start() -> None:
    assert session_over(1, 100.0, 100.0 + 5 * 60 - 1, minutes=5) is None
    assert session_over(1, 100.0, 100.0 + 5 * 60, minutes=5) == "minutes"
    assert session_over(1, None, 1e9, minutes=5) is None  # not started
    assert session_over(3, 0.0, 1e9, hands=3, minutes=5) == "hands"  # hands are said first


def test_a_session_without_limits_goes_on() -> None:
    assert session_over(10_000, 0.0, 1e9) is None


def test_a_settlement_says_when_it_ends_the_session() -> None:
    session = Session(CLASSIC, hands=2)
    names = ["ann", "bo"]
    out = settle_out(CLASSIC, 0, 2, (1,), 1, tonk_out=True)
    session.settled(session.settle(out, names, 0.0))
    assert session.settle(out, names, 0.0).over == "hands"
    timed = Session(CLASSIC, minutes=1)
    timed.start(names, now=50.0)
    assert timed.settle(out, names, 109.0).over is None
    assert timed.settle(out, names, 110.0).over == "minutes"


def test_a_session_its_players_have_all_left_is_abandoned_after_the_wait() -> None:
    session = Session(CLASSIC)
    session.players_seen(True, now=5.0)
    assert session.abandoned_at(600.0) is None
    session.players_seen(False, now=10.0)
    session.players_seen(False, now=50.0)  # still nobody: counted from the first time
    assert session.abandoned_at(600.0) == 610.0
    session.players_seen(True, now=60.0)  # somebody is back: the wait starts again
    assert session.abandoned_at(600.0) is None
    session.players_seen(False, now=70.0)
    assert session.abandoned_at(600.0) == 670.0


# -- a write that failed -------------------------------------------------------------------------


def test_a_hand_goes_back_to_before_its_last_action() -> None:
    hand = Hand(CLASSIC, 3, 2, (1,), rng=random.Random(9))
    before = hand.record()
    hand.apply(DrawStock(hand.turn))
    back = without_last_action(hand)
    assert back.record() == before
    assert back.view(0) == before.replay().view(0)
    assert len(hand.actions) == 1  # the hand itself is left as it was


# -- absent players and empty tables --------------------------------------------------------------

PERSON = SeatRecord("Ann", SeatKind.HUMAN)
TIMES = {"last_change": 100.0, "turn_started": 90.0, "bot_pause": 0.8, "grace": 60.0}


def test_a_bot_is_played_for_the_bot_pause_after_the_last_change() -> None:
    bot = SeatRecord("Ada (bot)", SeatKind.BOT, "easy")
    assert played_for_at(bot, False, None, turn_timer=30.0, **TIMES) == 100.8


def test_a_player_away_is_played_for_like_a_bot() -> None:
    away = SeatRecord("Ann", SeatKind.HUMAN, away=True)
    assert played_for_at(away, True, None, turn_timer=30.0, **TIMES) == 100.8


def test_a_player_not_back_since_a_restart_is_played_for_like_a_bot() -> None:
    assert played_for_at(PERSON, False, None, turn_timer=None, **TIMES) == 100.8


def test_a_player_here_is_played_for_when_the_turn_timer_runs_out_and_never_without_one() -> None:
    assert played_for_at(PERSON, True, None, turn_timer=30.0, **TIMES) == 120.0
    assert played_for_at(PERSON, True, None, turn_timer=None, **TIMES) == float("inf")


def test_a_player_who_lost_the_link_is_played_for_at_the_timer_or_the_grace_whichever_first() -> (
    None
):
    assert played_for_at(PERSON, False, 95.0, turn_timer=None, **TIMES) == 155.0
    assert played_for_at(PERSON, False, 95.0, turn_timer=30.0, **TIMES) == 120.0
    assert played_for_at(PERSON, False, 50.0, turn_timer=30.0, **TIMES) == 110.0


def test_a_waiting_seat_is_freed_when_its_player_is_not_back_within_the_grace_period() -> None:
    assert past_grace(10.0, 60.0, 69.9, started=False) is None
    assert past_grace(10.0, 60.0, 70.0, started=False) is Absence.FREED


def test_a_playing_seat_is_marked_away_when_its_player_is_not_back_within_the_grace_period() -> (
    None
):
    assert past_grace(10.0, 60.0, 69.9, started=True) is None
    assert past_grace(10.0, 60.0, 70.0, started=True) is Absence.AWAY


def test_a_waiting_table_nobody_sits_at_closes_after_the_grace_period() -> None:
    session = Session(CLASSIC)
    session.seated_seen(False, 10.0)
    session.seated_seen(False, 30.0)  # counted from when it was first seen empty
    assert session.unseated_closes_at(60.0) == 70.0
    session.seated_seen(True, 40.0)
    assert session.unseated_closes_at(60.0) is None
    session.seated_seen(False, 50.0)
    assert session.unseated_closes_at(60.0) == 110.0


def test_at_the_start_the_empty_seats_go_and_the_rest_are_numbered_again_in_order() -> None:
    assert renumbered([False, True, False, True, True], creator=3) == ((1, 3, 4), 1)
    assert renumbered([True, True], creator=None) == ((0, 1), None)
    assert renumbered([True, False, True], creator=1) == ((0, 2), None)


def test_a_seat_shows_empty_a_bot_or_its_player_away_connected_or_not() -> None:
    assert seat_status(SeatRecord(), connected=False) is SeatStatus.EMPTY
    assert seat_status(SeatRecord("B", SeatKind.BOT, "easy"), connected=False) is SeatStatus.BOT
    assert seat_status(PERSON, connected=True) is SeatStatus.CONNECTED
    assert seat_status(PERSON, connected=False) is SeatStatus.DISCONNECTED
    away = SeatRecord("Ann", SeatKind.HUMAN, away=True)
    assert seat_status(away, connected=True) is SeatStatus.AWAY
    assert not SeatRecord().taken and PERSON.taken
