"""The keys after a move wait for its answer: every message that may answer a move lets them go
on, and a table that has not moved past the move, or a hand the move ended, does not. A small
App of the client's key handling, driven by Textual's pilot."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import pytest
from clientkit import wait_for
from rulekit import deal
from textual.binding import Binding, BindingType
from textual.message import Message
from tonk.client import keys
from tonk.client.keys import KeyedApp, MoveAnswer
from tonk.client.messages import HandEnded, LeftTable, LinkLost, ServerRefused, TableChanged
from tonk.client.model import reports
from tonk.client.model.state import PlayerInfo, TableState
from tonk.shared.game.actions import Drop
from tonk.shared.game.rules import HouseRules


class Counter(KeyedApp):
    """An App with one key, `x`, that counts."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "count", "Count")]

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def action_count(self) -> None:
        self.counted += 1


def a_table(dropped: bool = False) -> TableState:
    """Hand 1 just dealt (or just ended by Kim's drop), as Kim sees it."""
    hand = deal("classic", ["5s 6s 7s 9h 9d", "2c 3c 4d Kh Qs"], up="Jd", stock="8s 8h 8c")
    if dropped:
        hand.apply(Drop(0))
    players = (PlayerInfo(0, "Kim"), PlayerInfo(1, "Ada"))
    state = TableState("1", "t", HouseRules(), 1, "chips", 0, players, view=hand.view(0))
    return replace(state, hand_number=1, playing=True)


def a_hand_ended() -> HandEnded:
    view = a_table(dropped=True).view
    assert view is not None and view.settlement is not None
    return HandEnded(reports.HandEnded(1, view.settlement, ("Kim", "Ada"), "chips"))


async def a_key_after_a_move(answers: list[Message], let_go: bool) -> None:
    """`x` typed after a move sent at hand 1 as dealt: once `answers` have come, it has been
    handled if `let_go`, or is still waiting (the next answer lets it go). Once, either way.
    (The move's wait never runs out on its own here.)"""
    app = Counter()
    async with app.run_test() as pilot:
        app.move_sent(a_table().progress)
        await pilot.press("x")
        for answer in answers:
            app.post_message(answer)
        if not let_go:
            await pilot.pause()
            assert app.counted == 0, "the key went before the move's answer"
            app.post_message(LinkLost("the link dropped", 1.0, 1))
        await wait_for(pilot, lambda: app.counted > 0, "the x handled")
        await pilot.pause()
        assert app.counted == 1


@pytest.fixture(autouse=True)
def no_running_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "MOVE_WAIT", 3600.0)


async def test_a_key_after_a_move_waits_for_its_answer() -> None:
    await a_key_after_a_move([], let_go=False)


@pytest.mark.parametrize(
    "answer",
    [
        LinkLost("the link dropped", 1.0, 1),
        ServerRefused(reports.ServerRefused("illegal_action", "it is not your turn")),
        LeftTable(reports.LeftTable("the table closed")),
        a_hand_ended(),
    ],
    ids=lambda answer: type(answer).__name__,
)
async def test_each_answer_to_a_move_lets_the_key_after_it_go(answer: MoveAnswer) -> None:
    await a_key_after_a_move([answer], let_go=True)


async def test_the_table_answers_a_move_once_it_has_moved_past_it() -> None:
    dealt = a_table()
    assert dealt.view is not None
    moved = replace(dealt, view=replace(dealt.view, event_count=dealt.view.event_count + 1))
    await a_key_after_a_move([TableChanged(reports.TableChanged(dealt))], let_go=False)
    await a_key_after_a_move([TableChanged(reports.TableChanged(moved))], let_go=True)


async def test_a_move_that_ended_the_hand_is_answered_by_the_hand_end_not_the_table() -> None:
    # (So that the keys after it find the end-of-hand window up.)
    ended = TableChanged(reports.TableChanged(a_table(dropped=True)))
    await a_key_after_a_move([ended], let_go=False)
    await a_key_after_a_move([ended, a_hand_ended()], let_go=True)
