"""The update frames a table sends after a change: for every seat and a spectator, after every
action of many bot hands under every preset, the bytes they were before they were encoded
plainly (each seat's `TablePlay.update_message` encoded whole, the spectators' once), and a
private card hidden from all but its seat."""

from __future__ import annotations

import hashlib
import random

import pytest
from tonk.server.tables.table import Table, TableConfig
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.actions import DrawStock
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

REPLY_TO = 2**31 - 1

#: The SHA-256 of every frame of `frames_of_a_seeded_night(preset)`, one after another, as the
#: server sent them when each frame was put together from pieces packed once per change
#: (before 2026-12-06): the plain encoding must send the very same bytes.
DIGESTS = {
    "black-tonk": "8f5dd6b6e8d8355859556dfd66cc6d2b7d602f7c9b330053968eabb38a87cd61",
    "classic": "4f69d80592cfc43b9464313723b4f891cb1d8846d0f1d8162c4f506df8782d30",
    "pagat": "366619f61c8a015d0275053d90b98211cad1b03dae1b16a49afdb0770d94b5c8",
    "speno": "05975d84a6aba5e9f870fdc548f9af7b94da657a13418718a9880982d20e89e0",
}


class Catcher:
    """A connection that keeps the frames it is sent, in order."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames
        self.request_id: int | None = None

    def send_frame(self, frame: bytes) -> None:
        self.frames.append(frame)


def table_for(rules: HouseRules, players: int) -> tuple[Table, list[bytes]]:
    """A table of `players` people and one spectator, and the list their frames go to."""
    table = Table(
        server=None,  # type: ignore[arg-type]  # sending updates asks nothing of the server
        id=7,
        name="t",
        config=TableConfig(rules=rules, seats=players, turn_timer=None),
        created=0.0,
    )
    frames: list[bytes] = []
    for number, seat in enumerate(table.seats):
        seat.name, seat.kind = f"p{number}", "human"
        seat.conn = Catcher(frames)  # type: ignore[assignment]
    table.seats.spectators.add(Catcher(frames))  # type: ignore[arg-type]
    return table, frames


def frames_of_a_seeded_night(preset: str) -> list[bytes]:
    """Every frame sent in 12 seeded bot hands at tables of 2 to the preset's most players:
    after each action (the acting seat's frame answering its request), and the whole hand
    again at its start and its end, as after a resume."""
    rules = PRESETS[preset]
    rng = random.Random(preset)
    sent: list[bytes] = []
    for number in range(1, 13):
        players = 2 + number % (rules.players - 1)
        table, frames = table_for(rules, players)
        hand = Hand(rules, players, number % players, (number,) * players, rng=rng)
        table.play.hand, table.play.session.hand_number = hand, number
        bots = [make_bot("easy", random.Random(rng.getrandbits(32))) for _ in range(players)]
        table.play.send_updates(0)
        while not hand.ended:
            seat = hand.turn
            start = len(hand.events)
            hand.apply(bots[seat].choose(hand.view(seat)))
            for bot_seat, bot in enumerate(bots):
                bot.observe(hand.events_for(bot_seat, start))
            acting = table.seats[seat].conn
            assert isinstance(acting, Catcher)
            acting.request_id = REPLY_TO
            table.play.send_updates(start, acting)  # type: ignore[arg-type]
            acting.request_id = None
        table.play.send_updates(0)
        sent.extend(frames)
    return sent


@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_the_update_frames_of_a_seeded_night_are_the_bytes_they_always_were(
    preset: str,
) -> None:
    sent = frames_of_a_seeded_night(preset)
    assert len(sent) > 500
    assert hashlib.sha256(b"".join(sent)).hexdigest() == DIGESTS[preset]


def after_a_draw() -> tuple[Table, list[bytes], int, int]:
    """A table of three after the first seat drew from the stock: the table, the list its
    frames go to, the seat that drew, and where the draw's events start."""
    rules = PRESETS["classic"]
    table, frames = table_for(rules, 3)
    hand = Hand(rules, 3, 0, (1, 1, 1), rng=random.Random(5))
    table.play.hand, table.play.session.hand_number = hand, 1
    seat, start = hand.turn, len(hand.events)
    hand.apply(DrawStock(seat))
    return table, frames, seat, start


async def test_each_seat_is_sent_its_update_message_and_a_spectator_a_seatless_one() -> None:
    table, frames, seat, start = after_a_draw()
    acting = table.seats[seat].conn
    assert isinstance(acting, Catcher)
    acting.request_id = 9
    table.play.send_updates(start, acting)  # type: ignore[arg-type]
    expected = [
        m.encode(table.play.update_message(n, start, 9 if n == seat else None)) for n in range(3)
    ]
    assert frames == [*expected, m.encode(table.play.update_message(None, start))]


async def test_a_private_draw_is_hidden_in_every_frame_but_the_drawers() -> None:
    table, frames, seat, start = after_a_draw()
    assert table.play.hand is not None
    drawn = table.play.hand.hands[seat][-1]
    table.play.send_updates(start)
    for other, frame in zip([0, 1, 2, None], frames, strict=True):
        message = p.decode_payload(frame[4:])
        assert message["view"]["seat"] == other
        (draw,) = [e for e in message["events"] if e["kind"] == "draw_stock"]
        assert draw["private"] is True
        if other == seat:
            assert draw["cards"] == str(drawn)
            assert str(drawn) in message["view"]["hand"].split()
        else:
            assert "cards" not in draw
            assert str(drawn) not in message["view"]["hand"].split()
