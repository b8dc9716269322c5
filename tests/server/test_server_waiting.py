"""Waiting for a friend, through a real server on loopback: the countdown a disconnected seat
shows, having it played for now (the creator, or the players' vote), what a player is told of
the time they were away, a bot's seat taken by a late friend, and an absent player's seat
given to a bot."""

from __future__ import annotations

import sqlite3

from netclient import NetClient, start_server
from test_server_play import TWO_SEAT_DECK, two_players
from tonk.shared.wire import protocol as p


def player(message, seat):
    return message["table"]["players"][seat]


def status_is(seat, status):
    return lambda m: player(m, seat)["status"] == status


async def three_players(server, **table):
    """Alice (the creator), Bob and Carol at a three-seat table, its first hand dealt."""
    alice = await NetClient.connect(server.port, "Alice")
    table_id = await alice.create_table(name="Friday", seats=3, dealer=2, **table)
    bob = await NetClient.connect(server.port, "Bob")
    carol = await NetClient.connect(server.port, "Carol")
    await bob.request({"type": "sit", "table": table_id}, p.SEATED)
    await carol.request({"type": "sit", "table": table_id}, p.SEATED)
    for client in (alice, bob, carol):
        await client.expect(p.UPDATE)
    return alice, bob, carol, table_id


async def test_a_disconnected_seat_shows_everyone_how_long_the_table_waits(tmp_path):
    async with start_server(tmp_path, grace=90.0) as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        wendy = await NetClient.connect(server.port, "Wendy")
        await wendy.request({"type": "watch", "table": table}, p.WATCHING)
        await bob.expect(p.UPDATE)
        await bob.close()
        for client in (alice, wendy):
            lost = await client.expect(p.TABLE, status_is(1, "disconnected"))
            assert 0 < player(lost, 1)["played_for_in"] <= 90
            # Only the disconnected seat carries a countdown.
            assert "played_for_in" not in player(lost, 0)


async def test_the_creator_has_a_seat_played_for_now_and_the_errors_say_why_not(tmp_path):
    async with start_server(tmp_path, grace=120.0) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="Early", seats=3)
        await alice.send({"type": "play_for_now", "seat": 1})
        error = await alice.expect_error(p.NO_HAND)
        assert "not started" in error["message"]
        await alice.close()

        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK)
        wendy = await NetClient.connect(server.port, "Wendy")
        await wendy.request({"type": "watch", "table": table}, p.WATCHING)
        await bob.expect(p.UPDATE)
        await alice.send({"type": "play_for_now", "seat": 1})
        error = await alice.expect_error(p.BAD_VALUE)
        assert "Bob is here" in error["message"]
        await bob.close()
        await alice.expect(p.TABLE, status_is(1, "disconnected"))
        await wendy.send({"type": "play_for_now", "seat": 1})
        await wendy.expect_error(p.NOT_SEATED)
        await alice.send({"type": "play_for_now", "seat": 4})
        await alice.expect_error(p.NO_SUCH_SEAT)
        now = await alice.request({"type": "play_for_now", "seat": 1, "id": 7}, p.TABLE)
        assert player(now, 1)["status"] == "away" and now["reply_to"] == 7
        # Bob's turn is played for him at once, not after the two minutes of grace.
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        await alice.send({"type": "play_for_now", "seat": 1})
        error = await alice.expect_error(p.BAD_VALUE)
        assert "played for already" in error["message"]


async def test_with_no_creator_here_the_players_vote_and_a_majority_decides(tmp_path):
    async with start_server(tmp_path, grace=120.0) as server:
        alice, bob, carol, _ = await three_players(server)
        # While the creator is here, only she decides.
        await bob.close()
        await carol.expect(p.TABLE, status_is(1, "disconnected"))
        await carol.send({"type": "play_for_now", "seat": 1})
        error = await carol.expect_error(p.NOT_CREATOR)
        assert "Alice" in error["message"]
        # The creator gone too: Carol alone is the whole vote (a majority of one).
        await alice.close()
        await carol.expect(p.TABLE, status_is(0, "disconnected"))
        voted = await carol.request({"type": "play_for_now", "seat": 0}, p.TABLE)
        assert player(voted, 0)["status"] == "away"


async def test_a_vote_short_of_a_majority_waits_and_says_who_has_voted(tmp_path):
    async with start_server(tmp_path, grace=120.0) as server:
        alice, bob, carol, _ = await three_players(server, seed=5)
        # Alice (the creator) gone: Bob and Carol are the voters, and a majority of two is two.
        await alice.close()
        await bob.expect(p.TABLE, status_is(0, "disconnected"))
        first = await bob.request({"type": "play_for_now", "seat": 0}, p.TABLE)
        assert player(first, 0)["status"] == "disconnected"
        assert player(first, 0)["votes"] == [1]
        seen = await carol.expect(p.TABLE, lambda m: player(m, 0).get("votes") == [1])
        assert player(seen, 0)["played_for_in"] > 0
        await bob.send({"type": "play_for_now", "seat": 0})
        error = await bob.expect_error(p.BAD_VALUE)
        assert "voted" in error["message"]
        decided = await carol.request({"type": "play_for_now", "seat": 0}, p.TABLE)
        assert player(decided, 0)["status"] == "away" and "votes" not in player(decided, 0)


async def test_a_player_back_with_the_token_is_told_what_happened_while_away(tmp_path):
    async with start_server(tmp_path, grace=0.2) as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK, stake=2)
        await bob.expect(p.UPDATE)
        token = bob.token
        await bob.close()
        await alice.expect(p.TABLE, status_is(1, "away"))
        # Alice plays on; Bob's turns are played for him through the end of a hand.
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=60)
        await alice.expect(p.UPDATE, lambda m: m["hand"] == 2)
        # Bob comes back from a new connection (a new process) with his seat's token.
        bob2 = await NetClient.connect(server.port, "Bob")
        await bob2.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        news = await bob2.expect(p.AWAY_SUMMARY)
        assert news["table"] == table and news["turns"] >= 1
        winners = [name for _, name in news["hands"]]
        assert news["hands"][0][0] == 1
        payments = end["payments"]
        expected_winner = " and ".join(end["names"][n] for n in end["settlement"]["winners"])
        assert winners[0] == (expected_winner or None)
        # He left with 0. (Hand 2 may be over too before he is back: a tonk on its deal, or a
        # drop made for him; then its end is in his news and in his net.)
        last = news["hands"][-1][0]
        if last != end["hand"]:
            end_of_last = await alice.expect(p.HAND_END, lambda m: m["hand"] == last)
        else:
            end_of_last = end
        assert news["net"] == end_of_last["balances"]["Bob"]
        assert payments or news["net"] == 0
        # The moves made for him in the hand in play are named by their events.
        update = await bob2.expect(p.UPDATE)
        if news["hand"]:
            assert news["hand"] == update["hand"]
            for index in news["played_for"]:
                assert update["events"][index]["seat"] == 1
        # Told once: a resume again says nothing more.
        await bob2.request({"type": "resume", "table": table, "token": token}, p.SEATED)
        await bob2.expect(p.UPDATE)
        assert [m for m in bob2.received if m["type"] == p.AWAY_SUMMARY] == [news]


async def test_back_after_a_missed_turn_tells_the_turns_played_for_the_player(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, _ = await two_players(server, deck=TWO_SEAT_DECK, turn_timer=0.2)
        await alice.expect(p.TABLE, status_is(1, "away"))
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        await bob.send({"type": "back"})
        news = await bob.expect(p.AWAY_SUMMARY)
        assert news["turns"] == 1 and news["hand"] == 1 and news["hands"] == []
        kinds = {e["kind"] for m in bob.received if m["type"] == p.UPDATE for e in m["events"]}
        assert "discard" in kinds
        await bob.expect(p.TABLE, status_is(1, "connected"))


async def test_a_late_friend_takes_a_bots_seat_as_the_hand_ends(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(
            "easy", name="Bots", seats=2, stake=3, deck=TWO_SEAT_DECK, open_bot_seats=True
        )
        await alice.expect(p.UPDATE)
        carol = await NetClient.connect(server.port, "Carol")
        await carol.send({"type": "take_bot_seat", "table": table, "seat": 0})
        error = await carol.expect_error(p.BAD_BOT)
        assert "not a bot" in error["message"]
        # Asked during the hand: Carol watches until it ends, then sits in the bot's place.
        asked = await carol.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.TABLE)
        assert asked["table"]["id"] == table
        assert any(m["type"] == p.WATCHING for m in carol.received)
        dave = await NetClient.connect(server.port, "Dave")
        await dave.send({"type": "take_bot_seat", "table": table, "seat": 1})
        await dave.expect_error(p.SEAT_TAKEN)
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=60)
        seated = await carol.expect(p.SEATED)
        assert seated["seat"] == 1
        table_now = await carol.expect(p.TABLE, lambda m: player(m, 1)["name"] == "Carol")
        assert player(table_now, 1)["kind"] == "human" and player(table_now, 1)["balance"] == 0
        ledger = await carol.expect(p.LEDGER)
        bot = end["names"][1]
        assert ledger["balances"][bot] == end["balances"][bot]  # the bot's stays the bot's
        assert ledger["balances"]["Carol"] == 0
        # The next hand is dealt to her.
        update = await carol.expect(p.UPDATE, lambda m: m["hand"] == 2)
        assert update["view"]["seat"] == 1 and update["view"]["hand"]
        # Stored: the seat is Carol's after a restart too.
        with sqlite3.connect(tmp_path / "tonk.db") as db:
            row = db.execute(
                "SELECT name, kind FROM seats WHERE table_id = ? AND seat = 1", (table,)
            ).fetchone()
        assert row == ("Carol", "human")
        await carol.send({"type": "take_bot_seat", "table": table, "seat": 1})
        await carol.expect_error(p.ALREADY_AT_TABLE)


async def test_a_bots_seat_at_a_waiting_table_is_taken_at_once(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table("easy", name="Later", seats=3, open_bot_seats=True)
        await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
        carol = await NetClient.connect(server.port, "Carol")
        seated = await carol.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.SEATED)
        assert seated["seat"] == 1
        alice2 = await NetClient.connect(server.port, "Alice")
        if alice2.name == "Alice":  # the same name may not sit twice at one table
            await alice2.send({"type": "take_bot_seat", "table": table, "seat": 1})
            await alice2.expect_error(p.BAD_BOT)


async def test_a_stranger_takes_no_bots_seat_at_a_table_whose_creator_plays_unless_let(
    tmp_path,
):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table("easy", name="Ours", seats=2, deck=TWO_SEAT_DECK)
        made = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
        assert made["table"]["open_bot_seats"] is False
        mallory = await NetClient.connect(server.port, "Mallory")
        await mallory.send({"type": "take_bot_seat", "table": table, "seat": 1})
        error = await mallory.expect_error(p.BAD_BOT)
        assert "keeps its bots' seats" in error["message"]
        # A table made to be joined (its creator does not sit) takes strangers; and a
        # creator who sits may say so.
        for open_table in (
            {"type": "create_table", "name": "Open", "seats": 3, "sit": False},
            {"type": "create_table", "name": "Let", "seats": 3, "open_bot_seats": True},
        ):
            host = await NetClient.connect(server.port, f"Host{open_table['name']}")
            answer = await host.request(open_table, p.TABLE if "sit" in open_table else p.SEATED)
            opened = int(answer["table"] if "seat" in answer else answer["table"]["id"])
            if "sit" in open_table:  # (sat later, it is still a table made to be joined)
                await host.request({"type": "sit", "table": opened}, p.SEATED)
            await host.send({"type": "add_bot"})
            with_bot = await host.expect(
                p.TABLE, lambda m: any(s["kind"] == "bot" for s in m["table"]["players"])
            )
            assert with_bot["table"]["open_bot_seats"] is True
            bot = next(s["seat"] for s in with_bot["table"]["players"] if s["kind"] == "bot")
            taker = await NetClient.connect(server.port, f"Taker{open_table['name']}")
            seated = await taker.request(
                {"type": "take_bot_seat", "table": opened, "seat": bot}, p.SEATED
            )
            assert seated["seat"] == bot


async def test_the_creator_gives_an_absent_players_seat_to_a_bot(tmp_path):
    async with start_server(tmp_path, grace=120.0) as server:
        alice = await NetClient.connect(server.port, "Alice")
        waiting = await alice.create_table(name="Early", seats=3)
        await alice.send({"type": "seat_to_bot", "seat": 0})
        await alice.expect_error(p.NO_HAND)
        await alice.request({"type": "leave"}, p.LEFT)
        assert waiting

        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK, stake=2)
        await bob.expect(p.UPDATE)
        await alice.send({"type": "seat_to_bot", "seat": 1})
        error = await alice.expect_error(p.BAD_VALUE)
        assert "Bob is here" in error["message"]
        await bob.send({"type": "seat_to_bot", "seat": 0})
        await bob.expect_error(p.NOT_CREATOR)
        token = bob.token
        await bob.close()
        await alice.expect(p.TABLE, status_is(1, "disconnected"))
        given = await alice.request({"type": "seat_to_bot", "seat": 1}, p.TABLE)
        assert player(given, 1)["kind"] == "bot" and player(given, 1)["name"].endswith("(bot)")
        await alice.send({"type": "seat_to_bot", "seat": 1})
        await alice.expect_error(p.BAD_VALUE)
        # The bot plays the seat: Bob's turn is played, and the hand goes on.
        played = await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        assert "holders" not in played  # (Alice saw the seat change hands as it did)
        with sqlite3.connect(tmp_path / "tonk.db") as db:
            kind = db.execute(
                "SELECT kind FROM seats WHERE table_id = ? AND seat = 1", (table,)
            ).fetchone()
        assert kind == ("bot",)
        # Bob's token no longer holds the seat, and he is told why.
        bob2 = await NetClient.connect(server.port, "Bob")
        await bob2.send({"type": "resume", "table": table, "token": token})
        error = await bob2.expect_error(p.BAD_TOKEN)
        assert "given to a bot" in error["message"]
        assert "Take a seat on the table's row in the lobby" in error["message"]  # how
        # He may watch, and take a bot's seat back (his own balance kept under his name).
        await bob2.request({"type": "watch", "table": table}, p.WATCHING)
        # The hand so far names who made each of seat 1's events: Bob, then the bot.
        hand = await bob2.expect(p.UPDATE, lambda m: m["from"] == 0)
        bot_name = player(given, 1)["name"]
        (first, then) = hand["holders"]
        assert first == [1, 0, "Bob"] and then[0] == 1 and then[2] == bot_name, hand["holders"]
        assert 0 < then[1] < len(hand["events"])  # (the bot's moves are among them)
        assert any(e.get("seat") == 1 for e in hand["events"][then[1] :])
        await bob2.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.TABLE)
        end = await alice.play_until(lambda m: m["type"] == p.HAND_END, timeout=60)
        await bob2.expect(p.SEATED)
        back = await bob2.expect(p.TABLE, lambda m: player(m, 1)["name"] == "Bob")
        assert player(back, 1)["balance"] == end["balances"].get("Bob", 0)


async def test_a_connected_player_away_after_a_missed_turn_watches_once_given_to_a_bot(tmp_path):
    async with start_server(tmp_path) as server:
        alice, bob, table = await two_players(server, deck=TWO_SEAT_DECK, turn_timer=0.2)
        await alice.expect(p.TABLE, status_is(1, "away"))
        await alice.request({"type": "seat_to_bot", "seat": 1}, p.TABLE)
        watching = await bob.expect(p.WATCHING)
        assert watching["table"] == table
        seen = await bob.expect(p.UPDATE)
        assert seen["view"]["seat"] is None
