"""Idle players, through a real server on loopback: a turn left untouched at a table without a
turn timer (the server's `idle_turn`) has its player marked away and played for, as a turn
timer running out would; a person who took a bot's seat and goes (lets a turn run out, or
loses the link) gives the seat back to its bot at once, and the table plays on."""

from __future__ import annotations

from netclient import NetClient, start_server
from test_server_play import TWO_SEAT_DECK, two_players
from tonk.shared.wire import protocol as p

#: The server's limit on a turn left untouched, short for the tests (the default is 300 s).
IDLE_TURN = 1.0


def player(message, seat):
    return message["table"]["players"][seat]


async def a_taker_to_act(server):
    """Alice's table with a bot's seat that Carol takes before the start; the session of the
    two of them under way, Carol (seat 1) to act first. Returns alice, carol, the table's id
    and the bot's name."""
    alice = await NetClient.connect(server.port, "Alice")
    table = await alice.create_table(
        "easy", name="Late", seats=3, dealer=0, deck=TWO_SEAT_DECK, open_bot_seats=True
    )
    made = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
    bot = player(made, 1)["name"]
    carol = await NetClient.connect(server.port, "Carol")
    await carol.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.SEATED)
    await alice.request({"type": "start"}, p.TABLE)
    first = await carol.expect(p.UPDATE)
    assert first["view"]["seat"] == 1 and first["view"]["turn"] == 1
    return alice, carol, table, bot


async def test_an_idle_player_is_marked_away_and_played_for_with_no_turn_timer(tmp_path):
    async with start_server(tmp_path, idle_turn=IDLE_TURN) as server:
        welcome = await (await NetClient.connect(server.port)).hello("Wendy")
        assert welcome["limits"]["idle_turn"] == IDLE_TURN
        alice, bob, _table = await two_players(server, deck=TWO_SEAT_DECK)
        first = await bob.expect(p.UPDATE)
        assert first["view"]["turn"] == 1
        # The limit is the server's backstop, not a timer the table was created with.
        assert first["deadline"] is None
        # Bob does nothing: his turn is played for him, and he is away until he is back.
        await alice.expect(p.TABLE, lambda m: player(m, 1)["status"] == "away")
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        await bob.send({"type": "back"})
        news = await bob.expect(p.AWAY_SUMMARY)
        assert news["turns"] == 1
        back = await bob.expect(p.TABLE, lambda m: player(m, 1)["status"] == "connected")
        assert player(back, 1)["kind"] == "human"  # an ordinary player keeps their seat


async def test_a_taker_who_lets_a_turn_run_out_gives_the_seat_back_to_its_bot(tmp_path):
    async with start_server(tmp_path, idle_turn=IDLE_TURN) as server:
        alice, carol, table, bot = await a_taker_to_act(server)
        # Carol does nothing on her turn: the seat goes back to the bot, which plays it, and
        # she watches the table from then on.
        given = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
        assert player(given, 1)["name"] == bot
        assert "holds_for" not in player(given, 1)  # the seat was the bot's, not Carol's
        watching = await carol.expect(p.WATCHING)
        assert watching["table"] == table
        seen = await carol.expect(p.UPDATE)
        assert seen["view"]["seat"] is None
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        # She may ask for a bot's seat again, watching: she is taken as the hand ends.
        asked = await carol.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.TABLE)
        assert asked["table"]["id"] == table


async def test_a_taker_who_drops_gives_the_seat_back_to_its_bot_without_the_grace(tmp_path):
    # The grace period is two minutes: the table does not wait for it.
    async with start_server(tmp_path, grace=120.0, idle_turn=IDLE_TURN * 600) as server:
        alice, carol, table, bot = await a_taker_to_act(server)
        token = carol.token
        await carol.close()
        given = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
        assert player(given, 1)["name"] == bot
        moved = await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        assert moved["hand"] == 1
        # Carol's token no longer holds the seat, and she is told why.
        carol2 = await NetClient.connect(server.port, "Carol")
        await carol2.send({"type": "resume", "table": table, "token": token})
        error = await carol2.expect_error(p.BAD_TOKEN)
        assert "given to a bot" in error["message"]


async def test_a_taker_who_leaves_a_waiting_table_gives_the_seat_back_to_its_bot(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table("easy", name="Soon", seats=3, open_bot_seats=True)
        made = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] == "bot")
        bot = player(made, 1)["name"]
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "take_bot_seat", "table": table, "seat": 1}, p.SEATED)
        await alice.expect(p.TABLE, lambda m: player(m, 1)["name"] == "Carol")
        await carol.request({"type": "leave"}, p.LEFT)
        back = await alice.expect(p.TABLE, lambda m: player(m, 1)["kind"] != "human")
        assert player(back, 1)["kind"] == "bot" and player(back, 1)["name"] == bot
