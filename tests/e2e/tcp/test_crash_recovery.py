"""Crash recovery: `tonk-server` killed with SIGKILL in the middle of a hand, right after an
action was acknowledged, and started again with the same --db. Every settled hand is in the
ledger, the hand in play continues from the last acknowledged action with the same view for
each seat, and players (test clients and the real client's connection) take their seats back
with their tokens. And the order that makes that true after a power cut too: every action is
committed (WAL, synchronous=FULL) before any frame that shows it is sent."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from netclient import NetClient, start_server
from reliakit import (
    act_once,
    hand_events,
    last_view,
    ledger_problems,
    server_process,
    take_seats_back,
    wait_until,
)
from termkit import free_port
from tonk.server.connection import Connection
from tonk.server.store import store as st
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e


async def test_sigkill_right_after_each_ack_loses_nothing_and_the_hand_goes_on(tmp_path):
    db = tmp_path / "tonk.db"
    async with server_process(db) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="crash", seats=2, seed=21, stake=3)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table}, p.SEATED)
        # Hand 1, played to its end by both; then the first action of hand 2.
        await asyncio.gather(
            *(c.play_until(lambda m: m["type"] == p.HAND_END, timeout=30) for c in (alice, bob))
        )
        for client in (alice, bob):
            await client.expect(p.UPDATE, lambda m: m["hand"] == 2)
        players = [alice, bob]
        await act_once(players)
        server.kill()  # right after the acknowledgement: no goodbye, no last write
        assert await server.wait() != 0
    settled = [m for m in alice.received if m["type"] == p.HAND_END]
    assert [m["hand"] for m in settled] == [1]
    assert ledger_problems(db, table, settled) == []

    for _ in range(3):  # kill it again after each of the next acknowledged actions
        async with server_process(db) as server:
            lobby = await NetClient.connect(server.port, "Lobby")
            [summary] = (await lobby.request({"type": "list_tables"}, p.TABLES))["tables"]
            balances = {pl["name"]: pl["balance"] for pl in summary["players"]}
            assert balances == settled[-1]["balances"] and summary["hands_played"] == 1
            again, fulls = await take_seats_back(server.port, table, players)
            for old, full in zip(players, fulls, strict=True):
                # The same hand, exactly as each seat last saw it, and all of its events.
                assert full["hand"] == 2 and full["from"] == 0
                assert full["view"] == last_view(old)
                assert full["events"] == hand_events(old, 2)
            players = again
            acked = await act_once(players)
            server.kill()
            await server.wait()
        assert acked["event_count"] == last_view(players[0])["event_count"]
        with sqlite3.connect(db) as conn:
            (stored,) = conn.execute(
                "SELECT COUNT(*) FROM actions WHERE table_id = ? AND hand = 2", (table,)
            ).fetchone()
        assert stored >= 2  # the acknowledged actions of hand 2 are on disk

    async with server_process(db) as server:
        players, fulls = await take_seats_back(server.port, table, players)
        for client, full in zip(players, fulls, strict=True):
            assert full["view"]["event_count"] == last_view(client)["event_count"]
        await asyncio.gather(
            *(
                c.play_until(lambda m: m["type"] == p.HAND_END and m["hand"] == 2, timeout=30)
                for c in players
            )
        )
        hand_ends = [m for m in players[0].received if m["type"] == p.HAND_END]
        assert [m["hand"] for m in hand_ends] == [1, 2]
    assert ledger_problems(db, table, hand_ends) == []


async def test_sigkill_while_bots_play_keeps_every_settled_hand(tmp_path):
    """Killed at a random moment of a busy bot table: every hand a client was told had ended is
    in the ledger exactly as told, and the hand in play resumes where the database says."""
    db = tmp_path / "tonk.db"
    async with server_process(db, "--grace", "0.5") as server:
        host = await NetClient.connect(server.port, "Host")
        table = await host.create_table(name="bots", seats=4, seed=5)
        for strategy in ("easy", "sharp", "easy"):
            await host.send({"type": "add_bot", "strategy": strategy})
        await host.request({"type": "leave"}, p.LEFT)  # its seat is played for it
        watcher = await NetClient.connect(server.port, "Watcher")
        await watcher.request({"type": "watch", "table": table}, p.WATCHING)
        await watcher.expect(p.HAND_END, lambda m: m["hand"] == 3, timeout=30)
        await watcher.expect(p.UPDATE, lambda m: m["hand"] == 4 and m["from"] > 6)
        server.kill()
        await server.wait()
    told = [m for m in watcher.received if m["type"] == p.HAND_END]
    last = next(m for m in reversed(watcher.received) if m["type"] == p.UPDATE)
    number, seen = last["hand"], last["view"]["event_count"]
    assert ledger_problems(db, table, told) == []
    # The host had left (played for); after the restart its seat waits out the grace first.
    async with server_process(db, "--grace", "0.5") as server:
        again = await NetClient.connect(server.port, "Watcher")
        await again.request({"type": "watch", "table": table}, p.WATCHING)
        full = await again.expect(p.UPDATE)
        # Bots may have played on after the watcher's last frame (written, not yet sent):
        # never less than what was shown, and what was shown is a prefix of what is stored.
        assert full["hand"] >= number
        if full["hand"] == number:
            assert full["view"]["event_count"] >= seen
            assert full["events"][:seen] == hand_events(watcher, number)
        await again.expect(p.HAND_END, timeout=30)
        hand_ends = told + [m for m in again.received if m["type"] == p.HAND_END]
    assert ledger_problems(db, table, hand_ends) == []


async def test_every_action_is_committed_before_any_frame_shows_it(tmp_path, monkeypatch):
    """The write that acknowledges an action is durable before the acknowledgement: every
    commit runs with WAL and synchronous=FULL, and no update or hand_end frame leaves the
    server before the commit holding its actions (and settlement) has returned."""
    committed: dict[tuple[int, int], int] = {}  # (table, hand) -> actions on disk
    settled: set[tuple[int, int]] = set()
    pragmas: set[tuple[Any, ...]] = set()
    real_commit = st.Store._commit

    def commit(self: st.Store, conn: sqlite3.Connection, batch: Any) -> Any:
        pragmas.add(
            (
                conn.execute("PRAGMA journal_mode").fetchone()[0],
                conn.execute("PRAGMA synchronous").fetchone()[0],
            )
        )
        results = real_commit(self, conn, batch)
        for (ops, _, _), result in zip(batch, results, strict=True):
            if result is not None:
                continue
            for sql, params in ops:
                if sql.startswith("INSERT INTO actions"):
                    key = (params[0], params[1])
                    committed[key] = max(committed.get(key, 0), params[2] + 1)
                elif sql.startswith("UPDATE hands SET record"):
                    settled.add((params[3], params[4]))
        return results

    checked = {"update": 0, "hand_end": 0}
    problems: list[str] = []
    real_send = Connection.send_frame

    def send_frame(self: Connection, data: bytes) -> None:
        message = p.decode_payload(data[p.HEADER_SIZE :])
        if message["type"] == p.UPDATE:
            table = server.tables[message["table"]]
            if table.session.hand_number == message["hand"] and table.play.hand is not None:
                on_disk = committed.get((table.id, message["hand"]), 0)
                if on_disk < len(table.play.hand.actions):
                    problems.append(f"update sent with {len(table.play.hand.actions)} > {on_disk}")
                checked["update"] += 1
        elif message["type"] == p.HAND_END:
            if (message["table"], message["hand"]) not in settled:
                problems.append(f"hand_end {message['hand']} sent before its settlement")
            checked["hand_end"] += 1
        real_send(self, data)

    monkeypatch.setattr(st.Store, "_commit", commit)
    monkeypatch.setattr(Connection, "send_frame", send_frame)
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table(None, "sharp", name="t", seats=3, hands=4, seed=3)
        await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=30)
    assert problems == []
    assert checked["update"] > 40 and checked["hand_end"] == 4
    assert pragmas == {("wal", 2)}  # 2: FULL, an fsync of the WAL at every commit


@pytest.fixture
def posted() -> list[Any]:
    return []


async def test_the_real_client_reconnects_by_itself_after_a_crash(tmp_path: Path, posted):
    from tonk.client.connection import Connection as ClientConnection
    from tonk.client.connection import TableRequest
    from tonk.client.messages import Connected, LinkLost

    db = tmp_path / "tonk.db"
    port = free_port()
    request = TableRequest(m.CreateTable("Pilot", seats=2, seed=8, dealer=1), bots=1)
    client = ClientConnection("127.0.0.1", port, "Tess", posted.append, create=request)

    def my_turn() -> bool:
        table = client.model.table
        return bool(table and table.view and table.view.my_turn)

    async with server_process(db, port=port) as server:
        worker = asyncio.create_task(client.run())
        await wait_until(my_turn, "Tess's first turn")
        assert client.send(m.DrawStockRequest())
        await wait_until(
            lambda: (
                client.model.table is not None
                and client.model.table.view is not None
                and client.model.table.view.phase.value == "play"
            ),
            "the draw",
        )
        before = client.model.table.view if client.model.table else None
        server.kill()
        await server.wait()
    await wait_until(lambda: any(isinstance(m, LinkLost) for m in posted), "the link lost")
    async with server_process(db, port=port):
        await wait_until(
            lambda: any(isinstance(m, Connected) and m.report.reconnect for m in posted),
            "the reconnect",
        )
        await wait_until(
            lambda: client.model.table is not None and client.model.table.view == before,
            "the same hand",
        )
        assert before is not None and my_turn()
        discard = max(before.hand, key=lambda c: c.value)
        assert client.send(m.DiscardRequest(str(discard)))
        await wait_until(
            lambda: (
                client.model.table is not None
                and client.model.table.view is not None
                and client.model.table.view.event_count > before.event_count
            ),
            "the discard after the restart",
        )
        await client.close()
        await asyncio.wait_for(worker, 10)
