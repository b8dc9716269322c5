"""PROTOCOL.md taken at its word where an independent client found the server saying otherwise,
and the questions the document left open, each answered there and held to here through real
sockets: the coach's spread one string and listed once, `away_summary.played_for` only the
moves made for you, a finished table the lobby lists watched, `played_for_in` on a finished
table, `take_bot_seat` during a hand answered in `watch`'s order, when `rematch_status` comes
and when a rematch is called off, `storage_error` in one row, `history.balances` as a map, and
the coach: its error rows, the processes that answer it, one connection's questions in turn."""

from __future__ import annotations

import asyncio
import multiprocessing
import re
from typing import Any

from checkout import ROOT
from netclient import NetClient, start_server
from tonk.shared.game.cards import format_cards, parse_card, parse_cards, stacked_deck
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import validate_server

DOC = (ROOT / "PROTOCOL.md").read_text()

# Two seats, Alice (seat 0) deals: Bob (seat 1) plays first. Bob: 2s 3s 4s 9h Kd; Alice: 5c 6c
# 7d 8h 10d; the up card Qc; the stock's top card 5s.
DECK = format_cards(
    stacked_deck(
        [parse_cards("5c 6c 7d 8h 10d"), parse_cards("2s 3s 4s 9h Kd")],
        0,
        parse_card("Qc"),
        [parse_card("5s")],
    )
)


async def two(server: Any, **table: Any) -> tuple[NetClient, NetClient, int, str]:
    """Alice creates a table for two (the deck above), Bob sits: both have the deal. The
    table, and Bob's token."""
    alice = await NetClient.connect(server.port, "Alice")
    options = {"name": "Pair", "seats": 2, "dealer": 0, "deck": DECK, **table}
    seated = await alice.request({"type": p.CREATE_TABLE, **options}, p.SEATED)
    bob = await NetClient.connect(server.port, "Bob")
    bob_seated = await bob.request({"type": p.SIT, "table": seated["table"]}, p.SEATED)
    for client in (alice, bob):
        await client.expect(p.UPDATE)
    return alice, bob, seated["table"], bob_seated["token"]


async def answered(client: NetClient, message: dict[str, Any], reply: str) -> dict[str, Any]:
    got = await client.request(message, reply)
    assert got["type"] == reply, got
    return got


def types_until(client: NetClient, first: int, last_type: str) -> list[str]:
    """The types of the messages `client` received from index `first` up to the first of
    type `last_type` (included)."""
    out: list[str] = []
    for message in client.received[first:]:
        out.append(message["type"])
        if message["type"] == last_type:
            break
    return out


# -- the coach's spread ----------------------------------------------------------------------


async def test_the_coach_sends_a_spreads_cards_as_one_string_and_lists_it_once(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table, _token = await two(server)
        await answered(bob, {"type": p.DRAW_STOCK}, p.UPDATE)
        # The run 2s 3s 4s, its cards given out of order.
        await answered(bob, {"type": p.SPREAD, "cards": "4s 2s 3s"}, p.UPDATE)
        await answered(bob, {"type": p.DISCARD, "card": "Kd"}, p.UPDATE)
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        await answered(alice, {"type": p.DROP}, p.UPDATE)  # caught: Bob holds less
        await bob.expect(p.HAND_END)
        got = await answered(bob, {"type": p.COACH, "table": table, "hand": 1, "step": 1}, p.COACH)
    assert validate_server(got) is None
    advice = got["advice"]
    actions = [advice["best"], advice["played"], *(w["action"] for w in advice["weighed"])]
    spreads = [action for action in actions if action["type"] == p.SPREAD]
    assert spreads, advice
    for action in spreads:
        assert isinstance(action["cards"], str), action  # "every list of cards is one string"
    assert advice["played"]["type"] == p.SPREAD
    assert sorted(advice["played"]["cards"].split()) == ["2s", "3s", "4s"]
    weighed = [w["action"] for w in advice["weighed"]]
    moves = [(a["type"], tuple(sorted(a.get("cards", "").split()))) for a in weighed]
    assert len(moves) == len(set(moves)), weighed  # one spread is one choice, in any order


# -- away_summary ----------------------------------------------------------------------------


async def test_away_summary_played_for_holds_only_the_moves_made_for_you(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table, token = await two(server)
        await bob.close()  # Bob (to play first) loses the link; Alice has his seat played
        await answered(alice, {"type": p.PLAY_FOR_NOW, "seat": 1}, p.TABLE)
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)  # his turn played
        back = await NetClient.connect(server.port, "Bob")
        await answered(back, {"type": p.RESUME, "table": table, "token": token}, p.SEATED)
        summary = await back.expect(p.AWAY_SUMMARY)
        update = await back.expect(p.UPDATE)
    assert summary["hand"] == update["hand"] == 1 and summary["turns"] == 1
    events = update["events"]
    played = summary["played_for"]
    assert played, summary
    for index in played:
        assert events[index]["seat"] == 1 and events[index]["kind"] != "turn", events[index]
    # Every move of Bob's after the deal was made for him; Alice's turn that followed is not.
    bobs = [
        n
        for n, event in enumerate(events)
        if event.get("seat") == 1 and event["kind"] not in ("deal", "turn")
    ]
    assert played == bobs
    assert events[played[-1] + 1] == {"kind": "turn", "seat": 0}


# -- a finished table --------------------------------------------------------------------------


async def one_hand_over(server: Any) -> tuple[NetClient, NetClient, int, str]:
    """A session of one hand, over: Bob dropped at once and won (28 against 36)."""
    alice, bob, table, token = await two(server, hands=1)
    await answered(bob, {"type": p.DROP}, p.UPDATE)
    for client in (alice, bob):
        await client.expect(p.SESSION_END)
    return alice, bob, table, token


async def test_a_finished_table_the_lobby_lists_is_watched_with_its_offer(tmp_path):
    async with start_server(tmp_path) as server:
        alice, _bob, table, _token = await one_hand_over(server)
        carol = await NetClient.connect(server.port, "Carol")
        listed = await carol.expect(p.TABLES)
        assert [t["state"] for t in listed["tables"] if t["id"] == table] == ["finished"]
        start = len(carol.received)
        watching = await answered(carol, {"type": p.WATCH, "table": table}, p.WATCHING)
        status = await carol.expect(p.REMATCH_STATUS)
        assert watching["table"] == status["table"] == table and status["outcome"] == "waiting"
        order = types_until(carol, start, p.REMATCH_STATUS)
        assert order == [
            p.WATCHING,
            p.TABLE,
            p.LEDGER,
            p.DEAL_COMMIT,  # (the last hand's: a watcher checks it too)
            p.UPDATE,
            p.SESSION_END,
            p.REMATCH_STATUS,
        ], order
        shown = next(m for m in carol.received[start:] if m["type"] == p.UPDATE)
        assert shown["view"]["phase"] == "ended" and shown["view"]["seat"] is None
        # Watching, Carol is told of every answer, as everybody at the finished table is.
        await answered(alice, {"type": p.REMATCH, "answer": True}, p.REMATCH_STATUS)
        told = await carol.expect(p.REMATCH_STATUS)
        assert dict(told["seats"])["Alice"] == "yes"
    for message in carol.received:
        validate_server(message)


async def test_a_finished_table_abandoned_is_watched_with_its_session_end_and_no_offer(tmp_path):
    async with start_server(tmp_path, abandoned_after=0.5, grace=0.2) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table("easy", name="Gone", seats=2)
        carol = await NetClient.connect(server.port, "Carol")
        await answered(carol, {"type": p.WATCH, "table": table}, p.WATCHING)
        await alice.close()  # no player left: the session ends between hands, abandoned
        ended = await carol.expect(p.SESSION_END, timeout=30)
        assert ended["reason"] == "abandoned" and ended["rematch"] is None
        dan = await NetClient.connect(server.port, "Dan")
        start = len(dan.received)
        await answered(dan, {"type": p.WATCH, "table": table}, p.WATCHING)
        told = await dan.expect(p.SESSION_END)
        # (a chat's echo: everything the watch sent has come)
        await answered(dan, {"type": p.CHAT, "text": "too late"}, p.CHAT)
    assert told["reason"] == "abandoned" and told["standings"] == ended["standings"]
    assert p.REMATCH_STATUS not in [m["type"] for m in dan.received[start:]]


async def test_a_finished_tables_lost_seat_has_no_played_for_in(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table, _token = await one_hand_over(server)
        await bob.close()
        shown = await alice.expect(
            p.TABLE, lambda m: m["table"]["players"][1]["status"] == "disconnected"
        )
    assert shown["table"]["state"] == "finished"
    assert "played_for_in" not in shown["table"]["players"][1]


# -- take_bot_seat during a hand ---------------------------------------------------------------


async def test_take_bot_seat_during_a_hand_is_answered_in_watchs_order(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        # Alice against a bot, Alice to play first: the hand waits on her; its bot's seat
        # open to anybody (Carol never sat there).
        table = await alice.create_table(
            "easy", name="Late", seats=2, dealer=1, open_bot_seats=True
        )
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        dan = await NetClient.connect(server.port, "Dan")
        start = len(dan.received)
        await answered(dan, {"type": p.WATCH, "table": table}, p.WATCHING)
        await dan.expect(p.UPDATE)
        watched = types_until(dan, start, p.UPDATE)
        await answered(dan, {"type": p.LEAVE}, p.LEFT)

        carol = await NetClient.connect(server.port, "Carol")
        start = len(carol.received)
        asked = {"type": p.TAKE_BOT_SEAT, "table": table, "seat": 1}
        answer = await answered(carol, asked, p.TABLE)
        update = await carol.expect(p.UPDATE)
        taken = types_until(carol, start, p.UPDATE)
        order = [p.WATCHING, p.TABLE, p.LEDGER, p.DEAL_COMMIT, p.UPDATE]
        assert watched == taken == order, (watched, taken)
        # The `table` answers the request; the hand so far comes with the names of its seats.
        assert answer["table"]["players"][1]["kind"] == "bot"
        assert update["from"] == 0 and update["view"]["seat"] is None
        # As the hand ends, the seat is Carol's: `seated` with no reply_to, then the table.
        await alice.play_until(lambda m: m["type"] == p.HAND_END)
        seated = await carol.expect(p.SEATED)
        assert seated["seat"] == 1 and "reply_to" not in seated
        shown = await carol.expect(p.TABLE, lambda m: m["table"]["players"][1]["name"] == "Carol")
        assert shown["table"]["players"][1]["kind"] == "human"
        dealt = await carol.expect(p.UPDATE, lambda m: m["hand"] == 2)
        assert dealt["view"]["seat"] == 1
        # The bot's cards of the hand before were never Carol's to see.
        for message in carol.received:
            if message["type"] == p.UPDATE and message["hand"] == 1:
                assert message["view"]["seat"] is None and message["view"]["hand"] == ""
                assert not [e for e in message["events"] if e.get("private") and "cards" in e]


# -- the rematch ---------------------------------------------------------------------------------


async def test_rematch_status_comes_only_after_a_change(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table, _token = await one_hand_over(server)
        # The server answers in order: by the chat's echo, the session's end is all told.
        await answered(alice, {"type": p.CHAT, "text": "well played"}, p.CHAT)
        assert not [m for m in alice.received if m["type"] == p.REMATCH_STATUS]
        await answered(bob, {"type": p.REMATCH, "answer": True}, p.REMATCH_STATUS)
        told = await alice.expect(p.REMATCH_STATUS)
    assert told["seats"] == [["Alice", "awaited"], ["Bob", "yes"]]


async def test_a_rematch_is_called_off_as_soon_as_too_few_could_stay(tmp_path):
    async with start_server(tmp_path) as server:
        _alice, bob, _table, _token = await one_hand_over(server)
        # Two people, no bot: Bob's no leaves too few whatever Alice says: off at once.
        off = await answered(bob, {"type": p.REMATCH, "answer": False}, p.REMATCH_STATUS)
        assert off["outcome"] == "off" and dict(off["seats"])["Alice"] == "awaited"
        assert off["seconds"] is None


async def test_a_rematch_with_a_bot_waits_on_the_last_answer(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table("easy", name="Three", seats=3, hands=1)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": p.SIT, "table": table}, p.SEATED)
        await asyncio.gather(
            *(c.play_until(lambda m: m["type"] == p.SESSION_END) for c in (alice, bob))
        )
        # Bob says no: Alice and the bot could still play, so it waits for Alice.
        waiting = await answered(bob, {"type": p.REMATCH, "answer": False}, p.REMATCH_STATUS)
        assert waiting["outcome"] == "waiting"
        started = await answered(alice, {"type": p.REMATCH, "answer": True}, p.REMATCH_STATUS)
        assert started["outcome"] == "started"


# -- the document's answers ---------------------------------------------------------------------


def error_rows(code: str) -> list[str]:
    return re.findall(rf"^\| `{code}` \|(.*)\|$", DOC, flags=re.MULTILINE)


def test_each_error_code_has_one_row_storage_error_too():
    section = DOC.split("\n## Error codes", 1)[1].split("\n## ", 1)[0]
    codes = re.findall(r"^\| `([a-z_]+)` \| ", section, flags=re.MULTILINE)
    doubled = {code for code in codes if codes.count(code) > 1}
    # (bad_value has a row in each table: fatal in the handshake, not fatal after it)
    assert doubled == {p.BAD_VALUE}, doubled
    (row,) = error_rows(p.STORAGE_ERROR)
    for request in ("`history`", "`history_hand`", "`standings`", "pauses"):
        assert request in row, request


def test_the_coach_is_named_in_every_error_row_it_can_get():
    for code in (p.NOT_AT_TABLE, p.NO_SUCH_HAND, p.NO_HAND, p.BAD_VALUE, p.NO_COACH):
        rows = error_rows(code)
        assert any("`coach`" in row for row in rows), code


async def test_the_coach_refusals_the_error_rows_name(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table, _token = await two(server)
        other = await NetClient.connect(server.port, "Other")
        asked = {"type": p.COACH, "table": table, "hand": 1, "step": 0}
        lobby = await other.request(asked, p.ERROR)
        assert lobby["code"] == p.NOT_AT_TABLE, lobby
        await answered(bob, {"type": p.DROP}, p.UPDATE)
        await bob.expect(p.HAND_END)
        unplayed = await bob.request({**asked, "hand": 9}, p.ERROR)
        assert unplayed["code"] == p.NO_SUCH_HAND, unplayed
        not_hers = await alice.request(asked, p.ERROR)  # step 0 was Bob's decision
        assert (not_hers["code"], not_hers.get("detail")) == (p.BAD_VALUE, "step"), not_hers


async def test_one_connections_coach_questions_are_answered_in_turn_by_the_coachs_process(
    tmp_path,
):
    async with start_server(tmp_path, coach=1) as server:
        _alice, bob, table, _token = await two(server)
        await answered(bob, {"type": p.DROP}, p.UPDATE)
        await bob.expect(p.HAND_END)
        before = set(multiprocessing.active_children())
        # Two questions at once from one connection, with the coach working on one at a time:
        # the second waits its turn (not coach_busy), and the answers come in order.
        asked = {"type": p.COACH, "table": table, "hand": 1, "step": 0}
        await bob.send({**asked, "id": 501})
        await bob.send({**asked, "id": 502})
        answers = []
        while len(answers) < 2:
            message = await asyncio.wait_for(bob.recv(), 60)
            if message.get("reply_to") in (501, 502):
                answers.append(message)
        workers = set(multiprocessing.active_children()) - before
    assert [m["type"] for m in answers] == [p.COACH, p.COACH], answers
    assert [m["reply_to"] for m in answers] == [501, 502]
    assert answers[0]["advice"] == answers[1]["advice"]
    # Worked out in a process of the coach's own, not in the server's.
    assert workers, "no coach process"


async def test_history_balances_is_a_map_ranked_as_session_end_ranks(tmp_path):
    async with start_server(tmp_path) as server:
        alice, _bob, table, _token = await one_hand_over(server)
        ended = next(m for m in alice.received if m["type"] == p.SESSION_END)
        page = await answered(alice, {"type": p.HISTORY, "table": table}, p.HISTORY)
    balances = page["balances"]
    assert isinstance(balances, dict)
    ranked = sorted(balances.items(), key=lambda item: (-item[1], item[0]))
    assert [list(row) for row in ranked] == [list(row) for row in ended["standings"]]
