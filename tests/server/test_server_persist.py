"""Durability: tables, seats, tokens and ledgers survive a restart (in process, and of the real
`tonk-server` command), every settled hand is in the database and replays; the --dev gate; a
clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from netclient import NetClient, start_server
from reliakit import fast_server_args, server_command
from tonk.shared.game.hand import HandRecord
from tonk.shared.game.settlement import Settlement
from tonk.shared.wire import protocol as p


def ledger_from_db(db: Path, table: int) -> tuple[dict[str, int], list[tuple[str, str, int]]]:
    with sqlite3.connect(db) as conn:
        balances = dict(
            conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (table,))
        )
        payments = conn.execute(
            "SELECT payer, payee, amount FROM payments WHERE table_id = ?", (table,)
        ).fetchall()
    return balances, payments


async def test_restart_in_process_keeps_tables_ledgers_seats_and_the_hand_in_play(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, None, name="Friday", seats=3, seed=4, stake=2)
        token = alice.token
        first_end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=20)
        # Stop in the middle of hand 2, after at least one action of it.
        mid = await alice.play_until(
            lambda m: m["type"] == p.UPDATE and m["hand"] == 2 and m["from"] > 0
        )
        await alice.close()
    balances, payments = ledger_from_db(tmp_path / "tonk.db", table)
    assert balances == first_end["balances"]
    assert sum(balances.values()) == 0
    async with start_server(tmp_path) as server:
        bob = await NetClient.connect(server.port, "Bob")
        listed = await bob.request({"type": "list_tables"}, p.TABLES)
        [summary] = listed["tables"]
        assert summary["id"] == table and summary["state"] == "playing"
        assert {pl["name"]: pl["balance"] for pl in summary["players"]} == first_end["balances"]
        assert summary["players"][0]["status"] == "disconnected"
        await bob.send({"type": "resume", "table": table, "token": "a guess"})
        await bob.expect_error(p.BAD_TOKEN)
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        again = await alice.expect(p.UPDATE)
        assert again["hand"] == 2 and again["from"] == 0
        assert again["view"]["event_count"] >= mid["view"]["event_count"]
        assert again["view"]["dealer"] == mid["view"]["dealer"]
        second_end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=20)
        assert second_end["hand"] == 2
        assert sum(second_end["balances"].values()) == 0
    balances, payments = ledger_from_db(tmp_path / "tonk.db", table)
    assert balances == second_end["balances"]
    net: dict[str, int] = {}
    for payer, payee, amount in payments:
        net[payer] = net.get(payer, 0) - amount
        net[payee] = net.get(payee, 0) + amount
    assert {k: v for k, v in net.items() if v} == {k: v for k, v in balances.items() if v}


async def test_a_seat_away_stays_away_after_a_restart_and_is_played_for_at_once(tmp_path):
    # A grace period longer than the test: a seat that had to wait for it again would stall.
    async with start_server(tmp_path, grace=600) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="Friday", seats=2, seed=4)
        token = alice.token
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table}, p.SEATED)
        await bob.expect(p.UPDATE)
        await bob.request({"type": "leave"}, p.LEFT)  # his seat is played for him from now
        await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["status"] == "away")
        await alice.close()
        await bob.close()
    async with start_server(tmp_path, grace=600) as server:
        alice = await NetClient.connect(server.port, "Alice")
        listed = await alice.request({"type": "list_tables"}, p.TABLES)
        [summary] = listed["tables"]
        assert [pl["status"] for pl in summary["players"]] == ["disconnected", "away"]
        await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        # Bob's turns are played for him without a grace period: the hand gets to its end.
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=30)
        assert sum(end["balances"].values()) == 0
        bob_moves = [
            e
            for m in alice.received
            if m["type"] == p.UPDATE and m["from"] > 0  # since the restart, not the resent hand
            for e in m["events"]
            if e.get("seat") == 1 and e["kind"] in ("draw_stock", "take_discard", "discard")
        ]
        assert bob_moves


async def test_a_table_keeps_its_newest_hands_in_memory_and_its_whole_ledger_on_disk(tmp_path):
    def numbers(server, table):
        return [entry.hand_number for entry in server.tables[table].session.ledger.history]

    async with start_server(tmp_path, ledger_hands=3) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, name="Long", seats=2, seed=6)
        token = alice.token
        await alice.play_until(lambda m: m["type"] == p.HAND_END and m["hand"] >= 6, timeout=60)
        kept = numbers(server, table)
        played = server.tables[table].session.hands_played
        assert len(kept) == 3 and kept == list(range(played - 2, played + 1))
        balances, _ = ledger_from_db(tmp_path / "tonk.db", table)
        assert server.tables[table].session.ledger.balances == balances  # every hand's payments
        watcher = await NetClient.connect(server.port, "Watcher")
        await watcher.request({"type": "watch", "table": table}, p.WATCHING)
        ledger = await watcher.expect(p.LEDGER)
        assert [number for number, _ in ledger["hands"]] == numbers(server, table)
        assert ledger["balances"] == server.tables[table].session.ledger.balances
        await alice.close()
        await watcher.close()
    balances, _ = ledger_from_db(tmp_path / "tonk.db", table)
    with sqlite3.connect(tmp_path / "tonk.db") as conn:
        settled = [
            n
            for (n,) in conn.execute(
                "SELECT number FROM hands WHERE table_id = ? AND settlement IS NOT NULL"
                " ORDER BY number",
                (table,),
            )
        ]
    async with start_server(tmp_path, ledger_hands=3) as server:
        assert numbers(server, table) == settled[-3:]
        assert server.tables[table].session.ledger.balances == balances
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=30)
        assert numbers(server, table)[-1] == end["hand"] == settled[-1] + 1
        assert len(numbers(server, table)) == 3


async def test_every_settled_hand_record_replays_to_its_settlement(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table(name="t", seats=4, hands=5, seed=9)
        for _ in range(3):
            await alice.send({"type": "add_bot", "strategy": "sharp"})
        await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=30)
    with sqlite3.connect(tmp_path / "tonk.db") as conn:
        rows = conn.execute(
            "SELECT number, record, settlement FROM hands ORDER BY number"
        ).fetchall()
        state = conn.execute("SELECT state, hands_played FROM tables").fetchone()
    assert [number for number, _, _ in rows] == [1, 2, 3, 4, 5]
    assert state == ("finished", 5)
    for _, record, settlement in rows:
        replayed = HandRecord.from_dict(json.loads(record)).replay()
        assert replayed.settlement == Settlement.from_dict(json.loads(settlement))


async def test_a_waiting_table_and_its_seats_survive_a_restart(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table_id = await alice.create_table(name="later", seats=3)
        token = alice.token
        await alice.send({"type": "add_bot", "strategy": "sharp", "seat": 2})
        await alice.expect(p.TABLE, lambda m: m["table"]["taken"] == 2)
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "resume", "table": table_id, "token": token}, p.SEATED)
        table = await alice.expect(p.TABLE)
        players = table["table"]["players"]
        assert [pl["kind"] for pl in players] == ["human", "empty", "bot"]
        assert table["table"]["creator"] == 0
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table_id}, p.SEATED)
        await bob.expect(p.UPDATE)  # full: the session starts


# -- the real command --------------------------------------------------------------------------


@asynccontextmanager
async def tonk_server(
    db: Path, *extra: str
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    proc = await asyncio.create_subprocess_exec(
        *fast_server_args(db),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        assert line.startswith("tonk-server listening on 127.0.0.1:"), line
        port = int(line.strip().rsplit(":", 1)[1])
        assert port > 0
        yield proc, port
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def stop(proc: asyncio.subprocess.Process, sig: int = signal.SIGTERM) -> str:
    proc.send_signal(sig)
    assert proc.stderr is not None
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0, err.decode()
    return err.decode()


@pytest.mark.e2e
async def test_the_command_stops_cleanly_on_sighup_saying_goodbye_to_every_client(tmp_path):
    # A host ran it in an SSH session that dropped: the server gets SIGHUP.
    async with tonk_server(tmp_path / "server.db", "--dev") as (proc, port):
        alice = await NetClient.connect(port, "Alice")
        bob = await NetClient.connect(port, "Bob")
        await alice.create_table(name="Friday", seats=2)
        log = await stop(proc, signal.SIGHUP)
        for client in (alice, bob):
            goodbye = await client.expect(p.GOODBYE)
            assert goodbye["reason"] == p.SERVER_SHUTTING_DOWN
            await client.expect_closed()
    assert "stopped" in log


@pytest.mark.e2e
async def test_the_command_restarts_with_the_same_db_and_stops_cleanly_on_sigterm(tmp_path):
    db = tmp_path / "server.db"
    async with tonk_server(db, "--dev") as (proc, port):
        alice = await NetClient.connect(port, "Alice")
        table_id = await alice.create_table(None, name="Friday", seats=2, seed=2)
        token = alice.token
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=20)
        log = await stop(proc)
        goodbye = await alice.expect(p.GOODBYE)
        assert goodbye["reason"] == p.SERVER_SHUTTING_DOWN
        assert "shutting down" in goodbye["message"]
        await alice.expect_closed()
    assert "connection #1 from 127.0.0.1" in log and "table 1 created" in log
    assert "hand 1 ends" in log and "stopped" in log
    async with tonk_server(db) as (proc, port):
        bob = await NetClient.connect(port, "Bob")
        [summary] = (await bob.request({"type": "list_tables"}, p.TABLES))["tables"]
        # Hand 2 was waiting for Alice when the server stopped: one hand settled.
        assert summary["name"] == "Friday" and summary["hands_played"] == 1
        alice = await NetClient.connect(port, "Alice")
        await alice.request({"type": "resume", "table": table_id, "token": token}, p.SEATED)
        table = await alice.expect(p.TABLE)
        balances = {pl["name"]: pl["balance"] for pl in table["table"]["players"]}
        assert balances == end["balances"] and sum(balances.values()) == 0
        resumed = await alice.expect(p.UPDATE)
        assert resumed["hand"] == 2 and resumed["view"]["turn"] == resumed["view"]["seat"]
        # Without --dev the same server refuses a seeded table.
        await bob.send({"type": "create_table", "name": "rigged", "seed": 1})
        await bob.expect_error(p.DEV_ONLY)
        await stop(proc)


@pytest.mark.e2e
async def test_the_command_reports_bad_options(tmp_path):
    proc = await asyncio.create_subprocess_exec(
        *server_command(),
        "--port",
        "0",
        "--db",
        str(tmp_path / "x.db"),
        "--rules",
        "vegas",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert b"unknown preset 'vegas'" in err and out == b""


@pytest.mark.e2e
async def test_a_signal_while_the_doors_are_still_opening_stops_the_server_cleanly(tmp_path):
    # The host presses Ctrl-C (or systemd stops it) right after the first line: the SSH door
    # is still making its host key and the web door its template. It stops, saying so, with
    # status 0, rather than being killed by the signal unsaid.
    for sig in (signal.SIGTERM, signal.SIGINT):
        db = tmp_path / f"{sig.name}.db"
        async with tonk_server(db, "--ssh-port", "0", "--web-port", "0") as (proc, _port):
            log = await stop(proc, sig)
        assert "stopped" in log, log
