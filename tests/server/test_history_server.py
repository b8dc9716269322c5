"""The history through a real server and its SQLite file: the list of a session's hands (dealer,
ending, winners, payments) and the settle-up at its foot, as the database holds them; paging;
a hand's steps paged by `from`; and the refusals (not at that table, no such hand, a hand still
being played), each answered without closing the connection."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from historykit import DEALER, ask, play_hand, scripted
from netclient import NetClient, start_server
from tonk.server.store import history
from tonk.shared.game.settle_up import settle_up
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request, validate_server


async def refused(client: NetClient, message: dict[str, Any], code: str) -> str:
    got = await ask(client, message)
    assert got["type"] == p.ERROR and got["code"] == code and got["fatal"] is False, got
    return str(got["message"])


async def session(server: Any, hands: int, unit: str = "chips") -> tuple[NetClient, int]:
    """Ann and two bots play `hands` hands (Ann is played for: her turn timer runs out)."""
    ann = await NetClient.connect(server.port, "Ann")
    table = await ann.create_table(
        "easy",
        "sharp",
        name="Friday",
        seats=3,
        hands=hands,
        turn_timer=0.001,
        seed=77,
        unit=unit,
    )
    await ann.expect(p.SESSION_END, timeout=60)
    return ann, table


def stored(db: Path, table: int) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    with sqlite3.connect(db) as conn:
        hands = conn.execute(
            "SELECT number, record, names, settlement FROM hands WHERE table_id = ?"
            " ORDER BY number DESC",
            (table,),
        ).fetchall()
        balances = dict(
            conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (table,))
        )
        payments: dict[int, list[list[Any]]] = {}
        for hand, payer, payee, amount in conn.execute(
            "SELECT hand, payer, payee, amount FROM payments WHERE table_id = ? ORDER BY rowid",
            (table,),
        ):
            payments.setdefault(hand, []).append([payer, payee, amount])
    rows = [
        (n, json.loads(r), json.loads(names), json.loads(s), payments.get(n, []))
        for n, r, names, s in hands
    ]
    return rows, balances


async def test_the_list_is_every_hand_as_the_database_holds_it_with_the_settle_up(tmp_path):
    async with start_server(tmp_path) as server:
        ann, table = await session(server, hands=6, unit="pennies")
        page = await ask(ann, {"type": p.HISTORY, "table": table})
    assert page["type"] == p.HISTORY and validate_server(page) is None
    rows, balances = stored(tmp_path / "tonk.db", table)
    assert (page["total"], page["more"], page["unit"]) == (6, False, "pennies")
    assert [h["number"] for h in page["hands"]] == [6, 5, 4, 3, 2, 1]  # newest first
    for hand, (number, record, names, settlement, payments) in zip(
        page["hands"], rows, strict=True
    ):
        assert hand["number"] == number and hand["names"] == names
        assert hand["dealer"] == record["dealer"] and hand["multiplier"] == record["multiplier"]
        assert hand["settlement"] == settlement
        paid = [[names[a], names[b], amount] for a, b, amount in settlement["payments"]]
        assert paid == payments
    assert page["balances"] == balances and sum(balances.values()) == 0
    assert page["settle_up"] == [list(t) for t in settle_up(balances)]
    assert any(balances.values())  # six hands: somebody is ahead


async def test_the_list_is_paged_newest_first_and_says_when_there_is_more(tmp_path):
    async with start_server(tmp_path) as server:
        ann, table = await session(server, hands=7)
        pages = []
        before = None
        while True:
            asked: dict[str, Any] = {"type": p.HISTORY, "table": table, "limit": 3}
            if before is not None:
                asked["before"] = before
            page = await ask(ann, asked)
            pages.append([h["number"] for h in page["hands"]])
            assert page["total"] == 7
            if not page["more"]:
                break
            before = page["hands"][-1]["number"]
        assert pages == [[7, 6, 5], [4, 3, 2], [1]]
        whole = await ask(ann, {"type": p.HISTORY, "table": table, "limit": p.HISTORY_PAGE})
        assert len(whole["hands"]) == 7 and whole["more"] is False
        # Past the page's cap, the range's refusal, and the connection serves on.
        over = {"type": p.HISTORY, "table": table, "limit": p.HISTORY_PAGE + 1}
        assert "limit" in await refused(ann, over, p.BAD_VALUE)
        assert (await ask(ann, {"type": p.HISTORY, "table": table}))["total"] == 7


async def test_a_hands_steps_are_paged_by_from(tmp_path):
    hand = scripted("classic", "stock_out")
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        table, (ann, _, _), _ = await play_hand(server, "classic", hand)
        whole = await ask(ann, {"type": p.HISTORY_HAND, "table": table, "hand": 1})
        total = whole["total"]
        assert total == len(hand.actions) + 1 and len(whole["steps"]) == total
        assert whole["from"] == 0 and whole["names"] == ["Ann", "Ben", "Cy"]
        assert whole["seat"] == 0 and validate_server(whole) is None
        later = await ask(ann, {"type": p.HISTORY_HAND, "table": table, "hand": 1, "from": 3})
        assert later["from"] == 3 and later["steps"] == whole["steps"][3:]
        assert len(p.encode(whole)) < p.MAX_SERVER_FRAME // 4
        last = {"type": p.HISTORY_HAND, "table": table, "hand": 1, "from": total}
        assert "from" in await refused(ann, last, p.BAD_VALUE)


async def test_a_hand_longer_than_one_answer_comes_in_pages(tmp_path, monkeypatch):
    monkeypatch.setattr(p, "HISTORY_STEPS", 40)
    hand = scripted("classic", "stock_out")
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        table, (ann, _, _), _ = await play_hand(server, "classic", hand)
        steps: list[Any] = []
        while True:
            asked = {"type": p.HISTORY_HAND, "table": table, "hand": 1, "from": len(steps)}
            got = await ask(ann, asked)
            assert got["from"] == len(steps) and len(got["steps"]) <= 40
            steps += got["steps"]
            if len(steps) == got["total"]:
                break
        assert len(steps) == len(hand.actions) + 1
        assert [s["view"]["event_count"] for s in steps] == sorted(
            s["view"]["event_count"] for s in steps
        )


async def test_the_refusals_are_clear_and_close_nothing(tmp_path):
    hand = scripted("classic", "drop_won")
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(name="t", seats=3, deck=hand.deck, dealer=DEALER)
        lobby = await NetClient.connect(server.port, "Lou")
        said = await refused(lobby, {"type": p.HISTORY, "table": table}, p.NOT_AT_TABLE)
        assert said == f"you are not at table {table}"
        other = {"type": p.HISTORY_HAND, "table": table + 1, "hand": 1}
        await refused(ann, other, p.NOT_AT_TABLE)
        empty = await ask(ann, {"type": p.HISTORY, "table": table})
        assert (empty["hands"], empty["total"], empty["settle_up"]) == ([], 0, [])
        nothing = {"type": p.HISTORY_HAND, "table": table, "hand": 1}
        assert "no hand 1" in await refused(ann, nothing, p.NO_SUCH_HAND)
        ben = await NetClient.connect(server.port, "Ben")
        await ben.request({"type": p.SIT, "table": table}, p.SEATED)
        cy = await NetClient.connect(server.port, "Cy")
        await cy.request({"type": p.SIT, "table": table}, p.SEATED)
        players = (ann, ben, cy)
        for client in players:
            await client.expect(p.UPDATE)
        playing = await refused(ann, nothing, p.NO_SUCH_HAND)
        assert "still being played" in playing
        for action in hand.actions:
            got = await ask(players[action.seat], action_request(action).to_wire())
            assert got["type"] == p.UPDATE
        await ann.expect(p.HAND_END)
        assert (await ask(ann, nothing))["type"] == p.HISTORY_HAND
        await refused(ann, {**nothing, "hand": 2}, p.NO_SUCH_HAND)
        await refused(ann, {**nothing, "hand": 0}, p.NO_SUCH_HAND)  # out of range
        await refused(ann, {"type": p.HISTORY, "table": table, "before": 0}, p.NO_SUCH_HAND)
        # The refusals closed nothing: the table goes on answering.
        assert (await ask(lobby, {"type": p.PING}))["type"] == p.PONG
        assert (await ask(ann, {"type": p.HISTORY, "table": table}))["total"] == 1


async def test_a_history_read_holds_up_no_table(tmp_path, monkeypatch):
    """Ben's history is read in a thread held until Ann's move has been played and answered:
    were it read on the server's loop, her move would wait behind it (and the test time out)."""
    release = threading.Event()
    real = history._reading

    def held(*args: Any) -> Any:
        assert release.wait(20)
        return real(*args)

    monkeypatch.setattr(history, "_reading", held)
    hand = scripted("classic", "tonk_out")
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(name="t", seats=3, deck=hand.deck, dealer=DEALER)
        ben = await NetClient.connect(server.port, "Ben")
        await ben.request({"type": p.SIT, "table": table}, p.SEATED)
        cy = await NetClient.connect(server.port, "Cy")
        await cy.request({"type": p.SIT, "table": table}, p.SEATED)
        for client in (ann, ben, cy):
            await client.expect(p.UPDATE)
        await ben.send({"type": p.HISTORY, "table": table, "id": 5})
        first = hand.actions[0]
        assert first.seat == 0
        moved = await ask(ann, action_request(first).to_wire())
        assert moved["type"] == p.UPDATE  # answered while Ben's read is still held
        release.set()
        page = await ben.expect(p.HISTORY)
        assert page["reply_to"] == 5 and page["total"] == 0
