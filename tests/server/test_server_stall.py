"""A stalled server does not charge the players: the real `tonk-server` stopped (SIGSTOP, as a
paused virtual machine or a closed laptop lid would) for longer than a turn timer and the idle
timeout, then continued. What the clients sent meanwhile is read before any timer acts, every
deadline moves on by the time the server lost, and the rate limit judges messages by when they
arrived, not by when the server could read them."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from typing import Any

import pytest
from netclient import NetClient, start_server
from reliakit import LiveClient, server_process, wait_until
from tonk.shared.wire import protocol as p

TURN_TIMER = 3.0
STALL = 5.0  # longer than the turn timer and the idle timeout
RATE = 18  # messages a second each chatty client sends: under the limit of 20


@pytest.mark.e2e
async def test_a_stalled_server_charges_nobody_for_the_time_it_lost(tmp_path):
    limits = ["heartbeat=1", "idle_timeout=4", "messages_per_second=20", "burst=40"]
    extra = [arg for limit in limits for arg in ("--limit", limit)]
    async with server_process(tmp_path / "tonk.db", *extra) as server:
        port = server.port
        alice = await LiveClient.connect(port, "Alice")
        seated = await alice.request(
            {
                "type": "create_table",
                "name": "timed",
                "seats": 2,
                "seed": 4,
                "turn_timer": TURN_TIMER,
            },
            p.SEATED,
        )
        bob = await LiveClient.connect(port, "Bob")
        await bob.request({"type": "sit", "table": seated["table"]}, p.SEATED)
        chatty = [await LiveClient.connect(port, f"Chatty{i}") for i in range(8)]
        silent = await LiveClient.connect(port, "Silent")
        players = [alice, bob]
        for client in players:
            await client.expect(p.UPDATE)
        for client in [*players, *chatty, silent]:
            client.pump()
        actor = next(c for c in players if c.seat_view().my_turn)
        count = actor.seat_view().event_count

        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(0.3)
            # The player to act acts a moment into a turn the server no longer times.
            assert await actor.play_turn_if_mine()

            async def chat(client: LiveClient) -> None:
                for n in range(int(STALL * RATE)):
                    await client.send({"type": p.PING, "n": n})
                    await asyncio.sleep(1 / RATE)

            await asyncio.gather(*(chat(c) for c in chatty))
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)

        # The move is the player's own, not one made for them after the timer.
        def moved(client: LiveClient) -> list[dict[str, Any]]:
            return [
                m
                for m in client.received
                if m["type"] == p.UPDATE and m["view"]["event_count"] > count
            ]

        await wait_until(lambda: all(moved(c) for c in players), "the move shown", 20)
        # Each player was sent the turn's deadline again, moved on by the time lost: an update
        # with no events (the one they had ran out during the stall).
        for client in players:
            refreshed = [
                m
                for m in client.received
                if m["type"] == p.UPDATE and m["events"] == [] and m["from"] == count
            ]
            assert refreshed, [m for m in client.received if m["type"] == p.UPDATE]
            assert 0 < refreshed[0]["deadline"] <= TURN_TIMER, refreshed
        for client in players:
            first = moved(client)[0]
            events = first["events"]
            assert events[0]["seat"] == actor.seat and events[0]["kind"] == "draw_stock", events
            away = [
                pl
                for m in client.received
                if m["type"] == p.TABLE
                for pl in m["table"]["players"]
                if pl["status"] == "away"
            ]
            assert away == [], away
        # Every chatty client had every ping answered, and nobody was cut or refused anything.
        expected = list(range(int(STALL * RATE)))
        await wait_until(
            lambda: all(
                [m["n"] for m in c.received if m["type"] == p.PONG] == expected for c in chatty
            ),
            "every ping answered",
            20,
        )
        # The silent client is pinged a heartbeat after the time the server lost, and answers.
        await wait_until(
            lambda: any(m["type"] == p.PING for m in silent.received), "a heartbeat ping", 20
        )
        await asyncio.sleep(0.5)
        for client in [*players, *chatty, silent]:
            errors = [m for m in client.received if m["type"] == p.ERROR]
            assert errors == [] and not client.eof, (client.name, errors)
        # The stall is logged once (a loaded machine may add short ones of its own).
        lost = [float(x) for x in re.findall(r"did not run for ([\d.]+) s", "".join(server.stderr))]
        assert len([x for x in lost if x >= STALL - 1]) == 1, lost
        for client in [*players, *chatty, silent]:
            await client.unpump()


async def test_a_restart_is_not_taken_for_a_stall_and_restored_deadlines_hold(tmp_path):
    """The time before a server starts is not time it lost: a seat restored disconnected is
    played for once its grace period is over, as it would be without the restart."""
    async with start_server(tmp_path, grace=600) as server:
        alice = await NetClient.connect(server.port, "Alice")
        seated = await alice.request(
            {"type": "create_table", "name": "t", "seats": 2, "seed": 3}, p.SEATED
        )
        await alice.send({"type": "add_bot"})
        await alice.expect(p.UPDATE)
    async with start_server(tmp_path, grace=0.5) as server:
        watcher = await NetClient.connect(server.port, "Watcher")
        await watcher.request({"type": "watch", "table": seated["table"]}, p.WATCHING)
        await watcher.expect(
            p.TABLE,
            lambda m: any(pl["status"] == "away" for pl in m["table"]["players"]),
            timeout=10,
        )
        assert server.stalls == 0 and server.lost == 0.0
