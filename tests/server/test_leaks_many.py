"""Nothing leaked, over a thousand hands: several bot tables at once through the real server,
each with a spectator and a seated player the server plays for; every frame to every
connection is kept and checked, with tests/server/test_server_leaks.py's checker, against the hands
replayed from the server's own records: no other player's card before the rules reveal it, no
discard under the top card, no stock card, and views and events exactly what that seat may
see. The same check run on a server with a leak planted on purpose finds it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from netclient import NetClient, start_server
from test_server_leaks import Truth
from tonk.server.tables.table_play import TablePlay
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.wire import protocol as p

PRESETS = ("classic", "speno", "pagat", "black-tonk")


class ForwardStates:
    """`Truth.states` without a copy of every state: each hand is replayed forward as one
    connection's messages ask for its states in order (again from the deal if asked for an
    earlier one)."""

    def __init__(self, records: dict[int, HandRecord]) -> None:
        self.records = records
        self.hands: dict[int, Hand] = {}

    def get(self, key: tuple[int, int]) -> Hand | None:
        number, count = key
        record = self.records.get(number)
        if record is None:
            return None
        hand = self.hands.get(number)
        if hand is None or len(hand.events) > count:
            hand = record.deal()
            self.hands[number] = hand
        for action in record.actions[len(hand.actions) :]:
            if len(hand.events) >= count:
                break
            hand.apply(action)
        return hand if len(hand.events) == count else None


class ForwardTruth(Truth):
    """The leak test's Truth, with its checks, over thousands of hands."""

    def __init__(self, records: dict[int, HandRecord]) -> None:
        self.states = ForwardStates(records)  # type: ignore[assignment]
        self.final = {number: record.replay() for number, record in records.items()}
        self.counted = {}  # (Truth.known_at's)


@dataclass
class Watched:
    table: int
    preset: str
    seated: NetClient  # seat 0, played for by the server
    spectator: NetClient


async def open_table(server: Any, index: int, hands: int, preset: str) -> Watched:
    seated = await NetClient.connect(server.port, f"Sat{index}")
    table = await seated.create_table(
        name=f"leak{index}",
        rules={"preset": preset},
        seats=3,
        hands=hands,
        turn_timer=0.001,  # the seated player never acts: it is played for at once
        seed=1000 + index,
    )
    spectator = await NetClient.connect(server.port, f"Spec{index}")
    await spectator.request({"type": "watch", "table": table}, p.WATCHING)
    await seated.send({"type": "add_bot", "strategy": "sharp" if index % 2 else "easy"})
    await seated.send({"type": "add_bot", "strategy": "easy"})
    return Watched(table, preset, seated, spectator)


def records(db: Path, table: int) -> dict[int, HandRecord]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT number, record FROM hands WHERE table_id = ?", (table,))
        return {number: HandRecord.from_dict(json.loads(text)) for number, text in rows}


def problems_of(client: NetClient, seat: int | None, truth: Truth) -> tuple[list[str], int]:
    """Every problem the checker finds in the frames `client` received, and how many
    updates it checked."""
    found: list[str] = []
    updates = 0
    for message in client.received:
        found.extend(truth.problems(message, seat))
        updates += message["type"] == p.UPDATE
    return found, updates


async def play_and_check(
    tmp_path: Path, tables: int, hands: int
) -> tuple[list[str], dict[str, int]]:
    """Play `tables` sessions of `hands` hands at once; check every frame; return the
    problems found and what was checked."""
    async with start_server(tmp_path) as server:
        watched = [
            await open_table(server, i, hands, PRESETS[i % len(PRESETS)]) for i in range(tables)
        ]
        ends = [
            client.expect(p.SESSION_END, timeout=240)
            for w in watched
            for client in (w.seated, w.spectator)
        ]
        await asyncio.gather(*ends)
    found: list[str] = []
    stats = {"hands": 0, "updates": 0, "frames": 0, "cards": 0}
    for w in watched:
        played = records(tmp_path / "tonk.db", w.table)
        assert sorted(played) == list(range(1, hands + 1))
        truth = ForwardTruth(played)
        for client, seat in ((w.spectator, None), (w.seated, 0)):
            problems, updates = problems_of(client, seat, truth)
            found.extend(f"table {w.table} ({w.preset}), seat {seat}: {x}" for x in problems)
            stats["updates"] += updates
            stats["frames"] += len(client.received)
            stats["cards"] += sum(
                bool(m["view"]["hand"]) for m in client.received if m["type"] == p.UPDATE
            )
        stats["hands"] += len(played)
    return found, stats


@pytest.mark.slow
async def test_a_thousand_hands_and_no_frame_carries_a_card_its_connection_may_not_see(tmp_path):
    problems, stats = await play_and_check(tmp_path, tables=8, hands=125)
    assert problems == []
    assert stats["hands"] == 1000
    assert stats["updates"] > 1000 * 2 * 10  # two connections, a dozen updates a hand or more
    assert stats["cards"] > stats["updates"] // 3  # the seated player's own cards were there


def stock_card_to_spectators(play: TablePlay, seat: int | None, message: dict[str, Any]) -> None:
    hand = play.hand
    if seat is None and hand is not None and hand.stock and not hand.ended:
        message["view"]["hand"] = str(hand.stock[-1])  # the next card off the stock


def unfiltered_events(play: TablePlay, seat: int | None, message: dict[str, Any]) -> None:
    hand = play.hand
    if hand is not None:
        message["events"] = [e.to_dict() for e in hand.events[message["from"] :]]


def covered_discard_shown(play: TablePlay, seat: int | None, message: dict[str, Any]) -> None:
    hand = play.hand
    if hand is not None and len(hand.discards) > 1 and not hand.ended:
        message["view"]["discard_top"] = str(hand.discards[-2])


@pytest.mark.parametrize(
    ("plant", "said"),
    [
        (stock_card_to_spectators, "was sent"),
        (unfiltered_events, "events differ"),
        (covered_discard_shown, "view differs"),
    ],
)
async def test_the_check_finds_a_leak_planted_in_the_server(tmp_path, monkeypatch, plant, said):
    real = TablePlay.update_message

    def leaky(
        self: TablePlay, seat: int | None, start: int, reply_to: int | None = None
    ) -> dict[str, Any]:
        message = real(self, seat, start, reply_to).to_wire()
        plant(self, seat, message)
        return message

    def leaky_updates(self: TablePlay, start: int, answer: Any = None) -> None:
        # (the updates after each change are put together from packed parts, not from
        # update_message: planted in the frames sent, as a faulty server would send them,
        # through the seats the play holds)
        for conn, seat in self._seats.connections():
            conn.send_frame(p.encode(leaky(self, seat, start)))

    monkeypatch.setattr(TablePlay, "update_message", leaky)
    monkeypatch.setattr(TablePlay, "send_updates", leaky_updates)
    problems, stats = await play_and_check(tmp_path, tables=2, hands=3)
    assert stats["hands"] == 6
    assert problems, "the planted leak went unnoticed"
    assert any(said in problem for problem in problems), problems[:5]
