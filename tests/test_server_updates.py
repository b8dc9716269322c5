"""The update frames a table sends after a change, put together from pieces packed once per
change, are byte for byte the frames of `TablePlay.update_message` encoded whole: for every seat
and for a spectator, after every action of many bot hands under every preset."""

from __future__ import annotations

import random

import pytest
from tonk.server.table import Table, TableConfig
from tonk.server.updates import UpdateFrames
from tonk.shared import messages as m
from tonk.shared import protocol as p
from tonk.shared.actions import DrawStock
from tonk.shared.bots import make_bot
from tonk.shared.hand import Hand
from tonk.shared.rules import PRESETS, HouseRules


def table_for(rules: HouseRules, players: int, turn_timer: float | None) -> Table:
    table = Table(
        server=None,  # type: ignore[arg-type]  # update_message asks nothing of the server
        id=7,
        name="t",
        config=TableConfig(rules=rules, seats=players, turn_timer=turn_timer),
        created=0.0,
    )
    for number, seat in enumerate(table.seats):
        seat.name, seat.kind = f"p{number}", "human"
    return table


def assert_frames_match(table: Table, start: int) -> None:
    hand = table.hand
    assert hand is not None
    frames = UpdateFrames(table.id, table.hand_number, hand, start, table.play.deadline())
    for seat in [None, *range(hand.players)]:
        expected = m.encode(table.play.update_message(seat, start))
        assert frames.frame(seat) == expected, (seat, start, p.decode_payload(expected[4:]))
        if seat is not None:  # the frame that answers the seat's own action
            answer = m.encode(table.play.update_message(seat, start, reply_to=2**31 - 1))
            assert frames.answer(seat, 2**31 - 1) == answer


@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_update_frames_are_the_update_messages_encoded(preset: str) -> None:
    rules = PRESETS[preset]
    rng = random.Random(preset)
    checked = 0
    for number in range(1, 13):
        players = 2 + number % (rules.players - 1)
        # A turn timer gives each view a deadline (a float); without one it is nil.
        table = table_for(rules, players, turn_timer=30.0 if number % 2 else None)
        hand = Hand(rules, players, number % players, (number,) * players, rng=rng)
        table.play.hand, table.play.session.hand_number = hand, number
        bots = [make_bot("easy", random.Random(rng.getrandbits(32))) for _ in range(players)]
        assert_frames_match(table, 0)
        while not hand.ended:
            seat = hand.turn
            start = len(hand.events)
            hand.apply(bots[seat].choose(hand.view(seat)))
            for bot_seat, bot in enumerate(bots):
                bot.observe(hand.events_for(bot_seat, start))
            assert_frames_match(table, start)
            checked += 1
        assert_frames_match(table, 0)  # a whole hand again, as after a resume
    assert checked > 100


async def test_a_private_draw_is_hidden_in_every_frame_but_the_drawers() -> None:
    rules = PRESETS["classic"]
    table = table_for(rules, 3, None)
    hand = Hand(rules, 3, 0, (1, 1, 1), rng=random.Random(5))
    table.play.hand, table.play.session.hand_number = hand, 1
    seat = hand.turn
    start = len(hand.events)
    drawn = hand.stock[-1]
    hand.apply(DrawStock(seat))
    frames = UpdateFrames(table.id, 1, hand, start, None)
    for other in [None, 0, 1, 2]:
        message = p.decode_payload(frames.frame(other)[4:])
        (draw,) = [e for e in message["events"] if e["kind"] == "draw_stock"]
        assert draw["private"] is True
        if other == seat:
            assert draw["cards"] == str(drawn)
            assert str(drawn) in message["view"]["hand"].split()
        else:
            assert "cards" not in draw
            assert str(drawn) not in message["view"]["hand"].split()


async def test_update_frames_follow_the_views_fields_in_whatever_order_it_gives_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The frames are put together from the view's fields by name: a view that gave its fields
    in another order (its own two, seat and hand, anywhere) is still sent whole and exact."""
    from tonk.shared.view import SeatView

    plain = SeatView.to_dict

    def reordered(view: SeatView) -> dict[str, object]:
        data = plain(view)
        keys = list(data)
        keys.remove("hand")
        keys.insert(1, "hand")  # hand before rules, seat last
        keys.remove("seat")
        keys.append("seat")
        return {key: data[key] for key in reversed(keys)}

    monkeypatch.setattr(SeatView, "to_dict", reordered)
    rules = PRESETS["speno"]
    table = table_for(rules, 3, 30.0)
    hand = Hand(rules, 3, 1, (1, 1, 1), rng=random.Random(8))
    table.play.hand, table.play.session.hand_number = hand, 1
    bots = [make_bot("easy", random.Random(n)) for n in range(3)]
    assert_frames_match(table, 0)
    while not hand.ended:
        start = len(hand.events)
        hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
        assert_frames_match(table, start)
    message = p.decode_payload(UpdateFrames(7, 1, hand, 0, None).frame(2)[4:])
    assert next(iter(message["view"])) == "seat" and message["view"]["seat"] == 2
