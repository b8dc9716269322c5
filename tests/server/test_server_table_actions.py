"""A client's action message becomes the hand's action for the sender's seat directly from
its typed value: the same action, and the same refusal for a card that is not a card, as
reading the message's map back (`action_from_dict`) gives."""

from __future__ import annotations

import pytest
from tonk.shared.game.actions import IllegalAction, action_from_dict
from tonk.shared.wire import messages as m

MESSAGES: list[m.ActionRequest] = [
    m.DropRequest(),
    m.DrawStockRequest(id=3),
    m.TakeDiscardRequest(),
    m.SpreadRequest("10s Js Qs"),
    m.SpreadRequest("As 2s 3s 4s"),
    m.HitRequest("Ks", 2),
    m.DiscardRequest("10s", id=9),
    m.DiscardRequest("Ah"),
]


def old_way(message: m.ActionRequest, seat: int) -> object:
    data = {k: v for k, v in message.to_wire().items() if k != "id"}
    return action_from_dict({**data, "seat": seat})


@pytest.mark.parametrize("message", MESSAGES, ids=lambda message: message.TYPE)
@pytest.mark.parametrize("seat", [0, 3])
def test_an_action_message_is_the_action_for_the_senders_seat(
    message: m.ActionRequest, seat: int
) -> None:
    action = m.action_of(message, seat)
    assert action == old_way(message, seat)
    assert action.seat == seat


@pytest.mark.parametrize(
    "message",
    [
        m.DiscardRequest("1x"),
        m.HitRequest("Zz", 0),
        m.SpreadRequest("10s Js Q"),
        m.DiscardRequest(""),
    ],
)
def test_a_card_that_is_not_a_card_is_refused_as_a_malformed_action(
    message: m.ActionRequest,
) -> None:
    with pytest.raises(IllegalAction) as new:
        m.action_of(message, 1)
    with pytest.raises(IllegalAction) as old:
        old_way(message, 1)
    assert new.value.code == old.value.code == "bad_action"
    assert new.value.reason == old.value.reason
