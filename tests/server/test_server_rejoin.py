"""Coming (back) to a table: after `resume` or `watch` a connection gets the ledger's history
(the `ledger` message, also after a server restart, bounded to the newest hands); and a
connection that missed part of a hand asks for all of it again with `resume` of the seat it
holds, or `watch` of the table it watches (an `update` from 0), while holding one seat it
cannot take another at the same table."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from netclient import NetClient, start_server
from tonk.server.tables.table import ledger_message
from tonk.shared.game.ledger import Ledger, LedgerEntry
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import validate_server


def nets_of(hand_end: dict[str, Any]) -> dict[str, int]:
    net: dict[str, int] = {}
    for payer, payee, amount in hand_end["payments"]:
        net[payer] = net.get(payer, 0) - amount
        net[payee] = net.get(payee, 0) + amount
    return net


def check_ledger(ledger: dict[str, Any], ends: list[dict[str, Any]]) -> None:
    """`ledger` holds exactly the hands of `ends` (hand_end messages), in order."""
    validate_server(ledger)
    names = ledger["names"]
    assert [number for number, _ in ledger["hands"]] == [end["hand"] for end in ends]
    for (_, nets), end in zip(ledger["hands"], ends, strict=True):
        told = nets_of(end)
        assert dict(zip(names, nets, strict=True)) == {name: told.get(name, 0) for name in names}
    assert ledger["balances"] == ends[-1]["balances"]


async def test_resume_and_watch_get_the_ledger_history_also_after_a_restart(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, None, name="Ledger", seats=3, seed=9, stake=3)
        token = alice.token
        ends = []
        for _ in range(3):
            ends.append(await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=20))
        assert any(end["payments"] for end in ends)
        await alice.close()
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        ledger = await alice.expect(p.LEDGER)
        assert ledger["table"] == table
        assert set(ledger["names"]) == {"Alice", "Ada (bot)", "Bix (bot)"}
        check_ledger(ledger, ends)
        watcher = await NetClient.connect(server.port, "Wendy")
        await watcher.request({"type": "watch", "table": table}, p.WATCHING)
        check_ledger(await watcher.expect(p.LEDGER), ends)
        await alice.close()
        await watcher.close()


def test_the_ledger_message_holds_the_newest_hands_only() -> None:
    ledger = Ledger()
    for number in range(1, 251):
        winner, loser = ("Ann", "Bo") if number % 3 else ("Bo", "Ann")
        entry = LedgerEntry(number, "drop_won", ((loser, winner, number),))
        ledger.history.append(entry)
        for name, amount in entry.net().items():
            ledger.balances[name] = ledger.balances.get(name, 0) + amount
    ledger.join("Cy")  # sat down but never paid or was paid
    message = ledger_message(4, ledger).to_wire()
    validate_server(message)
    assert len(message["hands"]) == p.LEDGER_HANDS == 200
    assert [number for number, _ in message["hands"]] == list(range(51, 251))
    assert message["names"] == ["Bo", "Ann", "Cy"]
    assert message["hands"][-1] == [250, [-250, 250, 0]]  # 250 % 3 != 0: Bo pays Ann
    assert message["balances"] == ledger.balances
    assert len(p.encode(message)) < 8_000
    assert ledger_message(4, Ledger()).to_wire()["hands"] == []


async def test_resume_and_watch_again_send_the_whole_hand(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="Again", seats=3, seed=2, dealer=2)
        token = alice.token
        bob = await NetClient.connect(server.port, "Bob")
        bob_seated = await bob.request({"type": "sit", "table": table}, p.SEATED)
        await alice.send({"type": "add_bot"})
        first = await alice.expect(p.UPDATE)  # the deal: Alice (after the dealer) plays first
        assert first["from"] == 0 and first["view"]["turn"] == 0
        await alice.send({"type": "draw_stock"})
        drawn = await alice.expect(p.UPDATE, lambda m: m["view"]["phase"] == "play")
        assert drawn["from"] > 0
        wendy = await NetClient.connect(server.port, "Wendy")
        await wendy.request({"type": "watch", "table": table}, p.WATCHING)
        await wendy.expect(p.UPDATE)

        # Alice asks for the whole hand again with her own token: the same seat, from 0.
        again = await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        assert again["seat"] == 0
        await alice.expect(p.LEDGER)
        whole = await alice.expect(p.UPDATE)
        assert whole["from"] == 0
        assert whole["view"]["event_count"] == drawn["view"]["event_count"]
        assert whole["view"]["hand"] == drawn["view"]["hand"]
        # ... and she is still the one playing: her discard is taken.
        card = whole["view"]["hand"].split()[0]
        await alice.send({"type": "discard", "card": card})
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 1)

        # The spectator watches again: the whole hand, as a spectator still.
        await wendy.request({"type": "watch", "table": table}, p.WATCHING)
        seen = await wendy.expect(p.UPDATE)
        assert seen["from"] == 0 and seen["view"]["seat"] is None and seen["view"]["hand"] == ""

        # Holding a seat, Alice cannot take Bob's with his token, nor watch her own table;
        # and Bob's seat is still his.
        await alice.send({"type": "resume", "table": table, "token": bob_seated["token"]})
        await alice.expect_error(p.ALREADY_AT_TABLE)
        await alice.send({"type": "watch", "table": table})
        await alice.expect_error(p.ALREADY_AT_TABLE)
        listed = await wendy.request({"type": "list_tables"}, p.TABLES)
        [summary] = listed["tables"]
        assert [pl["status"] for pl in summary["players"]][:2] == ["connected", "connected"]
        for client in (alice, bob, wendy):
            await client.close()


async def test_a_session_every_player_has_left_ends_for_its_spectators(tmp_path: Path) -> None:
    # Alice plays a bot and leaves: her seat is played for while Carol watches, but once no
    # player has been connected for `abandoned_after` the session ends, between hands.
    async with start_server(tmp_path, abandoned_after=1.0) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, name="Friday", seats=2, seed=5)
        await alice.expect(p.UPDATE)
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "watch", "table": table}, p.WATCHING)
        await alice.request({"type": "leave"}, p.LEFT)
        end = await carol.expect(p.SESSION_END, timeout=20)
        assert end["reason"] == "abandoned"
        assert len(end["standings"]) == 2 and "Alice" in {n for n, _ in end["standings"]}
        ended = [m["hand"] for m in carol.received if m["type"] == p.HAND_END]
        assert end["hands"] == len(ended) >= 1
        await carol.request({"type": "leave"}, p.LEFT)
        listed = await carol.request({"type": "list_tables"}, p.TABLES)
        assert all(t["id"] != table for t in listed["tables"])
        await alice.close()
        await carol.close()


async def test_a_session_only_a_spectator_watches_plays_on_at_a_watching_pace(
    tmp_path: Path,
) -> None:
    # Alice leaves her table with a quick bot (the tests' bots pause 0, hands follow at once):
    # Carol, watching, still sees it played, but one move at a time she can follow, not
    # hundreds of hands a second.
    pace = 0.25
    async with start_server(tmp_path, watched_pace=pace) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, name="Friday", seats=2, seed=5)
        await alice.expect(p.UPDATE)
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "watch", "table": table}, p.WATCHING)
        await carol.expect(p.UPDATE)  # the hand so far
        watched_from = len(carol.received)
        loop = asyncio.get_running_loop()
        began = loop.time()
        await alice.request({"type": "leave"}, p.LEFT)
        await carol.expect(p.UPDATE, lambda update: bool(update["events"]))  # it plays on
        end = began + 1.5
        with contextlib.suppress(TimeoutError):
            while (left := end - loop.time()) > 0:
                await carol.recv(timeout=left)
        elapsed = loop.time() - began
        moves = [m for m in carol.received[watched_from:] if m["type"] == p.UPDATE and m["events"]]
        # (one move of Alice's may come before she is gone, and one as she goes)
        assert 1 <= len(moves) <= elapsed / pace + 2, (len(moves), elapsed)
        await alice.close()
        await carol.close()


async def test_a_session_nobody_is_at_deals_no_more_hands_and_closes(tmp_path: Path) -> None:
    # Everybody gone, nobody watching: the hand in play is played out for Alice, no new
    # hand is dealt for nobody, and after `abandoned_after` the table leaves the lobby.
    async with start_server(tmp_path, abandoned_after=1.0) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(None, name="Friday", seats=2, seed=5)
        first = await alice.expect(p.UPDATE)
        await alice.request({"type": "leave"}, p.LEFT)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + 20
        while True:
            listed = await alice.request({"type": "list_tables"}, p.TABLES)
            if all(t["id"] != table for t in listed["tables"]):
                break
            assert loop.time() < give_up, "the deserted table was never closed"
            await asyncio.sleep(0.1)
        await alice.close()
    with sqlite3.connect(tmp_path / "tonk.db") as db:
        state, played = db.execute(
            "SELECT state, hands_played FROM tables WHERE id = ?", (table,)
        ).fetchone()
        dealt = db.execute("SELECT COUNT(*) FROM hands WHERE table_id = ?", (table,)).fetchone()
    assert state == "finished"
    assert played == dealt[0] == first["hand"] == 1  # hand 1 played out; no hand 2
