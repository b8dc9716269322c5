"""`tonk-server ledger`, `audit` and `replay`: an operator reads the database of a server that is
still playing (the real command, in a subprocess, on the real SQLite file), sees the ledger the
players were told, finds any tampering, and plays a hand again card by card."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from netclient import NetClient, start_server
from reliakit import last_hand_end, start_playing_table
from tonk.server.store.store_schema import SCHEMA
from tonk.shared.game.hand import HandRecord
from tonk.shared.game.settle_up import settle_up, settle_up_text
from tonk.shared.game.settlement import Settlement
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e


def tonk_server(*args: str) -> subprocess.CompletedProcess[str]:
    command = shutil.which("tonk-server")
    head = [command] if command else [sys.executable, "-m", "tonk.server"]
    return subprocess.run([*head, *args], capture_output=True, text=True, timeout=60)


def ledger_rows(lines: list[str]) -> dict[str, int]:
    """`  Ada (bot)     +3 chips` lines back into {name: balance} (the settling up after them
    left out)."""
    lines = [line for line in lines if not line.startswith("  settle up: ")]
    rows = [re.fullmatch(r"  (.*?) +([+-]\d+)(?: \S+)?", line) for line in lines]
    assert all(rows), lines
    return {row[1]: int(row[2]) for row in rows if row}


async def run(*args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(tonk_server, *args)


@pytest.fixture
async def played(tmp_path: Path) -> Any:
    """A bot table that has settled at least three hands on a server still playing it, and the
    server's database."""
    async with start_server(tmp_path) as server:
        playing = await start_playing_table(server.port, name="Friday", seed=7)
        watcher = playing.watcher
        await watcher.expect(p.HAND_END, lambda m: m["hand"] >= 3, timeout=30)
        yield playing, tmp_path / "tonk.db"


async def test_ledger_and_audit_read_a_running_servers_database(played):
    playing, db = played
    ledger = await run("ledger", "--db", str(db))
    assert ledger.returncode == 0, ledger.stderr
    lines = ledger.stdout.splitlines()
    head = re.fullmatch(
        rf"table {playing.table} 'Friday' \(classic, playing, (\d+) hands\)", lines[0]
    )
    assert head, lines[0]
    # The server plays on while it is read: the ledger printed is the one after the hands it
    # counted, which the payments on disk for those hands must add up to.
    settled = int(head[1])
    assert settled >= 3
    net: dict[str, int] = {}
    with sqlite3.connect(db) as conn:
        for payer, payee, amount in conn.execute(
            "SELECT payer, payee, amount FROM payments WHERE table_id = ? AND hand <= ?",
            (playing.table, settled),
        ):
            net[payer] = net.get(payer, 0) - amount
            net[payee] = net.get(payee, 0) + amount
    printed = ledger_rows(lines[1:])
    assert sum(printed.values()) == 0 and any(printed.values())
    assert {k: v for k, v in printed.items() if v} == {k: v for k, v in net.items() if v}
    # A table still playing is settled up as it stands.
    assert lines[len(printed) + 1] == "  settle up: " + settle_up_text(settle_up(printed), "chips")
    audit = await run("audit", "--db", str(db), str(playing.table))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "ledger sound" in audit.stdout
    assert "1 table audited, 0 with problems" in audit.stdout
    # The server played on while it was read.
    before = last_hand_end(playing.watcher)
    await playing.watcher.expect(p.HAND_END, lambda m: m["hand"] > before, timeout=30)


async def test_the_ledger_printed_is_the_one_the_players_were_told(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table(None, name="Two", seats=2, seed=3, hands=2)
        await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=30)
        told = [m for m in alice.received if m["type"] == p.HAND_END][-1]["balances"]
        await alice.close()
    ledger = await run("ledger", "--db", str(tmp_path / "tonk.db"))
    assert ledger.returncode == 0, ledger.stderr
    head, *rows = ledger.stdout.splitlines()
    assert head == "table 1 'Two' (classic, finished, 2 hands)"
    assert ledger_rows(rows) == told
    assert rows[-1] == "  settle up: " + settle_up_text(settle_up(told), "chips")


async def test_audit_finds_a_changed_balance_a_changed_payment_and_a_forged_record(played):
    playing, db = played
    table = playing.table
    copies = {}
    for damage in ("balance", "payment", "record"):
        copy = db.parent / f"{damage}.db"
        with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        copies[damage] = copy
    with sqlite3.connect(copies["balance"]) as conn:
        conn.execute("UPDATE balances SET balance = balance + 1 WHERE rowid = 1")
    with sqlite3.connect(copies["payment"]) as conn:
        (paid_hand,) = conn.execute("SELECT hand FROM payments WHERE rowid = 1").fetchone()
        conn.execute("UPDATE payments SET amount = amount + 1 WHERE rowid = 1")
    with sqlite3.connect(copies["record"]) as conn:
        number, text = conn.execute(
            "SELECT number, record FROM hands WHERE table_id = ? AND settlement IS NOT NULL"
            " ORDER BY number LIMIT 1",
            (table,),
        ).fetchone()
        record = json.loads(text)
        record["dealer"] = (record["dealer"] + 1) % record["players"]  # another deal
        conn.execute(
            "UPDATE hands SET record = ? WHERE table_id = ? AND number = ?",
            (json.dumps(record), table, number),
        )
    found = {damage: await run("audit", "--db", str(copy)) for damage, copy in copies.items()}
    for damage, result in found.items():
        assert result.returncode == 1, (damage, result.stdout)
        assert "1 table audited, 1 with problems" in result.stdout
    assert "balances sum to 1" in found["balance"].stdout
    assert "the payments add up to" in found["payment"].stdout
    assert f"hand {paid_hand}: payments" in found["payment"].stdout
    assert f"hand {number}: its record does not replay" in found["record"].stdout


async def test_replay_plays_a_settled_hand_again_card_by_card(played):
    playing, db = played
    result = await run("replay", str(playing.table), "2", "--db", str(db))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    with sqlite3.connect(db) as conn:
        record_text, names_text, settlement_text = conn.execute(
            "SELECT record, names, settlement FROM hands WHERE table_id = ? AND number = 2",
            (playing.table,),
        ).fetchone()
    record = HandRecord.from_dict(json.loads(record_text))
    names = json.loads(names_text)
    settlement = Settlement.from_dict(json.loads(settlement_text))
    assert lines[0].startswith(f"Hand 2 at table {playing.table}: classic rules, 3 players")
    assert lines[1] == "Deck order: " + json.loads(record_text)["deck"]
    for name in names:
        assert any(line.startswith(f"{name} is dealt ") for line in lines), name
    numbered = [line for line in lines if line.split(".")[0].isdigit()]
    assert len(numbered) == len(record.actions)
    ending = settlement.ending.value.replace("_", " ")
    assert f"Ending: {ending}" in lines
    for payment in settlement.payments:
        chips = "chip" if payment.amount == 1 else "chips"
        line = f"  {names[payment.payer]} pays {names[payment.payee]} {payment.amount} {chips}"
        assert line in lines
    # Each action's events are one sentence: "drops with 4; the hand ends".
    assert not [line for line in lines if "; The " in line or "; Up " in line]
    assert any(line.endswith("; the hand ends") for line in lines)
    assert not [line for line in lines if re.search(r"\b1 chips\b", line)]


async def test_replay_takes_a_table_s_name_as_ledger_shows_it(played):
    playing, db = played
    by_id = await run("replay", str(playing.table), "1", "--db", str(db))
    for name in ("Friday", "friday"):
        by_name = await run("replay", name, "1", "--db", str(db))
        assert by_name.returncode == 0, by_name.stderr
        assert by_name.stdout == by_id.stdout
        assert by_name.stderr == ""
    unknown = await run("replay", "Saturday", "1", "--db", str(db))
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "tonk-server replay: no table named 'Saturday' in this database "
        "(tonk-server ledger lists them)"
    )
    bad = await run("replay", "Friday", "last", "--db", str(db))
    assert bad.returncode == 2
    assert "a hand is numbered from 1 (ledger counts them), not 'last'" in bad.stderr
    assert "invalid" not in bad.stderr


def test_replay_of_a_name_several_tables_share_takes_the_newest_and_says_so(tmp_path):
    db = tmp_path / "tonk.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(SCHEMA)
        for id_ in (2, 5, 9):
            conn.execute(
                "INSERT INTO tables (id, name, config, state, created) VALUES (?, ?, '{}', "
                "'finished', 0)",
                (id_, "Friday"),
            )
    result = tonk_server("replay", "FRIDAY", "6", "--db", str(db))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "tonk-server replay: 3 tables are named 'FRIDAY': this is table 9, the newest (the "
        "others: 2, 5; give a table's id for another)",
        "tonk-server replay: table 9 has no hand 6",
    ]


async def test_replay_of_the_hand_in_play_says_whose_turn_it_is(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, name="Slow", seats=2, seed=5)
        update = await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == m["view"]["seat"])
        assert update["hand"] == 1
        result = await run("replay", str(table), "1", "--db", str(tmp_path / "tonk.db"))
        await alice.close()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Still being played: Alice to play."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ledger",), "no database at"),
        (("audit", "99"), "no table 99"),
        (("replay", "1", "999999"), "table 1 has no hand 999999"),
    ],
)
async def test_unreadable_requests_exit_2_with_a_reason(played, args, message):
    _, db = played
    target = db.parent / "missing.db" if message == "no database at" else db
    result = await run(*args, "--db", str(target))
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.startswith(f"tonk-server {args[0]}: ")


def test_a_file_that_is_not_a_tonk_database_is_refused(tmp_path):
    junk = tmp_path / "notes.db"
    junk.write_text("these are my notes, not a database\n" * 50)
    result = tonk_server("audit", "--db", str(junk))
    assert result.returncode == 2
    assert "is not a tonk-server database" in result.stderr
    assert junk.read_text().startswith("these are my notes")


@pytest.mark.parametrize("command", ["tonk.server.commands.audit", "tonk.server.commands.names"])
def test_the_operator_commands_read_the_database_without_loading_the_server(command: str) -> None:
    """`audit`, `ledger`, `replay` and `names` need only the database's default path, not the
    asyncio server with its tables and connections."""
    check = (
        f"import sys, {command}; "
        "loaded = sorted(m for m in sys.modules if m.startswith('tonk.server.')); "
        "print(loaded); "
        "server = {'tonk.server.app', 'tonk.server.tables.table', 'tonk.server.connection'}; "
        "assert not server & set(loaded)"
    )
    ran = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr


async def test_replay_writes_names_as_typed_and_ends_quietly_when_its_reader_stops(tmp_path):
    async with start_server(tmp_path) as server:
        cy = await NetClient.connect(server.port, "cy")
        table = await cy.create_table(None, name="Slow", seats=2, seed=5)
        await cy.expect(p.UPDATE, lambda m: m["view"]["turn"] == m["view"]["seat"])
        args = ("replay", str(table), "1", "--db", str(tmp_path / "tonk.db"))
        whole = await run(*args)
        # A reader gone before a line is written (`| head -0`; `| head` once it has its lines).
        command = shutil.which("tonk-server")
        head = [command] if command else [sys.executable, "-m", "tonk.server"]
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            cut = await asyncio.to_thread(
                subprocess.run, [*head, *args], stdout=write_end, stderr=subprocess.PIPE, timeout=60
            )
        finally:
            os.close(write_end)
        await cy.close()
    assert whole.returncode == 0, whole.stderr
    lines = whole.stdout.splitlines()
    assert "cy is dealt" in whole.stdout and "Cy " not in whole.stdout
    assert lines[2].startswith("cy is dealt ") and lines[-1] == "Still being played: cy to play."
    assert (cut.returncode, cut.stderr) == (0, b"")
