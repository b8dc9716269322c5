"""The lobby, the create-table form, taking a seat, watching, and the end of a session, with
the client's keys against a real server on loopback."""

from __future__ import annotations

import re
from pathlib import Path

from clientkit import (
    BOTS,
    MINE,
    deck_text,
    joined_app,
    log_text,
    my_turn,
    practice_app,
    table_request,
    table_state,
    wait_for,
)
from netclient import NetClient, start_server
from textual.widgets import DataTable, Input, Select
from tonk.client.app import TonkApp
from tonk.client.dialogs import CreateTableScreen, EndOfHandModal, StandingsScreen
from tonk.client.screens import LobbyScreen, TableScreen
from tonk.client.widgets import HandView, PlayersPanel, StatusBar


async def test_the_lobby_lists_tables_and_enter_takes_a_seat(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send(
            {
                "type": "create_table",
                "name": "Friday",
                "rules": {"preset": "speno"},
                "stake": 5,
                "unit": "cents",
                "seats": 3,
            }
        )
        await alice.expect("seated")
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            table = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: table.row_count == 1, "the list of tables")
            info = app.lobby.tables[0]
            assert (info.name, info.rules, info.stake, info.unit) == ("Friday", "speno", 5, "cents")
            assert (info.seats_taken, info.seats, info.players) == (1, 3, ("Alice",))
            # r refreshes: a second table appears.
            bob = await NetClient.connect(server.port, "Bob")
            await bob.send({"type": "create_table", "name": "Saturday"})
            await bob.expect("seated")
            await pilot.press("r")
            await wait_for(pilot, lambda: len(app.lobby.tables) == 2, "two tables")
            assert [t.name for t in app.lobby.tables] == ["Friday", "Saturday"]
            # enter on the second row takes a seat there.
            await wait_for(pilot, lambda: table.row_count == 2, "two rows")
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
            await wait_for(pilot, lambda: table_state(app) is not None, "the table's state")
            state = table_state(app)
            assert state is not None
            assert state.name == "Saturday"
            assert [p.name for p in state.players] == ["Bob", "Tester"]
            assert state.seat == 1
            assert state.view is None
            assert app.table_screen.check_action("start", ()) is False  # only Bob may start
            await bob.send({"type": "start"})
            await wait_for(pilot, lambda: table_state(app).view is not None, "the deal")  # type: ignore[union-attr]
            assert len(table_state(app).view.hand) == 5  # type: ignore[union-attr]
            await alice.close()
            await bob.close()


async def test_the_create_table_form_seats_you_with_bots(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            assert app.lobby.check_action("sit", ()) is None  # no table to sit at yet
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateTableScreen), "the form")
            form = app.screen
            name = form.query_one("#name", Input)
            name.value = ""
            name.focus()
            await pilot.press(*"Kitchen")
            form.query_one("#preset", Select).value = "pagat"
            form.query_one("#options", Input).value = "hit_lock=1"
            form.query_one("#stake", Input).value = "2"
            form.query_one("#seats", Select).value = 3
            form.query_one("#bots", Select).value = 2
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, TableScreen), "the new table")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the first deal (the table is full)",
            )
            state = table_state(app)
            assert state is not None
            assert state.name == "Kitchen"
            assert state.rules.preset == "pagat" and state.rules.hit_lock == 1
            assert state.stake == 2
            assert [p.bot for p in state.players] == [False, True, True]


def seated_strategies(app: TonkApp) -> list[str | None]:
    """Each seat's bot strategy as the server's table message gives it (None for a person)."""
    connection = app.connection
    assert connection is not None and connection.table is not None
    return [player["strategy"] for player in connection.table.info.get("players", [])]


async def test_the_create_table_form_seats_the_bot_strategy_chosen(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateTableScreen), "the form")
            form = app.screen
            offered = [value for _, value in form.query_one("#strategy", Select)._options]
            assert offered == ["easy", "sharp", "expert"]
            form.query_one("#seats", Select).value = 3
            form.query_one("#bots", Select).value = 2
            form.query_one("#strategy", Select).value = "expert"
            await pilot.press("ctrl+s")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the first deal (the table is full)",
            )
            assert seated_strategies(app) == [None, "expert", "expert"]
            table = server.tables[int(table_state(app).table_id)]  # type: ignore[union-attr]
            assert sorted(bot.strategy for bot in table.bots.values()) == ["expert", "expert"]


async def test_a_practice_table_seats_the_bots_named_on_the_command_line() -> None:
    app = practice_app(bots=2, bot_strategies=("expert", "sharp"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot,
            lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
            "the first deal (the table is full)",
        )
        assert seated_strategies(app) == [None, "expert", "sharp"]


async def test_the_form_explains_a_bad_option_without_sending(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateTableScreen), "the form")
            app.screen.query_one("#options", Input).value = "hit_lock=9"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, CreateTableScreen)
            error = str(app.screen.query_one("#form-error").render())
            assert "option hit_lock cannot be 9" in error
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")


async def test_watching_shows_no_hand_and_greys_every_play(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send(
            {"type": "create_table", "name": "Open", "seats": 2, "bot_pause": 0.0, "seed": 3}
        )
        await alice.expect("seated")
        await alice.send({"type": "add_bot"})
        await alice.expect("update")
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.lobby.tables, "the list of tables")
            await pilot.press("w")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the table's view",
            )
            state = table_state(app)
            assert state is not None and state.seat is None
            assert state.view is not None and state.view.hand == ()
            assert app.table_screen.query_one(HandView).note == "You are watching this table."
            for action in ("draw", "pickup", "drop", "spread", "hit", "discard"):
                assert app.table_screen.check_action(action, ()) is None
            await pilot.press("d")
            await pilot.pause()
            assert any("You are watching" in n.message for n in app._notifications)
            await alice.close()


async def test_the_last_hand_of_a_session_shows_the_standings(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request(hands=1))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: my_turn(app), "your first turn")
            await pilot.press("k")  # 36 against the bot's 35: caught
            await wait_for(pilot, lambda: isinstance(app.screen, EndOfHandModal), "the hand's end")
            assert app.screen.settlement.ending.value == "drop_caught"  # type: ignore[attr-defined]
            await wait_for(pilot, lambda: app._standings is not None, "the session's end")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, StandingsScreen), "the standings")
            standings = app.screen
            assert isinstance(standings, StandingsScreen)
            assert standings.standings == [("Ada (bot)", 2), ("Tester", -2)]
            assert standings.hands == 1
            assert "The session is over." in log_text(app)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")


async def test_a_running_turn_timer_and_a_disconnected_player_are_shown(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send(
            {
                "type": "create_table",
                "name": "Timed",
                "seats": 2,
                "turn_timer": 300,
                "dealer": 0,
                "deck": deck_text([BOTS, MINE], dealer=0),
            }
        )
        await alice.expect("seated")
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            table = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: table.row_count == 1, "the table listed")
            await pilot.press("enter")
            await wait_for(pilot, lambda: my_turn(app), "your turn, with the timer running")
            state = table_state(app)
            assert state is not None and state.turn_deadline is not None
            status = app.table_screen.query_one(StatusBar).message
            assert re.search(r"Your turn \(\d+s\): d draw", status), status
            await alice.close()
            await wait_for(
                pilot,
                lambda: not table_state(app).players[0].connected,  # type: ignore[union-attr]
                "Alice shown disconnected",
            )
            line = app.table_screen.query_one(PlayersPanel).line_text(0)
            assert "Alice" in line and "disconnected" in line


async def test_the_creator_starts_a_table_that_is_not_full_with_g(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateTableScreen), "the form")
            app.screen.query_one("#seats", Select).value = 4
            app.screen.query_one("#bots", Select).value = 1
            await pilot.press("ctrl+s")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and len(table_state(app).players) == 2,  # type: ignore[union-attr]
                "you and the bot seated",
            )
            screen = app.table_screen
            await wait_for(pilot, lambda: screen.check_action("start", ()) is True, "g open")
            assert table_state(app).view is None  # type: ignore[union-attr]
            await pilot.press("g")
            await wait_for(pilot, lambda: table_state(app).view is not None, "the first deal")  # type: ignore[union-attr]
            assert table_state(app).view.players == 2  # type: ignore[union-attr]
            assert screen.check_action("start", ()) is False
