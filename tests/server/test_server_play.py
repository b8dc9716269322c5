"""Playing through a real server on loopback: full hands, views, spectators, reconnects, bots,
timers and the end of a session."""

from __future__ import annotations

import asyncio

import pytest
from netclient import NetClient, cards_in, start_server
from tonk.shared.game.cards import DECK
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import validate_server

# A deck for two seats, dealer seat 0: seat 1 is dealt first.
# Seat 1 (Bob): 2s 3s 4s 9h Kd; seat 0 (Alice): 5c 6c 7d 8h 10d; up card Qc; stock 5h first.
_TOP = "2s 5c 3s 6c 4s 7d 9h 8h Kd 10d Qc 5h"
TWO_SEAT_DECK = " ".join([_TOP, *(str(c) for c in DECK if str(c) not in _TOP.split())])


async def two_players(server, **table):
    alice = await NetClient.connect(server.port, "Alice")
    bob = await NetClient.connect(server.port, "Bob")
    table_id = await alice.create_table(**{"name": "Friday", "seats": 2, "dealer": 0, **table})
    await bob.request({"type": "sit", "table": table_id}, p.SEATED)
    return alice, bob, table_id


async def test_a_full_hand_between_two_clients_settles_and_updates_the_ledger(
    tmp_path, server_log: pytest.LogCaptureFixture
):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await two_players(server, deck=TWO_SEAT_DECK, stake=5)
        first = await bob.expect(p.UPDATE)
        assert first["hand"] == 1 and first["from"] == 0
        assert first["view"]["hand"] == "2s 3s 4s 9h Kd"
        assert first["view"]["turn"] == 1 and first["view"]["seat"] == 1
        # Bob sees his own deal, not Alice's.
        assert cards_in(first) == {"2s", "3s", "4s", "9h", "Kd", "Qc"}
        # Bob draws 5h, spreads 2s 3s 4s and discards Kd.
        await bob.send({"type": "draw_stock"})
        drawn = await bob.expect(p.UPDATE)
        assert drawn["from"] == first["view"]["event_count"]
        assert drawn["events"] == [
            {"kind": "draw_stock", "seat": 1, "cards": "5h", "private": True}
        ]
        seen_by_alice = await alice.expect(p.UPDATE, lambda m: m["from"] > 0)
        assert seen_by_alice["events"] == [{"kind": "draw_stock", "seat": 1, "private": True}]
        assert "5h" not in cards_in(seen_by_alice)
        await bob.send({"type": "spread", "cards": "2s 3s 4s"})
        await bob.expect(p.UPDATE)
        await bob.send({"type": "discard", "card": "Kd"})
        await bob.expect(p.UPDATE)
        # Alice drops with 5+6+7+8+10 = 36 against Bob's 9h 5h = 14: caught.
        await alice.send({"type": "drop"})
        end = await alice.expect(p.HAND_END)
        assert end["settlement"]["ending"] == "drop_caught"
        assert end["payments"] == [["Alice", "Bob", 10]]
        assert "hand 1 ends (drop caught): Alice pays Bob 10 chips\n" in server_log.text
        assert end["balances"] == {"Alice": -10, "Bob": 10}
        last = await bob.expect(p.UPDATE, lambda m: m["view"]["phase"] == "ended")
        assert last["view"]["settlement"]["revealed"] == ["5c 6c 7d 8h 10d", "9h 5h"]
        # The next hand is dealt by Bob (the deal passes left).
        second = await alice.expect(p.UPDATE, lambda m: m["hand"] == 2)
        assert second["view"]["dealer"] == 1
        for client in (alice, bob):
            for message in client.received:
                validate_server(message)
        await alice.close()
        await bob.close()


async def test_an_illegal_action_is_refused_with_the_cores_reason_and_changes_nothing(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _ = await two_players(server, deck=TWO_SEAT_DECK)
        before = await alice.expect(p.UPDATE)
        await alice.send({"type": "draw_stock", "id": 7})
        error = await alice.expect_error(p.ILLEGAL_ACTION)
        assert error["detail"] == "not_your_turn" and error["reply_to"] == 7
        await bob.expect(p.UPDATE)
        await bob.send({"type": "discard", "card": "2s"})
        error = await bob.expect_error(p.ILLEGAL_ACTION)
        assert error["detail"] == "wrong_phase"
        await bob.send({"type": "draw_stock"})
        after = await alice.expect(p.UPDATE)
        assert after["from"] == before["view"]["event_count"]  # nothing happened in between


async def test_a_spectator_sees_no_hand_and_every_update(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "watch", "table": table}, p.WATCHING)
        full = await carol.expect(p.UPDATE)
        assert full["from"] == 0 and full["view"]["seat"] is None and full["view"]["hand"] == ""
        assert cards_in(full) == {"Qc"}  # only the up card
        await bob.expect(p.UPDATE)
        await bob.send({"type": "draw_stock"})
        seen = await carol.expect(p.UPDATE)
        assert seen["events"] == [{"kind": "draw_stock", "seat": 1, "private": True}]
        await carol.send({"type": "chat", "text": "good luck"})
        chat = await alice.expect(p.CHAT)
        assert chat == {
            "type": "chat",
            "table": table,
            "name": "Carol",
            "seat": None,
            "text": "good luck",
        }
        await carol.send({"type": "draw_stock"})
        await carol.expect_error(p.NOT_SEATED)
        tables = await carol.request({"type": "list_tables"}, p.TABLES)
        assert tables["tables"][0]["spectators"] == 1


async def test_reconnect_with_the_token_restores_seat_view_and_ledger(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        await bob.expect(p.UPDATE)
        await bob.send({"type": "draw_stock"})
        await bob.expect(p.UPDATE)
        token = bob.token
        await bob.close()
        status = await alice.expect(
            p.TABLE, lambda m: m["table"]["players"][1]["status"] == "disconnected"
        )
        assert status["table"]["players"][1]["name"] == "Bob"
        # Without the token nobody can act for the seat.
        mallory = await NetClient.connect(server.port, "Mallory")
        await mallory.send({"type": "resume", "table": table, "token": "not-the-token"})
        await mallory.expect_error(p.BAD_TOKEN)
        await mallory.send({"type": "discard", "card": "Kd"})
        await mallory.expect_error(p.NOT_AT_TABLE)
        await mallory.send({"type": "sit", "table": table})
        await mallory.expect_error(p.ALREADY_STARTED)
        # With it, from a brand new connection (even under another name), the seat is back.
        bob2 = await NetClient.connect(server.port, "Robert")
        seated = await bob2.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        assert seated["seat"] == 1
        view = await bob2.expect(p.UPDATE)
        assert view["from"] == 0 and view["view"]["hand"] == "2s 3s 4s 9h Kd 5h"
        assert view["view"]["phase"] == "play"
        back = await alice.expect(
            p.TABLE, lambda m: m["table"]["players"][1]["status"] == "connected"
        )
        assert back["table"]["players"][1]["balance"] == 0
        await bob2.send({"type": "discard", "card": "Kd"})
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)


async def test_a_resumed_seat_is_taken_from_the_old_connection(tmp_path):
    async with start_server(tmp_path) as server:
        _alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        other = await NetClient.connect(server.port, "Bob")
        await other.request({"type": "resume", "table": table, "token": bob.token}, p.SEATED)
        await bob.expect_error(p.SEAT_RESUMED_ELSEWHERE)
        await bob.send({"type": "draw_stock"})
        await bob.expect_error(p.NOT_AT_TABLE)


async def test_bots_play_whole_hands_and_the_session_ends_with_standings(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table("sharp", None, name="bots", seats=3, hands=3, seed=11)
        end = await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=30)
        assert end["hands"] == 3
        names = [name for name, _ in end["standings"]]
        assert sorted(names) == ["Ada (bot)", "Alice", "Bix (bot)"]
        assert sum(balance for _, balance in end["standings"]) == 0
        hands = [m for m in alice.received if m["type"] == p.HAND_END]
        assert [m["hand"] for m in hands] == [1, 2, 3]
        assert hands[-1]["balances"] == dict(end["standings"])
        final = await alice.expect(p.TABLE, lambda m: m["table"]["state"] == "finished")
        assert final["table"]["hands_played"] == 3


async def test_expert_bots_take_seats_and_play_whole_hands(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table("expert", name="experts", seats=3, hands=2, seed=5, bot_pause=0)
        await alice.send({"type": "add_bot", "strategy": "expert", "seat": 2})
        seated = await alice.expect(
            p.TABLE,
            lambda m: [pl["strategy"] for pl in m["table"]["players"]][1:] == ["expert"] * 2,
        )
        assert [pl["kind"] for pl in seated["table"]["players"]] == ["human", "bot", "bot"]
        end = await alice.play_until(lambda m: m["type"] == p.SESSION_END, timeout=60)
        assert end["hands"] == 2
        assert sum(balance for _, balance in end["standings"]) == 0
        moved = {
            event["seat"]
            for m in alice.received
            if m["type"] == p.UPDATE
            for event in m["events"]
            if event["kind"] in ("draw_stock", "take_discard", "drop")
        }
        assert {1, 2} <= moved


async def test_the_turn_timer_plays_for_a_slow_player_who_is_away_until_back(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await two_players(server, deck=TWO_SEAT_DECK, turn_timer=0.2)
        first = await bob.expect(p.UPDATE)
        assert first["deadline"] is not None and 0 < first["deadline"] <= 0.2
        away = await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["status"] == "away")
        assert away["table"]["players"][1]["name"] == "Bob"
        # Bob's turn was played for him: a draw and a discard, and then it is Alice's turn.
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        await bob.send({"type": "back"})
        await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["status"] == "connected")


async def test_a_player_back_by_acting_gets_a_fresh_turn_clock_for_the_rest_of_the_turn(tmp_path):
    async with start_server(tmp_path) as server:
        # A 1 s turn clock; once away, each move is made for the player after 10 s.
        _, bob, _ = await two_players(server, deck=TWO_SEAT_DECK, turn_timer=1.0, bot_pause=10)
        await bob.expect(p.UPDATE)
        # Bob lets the clock run out: his first move is made for him, and he is shown away,
        # the mark coming after the update with that move (never beside the view before it).
        away = await bob.expect(p.TABLE, lambda m: m["table"]["players"][1]["status"] == "away")
        index = next(i for i, m in enumerate(bob.received) if m is away)
        moved = [
            i
            for i, m in enumerate(bob.received)
            if m["type"] == p.UPDATE
            and any(e["kind"] in ("draw_stock", "take_discard") for e in m["events"])
        ]
        assert moved and moved[0] < index
        # After his turn's clock ran out, Bob acts: he is back, with a fresh clock, and
        # the rest of the turn is his to play (not played for him at once).
        await bob.send({"type": "spread", "cards": "2s 3s 4s"})
        await bob.expect(
            p.UPDATE, lambda m: any(e["kind"] == "spread" and e["seat"] == 1 for e in m["events"])
        )
        since = len(bob.received)
        await bob.send({"type": "discard", "card": "Kd"})
        done = await bob.expect(
            p.UPDATE, lambda m: any(e["kind"] == "discard" and e["seat"] == 1 for e in m["events"])
        )
        assert [e["cards"] for e in done["events"] if e["kind"] == "discard"] == ["Kd"]
        later = bob.received[since:]
        assert not [m for m in later if m["type"] == p.ERROR]
        statuses = [m["table"]["players"][1]["status"] for m in later if m["type"] == p.TABLE]
        assert "away" not in statuses


async def test_grace_period_ends_in_autoplay_so_the_game_never_stalls(
    tmp_path, server_log: pytest.LogCaptureFixture
):
    await _grace_ends_in_autoplay(tmp_path)
    # The host's log says so, as it does when a turn timer runs out.
    assert "table 1: Bob gone past the grace period; playing for them" in server_log.text


async def _grace_ends_in_autoplay(tmp_path):
    async with start_server(tmp_path, grace=0.2) as server:
        alice, bob, _ = await two_players(server, deck=TWO_SEAT_DECK)
        await bob.expect(p.UPDATE)
        await bob.close()
        await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["status"] == "away")
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        discards = [
            e
            for m in alice.received
            if m["type"] == p.UPDATE
            for e in m["events"]
            if e["kind"] == "discard"
        ]
        assert discards and discards[0]["seat"] == 1  # Bob's turn was played for him


async def test_the_log_says_a_new_tables_stake_in_words(
    tmp_path, server_log: pytest.LogCaptureFixture
):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table(name="Penny", seats=2, stake=1)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.create_table(name="Five", seats=2, stake=5)
    assert "'Penny', classic, 2 seats, stake 1 chip\n" in server_log.text
    assert "'Five', classic, 2 seats, stake 5 chips\n" in server_log.text


async def test_creator_controls_bots_and_start_others_may_not(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="t", seats=4)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table, "seat": 3}, p.SEATED)
        await bob.send({"type": "add_bot"})
        await bob.expect_error(p.NOT_CREATOR)
        await bob.send({"type": "start"})
        await bob.expect_error(p.NOT_CREATOR)
        await alice.send({"type": "add_bot", "strategy": "wizard"})
        await alice.expect_error(p.BAD_BOT)
        await alice.send({"type": "add_bot", "seat": 1})
        await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["kind"] == "bot")
        await alice.send({"type": "remove_bot", "seat": 3})
        await alice.expect_error(p.BAD_BOT)
        await alice.send({"type": "remove_bot", "seat": 1})
        await alice.expect(p.TABLE, lambda m: m["table"]["players"][1]["kind"] == "empty")
        await alice.send({"type": "start"})
        started = await alice.expect(p.TABLE, lambda m: m["table"]["state"] == "playing")
        # Empty seats are removed at the start: Bob moves from seat 3 to seat 1.
        assert [pl["name"] for pl in started["table"]["players"]] == ["Alice", "Bob"]
        cut = await bob.expect(p.CUT)
        update = await bob.expect(p.UPDATE)
        assert update["view"]["seat"] == 1 and update["view"]["dealer"] == cut["dealer"]
        await bob.send({"type": "add_bot"})
        await bob.expect_error(p.NOT_CREATOR)
        await alice.send({"type": "add_bot"})
        await alice.expect_error(p.ALREADY_STARTED)


async def test_leaving_a_waiting_table_frees_the_seat_and_the_last_human_closes_it(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="t", seats=3)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table}, p.SEATED)
        left = await alice.request({"type": "leave", "id": 4}, p.LEFT)
        assert left["reply_to"] == 4
        table = await bob.expect(p.TABLE, lambda m: m["table"]["players"][0]["kind"] == "empty")
        assert table["table"]["creator"] == 1  # Bob is in charge now
        await bob.request({"type": "leave"}, p.LEFT)
        tables = await alice.request({"type": "list_tables"}, p.TABLES)
        assert tables["tables"] == []


async def test_seat_stakes_under_stake_mode_seat(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="t", rules={"preset": "speno"}, seats=2, stake=3)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table, "stake": 7}, p.SEATED)
        update = await bob.expect(p.UPDATE)
        assert update["view"]["stakes"] == [3, 7]


async def test_time_limited_session_ends_after_the_first_hand_past_the_limit(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.create_table(None, name="t", seats=2, minutes=0.0001, seed=3)
        end = await alice.play_until(lambda m: m["type"] == p.SESSION_END)
        assert end["reason"] == "minutes" and end["hands"] == 1


async def test_heartbeat_ping_and_idle_timeout(tmp_path):
    async with start_server(
        tmp_path, limit_changes={"heartbeat": 0.2, "idle_timeout": 0.6}
    ) as server:
        alice = await NetClient.connect(server.port, "Alice")
        ping = await alice.expect(p.PING)
        await alice.send({"type": "pong", "n": ping["n"]})
        await alice.expect(p.PING, lambda m: m["n"] > ping["n"])
        await alice.expect_error(p.IDLE_TIMEOUT, timeout=5)
        await alice.expect_closed()
        await asyncio.sleep(0)
