"""The end of a session over the wire: session_end's settling up, and the rematch offered on
the final standings (everyone yes, someone no, someone leaving, the bots staying, the
standings added up across the sessions, the wait running out, and the refusals)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from netclient import NetClient, start_server
from tonk.server.commands.cli import build_config, parse_args
from tonk.shared.game.settle_up import settle_up
from tonk.shared.wire import protocol as p


def ended(message):
    return message["type"] == p.SESSION_END


async def friday(server, *, hands=1, bots=("easy",), seats=3, **table):
    """Alice and Bob at a table of `seats` with `bots`, playing a session of `hands`; their
    clients and the table's id, the session under way."""
    alice = await NetClient.connect(server.port, "Alice")
    bob = await NetClient.connect(server.port, "Bob")
    table_id = await alice.create_table(
        *bots, name="Friday", seats=seats, hands=hands, seed=7, stake=2, **table
    )
    if bots:
        await alice.expect(p.TABLE, lambda m: m["table"]["taken"] == 1 + len(bots))
    await bob.request({"type": "sit", "table": table_id}, p.SEATED)
    return alice, bob, table_id


async def play_out(*clients):
    """Every client plays its turns until its session_end; the session_ends."""
    return await asyncio.gather(*(c.play_until(ended, timeout=30) for c in clients))


def status(predicate=None):
    return lambda m: m["type"] == p.REMATCH_STATUS and (predicate is None or predicate(m))


async def test_session_end_carries_the_settling_up_and_the_rematch_wait(tmp_path):
    async with start_server(tmp_path, rematch_wait=90.0) as server:
        alice, bob, table = await friday(server, hands=2)
        end, end_bob = await play_out(alice, bob)
        assert end == end_bob
        assert end["table"] == table and end["hands"] == 2 and end["reason"] == "hands"
        balances = dict(end["standings"])
        assert [list(t) for t in settle_up(balances)] == end["settle_up"]
        assert sum(amount for _, _, amount in end["settle_up"]) == sum(
            b for b in balances.values() if b > 0
        )
        assert end["combined"] is None  # the first session of its chain
        assert 0 < end["rematch"] <= 90.0


async def test_everyone_yes_starts_the_rematch_in_the_same_seats_with_the_bot(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server)
        first, _ = await play_out(alice, bob)
        seats_before = [name for name, _ in first["standings"]]
        answer = await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        assert answer["outcome"] == "waiting"
        assert dict(answer["seats"]) == {"Alice": "yes", "Bob": "awaited", "Ada (bot)": "bot"}
        told = await bob.expect(p.REMATCH_STATUS)
        assert told["seats"] == answer["seats"]
        await bob.send({"type": "rematch", "answer": True})
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        new = started["next"]
        assert new is not None and new != table
        seated = await alice.expect(p.SEATED)
        seated_bob = await bob.expect(p.SEATED)
        assert seated["table"] == seated_bob["table"] == new
        # The same names in the same seats, the same rules and stakes, started at once.
        summary = await alice.expect(
            p.TABLE, lambda m: m["table"]["id"] == new and m["table"]["state"] == "playing"
        )
        info = summary["table"]
        old_players = [pl for pl in first_table(alice, table)["players"]]
        assert [pl["name"] for pl in info["players"]] == [pl["name"] for pl in old_players]
        assert [pl["kind"] for pl in info["players"]] == [pl["kind"] for pl in old_players]
        assert info["stake"] == 2 and info["name"] == "Friday"
        assert sorted(seats_before) == sorted(pl["name"] for pl in info["players"])
        # The rematch's session ends with the two sessions added up.
        second, _ = await play_out(alice, bob)
        assert second["table"] == new
        combined = second["combined"]
        assert combined["sessions"] == 2
        totals: dict[str, int] = {}
        for end in (first, second):
            for name, balance in end["standings"]:
                totals[name] = totals.get(name, 0) + balance
        assert dict(combined["standings"]) == totals
        assert [list(t) for t in settle_up(totals)] == combined["settle_up"]
        # Bob's new token takes his seat back at the new table, not the old one's.
        assert seated_bob["token"] != bob_token_at(bob, table)


def first_table(client, table_id):
    """The table as it was when its session ended."""
    return [
        m["table"] for m in client.received if m["type"] == p.TABLE and m["table"]["id"] == table_id
    ][-1]


def bob_token_at(client, table_id):
    return next(
        m["token"] for m in client.received if m["type"] == p.SEATED and m["table"] == table_id
    )


async def test_a_no_leaves_that_player_out_and_the_rest_play_on(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await friday(server)
        await play_out(alice, bob)
        refused = await bob.request({"type": "rematch", "answer": False}, p.REMATCH_STATUS)
        assert dict(refused["seats"])["Bob"] == "no" and refused["outcome"] == "waiting"
        await alice.send({"type": "rematch", "answer": True})
        started = await bob.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        seated = await alice.expect(p.SEATED)
        assert seated["table"] == started["next"]
        info = await alice.expect(p.TABLE, lambda m: m["table"]["id"] == started["next"])
        assert [pl["name"] for pl in info["table"]["players"]] == ["Alice", "Ada (bot)"]
        # Bob stays at the finished table, told, and is not moved.
        assert not any(
            m["type"] == p.SEATED and m["table"] == started["next"] for m in bob.received
        )


async def test_everyone_no_calls_it_off(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": False}, p.REMATCH_STATUS)
        await bob.send({"type": "rematch", "answer": False})
        off = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "off")
        assert off["next"] is None and off["seconds"] is None
        await alice.send({"type": "rematch", "answer": True})
        error = await alice.expect_error(p.NO_REMATCH)
        assert "called off" in error["message"]


async def test_a_player_leaving_is_left_out_and_two_people_alone_is_off(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server, bots=(), seats=2)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await bob.request({"type": "leave"}, p.LEFT)
        off = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "off")
        assert dict(off["seats"]) == {"Alice": "yes", "Bob": "left"}
        assert all(m["type"] != p.SEATED or m["table"] == table for m in alice.received)


async def test_a_player_leaving_with_a_bot_at_the_table_lets_the_rest_go_ahead(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await bob.request({"type": "leave"}, p.LEFT)
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        assert dict(started["seats"])["Bob"] == "left"
        seated = await alice.expect(p.SEATED)
        assert seated["table"] == started["next"]


async def test_a_lost_link_is_still_awaited_and_its_seat_taken_back_answers(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server)
        await play_out(alice, bob)
        token = bob.token
        await bob.close()
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await asyncio.sleep(0.2)
        assert not any(
            m["type"] == p.REMATCH_STATUS and dict(m["seats"])["Bob"] == "left"
            for m in alice.received
        )
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        again = await bob.expect(p.SESSION_END)
        assert again["table"] == table
        offer = await bob.expect(p.REMATCH_STATUS)
        assert dict(offer["seats"]) == {"Alice": "yes", "Bob": "awaited", "Ada (bot)": "bot"}
        await bob.send({"type": "rematch", "answer": True})
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        assert (await bob.expect(p.SEATED))["table"] == started["next"]


async def test_a_friend_played_for_while_the_grace_runs_is_awaited_and_answers_once_back(
    tmp_path,
):
    """Bob lost the link and the table's creator had his seat played for at once: at the
    session's end his grace still runs, so he is awaited (not 'left'), and answers when back."""
    async with start_server(tmp_path, grace=120.0) as server:
        alice, bob, table = await friday(server)
        token = bob.token
        await bob.close()
        await alice.expect(p.TABLE, status_is(2, "disconnected"))
        now = await alice.request({"type": "play_for_now", "seat": 2}, p.TABLE)
        assert status_is(2, "away")(now)
        await play_out(alice)
        offer = await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        assert dict(offer["seats"]) == {"Alice": "yes", "Bob": "awaited", "Ada (bot)": "bot"}
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        await bob.expect(p.SESSION_END)
        offer = await bob.expect(p.REMATCH_STATUS)
        assert dict(offer["seats"])["Bob"] == "awaited"
        await bob.send({"type": "rematch", "answer": True})
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        assert dict(started["seats"]) == {"Alice": "yes", "Bob": "yes", "Ada (bot)": "bot"}
        assert (await bob.expect(p.SEATED))["table"] == started["next"]


async def test_a_friend_played_for_past_the_grace_is_left_out_of_the_rematch(tmp_path):
    async with start_server(tmp_path, grace=0.5) as server:
        alice, bob, _ = await friday(server)
        await bob.close()
        await alice.expect(p.TABLE, status_is(2, "away"))
        await play_out(alice)
        offer = await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        assert dict(offer["seats"])["Bob"] == "left"


def status_is(seat, status):
    return lambda m: m["table"]["players"][seat]["status"] == status


async def test_a_restart_during_the_wait_loses_no_answer(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        tokens = {"Alice": alice.token, "Bob": bob.token}
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "resume", "table": table, "token": tokens["Bob"]}, p.SEATED)
        offer = await bob.expect(p.REMATCH_STATUS)
        assert dict(offer["seats"])["Alice"] == "yes" and offer["outcome"] == "waiting"
        # Bob's yes comes before Alice is back: the rematch waits for her.
        await bob.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await alice.request({"type": "resume", "table": table, "token": tokens["Alice"]}, p.SEATED)
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        assert (await alice.expect(p.SEATED))["table"] == started["next"]
        assert (await bob.expect(p.SEATED))["table"] == started["next"]
    # Gone ahead, the offer is not waited for again after another restart.
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send({"type": "resume", "table": table, "token": tokens["Alice"]})
        await alice.expect_error(p.NO_SUCH_TABLE)


async def test_the_wait_runs_out_and_who_did_not_answer_is_left_out(tmp_path):
    async with start_server(tmp_path, rematch_wait=0.5) as server:
        alice, bob, _table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        started = await bob.expect(p.REMATCH_STATUS, lambda m: m["outcome"] != "waiting")
        assert started["outcome"] == "started"
        assert dict(started["seats"]) == {"Alice": "yes", "Bob": "late", "Ada (bot)": "bot"}
        await bob.send({"type": "rematch", "answer": True})
        await bob.expect_error(p.NO_REMATCH)


async def test_the_refusals_before_the_end_twice_and_from_a_spectator(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server, hands=2)
        lobby = await NetClient.connect(server.port, "Cy")
        await lobby.send({"type": "rematch", "answer": True})
        await lobby.expect_error(p.NOT_AT_TABLE)
        await alice.send({"type": "rematch", "answer": True})
        early = await alice.expect_error(p.NO_REMATCH)
        assert "not over" in early["message"]
        await lobby.request({"type": "watch", "table": table}, p.WATCHING)
        await play_out(alice, bob)
        await lobby.expect(p.SESSION_END)
        await lobby.send({"type": "rematch", "answer": True})
        await lobby.expect_error(p.NOT_SEATED)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await alice.send({"type": "rematch", "answer": True})
        twice = await alice.expect_error(p.NO_REMATCH)
        assert "already" in twice["message"]
        # A mind changed is not twice: Alice may say no after yes.
        changed = await alice.request({"type": "rematch", "answer": False}, p.REMATCH_STATUS)
        assert dict(changed["seats"])["Alice"] == "no"
        # The spectator moves on to watch the rematch once it goes ahead.
        await alice.send({"type": "rematch", "answer": True})
        await bob.send({"type": "rematch", "answer": True})
        started = await lobby.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        watching = await lobby.expect(p.WATCHING)
        assert watching["table"] == started["next"]


@pytest.mark.e2e
async def test_the_ledger_command_settles_up_every_table_and_the_chain(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server)
        first, _ = await play_out(alice, bob)
        await alice.send({"type": "rematch", "answer": True})
        await bob.send({"type": "rematch", "answer": True})
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        new = started["next"]
        await alice.expect(p.UPDATE, lambda m: m["table"] == new)  # the rematch under way
        out = ledger(tmp_path)
        assert f"table {table} 'Friday'" in out and f"table {new} 'Friday'" in out
        assert f"a rematch of table {table}" in out
        first_text = out.split(f"table {new}")[0]
        words = ", ".join(
            f"{payer} pays {payee} {amount} chip{'s' if amount != 1 else ''}"
            for payer, payee, amount in first["settle_up"]
        )
        assert f"settle up: {words or 'All square'}" in first_text
        assert "the 2 sessions together:" in out.split(f"table {new}")[1]


def ledger(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tonk.server", "ledger", "--db", str(tmp_path / "tonk.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


async def test_the_combined_standings_survive_a_restart_of_the_server(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _table = await friday(server, hands=2)
        first, _ = await play_out(alice, bob)
        await alice.send({"type": "rematch", "answer": True})
        await bob.send({"type": "rematch", "answer": True})
        started = await alice.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        new = started["next"]
        token = (await alice.expect(p.SEATED))["token"]
        bob_token = (await bob.expect(p.SEATED))["token"]
        await alice.expect(p.UPDATE, lambda m: m["table"] == new)
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        bob = await NetClient.connect(server.port, "Bob")
        await alice.request({"type": "resume", "table": new, "token": token}, p.SEATED)
        await bob.request({"type": "resume", "table": new, "token": bob_token}, p.SEATED)
        second, _ = await play_out(alice, bob)
        assert second["table"] == new and second["combined"]["sessions"] == 2
        totals = dict(first["standings"])
        for name, balance in second["standings"]:
            totals[name] = totals.get(name, 0) + balance
        assert dict(second["combined"]["standings"]) == totals


async def test_an_offer_nobody_comes_back_to_after_a_restart_runs_out_and_the_table_goes(
    tmp_path,
):
    async with start_server(tmp_path, rematch_wait=1.5) as server:
        alice, bob, table = await friday(server)
        await play_out(alice, bob)
    async with start_server(tmp_path) as server:
        assert table in server.tables  # the offer still waits
        await asyncio.sleep(1.6)
        for _ in range(50):
            if table not in server.tables:
                break
            await asyncio.sleep(0.05)
        assert table not in server.tables
    async with start_server(tmp_path) as server:
        assert table not in server.tables  # called off: not waited for again


async def test_a_yes_whose_link_dropped_is_waited_for_and_seated_once_back(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        token = alice.token
        await alice.close()
        held = await bob.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        # Every answer is in, but Alice is not here to be seated: it waits for her.
        assert held["outcome"] == "waiting" and held["seconds"] > 0
        assert dict(held["seats"]) == {"Alice": "yes", "Bob": "yes", "Ada (bot)": "bot"}
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        started = await bob.expect(p.REMATCH_STATUS, lambda m: m["outcome"] == "started")
        assert (await alice.expect(p.SEATED))["table"] == started["next"]
        assert (await bob.expect(p.SEATED))["table"] == started["next"]


async def test_a_yes_not_back_when_the_wait_runs_out_is_left_out(tmp_path):
    async with start_server(tmp_path, rematch_wait=1.0) as server:
        alice, bob, _table = await friday(server)
        await play_out(alice, bob)
        await alice.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        await alice.close()
        await bob.request({"type": "rematch", "answer": True}, p.REMATCH_STATUS)
        started = await bob.expect(p.REMATCH_STATUS, lambda m: m["outcome"] != "waiting")
        assert started["outcome"] == "started"
        assert dict(started["seats"])["Alice"] == "left"
        info = await bob.expect(p.TABLE, lambda m: m["table"]["id"] == started["next"])
        assert [pl["name"] for pl in info["table"]["players"]] == ["Ada (bot)", "Bob"]


def test_the_wait_is_the_servers_option_above_zero():
    assert build_config(parse_args(["--rematch-wait", "30"])).rematch_wait == 30.0
    assert build_config(parse_args([])).rematch_wait == 120.0
    with pytest.raises(ValueError, match="--rematch-wait takes a number of seconds above 0"):
        build_config(parse_args(["--rematch-wait", "0"]))
