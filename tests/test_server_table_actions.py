"""A client's action message becomes the hand's action for the sender's seat directly from
its typed value: the same action, and the same refusal for a card that is not a card, as
reading the message's map back (`action_from_dict`) gives."""

from __future__ import annotations

import pytest
from tonk.server.table import action_of
from tonk.shared import messages as m
from tonk.shared.actions import IllegalAction, action_from_dict

MESSAGES: list[m.Action] = [
    m.Drop(),
    m.DrawStock(id=3),
    m.TakeDiscard(),
    m.Spread("10s Js Qs"),
    m.Spread("As 2s 3s 4s"),
    m.Hit("Ks", 2),
    m.Discard("10s", id=9),
    m.Discard("Ah"),
]


def old_way(message: m.Action, seat: int) -> object:
    data = {k: v for k, v in message.to_wire().items() if k != "id"}
    return action_from_dict({**data, "seat": seat})


@pytest.mark.parametrize("message", MESSAGES, ids=lambda message: message.TYPE)
@pytest.mark.parametrize("seat", [0, 3])
def test_an_action_message_is_the_action_for_the_senders_seat(message: m.Action, seat: int) -> None:
    action = action_of(message, seat)
    assert action == old_way(message, seat)
    assert action.seat == seat


@pytest.mark.parametrize(
    "message", [m.Discard("1x"), m.Hit("Zz", 0), m.Spread("10s Js Q"), m.Discard("")]
)
def test_a_card_that_is_not_a_card_is_refused_as_a_malformed_action(message: m.Action) -> None:
    with pytest.raises(IllegalAction) as new:
        action_of(message, 1)
    with pytest.raises(IllegalAction) as old:
        old_way(message, 1)
    assert new.value.code == old.value.code == "bad_action"
    assert new.value.reason == old.value.reason
