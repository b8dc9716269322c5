"""A slow bot's decision (the `expert`) is made off the server's event loop: other tables are
served meanwhile, a decision the table moved past is dropped, and stopping does not wait for it.

The expert is held mid-decision by a gate the test opens: what happened while it was held is
told apart by the order of events, not by the clock."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from netclient import NetClient, start_server
from test_server_play import TWO_SEAT_DECK, two_players
from tonk.server.tables.table_play import TablePlay
from tonk.shared.bots.expert import ExpertBot
from tonk.shared.wire import protocol as p

HELD = 5.0  # the longest a decision is held if the gate is never opened (then a test fails)


class Gate:
    """Holds the expert's first decision until `open`; notes when it starts and ends."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.ended = threading.Event()
        self.order: list[str] = []
        self.held = 0

    def open(self) -> None:
        self.release.set()

    async def wait_started(self) -> None:
        assert await asyncio.to_thread(self.started.wait, 2 * HELD), "the expert was never asked"


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    gate = Gate()
    original = ExpertBot.decide

    def decide(self: ExpertBot, view: Any, legal: Any) -> Any:
        if gate.held == 0:
            gate.held += 1
            gate.order.append("decision started")
            gate.started.set()
            opened = gate.release.wait(HELD)
            gate.order.append("decision ended" if opened else "decision ended unopened")
            gate.ended.set()
        return original(self, view, legal)

    monkeypatch.setattr(ExpertBot, "decide", decide)
    try:
        yield gate
    finally:
        gate.open()  # never leave a worker thread held


async def test_another_table_is_answered_while_an_expert_decides(tmp_path, gate):
    async with start_server(tmp_path) as server:
        # Table one: Carol and Dave, Dave (seat 1) to act first.
        carol = await NetClient.connect(server.port, "Carol")
        dave = await NetClient.connect(server.port, "Dave")
        one = await carol.request(
            {"type": "create_table", "name": "one", "seats": 2, "dealer": 0, "deck": TWO_SEAT_DECK},
            p.SEATED,
        )
        await dave.request({"type": "sit", "table": one["table"]}, p.SEATED)
        await dave.expect(p.UPDATE)
        # Table two: Alice and an expert, the expert (seat 1) to act first.
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request(
            {"type": "create_table", "name": "two", "seats": 2, "dealer": 0, "seed": 3}, p.SEATED
        )
        await alice.send({"type": "add_bot", "strategy": "expert"})
        await gate.wait_started()
        # While the expert is held mid-decision, Dave acts at table one and is answered.
        await dave.send({"type": "draw_stock"})
        drawn = await dave.expect(
            p.UPDATE, lambda m: any(e["kind"] == "draw_stock" for e in m["events"])
        )
        assert drawn["events"][0]["seat"] == 1
        gate.order.append("other table answered")
        gate.open()
        # The expert's decision, once made, is played.
        await alice.expect(
            p.UPDATE,
            lambda m: any(
                e.get("seat") == 1 and e["kind"] in ("draw_stock", "take_discard", "drop")
                for e in m["events"]
            ),
        )
        assert gate.order == ["decision started", "other table answered", "decision ended"]


async def test_a_decision_the_table_moved_past_is_dropped_with_no_move_made(
    tmp_path, gate, monkeypatch
):
    verdicts: list[bool] = []
    judged = asyncio.Event()
    still_due = TablePlay.still_due

    def spy(self: TablePlay, pending: Any) -> bool:
        verdict = still_due(self, pending)
        verdicts.append(verdict)
        judged.set()
        return verdict

    monkeypatch.setattr(TablePlay, "still_due", spy)
    async with start_server(tmp_path, grace=0.2, autoplay_strategy="expert") as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        await bob.expect(p.UPDATE)
        token = bob.token
        # Bob (seat 1, to act) goes; past the grace period the expert plays for him.
        await bob.close()
        await gate.wait_started()
        # Meanwhile Bob comes back and draws himself.
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        await bob.send({"type": "draw_stock"})
        await bob.expect(p.UPDATE, lambda m: any(e["kind"] == "draw_stock" for e in m["events"]))
        gate.order.append("player acted")
        gate.open()
        await asyncio.wait_for(judged.wait(), 2 * HELD)
        assert verdicts == [False]
        assert gate.order == ["decision started", "player acted", "decision ended"]
        # The rest of the turn is Bob's: nothing was played for him, no fallback either.
        await bob.send({"type": "discard", "card": "Kd"})
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        seat_one = [
            e
            for m in alice.received
            if m["type"] == p.UPDATE and m["hand"] == 1
            for e in m["events"]
            if e.get("seat") == 1 and e["kind"] not in ("deal", "turn")
        ]
        assert [e["kind"] for e in seat_one] == ["draw_stock", "discard"]
        assert seat_one[1]["cards"] == "Kd"
        assert verdicts == [False]  # the expert was not asked again: Bob is back
        assert not [m for m in bob.received if m["type"] == p.ERROR]


async def test_stopping_the_server_does_not_wait_for_a_decision(tmp_path, gate):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request(
            {"type": "create_table", "name": "two", "seats": 2, "dealer": 0, "seed": 3}, p.SEATED
        )
        await alice.send({"type": "add_bot", "strategy": "expert"})
        await gate.wait_started()
        await server.close()
        gate.order.append("server stopped")
        await alice.expect_closed()
    gate.open()
    assert await asyncio.to_thread(gate.ended.wait, 2 * HELD)
    assert gate.order == ["decision started", "server stopped", "decision ended"]


async def hand_with_experts(tmp_path, slow: bool, monkeypatch) -> list[Any]:
    monkeypatch.setattr(ExpertBot, "slow", slow)
    tmp_path.mkdir()
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request(
            {"type": "create_table", "name": "seeded", "seats": 3, "hands": 2, "seed": 8},
            p.SEATED,
        )
        await alice.send({"type": "add_bot", "strategy": "expert"})
        await alice.send({"type": "add_bot", "strategy": "expert"})
        await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=60)
        return [m["events"] for m in alice.received if m["type"] == p.UPDATE]


async def test_experts_off_the_loop_play_as_they_would_on_it_for_the_same_seed(
    tmp_path, monkeypatch
):
    on_loop = await hand_with_experts(tmp_path / "on", False, monkeypatch)
    off_loop = await hand_with_experts(tmp_path / "off", True, monkeypatch)
    assert off_loop == on_loop
    assert any(e.get("seat") in (1, 2) for events in on_loop for e in events)
