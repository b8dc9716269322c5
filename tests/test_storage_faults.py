"""Storage faults, real ones: a full disk (the server's file size limit lowered under it, which
root hits too), a database locked by another process, the database file moved away or replaced.
Each time the table stops taking actions and says why, loses nothing that was acknowledged, and
carries on when the fault is gone."""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import netclient
from netclient import NetClient
from reliakit import (
    act_once,
    last_view,
    ledger_problems,
    server_process,
    start_playing_table,
    take_seats_back,
)
from tonk.server.app import TonkServer
from tonk.shared import protocol as p
from tonk.shared.actions import action_message


async def two_players(port: int, seed: int = 4) -> tuple[int, list[NetClient]]:
    """Alice and Bob at a two-seat table, a few actions into the first hand."""
    alice = await NetClient.connect(port, "Alice")
    seated = await alice.request(
        {"type": "create_table", "name": "faulty", "seats": 2, "seed": seed}, p.SEATED
    )
    bob = await NetClient.connect(port, "Bob")
    await bob.request({"type": "sit", "table": seated["table"]}, p.SEATED)
    for client in (alice, bob):
        await client.expect(p.UPDATE)
    players = [alice, bob]
    for _ in range(3):
        await act_once(players)
    return seated["table"], players


async def seen(client: NetClient, kind: str, predicate: Any) -> dict[str, Any]:
    """The last message of `kind` matching `predicate` that `client` got, waiting if none."""
    for message in reversed(client.received):
        if message["type"] == kind and predicate(message):
            return message
    return await client.expect(kind, predicate)


def to_act(players: list[NetClient]) -> NetClient:
    return next(c for c in players if c.seat_view().my_turn)


async def try_to_act(client: NetClient, request_id: int) -> dict[str, Any]:
    """Send a legal action (a draw if it may, else the first one that is not a drop) and
    return the error that answers it."""
    view = client.seat_view()
    actions = view.legal().actions(view.turn)
    choice = next((a for a in actions if a.kind == "draw_stock"), None)
    choice = choice or next(a for a in actions if a.kind != "drop")
    data = action_message(choice)
    await client.send({**data, "id": request_id})
    return await client.expect(p.ERROR, lambda m: m.get("reply_to") == request_id)


async def refused_while_faulty(
    players: list[NetClient], reason: str, lobby: NetClient
) -> dict[str, Any]:
    """The player to act is refused with storage_error; everybody at the table is told the
    game is paused and why; the lobby shows the table paused; nothing changed."""
    before = last_view(players[0])
    actor = to_act(players)
    error = await try_to_act(actor, 1)
    assert error["code"] == p.STORAGE_ERROR and error["fatal"] is False
    assert reason in error["message"]
    for client in players:
        notice = await seen(client, p.TABLE, lambda m: m["table"]["paused"] is not None)
        assert reason in notice["table"]["paused"]
        told = [m for m in client.received if m["type"] == p.ERROR and "reply_to" not in m]
        assert any("paused" in m["message"] and reason in m["message"] for m in told), told
    listed = await lobby.request({"type": "list_tables"}, p.TABLES)
    paused = {t["id"]: t["paused"] for t in listed["tables"]}
    assert any(v and reason in v for v in paused.values()), paused
    # While paused, an action is refused at once and changes nothing.
    error = await try_to_act(actor, 2)
    assert error["code"] == p.STORAGE_ERROR and "paused" in error["message"]
    assert (
        last_view(players[0]) == before
        and last_view(players[1])["event_count"] == (before["event_count"])
    )
    return before


async def carries_on(players: list[NetClient], before: dict[str, Any]) -> None:
    """The fault is gone: the table says so, and the same action now goes through."""
    for client in players:
        tables = [m for m in client.received if m["type"] == p.TABLE]
        last = max(i for i, m in enumerate(tables) if m["table"]["paused"] is not None)
        if not any(m["table"]["paused"] is None for m in tables[last + 1 :]):
            old = {id(m) for m in tables}
            await client.expect(
                p.TABLE,
                lambda m, old=old: id(m) not in old and m["table"]["paused"] is None,
                timeout=20,
            )
    for client in players:
        client.view_fresh = True
    acked = await act_once(players)
    assert acked["event_count"] > before["event_count"]


async def test_a_full_disk_pauses_play_and_it_carries_on_when_there_is_room(tmp_path):
    db = tmp_path / "tonk.db"
    async with server_process(db) as server:
        table, players = await two_players(server.port)
        bots = await start_playing_table(server.port, "bots")
        lobby = await NetClient.connect(server.port, "Lobby")
        pid = server.proc.pid
        limits = resource.prlimit(pid, resource.RLIMIT_FSIZE)
        # The disk is "full": no file of the server may grow past 1 KB (EFBIG), root or not.
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (1024, limits[1]))
        try:
            before = await refused_while_faulty(players, "disk I/O error", lobby)
            # The bot table is paused as well, and its watcher is told why.
            await seen(bots.watcher, p.TABLE, lambda m: m["table"]["paused"] is not None)
            paused_at = bots.watcher.received[-1]
            await asyncio.sleep(1.5)  # the server tries again meanwhile, and fails
            assert bots.watcher.received[-1] is paused_at  # nothing played while paused
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, limits)
        await carries_on(players, before)
        hands = max(m["hand"] for m in bots.watcher.received if m["type"] == p.HAND_END)
        await bots.watcher.expect(p.HAND_END, lambda m: m["hand"] > hands, timeout=20)
        acked = last_view(players[0])
        server.kill()
        await server.wait()
    # Nothing acknowledged was lost, and the refused actions left no trace.
    async with server_process(db) as server:
        players, fulls = await take_seats_back(server.port, table, players)
        assert [f["view"] for f in fulls] == [last_view(c) for c in players]
        assert fulls[0]["view"]["event_count"] == acked["event_count"]
    for number in (table, bots.table):
        ends = [m for m in bots.watcher.received if m["type"] == p.HAND_END]
        assert ledger_problems(db, number, ends if number == bots.table else []) == []


async def test_a_locked_database_pauses_play_until_the_lock_is_released(tmp_path):
    server = TonkServer(netclient.test_config(tmp_path))
    server.store.busy_timeout = 0.3  # how long a write waits for the lock before failing
    await server.start()
    try:
        table, players = await two_players(server.port)
        lobby = await NetClient.connect(server.port, "Lobby")
        locker = sqlite3.connect(server.config.db_path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
        try:
            before = await refused_while_faulty(players, "database is locked", lobby)
            await asyncio.sleep(1.2)  # a retry or two, still locked
            assert server.tables[table].paused is not None
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        await carries_on(players, before)
        acked = last_view(players[0])
    finally:
        await server.close()
    with sqlite3.connect(server.config.db_path) as conn:
        (stored,) = conn.execute(
            "SELECT COUNT(*) FROM actions WHERE table_id = ?", (table,)
        ).fetchone()
    assert stored == 4  # three actions before the lock, one after: none of the refused ones
    assert acked["event_count"] > before["event_count"]


async def move_db(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            os.replace(f"{src}{suffix}", f"{dst}{suffix}")


async def test_a_moved_or_replaced_database_pauses_play_until_it_is_back(tmp_path):
    async with server_process(tmp_path / "tonk.db") as server:
        db = tmp_path / "tonk.db"
        aside = tmp_path / "moved.db"
        table, players = await two_players(server.port)
        lobby = await NetClient.connect(server.port, "Lobby")
        await move_db(db, aside)
        before = await refused_while_faulty(players, "removed or replaced", lobby)
        await asyncio.sleep(1.2)
        assert not db.exists()  # the server did not start a new, empty database
        # A different file in its place (an old copy, say) is not taken for it either.
        shutil.copy(aside, db)
        await asyncio.sleep(1.2)
        notices = [m for m in players[0].received if m["type"] == p.TABLE]
        assert notices[-1]["table"]["paused"] is not None
        db.unlink()
        await move_db(aside, db)
        await carries_on(players, before)
        acked = last_view(players[0])
        server.kill()
        await server.wait()
    async with server_process(db) as server:
        players, fulls = await take_seats_back(server.port, table, players)
        assert fulls[0]["view"]["event_count"] == acked["event_count"]
        assert fulls[0]["view"] == last_view(players[0])
    assert ledger_problems(db, table) == []
