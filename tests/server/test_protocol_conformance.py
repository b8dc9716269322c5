"""PROTOCOL.md, walked through real sockets: every message type in both directions with the
answer the document gives it, every error code a client can cause (the document lists the ones
it cannot), every range and every limit at its edge. Every frame the server sends is checked
against the schema.

The lobby's listing (`list_tables` and its `tables` answer) is sent and read here, but its
`reply_to` and its contents are left to the lobby's own tests (tests/client/test_client_lobby.py and
the lobby's server tests): that part of the protocol is changing apart from this file.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
from checkout import ROOT
from netclient import NetClient, start_server
from tonk.server.app import TonkServer
from tonk.shared.game.cards import format_cards, parse_card, parse_cards, stacked_deck
from tonk.shared.game.rules import OPTIONS, PRESETS
from tonk.shared.wire import messages as declared
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    CLIENT_MESSAGES,
    fields_table,
    ranges_table,
    validate_server,
)

DOC = (ROOT / "PROTOCOL.md").read_text()
V = p.PROTOCOL_VERSION


def section(title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    return DOC.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def first_column(text: str) -> list[str]:
    """The names in the first column of every Markdown table row of `text`."""
    return re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE)


CLIENT_TYPES = first_column(section("Client to server").split("\n###", 1)[0])
SERVER_TYPES = first_column(section("Server to client").split("\n###", 1)[0])
ERROR_CODES = first_column(section("Error codes"))
#: The codes of the document's table of fatal errors.
FATAL_TABLE = first_column(section("Error codes").split("Not fatal", 1)[0])
_CANNOT = section("Error codes").split("What a client cannot cause:", 1)[1]
#: The error codes PROTOCOL.md says a client cannot cause, and the illegal_action details.
CANNOT_CAUSE = set(re.findall(r"`([a-z_]+)`", _CANNOT.split("and two", 1)[0]))
CANNOT_DETAILS = set(re.findall(r"`([a-z_]+)` \(", _CANNOT.split("and two", 1)[1]))
_ILLEGAL = section("Error codes").split("| `illegal_action` |", 1)[1].split("\n", 1)[0]
#: The `detail`s of `illegal_action` PROTOCOL.md lists.
DETAILS = set(re.findall(r"`([a-z_]+)`", _ILLEGAL.split("and two", 1)[0].split("(", 1)[1]))
#: The ones the illegal_action scenario below causes.
DETAILS_CAUSED = {
    "not_your_turn",
    "wrong_phase",
    "not_in_hand",
    "not_a_spread",
    "no_such_spread",
    "cannot_hit",
    "bad_action",
    "must_use",
    "hit_locked",
    "no_rediscard",
}

_ids = itertools.count(1)


def test_the_document_was_read_and_agrees_with_the_code():
    # Every message with its fields is written in the document, as the classes declare them
    # (the tables are fields_table()'s: every message type, each in its own section).
    assert fields_table(declared.CLIENT_TYPES) in section("Client to server")
    assert fields_table(declared.SERVER_TYPES) in section("Server to client")
    assert set(CLIENT_TYPES) == set(declared.CLIENT_TYPES)
    assert set(SERVER_TYPES) == set(declared.SERVER_TYPES)
    assert {p.INTERNAL_ERROR, p.STORAGE_ERROR} == CANNOT_CAUSE
    assert {"hand_over", "empty_pile"} == CANNOT_DETAILS
    codes = {v for k, v in vars(p).items() if k.isupper() and isinstance(v, str) and "_" in v}
    assert set(ERROR_CODES) <= codes and set(ERROR_CODES) >= p.FATAL_CODES
    # A code always fatal is in the table of fatal errors, and not in the other.
    not_fatal = first_column(section("Error codes").split("Not fatal", 1)[1])
    assert set(FATAL_TABLE) >= p.FATAL_CODES and not set(not_fatal) & p.FATAL_CODES
    assert f"# The tonk protocol, version {V}\n" in DOC
    # Every range is written in the document, as the schema has it.
    assert ranges_table() in DOC


# -- helpers ---------------------------------------------------------------------------------


async def hello(server: TonkServer, name: str) -> NetClient:
    client = await NetClient.connect(server.port)
    welcome = await ask(client, {"type": p.HELLO, "version": V, "name": name})
    assert welcome["type"] == p.WELCOME
    client.name = welcome["name"]
    return client


async def creator(server: TonkServer, **table: Any) -> tuple[NetClient, int]:
    """Alice, seated at table `t` she has just created (with `table`'s fields); its id."""
    alice = await hello(server, "Alice")
    seated = await ask(alice, {"type": p.CREATE_TABLE, "name": "t", **table})
    assert seated["type"] == p.SEATED, seated
    return alice, seated["table"]


async def answer_to(client: NetClient, rid: int) -> dict[str, Any]:
    """The message carrying `reply_to` `rid` (skipping others)."""
    while True:
        message = await client.recv()
        if message.get("reply_to") == rid:
            return message


async def ask(client: NetClient, message: dict[str, Any]) -> dict[str, Any]:
    """Send `message` with a fresh id; return the message that answers it."""
    rid = next(_ids)
    await client.send({**message, "id": rid})
    return await answer_to(client, rid)


async def refused(
    client: NetClient, message: dict[str, Any], code: str, detail: str | None = None
) -> dict[str, Any]:
    """Send `message`; it is refused with the non-fatal `code` (and `detail`), answering it."""
    error = await ask(client, message)
    assert error["type"] == p.ERROR and error["code"] == code, error
    assert error["fatal"] is False
    if detail is not None:
        assert error.get("detail") == detail, error
    return error


async def cut_off(client: NetClient, code: str, data: bytes | None = None) -> dict[str, Any]:
    """(Send `data`, then) read to the close: the last message is the fatal error `code`,
    with no `reply_to`."""
    if data is not None:
        with contextlib.suppress(ConnectionError):
            await client.send_raw(data)
    await client.expect_closed()
    assert client.received, "closed without a word"
    error = client.received[-1]
    assert error["type"] == p.ERROR and error["code"] == code, client.received[-3:]
    assert error["fatal"] is True and "reply_to" not in error
    return error


def frame(message: Any) -> bytes:
    payload = msgpack.packb(message, use_bin_type=True)
    return len(payload).to_bytes(4, "big") + payload


def all_valid(*clients: NetClient) -> None:
    """Every frame each client got is a message of the schema, and answers each request once."""
    for client in clients:
        for message in client.received:
            validate_server(message)
        replies = [m["reply_to"] for m in client.received if "reply_to" in m]
        assert len(replies) == len(set(replies)), replies


# Two seats, Alice (seat 0) deals: Bob (seat 1) plays first. Bob: 2s 3s 4s 9h Kd; Alice: 5c 6c
# 7d 8h 10d; the up card Qc; the stock's top card 5s.
BOB_HAND = "2s 3s 4s 9h Kd"
ALICE_HAND = "5c 6c 7d 8h 10d"
DECK = format_cards(
    stacked_deck(
        [parse_cards(ALICE_HAND), parse_cards(BOB_HAND)], 0, parse_card("Qc"), [parse_card("5s")]
    )
)


async def pair(server: TonkServer, **table: Any) -> tuple[NetClient, NetClient, int]:
    alice = await hello(server, "Alice")
    options = {"type": p.CREATE_TABLE, "name": "Pair", "seats": 2, "dealer": 0, "deck": DECK}
    seated = await ask(alice, {**options, **table})
    assert seated["type"] == p.SEATED
    bob = await hello(server, "Bob")
    assert (await ask(bob, {"type": p.SIT, "table": seated["table"]}))["type"] == p.SEATED
    for client in (alice, bob):
        await client.expect(p.UPDATE)
    return alice, bob, seated["table"]


def test_the_documents_rules_example_holds_every_option_with_its_presets_value():
    """PROTOCOL.md says `rules` is the preset and every option: its example is a real one."""
    text = DOC.split("with the value in\nforce, so a client need not know the presets: `", 1)[1]
    example = json.loads(text.split("`", 1)[0])
    assert set(example) == {"preset", *OPTIONS}
    assert example == {"preset": example["preset"], **PRESETS[example["preset"]].to_wire()}


# -- every message type, with its answer ------------------------------------------------------


async def test_every_message_type_both_ways_with_the_answer_the_document_gives(tmp_path):
    sent: set[str] = set()
    clients: list[NetClient] = []

    async def to(client: NetClient, message: dict[str, Any], answer: str) -> dict[str, Any]:
        sent.add(message["type"])
        got = await ask(client, message)
        assert got["type"] == answer, got
        return got

    async with start_server(tmp_path, limit_changes={"heartbeat": 0.3}) as server:
        alice = await NetClient.connect(server.port)
        bob = await NetClient.connect(server.port)
        carol = await NetClient.connect(server.port)
        clients += [alice, bob, carol]
        for client, name in ((alice, "Alice"), (bob, "Bob"), (carol, "Carol")):
            welcome = await to(client, {"type": p.HELLO, "version": V, "name": name}, p.WELCOME)
            assert welcome["version"] == V and welcome["name"] == name
            client.name = name
        # (the lobby's listing: its answer's reply_to is not checked here, see the docstring)
        sent.add(p.LIST_TABLES)
        await alice.send({"type": p.LIST_TABLES})
        await alice.expect(p.TABLES)
        create = {"type": p.CREATE_TABLE, "name": "Walk", "seats": 2, "dealer": 0}
        seated = await to(alice, {**create, "deck": DECK, "hands": 1}, p.SEATED)
        table_id = seated["table"]
        summary = (await alice.expect(p.TABLE))["table"]
        assert "reply_to" not in alice.received[-1]
        # `rules` carries every option's value, not only the preset.
        assert summary["rules"] == {"preset": "classic", **PRESETS["classic"].to_wire()}
        assert set(summary["rules"]) == {"preset", *PRESETS["classic"].options()}
        watching = await to(carol, {"type": p.WATCH, "table": table_id}, p.WATCHING)
        assert watching["table"] == table_id
        await carol.expect(p.TABLE)
        await carol.expect(p.LEDGER)
        said = await to(carol, {"type": p.CHAT, "text": "good luck"}, p.CHAT)
        assert (said["seat"], said["name"], said["text"]) == (None, "Carol", "good luck")
        heard = await alice.expect(p.CHAT)
        assert "reply_to" not in heard and heard["text"] == "good luck"
        await to(bob, {"type": p.SIT, "table": table_id}, p.SEATED)
        first = await bob.expect(p.UPDATE)
        assert first["view"]["hand"] == BOB_HAND and first["view"]["turn"] == 1
        assert first["view"]["rules"] == summary["rules"]
        await alice.expect(p.UPDATE)

        drew = await to(bob, {"type": p.DRAW_STOCK}, p.UPDATE)
        assert drew["events"] == [{"kind": "draw_stock", "seat": 1, "cards": "5s", "private": True}]
        seen = await alice.expect(p.UPDATE, lambda m: m["from"] == drew["from"])
        assert "reply_to" not in seen  # only the actor's update answers its action
        spread = await to(bob, {"type": p.SPREAD, "cards": "4s 2s 3s"}, p.UPDATE)
        laid = spread["view"]["spreads"][0]
        assert (laid["cards"], laid["kind"], laid["hits"]) == ("2s 3s 4s", "run", [])
        hit = await to(bob, {"type": p.HIT, "card": "5s", "spread": laid["id"]}, p.UPDATE)
        # A spread's cards include the hit cards, in display order; hits say who hit what.
        assert hit["view"]["spreads"][0]["cards"] == "2s 3s 4s 5s"
        assert hit["view"]["spreads"][0]["hits"] == [["5s", 1]]
        back = await to(bob, {"type": p.BACK}, p.TABLE)  # not away: the table, to Bob alone
        assert back["table"]["id"] == table_id
        await to(bob, {"type": p.DISCARD, "card": "Kd"}, p.UPDATE)

        # Bob takes his seat back from another connection; the first one is told so.
        bob2 = await hello(server, "Bob")
        clients.append(bob2)
        assert bob.token is not None
        resumed = await to(
            bob2, {"type": p.RESUME, "table": table_id, "token": bob.token}, p.SEATED
        )
        assert resumed["seat"] == 1 and resumed["token"] == bob.token
        told = await bob.expect(p.ERROR)
        assert told["code"] == p.SEAT_RESUMED_ELSEWHERE and told["fatal"] is False
        assert "token" not in told["message"]  # (a player reads it: "token" is the wire's word)
        await bob2.expect(p.LEDGER)
        whole = await bob2.expect(p.UPDATE)
        assert whole["from"] == 0 and whole["view"]["hand"] == "9h"

        took = await to(alice, {"type": p.TAKE_DISCARD}, p.UPDATE)
        assert took["view"]["hand"] == f"{ALICE_HAND} Kd"  # in the order held
        await to(alice, {"type": p.DISCARD, "card": "10d"}, p.UPDATE)
        dropped = await to(bob2, {"type": p.DROP}, p.UPDATE)
        settlement = dropped["view"]["settlement"]
        assert settlement["ending"] == "drop_won" and settlement["winners"] == [1]
        # At a drop every hand is shown, in the order held.
        assert settlement["revealed"] == ["5c 6c 7d 8h Kd", "9h"]
        hand_end = await bob2.expect(p.HAND_END)
        assert hand_end["names"] == ["Alice", "Bob"] and hand_end["payments"] == [
            ["Alice", "Bob", 1]
        ]
        ended = await bob2.expect(p.SESSION_END)
        assert ended["reason"] == "hands" and ended["standings"][0] == ["Bob", 1]
        # Looking back: the session's hands, and the one hand as Bob saw it.
        history = await to(bob2, {"type": p.HISTORY, "table": table_id}, p.HISTORY)
        assert [h["number"] for h in history["hands"]] == [1] and history["more"] is False
        assert history["hands"][0]["settlement"] == settlement
        assert history["settle_up"] == [["Alice", "Bob", 1]] and history["unit"] == "chips"
        replay = {"type": p.HISTORY_HAND, "table": table_id, "hand": 1}
        steps = await to(bob2, replay, p.HISTORY_HAND)
        assert steps["seat"] == 1 and steps["names"] == ["Alice", "Bob"]
        assert steps["total"] == len(steps["steps"]) == 8  # the deal and seven actions
        assert steps["steps"][0]["view"]["hand"] == BOB_HAND
        assert steps["steps"][-1]["view"]["settlement"] == settlement
        assert "rules" not in steps["steps"][0]["view"] and steps["rules"] == summary["rules"]
        # The expert's view of Bob's first decision, his draw (step 0).
        coach = {"type": p.COACH, "table": table_id, "hand": 1, "step": 0}
        coached = await to(bob2, coach, p.COACH)
        assert (coached["hand"], coached["step"]) == (1, 0)
        assert coached["advice"]["played"] == {"type": "draw_stock", "seat": 1}
        assert ended["settle_up"] == [["Alice", "Bob", 1]] and ended["combined"] is None
        assert ended["rematch"] > 0
        # Bob says no to a rematch: with two seats and no bot, it is called off at once.
        offer = await to(bob2, {"type": p.REMATCH, "answer": False}, p.REMATCH_STATUS)
        assert offer["seats"] == [["Alice", "awaited"], ["Bob", "no"]]
        assert offer["outcome"] == "off" and offer["next"] is None
        told_alice = await alice.expect(p.REMATCH_STATUS)
        assert "reply_to" not in told_alice and told_alice["outcome"] == "off"

        left = await to(carol, {"type": p.LEAVE}, p.LEFT)
        assert left["table"] == table_id
        # The standings across nights: from the lobby (Carol) and from a table (Bob's seat).
        night = await to(carol, {"type": p.STANDINGS, "period": "all"}, p.STANDINGS)
        assert (night["period"], night["since"], night["unit"]) == ("all", None, "chips")
        bob_row, alice_row = night["people"]
        assert (bob_row["name"], bob_row["hands"], bob_row["won"], bob_row["drops_won"]) == (
            "Bob",
            1,
            1,
            1,
        )
        assert bob_row["nets"] == [
            {
                "unit": "chips",
                "net": 1,
                "best": {"night": night["tonight"], "net": 1},
                "worst": {"night": night["tonight"], "net": 1},
            }
        ]
        assert (alice_row["name"], alice_row["won"], alice_row["nets"][0]["net"]) == (
            "Alice",
            0,
            -1,
        )
        assert night["bots"] == [] and night["more"] is False
        tonight = await to(bob2, {"type": p.STANDINGS}, p.STANDINGS)
        assert tonight["period"] == "tonight" and tonight["since"] == tonight["tonight"]
        assert tonight["people"] == night["people"]
        pong = await to(carol, {"type": p.PING, "n": 5}, p.PONG)
        assert pong["n"] == 5
        sent.add(p.PONG)
        await carol.send({"type": p.PONG, "n": 1})  # no answer: the next one is the ping's
        assert (await to(carol, {"type": p.PING}, p.PONG)).get("n") is None
        assert not [m for m in carol.received if m["type"] == p.ERROR]

        # A table made without sitting; bots added and removed; started by its creator.
        dave = await hello(server, "Dave")
        clients.append(dave)
        bots_table = {"type": p.CREATE_TABLE, "name": "Bots", "seats": 3, "sit": False}
        made = await to(dave, bots_table, p.TABLE)  # (no dealer named: the deal is cut for)
        bots = made["table"]["id"]
        await to(dave, {"type": p.SIT, "table": bots}, p.SEATED)
        added = await to(dave, {"type": p.ADD_BOT, "strategy": "sharp"}, p.TABLE)
        assert [s["kind"] for s in added["table"]["players"]] == ["human", "bot", "empty"]
        removed = await to(dave, {"type": p.REMOVE_BOT, "seat": 1}, p.TABLE)
        assert [s["kind"] for s in removed["table"]["players"]] == ["human", "empty", "empty"]
        await to(dave, {"type": p.ADD_BOT}, p.TABLE)
        started = await to(dave, {"type": p.START}, p.TABLE)
        assert started["table"]["state"] == "playing" and started["table"]["seats"] == 2
        # The deal anyone can check: the commitment comes before the cut and the deal; this
        # server does not wait for values (deal_wait 0), so Dave's comes too late.
        commit = await dave.expect(p.DEAL_COMMIT)
        assert (commit["hand"], commit["dev"], len(commit["commitment"])) == (1, False, 64)
        cut = await dave.expect(p.CUT)
        assert cut["dealer"] in (0, 1) and all(len(r) == 2 for r in cut["rounds"])
        await dave.expect(p.UPDATE)
        sent.add(p.DEAL_VALUE)
        value = {"type": p.DEAL_VALUE, "table": bots, "hand": 1, "value": "ab" * 32}
        late = await ask(dave, value)
        assert (late["type"], late["code"], late["detail"]) == (p.ERROR, p.NO_HAND, "hand")
        # Waiting for a friend: Erin takes the bot's seat as the hand ends (asked during it,
        # the answer is the table, and `seated` follows); Dave's lost seat is played for now,
        # and Dave back is told what happened meanwhile.
        erin = await hello(server, "Erin")
        clients.append(erin)
        asked = await to(erin, {"type": p.TAKE_BOT_SEAT, "table": bots, "seat": 1}, p.TABLE)
        assert asked["table"]["id"] == bots
        assert any(m["type"] == p.WATCHING for m in erin.received)  # she watches meanwhile
        dave_token = dave.token
        await dave.play_until(lambda m: m["type"] == p.HAND_END, timeout=60)
        reveal = next(m for m in dave.received if m["type"] == p.DEAL_REVEAL)
        assert reveal["hand"] == 1 and reveal["values"] == []
        took = await erin.expect(p.SEATED)
        assert took["seat"] == 1 and "reply_to" not in took
        await erin.expect(p.UPDATE, lambda m: m["hand"] == 2)
        await dave.close()
        await erin.expect(p.TABLE, lambda m: m["table"]["players"][0]["status"] == "disconnected")
        now = await to(erin, {"type": p.PLAY_FOR_NOW, "seat": 0}, p.TABLE)
        assert now["table"]["players"][0]["status"] == "away"
        dave2 = await hello(server, "Dave")
        clients.append(dave2)
        await erin.play_until(
            lambda m: (
                m["type"] == p.UPDATE
                and any(e["seat"] == 0 and e["kind"] == "discard" for e in m["events"])
            ),
            timeout=60,
        )
        await dave2.request({"type": p.RESUME, "table": bots, "token": dave_token}, p.SEATED)
        news = await dave2.expect(p.AWAY_SUMMARY)
        assert news["table"] == bots and news["turns"] >= 1
        await dave2.close()
        await erin.expect(p.TABLE, lambda m: m["table"]["players"][0]["status"] == "disconnected")
        # With Dave (the creator) gone, Erin's vote is the majority; then she may not give the
        # seat to a bot (only the creator may): refused, as the document says.
        sent.add(p.SEAT_TO_BOT)
        await erin.send({"type": p.SEAT_TO_BOT, "seat": 0})
        await erin.expect_error(p.NOT_CREATOR)
        # Silence brings a ping from the server.
        ping = await carol.expect(p.PING, timeout=5)
        assert ping["n"] >= 1

        sent.add(p.BYE)
        await alice.send({"type": p.BYE})
        await alice.expect_closed()
        assert not [m for m in alice.received if m["type"] == p.ERROR]
        await server.close()
        goodbye = await erin.expect(p.GOODBYE)
        assert goodbye["reason"] == p.SERVER_SHUTTING_DOWN and "shutting down" in goodbye["message"]

    all_valid(*clients)
    assert sent == set(CLIENT_TYPES)
    received = {m["type"] for client in clients for m in client.received}
    assert received == set(SERVER_TYPES)


# -- every error code a client can cause ------------------------------------------------------

Scenario = Callable[[Path], Awaitable[None]]
CAUSES: dict[str, Scenario] = {}


def causes(code: str) -> Callable[[Scenario], Scenario]:
    def register(scenario: Scenario) -> Scenario:
        CAUSES[code] = scenario
        return scenario

    return register


@causes(p.BAD_FRAME)
async def _bad_frame(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        await cut_off(await hello(server, "Zed"), p.BAD_FRAME, b"\0\0\0\0")


@causes(p.FRAME_TOO_LARGE)
async def _frame_too_large(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        over = (p.MAX_CLIENT_FRAME + 1).to_bytes(4, "big")
        await cut_off(await hello(server, "Zed"), p.FRAME_TOO_LARGE, over)


@causes(p.BAD_MSGPACK)
async def _bad_msgpack(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        await cut_off(await hello(server, "Zed"), p.BAD_MSGPACK, b"\0\0\0\1\xc1")
        # msgpack's own timestamp extension is an extension like any other.
        stamped = frame({"type": "chat", "id": 3, "text": msgpack.Timestamp(1_700_000_000)})
        await cut_off(await hello(server, "Zed"), p.BAD_MSGPACK, stamped)


@causes(p.BAD_MESSAGE)
async def _bad_message(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        # A fatal error carries no reply_to, even when the message had an id.
        wrong = frame({"type": "sit", "table": "1", "id": 3})
        await cut_off(await hello(server, "Zed"), p.BAD_MESSAGE, wrong)
        long_client = {"type": "hello", "version": V, "name": "Zed", "client": "c" * 65}
        await cut_off(await NetClient.connect(server.port), p.BAD_MESSAGE, frame(long_client))


@causes(p.UNKNOWN_TYPE)
async def _unknown_type(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        await cut_off(await hello(server, "Zed"), p.UNKNOWN_TYPE, frame({"type": "x", "id": 1}))


@causes(p.VERSION_MISMATCH)
async def _version_mismatch(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        for version in (1, V + 1, -1):
            client = await NetClient.connect(server.port)
            message = {"type": "hello", "version": version, "name": "Old", "id": 2}
            error = await cut_off(client, p.VERSION_MISMATCH, frame(message))
            assert error["version"] == V and f"version {V}" in error["message"]


@causes(p.HELLO_FIRST)
async def _hello_first(tmp_path: Path) -> None:
    # A heartbeat shorter than the handshake timeout: no ping comes before hello, and a pong
    # before hello is refused like anything else.
    limits = {"heartbeat": 0.05, "handshake_timeout": 5.0}
    async with start_server(tmp_path, limit_changes=limits) as server:
        client = await NetClient.connect(server.port)
        with pytest.raises(TimeoutError):
            await client.recv(timeout=0.5)
        await cut_off(client, p.HELLO_FIRST, frame({"type": "pong", "n": 1}))
        assert len(client.received) == 1
        again = await hello(server, "Twice")
        await cut_off(again, p.HELLO_FIRST, frame({"type": "hello", "version": V, "name": "x"}))


@causes(p.HANDSHAKE_TIMEOUT)
async def _handshake_timeout(tmp_path: Path) -> None:
    limits = {"heartbeat": 0.05, "handshake_timeout": 0.4}
    async with start_server(tmp_path, limit_changes=limits) as server:
        client = await NetClient.connect(server.port)
        await cut_off(client, p.HANDSHAKE_TIMEOUT)
        assert len(client.received) == 1  # the error alone: no ping before hello


@causes(p.IDLE_TIMEOUT)
async def _idle_timeout(tmp_path: Path) -> None:
    limits = {"heartbeat": 0.1, "idle_timeout": 0.6}
    async with start_server(tmp_path, limit_changes=limits) as server:
        quiet = await hello(server, "Quiet")
        ping = await quiet.expect(p.PING)
        await quiet.send({"type": p.PONG, "n": ping["n"]})  # answering keeps it open
        await cut_off(quiet, p.IDLE_TIMEOUT)
        assert [m["type"] for m in quiet.received].count(p.PING) >= 2


@causes(p.RATE_LIMITED)
async def _rate_limited(tmp_path: Path) -> None:
    # A burst of 4 and (next to) no refill: hello and three more messages go; the fifth is one
    # too many. hello counts.
    limits = {"messages_per_second": 0.001, "burst": 4.0}
    async with start_server(tmp_path, limit_changes=limits) as server:
        client = await hello(server, "Fast")
        burst = b"".join(frame({"type": "ping", "n": n}) for n in range(4))
        await cut_off(client, p.RATE_LIMITED, burst)
        assert [m.get("n") for m in client.received if m["type"] == p.PONG] == [0, 1, 2]


@causes(p.TOO_MANY_CONNECTIONS)
async def _too_many_connections(tmp_path: Path) -> None:
    for limit in ("max_per_address", "max_connections"):
        async with start_server(tmp_path, limit_changes={limit: 2}) as server:
            kept = [await hello(server, f"K{i}") for i in range(2)]
            await cut_off(await NetClient.connect(server.port), p.TOO_MANY_CONNECTIONS)
            await kept[1].close()
            await asyncio.sleep(0.2)
            await hello(server, "Next")  # a freed place is taken again


@causes(p.SERVER_SHUTTING_DOWN)
async def _server_shutting_down(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        client = await hello(server, "Last")
        await server.close()
        goodbye = await client.expect(p.GOODBYE)
        assert goodbye["reason"] == p.SERVER_SHUTTING_DOWN
        all_valid(client)


@causes(p.BAD_NAME)
async def _bad_name(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        for name in ("n" * 25, " ", "a\tb", "n" * 65):
            client = await NetClient.connect(server.port)
            await cut_off(client, p.BAD_NAME, frame({"type": "hello", "version": V, "name": name}))
        edge = await hello(server, "n" * 24)  # max_name
        assert edge.name == "n" * 24


@causes(p.BAD_CHAT)
async def _bad_chat(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _table = await creator(server)
        for text in ("x" * 201, "", "a\nb", "x" * 1001):
            await refused(alice, {"type": p.CHAT, "text": text}, p.BAD_CHAT)
        assert (await ask(alice, {"type": p.CHAT, "text": "x" * 200}))["type"] == p.CHAT


@causes(p.BAD_RULES)
async def _bad_rules(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await hello(server, "Alice")
        for rules in ({"preset": "nope"}, {"hit_lock": 99}, {"nope": 1}):
            await refused(alice, {"type": p.CREATE_TABLE, "name": "t", "rules": rules}, p.BAD_RULES)


@causes(p.BAD_TABLE)
async def _bad_table(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await hello(server, "Alice")
        create = {"type": p.CREATE_TABLE, "name": "t"}
        for fields, detail in [
            ({"seats": 1}, "seats"),
            ({"seats": 5}, "seats"),  # classic seats 4
            ({"stake": 0}, "stake"),
            ({"stake": 1_000_001}, "stake"),
            ({"unit": "u" * 17}, "unit"),
            ({"turn_timer": -1}, "turn_timer"),
            ({"hands": 0}, "hands"),
            ({"dealer": 7}, "dealer"),
            ({"dealer": 3, "seats": 2}, "dealer"),
            ({"name": "n" * 33}, "name"),
            ({"name": " "}, "name"),
            ({"deck": "As"}, "deck"),
        ]:
            await refused(alice, {**create, **fields}, p.BAD_TABLE, detail)
        assert (await ask(alice, {**create, "name": "n" * 32}))["type"] == p.SEATED


@causes(p.BAD_VALUE)
async def _bad_value(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, table = await creator(server, seats=3)
        # A seat of its own stake only under stake_mode seat; classic plays the table's.
        bob = await hello(server, "Bob")
        sit = {"type": p.SIT, "table": table, "stake": 7}
        error = await refused(bob, sit, p.BAD_VALUE, "stake")
        assert "stake_mode" in error["message"]
        await refused(alice, {"type": p.ADD_BOT, "stake": 7}, p.BAD_VALUE, "stake")
        await refused(bob, {"type": p.PING, "n": -1}, p.BAD_VALUE, "n")
        await refused(bob, {"type": p.STANDINGS, "period": "year"}, p.BAD_VALUE, "period")
        await refused(bob, {"type": p.STANDINGS, "period": "x" * 17}, p.BAD_VALUE, "period")
        # An id out of range: refused, and with no reply_to (it is no id).
        await bob.send({"type": p.PING, "id": -1})
        error = await bob.expect(p.ERROR)
        assert (error["code"], error["detail"], error["fatal"]) == (p.BAD_VALUE, "id", False)
        assert "reply_to" not in error
        assert (await ask(bob, {"type": p.PING, "n": 2**53}))["n"] == 2**53


@causes(p.DEV_ONLY)
async def _dev_only(tmp_path: Path) -> None:
    async with start_server(tmp_path, dev=False) as server:
        alice = await hello(server, "Alice")
        for dev in ({"seed": 1}, {"deck": DECK}, {"dealer": 0}):
            await refused(alice, {"type": p.CREATE_TABLE, "name": "t", **dev}, p.DEV_ONLY)


@causes(p.TOO_MANY_TABLES)
async def _too_many_tables(tmp_path: Path) -> None:
    for limit in ("max_tables", "max_tables_per_address"):
        async with start_server(tmp_path, limit_changes={limit: 1}) as server:
            alice, bob = await hello(server, "Alice"), await hello(server, "Bob")
            assert (await ask(alice, {"type": p.CREATE_TABLE, "name": "a"}))["type"] == p.SEATED
            await refused(bob, {"type": p.CREATE_TABLE, "name": "b"}, p.TOO_MANY_TABLES)


@causes(p.NO_SUCH_TABLE)
async def _no_such_table(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await hello(server, "Alice")
        for kind in (p.SIT, p.WATCH):
            await refused(alice, {"type": kind, "table": 999}, p.NO_SUCH_TABLE)
            await refused(alice, {"type": kind, "table": 0}, p.NO_SUCH_TABLE, "table")
        await refused(alice, {"type": p.RESUME, "table": 999, "token": "x"}, p.NO_SUCH_TABLE)


@causes(p.TABLE_FULL)
async def _table_full(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _table = await creator(server, seats=2)
        # The bot that fills the table, and one more sent right behind it, before the start.
        both = frame({"type": p.ADD_BOT, "id": 1}) + frame({"type": p.ADD_BOT, "id": 2})
        await alice.send_raw(both)
        assert (await answer_to(alice, 1))["type"] == p.TABLE
        error = await answer_to(alice, 2)
        assert error["code"] == p.TABLE_FULL and error["fatal"] is False


@causes(p.SEAT_TAKEN)
async def _seat_taken(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, table = await creator(server, seats=3)
        bob = await hello(server, "Bob")
        await refused(bob, {"type": p.SIT, "table": table, "seat": 0}, p.SEAT_TAKEN)
        await refused(alice, {"type": p.ADD_BOT, "seat": 0}, p.SEAT_TAKEN)


@causes(p.NAME_TAKEN)
async def _name_taken(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        _alice, table = await creator(server, seats=3)
        other = await hello(server, "Alice")
        await refused(other, {"type": p.SIT, "table": table}, p.NAME_TAKEN)


@causes(p.NO_SUCH_SEAT)
async def _no_such_seat(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, table = await creator(server, seats=2)
        bob = await hello(server, "Bob")
        sit = {"type": p.SIT, "table": table}
        await refused(bob, {**sit, "seat": 3}, p.NO_SUCH_SEAT)  # past this table's seats
        await refused(bob, {**sit, "seat": 5}, p.NO_SUCH_SEAT, "seat")  # past any table's
        await refused(alice, {"type": p.REMOVE_BOT, "seat": 9}, p.NO_SUCH_SEAT, "seat")
        await refused(alice, {"type": p.REMOVE_BOT, "seat": 2}, p.NO_SUCH_SEAT)


@causes(p.ALREADY_AT_TABLE)
async def _already_at_table(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, table = await creator(server)
        for message in (
            {"type": p.CREATE_TABLE, "name": "u"},
            {"type": p.SIT, "table": table},
            {"type": p.WATCH, "table": table},
        ):
            await refused(alice, message, p.ALREADY_AT_TABLE)


@causes(p.NOT_AT_TABLE)
async def _not_at_table(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await hello(server, "Alice")
        for kind in (p.LEAVE, p.BACK, p.DRAW_STOCK, p.DROP, p.START, p.ADD_BOT):
            await refused(alice, {"type": kind}, p.NOT_AT_TABLE)
        await refused(alice, {"type": p.REMATCH, "answer": True}, p.NOT_AT_TABLE)
        await refused(alice, {"type": p.CHAT, "text": "hi"}, p.NOT_AT_TABLE)
        await refused(alice, {"type": p.DISCARD, "card": "As"}, p.NOT_AT_TABLE)
        await refused(alice, {"type": p.REMOVE_BOT, "seat": 1}, p.NOT_AT_TABLE)
        await refused(alice, {"type": p.HISTORY, "table": 1}, p.NOT_AT_TABLE, "table")
        await refused(alice, {"type": p.HISTORY_HAND, "table": 1, "hand": 1}, p.NOT_AT_TABLE)


@causes(p.NOT_SEATED)
async def _not_seated(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        _alice, _bob, table = await pair(server)
        carol = await hello(server, "Carol")
        await ask(carol, {"type": p.WATCH, "table": table})
        for kind in (p.DRAW_STOCK, p.BACK, p.DROP):
            await refused(carol, {"type": kind}, p.NOT_SEATED)
        await refused(carol, {"type": p.REMATCH, "answer": True}, p.NOT_SEATED)


@causes(p.NOT_CREATOR)
async def _not_creator(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        _alice, table = await creator(server, seats=3)
        bob, carol = await hello(server, "Bob"), await hello(server, "Carol")
        await ask(bob, {"type": p.SIT, "table": table})
        await ask(carol, {"type": p.WATCH, "table": table})
        for client in (bob, carol):  # a player who is not the creator, and a spectator
            for message in ({"type": p.ADD_BOT}, {"type": p.START}):
                await refused(client, message, p.NOT_CREATOR)
            await refused(client, {"type": p.REMOVE_BOT, "seat": 0}, p.NOT_CREATOR)


@causes(p.ALREADY_STARTED)
async def _already_started(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _bob, table = await pair(server)
        await refused(
            await hello(server, "Carol"), {"type": p.SIT, "table": table}, p.ALREADY_STARTED
        )
        for message in ({"type": p.ADD_BOT}, {"type": p.START}):
            await refused(alice, message, p.ALREADY_STARTED)


@causes(p.NOT_ENOUGH_PLAYERS)
async def _not_enough_players(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _table = await creator(server)
        await refused(alice, {"type": p.START}, p.NOT_ENOUGH_PLAYERS)


@causes(p.BAD_TOKEN)
async def _bad_token(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        _alice, table = await creator(server)
        bob = await hello(server, "Bob")
        resume = {"type": p.RESUME, "table": table}
        guessed = await refused(bob, {**resume, "token": "guess"}, p.BAD_TOKEN)
        assert "token" not in guessed["message"]
        await refused(bob, {**resume, "token": "t" * 65}, p.BAD_TOKEN, "token")


@causes(p.BAD_BOT)
async def _bad_bot(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _table = await creator(server, seats=3)
        await refused(alice, {"type": p.ADD_BOT, "strategy": "genius"}, p.BAD_BOT)
        await refused(alice, {"type": p.ADD_BOT, "strategy": "g" * 17}, p.BAD_BOT, "strategy")
        await refused(alice, {"type": p.REMOVE_BOT, "seat": 0}, p.BAD_BOT)  # a person's seat


@causes(p.NO_HAND)
async def _no_hand(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _table = await creator(server)
        await refused(alice, {"type": p.DRAW_STOCK}, p.NO_HAND)


@causes(p.ILLEGAL_ACTION)
async def _illegal_action(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, bob, _table = await pair(server)
        details = []

        async def illegal(client: NetClient, message: dict[str, Any]) -> None:
            error = await refused(client, message, p.ILLEGAL_ACTION)
            details.append(error["detail"])

        await illegal(alice, {"type": p.DRAW_STOCK})  # Bob's turn
        await illegal(bob, {"type": p.DISCARD, "card": "Kd"})  # he has not drawn
        await ask(bob, {"type": p.DRAW_STOCK})
        await illegal(bob, {"type": p.SPREAD, "cards": "2s 3s Ac"})
        await illegal(bob, {"type": p.SPREAD, "cards": "2s 3s 9h"})
        await illegal(bob, {"type": p.HIT, "card": "5s", "spread": 99})
        await ask(bob, {"type": p.SPREAD, "cards": "2s 3s 4s"})
        await illegal(bob, {"type": p.HIT, "card": "9h", "spread": 1})
        await illegal(bob, {"type": p.DISCARD, "card": "Zz"})
        assert details == [
            "not_your_turn",
            "wrong_phase",
            "not_in_hand",
            "not_a_spread",
            "no_such_spread",
            "cannot_hit",
            "bad_action",
        ]
    # The house rules' own refusals: Alice holds 5s to hit Bob's run; the stock gives 5h, Jc.
    deck = format_cards(
        stacked_deck(
            [parse_cards("5s 6c 7d 8h 10d"), parse_cards(BOB_HAND)],
            0,
            parse_card("Qc"),
            parse_cards("5h Jc"),
        )
    )
    for rules, detail in [
        ({"hit_lock": 1, "discard_must_use": True}, "must_use"),
        ({"hit_lock": 1}, "hit_locked"),
        ({"no_rediscard": True}, "no_rediscard"),
    ]:
        async with start_server(tmp_path / detail) as server:
            alice, bob, _table = await pair(server, deck=deck, rules=rules)
            for message in (
                {"type": p.DRAW_STOCK},
                {"type": p.SPREAD, "cards": "2s 3s 4s"},
                {"type": p.DISCARD, "card": "Kd"},
            ):
                assert (await ask(bob, message))["type"] == p.UPDATE
            if detail == "must_use":  # Alice cannot use the Kd she would take
                await refused(alice, {"type": p.TAKE_DISCARD}, p.ILLEGAL_ACTION, detail)
            elif detail == "no_rediscard":  # she takes Kd, and may not throw it back
                await ask(alice, {"type": p.TAKE_DISCARD})
                await refused(alice, {"type": p.DISCARD, "card": "Kd"}, p.ILLEGAL_ACTION, detail)
            else:  # she hits Bob's run: he may not drop on his next turn
                for message in (
                    {"type": p.DRAW_STOCK},
                    {"type": p.HIT, "card": "5s", "spread": 1},
                    {"type": p.DISCARD, "card": "Jc"},
                ):
                    assert (await ask(alice, message))["type"] == p.UPDATE
                await refused(bob, {"type": p.DROP}, p.ILLEGAL_ACTION, detail)
        details.append(detail)
    assert set(details) == DETAILS_CAUSED


@causes(p.NO_SUCH_HAND)
async def _no_such_hand(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, table = await creator(server)
        asked = {"type": p.HISTORY_HAND, "table": table, "hand": 1}
        error = await refused(alice, asked, p.NO_SUCH_HAND, "hand")
        assert error["message"] == "this table has played no hand 1"


@causes(p.NO_COACH)
async def _no_coach(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice, _bob, table = await pair(server)
        hint = {"type": p.COACH, "table": table, "hand": 1}
        await refused(alice, hint, p.NO_COACH)  # Bob is a person: no hint in play
        carol = await hello(server, "Carol")
        await ask(carol, {"type": p.WATCH, "table": table})
        await refused(carol, hint, p.NO_COACH)  # a spectator


@causes(p.COACH_BUSY)
async def _coach_busy(tmp_path: Path) -> None:
    async with start_server(tmp_path, coach=0) as server:
        alice, table = await creator(server)
        await refused(alice, {"type": p.COACH, "table": table, "hand": 1}, p.COACH_BUSY)


@causes(p.NO_REMATCH)
async def _no_rematch(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        _alice, bob, _table = await pair(server)
        await refused(bob, {"type": p.REMATCH, "answer": True}, p.NO_REMATCH)  # not over


@causes(p.SEAT_RESUMED_ELSEWHERE)
async def _seat_resumed_elsewhere(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await hello(server, "Alice")
        seated = await ask(alice, {"type": p.CREATE_TABLE, "name": "t"})
        again = await hello(server, "Alice")
        resume = {"type": p.RESUME, "table": seated["table"], "token": seated["token"]}
        assert (await ask(again, resume))["type"] == p.SEATED
        told = await alice.expect(p.ERROR)
        assert told["code"] == p.SEAT_RESUMED_ELSEWHERE and told["fatal"] is False
        await refused(alice, {"type": p.LEAVE}, p.NOT_AT_TABLE)  # back in the lobby


def test_every_documented_code_is_caused_here_or_said_to_be_out_of_reach():
    assert set(CAUSES) | CANNOT_CAUSE == set(ERROR_CODES)
    assert not set(CAUSES) & CANNOT_CAUSE
    assert DETAILS == DETAILS_CAUSED  # and hand_over, empty_pile: CANNOT_DETAILS


@pytest.mark.parametrize("code", sorted(set(ERROR_CODES) - CANNOT_CAUSE))
async def test_a_client_can_cause_each_error_code(tmp_path, code):
    await CAUSES[code](tmp_path)


# -- every range at its edge ------------------------------------------------------------------

#: A valid message of each type that has a field with a range (before `hello` is said: none).
VALID: dict[str, dict[str, Any]] = {
    p.LIST_TABLES: {},
    p.CREATE_TABLE: {"name": "t", "rules": {"preset": "speno"}},
    p.SIT: {"table": 1},
    p.RESUME: {"table": 1, "token": "x"},
    p.WATCH: {"table": 1},
    p.ADD_BOT: {},
    p.REMOVE_BOT: {"seat": 0},
    p.CHAT: {"text": "hi"},
    p.HISTORY: {"table": 1},
    p.HISTORY_HAND: {"table": 1, "hand": 1},
    p.SPREAD: {"cards": "As 2s 3s"},
    p.HIT: {"card": "As", "spread": 1},
    p.DISCARD: {"card": "As"},
    p.PING: {},
    p.PONG: {},
    p.PLAY_FOR_NOW: {"seat": 0},
    p.TAKE_BOT_SEAT: {"table": 1, "seat": 0},
    p.SEAT_TO_BOT: {"seat": 0},
    p.STANDINGS: {},
    p.COACH: {"table": 1, "hand": 1},
    p.DEAL_VALUE: {"table": 1, "hand": 1, "value": "ab" * 32},
}


def edges(spec: p.Field) -> tuple[list[Any], list[Any]]:
    """Values of the field's type just inside its range, and just outside it."""
    if spec.kind == "str":
        inside = ["x" * spec.max_len, "x" * spec.min_len]
        outside = ["x" * (spec.max_len + 1)] + (["x" * (spec.min_len - 1)] if spec.min_len else [])
    elif spec.kind in ("int", "number"):
        inside = [int(spec.low), int(spec.high)]
        outside = [int(spec.low) - 1, int(spec.high) + 1]
    elif spec.kind == "cards":
        inside = [" ".join(["As"] * spec.max_len)]
        outside = [" ".join(["As"] * (spec.max_len + 1)), "As 2s 1000s"]
    elif spec.kind == "options":
        inside = [{f"o{i}": 1 for i in range(spec.max_len)}]
        outside = [{f"o{i}": 1 for i in range(spec.max_len + 1)}, {"o" * 33: 1}]
    else:  # pragma: no cover
        raise AssertionError(spec.kind)
    return inside, outside


async def test_every_range_at_its_edge_is_taken_and_past_it_refused_without_closing(tmp_path):
    changes = {"max_tables_per_address": 1000, "max_tables": 1000}
    async with start_server(tmp_path, limit_changes=changes) as server:
        lobby = await hello(server, "Lobby")
        checked = 0
        for kind, fields in CLIENT_MESSAGES.items():
            if kind == p.HELLO:
                continue
            for name, spec in fields.items():
                if spec.kind in ("bool", "map", "list"):
                    continue
                inside, outside = edges(spec)
                for value in outside:
                    error = await ask(lobby, {"type": kind, **VALID[kind], name: value})
                    assert error["type"] == p.ERROR, (kind, name, value, error)
                    assert (error["code"], error["detail"]) == (spec.code, name), error
                    assert error["fatal"] is False and spec.allowed() in error["message"]
                    checked += 1
                for value in inside:
                    # (a fresh connection: the value may open a table and seat it)
                    client = await hello(server, f"Edge{checked}")
                    rid = next(_ids)
                    await client.send({"type": kind, **VALID[kind], name: value, "id": rid})
                    await ask(client, {"type": p.PING})  # whatever answers comes before
                    for answer in client.received:
                        if answer.get("reply_to") == rid and answer["type"] == p.ERROR:
                            assert spec.allowed() not in answer["message"], (kind, name, value)
                    await client.close()
                    checked += 1
        assert checked > 60
        await lobby.send({"type": p.PING, "id": p.MAX_ID})
        assert (await answer_to(lobby, p.MAX_ID))["type"] == p.PONG
        all_valid(lobby)


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("version", -1, p.VERSION_MISMATCH),
        ("version", p.MAX_ID + 1, p.VERSION_MISMATCH),
        ("name", "n" * 65, p.BAD_NAME),
        ("client", "c" * 65, p.BAD_MESSAGE),
        ("id", -1, p.BAD_VALUE),
        ("id", p.MAX_ID + 1, p.BAD_VALUE),
    ],
)
async def test_a_hello_out_of_range_is_refused_and_closed(tmp_path, field, value, code):
    # Fatal in the handshake: the document's table of fatal errors says so.
    assert code in FATAL_TABLE
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port)
        message = {"type": p.HELLO, "version": V, "name": "Edge", "id": 1, field: value}
        error = await cut_off(client, code, frame(message))
        if code != p.VERSION_MISMATCH:
            assert error["detail"] == field
        # A client of another version is told that first, whatever else is wrong.
        older = await NetClient.connect(server.port)
        await cut_off(older, p.VERSION_MISMATCH, frame({**message, "version": 1}))


# -- the limits at their edges ---------------------------------------------------------------


async def test_a_frame_of_max_frame_bytes_is_taken_and_one_more_refused(tmp_path):
    async with start_server(tmp_path) as server:
        client = await hello(server, "Big")
        limit = server.config.limits.max_frame
        # An unknown field pads the frame to the limit exactly: it is read in whole (and
        # refused for its field, fatal), not refused for its size.
        padding = limit - len(msgpack.packb({"type": "ping", "x": ""})) - 2  # (a str 16 head)
        exact = msgpack.packb({"type": "ping", "x": "y" * padding})
        assert len(exact) == limit
        await cut_off(client, p.BAD_MESSAGE, len(exact).to_bytes(4, "big") + exact)
        over = await hello(server, "Over")
        await cut_off(over, p.FRAME_TOO_LARGE, (limit + 1).to_bytes(4, "big"))


async def test_the_limits_in_welcome_are_the_servers(tmp_path):
    changes = {"max_name": 10, "max_chat": 20, "max_table_name": 8}
    async with start_server(tmp_path, limit_changes=changes) as server:
        client = await hello(server, "Limits")
        limits = client.received[0]["limits"]
        assert {k: limits[k] for k in changes} == changes
        assert limits["max_frame"] == p.MAX_CLIENT_FRAME
        assert limits["max_server_frame"] == p.MAX_SERVER_FRAME
        create = {"type": p.CREATE_TABLE, "name": "t" * 9}
        await refused(client, create, p.BAD_TABLE, "name")
        await ask(client, {**create, "name": "t" * 8})
        await refused(client, {"type": p.CHAT, "text": "c" * 21}, p.BAD_CHAT)
        assert (await ask(client, {"type": p.CHAT, "text": "c" * 20}))["type"] == p.CHAT
        await cut_off(
            await NetClient.connect(server.port),
            p.BAD_NAME,
            frame({"type": p.HELLO, "version": V, "name": "n" * 11}),
        )
        assert (await hello(server, "n" * 10)).name == "n" * 10


# The other limits at their edges are tested where they are at home: `queue` and `queue_bytes`
# (a client that does not read) in tests/server/test_hostile_clients.py and
# tests/server/test_server_errors.py;
# `max_per_address`, `max_connections`, `max_tables`, `max_tables_per_address`,
# `messages_per_second`/`burst`, `handshake_timeout`, `heartbeat` and `idle_timeout` above,
# with the error codes they cause.


async def test_no_ping_before_hello_even_with_a_heartbeat_shorter_than_the_handshake(tmp_path):
    limits = {"heartbeat": 0.05, "handshake_timeout": 3.0}
    async with start_server(tmp_path, limit_changes=limits) as server:
        late = await NetClient.connect(server.port)
        await asyncio.sleep(0.6)  # a dozen heartbeats, well inside the handshake timeout
        welcome = await ask(late, {"type": p.HELLO, "version": V, "name": "Late"})
        assert welcome["type"] == p.WELCOME
        assert late.received[0] is welcome  # nothing came before it
        assert (await late.expect(p.PING, timeout=5))["n"] == 1  # and pings come after
