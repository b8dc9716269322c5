"""The lobby, the create-table form, taking a seat, watching, and the end of a session, with
the client's keys against a real server on loopback."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from clientkit import (
    BOTS,
    MINE,
    at_my_turn,
    deck_text,
    in_the_lobby,
    joined_app,
    log_text,
    my_turn,
    practice_app,
    running,
    screen_shown,
    start_kitchen,
    table_request,
    table_state,
    type_text,
    wait_for,
)
from netclient import NetClient, start_server
from ptyterm import Term
from rich.console import Console
from rich.table import Table
from rich.text import Text
from termkit import command_path, tonk_server
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Label, Select, Static
from tonk.client.app import ClientConfig, TonkApp
from tonk.client.dialogs import (
    ConfirmModal,
    CreateTableScreen,
    EndOfHandModal,
    HelpScreen,
    HistoryScreen,
    StandingsScreen,
)
from tonk.client.door.door_child import WatchApp
from tonk.client.screens import LobbyScreen, TableScreen
from tonk.client.screens.lobby import LOBBY_COLUMNS
from tonk.client.widgets import HandView, KeyBar, PlayersPanel, StatusBar
from tonk.shared.game.rules import OPTIONS
from tonk.shared.wire import protocol as p


async def new_table_form(pilot: Pilot[Any]) -> CreateTableScreen:
    """n in the lobby: the create-table form, shown."""
    await pilot.press("n")
    await screen_shown(pilot, CreateTableScreen, "the form")
    form = pilot.app.screen
    assert isinstance(form, CreateTableScreen)
    return form


@pytest.mark.slow
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
        async with in_the_lobby(app) as pilot:
            table = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: table.row_count == 1, "the list of tables")
            info = app.lobby.tables[0]
            assert (info.name, info.rules, info.stake, info.unit) == ("Friday", "speno", 5, "cents")
            assert (info.seats_taken, info.seats, info.players) == (1, 3, ("Alice",))
            # A second table appears by itself (no key to refresh the list).
            bob = await NetClient.connect(server.port, "Bob")
            await bob.send({"type": "create_table", "name": "Saturday"})
            await bob.expect("seated")
            await wait_for(pilot, lambda: len(app.lobby.tables) == 2, "two tables")
            assert [t.name for t in app.lobby.tables] == ["Friday", "Saturday"]
            # enter on the second row takes a seat there.
            await wait_for(pilot, lambda: table.row_count == 2, "two rows")
            await pilot.press("down", "enter")
            await screen_shown(pilot, TableScreen, "the table")
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


async def test_the_lobby_names_the_people_at_a_table_and_counts_its_bots(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        ada = await NetClient.connect(server.port, "Ada")
        await ada.send({"type": "create_table", "name": "Kitchen", "seats": 4})
        await ada.expect("seated")
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            table = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: table.row_count == 1, "the list of tables")
            assert table.get_cell_at(Coordinate(0, 7)) == "Ada"
            for _ in range(3):  # the table is full: it starts
                await ada.send({"type": "add_bot"})
            await wait_for(pilot, lambda: app.lobby.tables[0].bots == 3, "three bots")
            await pilot.pause()
            info = app.lobby.tables[0]
            assert (info.players, info.bots, info.seats_taken) == (("Ada",), 3, 4)
            assert table.get_cell_at(Coordinate(0, 7)) == "Ada + 3 bots"
            # The column grew with its cell (not cut to the "Ada" it was first drawn with),
            # and a full table's line fits 80 columns.
            assert table.columns["players"].content_width >= len("Ada + 3 bots")
            assert table.virtual_size.width <= 80
            await ada.close()


async def test_a_late_friend_is_asked_to_take_a_seat_one_of_the_bots_plays(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        ada = await NetClient.connect(server.port, "Ada")
        await ada.create_table("easy", "easy", name="Kitchen", seats=3, open_bot_seats=True)
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            # (Two bots seated fill the table a moment before the game starts: wait for both.)
            await wait_for(
                pilot,
                lambda: [(t.bots, t.playing) for t in app.lobby.tables] == [(2, True)],
                "two bots playing",
            )
            # (The list on screen has the row under its cursor: Enter acts on what is shown.)
            lobby = app.screen
            await wait_for(pilot, lambda: lobby.selected() is not None, "the table's row")
            await pilot.press("enter")
            await screen_shown(pilot, ConfirmModal, "the question")
            assert isinstance(app.screen, ConfirmModal)
            assert app.screen.question.startswith(
                "Kitchen's game has started, and bots play 2 seats there. Take a bot's seat?"
            )
            await ada.close()


@pytest.mark.slow
async def test_the_create_table_form_seats_you_with_bots(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            assert app.lobby.check_action("sit", ()) is None  # no table to sit at yet
            form = await new_table_form(pilot)
            name = form.query_one("#name", Input)
            assert name.value == "Tester's table"  # named for you until you name it
            name.value = ""
            name.focus()
            await type_text(pilot, "Kitchen")
            form.query_one("#preset", Select).value = "pagat"
            form.query_one("#options", Input).value = "hit_lock=1"
            form.query_one("#stake", Input).value = "2"
            await pilot.pause()  # (the rules chosen set the seats: chosen after them)
            note = form.query_one("#form-note", Label)
            form.query_one("#seats", Select).value = 3
            form.query_one("#bots", Select).value = 1
            await pilot.pause()
            assert str(note.render()) == ""  # a seat is left for somebody else
            form.query_one("#bots", Select).value = 2
            # You and the bots fill every seat: said before the table is created.
            await wait_for(pilot, lambda: "nobody" in str(note.render()), "the note")
            assert str(note.render()) == (
                "You and 2 bots fill all 3 seats: nobody else will be able to sit, and the "
                "game starts at once."
            )
            await pilot.press("ctrl+s")
            await screen_shown(pilot, TableScreen, "the new table")
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


def offered(form: CreateTableScreen, select: str) -> list[object]:
    """The values a list of the form offers."""
    return [value for _, value in form.query_one(select, Select)._options]


@asynccontextmanager
async def a_lobby(tmp_path: Path) -> AsyncIterator[tuple[TonkApp, Pilot[None]]]:
    """A server of the test's own, and a client in its lobby."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            yield app, pilot


async def test_the_form_keeps_the_field_with_the_focus_in_sight_when_the_screen_shrinks(
    tmp_path: Path,
) -> None:
    """The focus on Create at 40x50, where the whole form shows; the screen made 24 rows (a
    phone turned, a terminal made smaller): the form scrolls so that Create is still seen."""
    async with a_lobby(tmp_path) as (app, pilot):
        await pilot.resize_terminal(40, 50)
        form = await new_table_form(pilot)
        create = form.query_one("#create", Button)
        create.focus()
        await pilot.pause()
        assert form.region.contains_region(create.region), (form.region, create.region)
        await pilot.resize_terminal(40, 24)
        await wait_for(
            pilot,
            lambda: form.size.height == 24 and form.region.contains_region(create.region),
            "Create in sight at 40x24",
        )
        assert app.screen.focused is create


async def test_the_form_offers_the_seats_the_rules_allow_and_keeps_what_was_refused(
    tmp_path: Path,
) -> None:
    async with a_lobby(tmp_path) as (app, pilot):
        form = await new_table_form(pilot)
        seats = form.query_one("#seats", Select)
        # Classic seats 2 to 4 (5 was offered, and refused by the server), 4 at first.
        assert (offered(form, "#seats"), seats.value) == ([2, 3, 4], 4)
        assert offered(form, "#bots") == [0, 1, 2, 3]
        # Other rules set the seats to their number of players, as docs/playing.md says.
        form.query_one("#preset", Select).value = "pagat"
        await wait_for(pilot, lambda: len(offered(form, "#bots")) == 5, "pagat's seats")
        assert (offered(form, "#seats"), seats.value) == ([2, 3, 4, 5], 5)
        form.query_one("#options", Input).value = "players=3"
        await wait_for(pilot, lambda: len(offered(form, "#bots")) == 3, "three players")
        assert (offered(form, "#seats"), seats.value) == ([2, 3], 3)
        # The server refuses a stake past its range: the form stays, everything in it.
        form.query_one("#name", Input).value = "Rich"
        form.query_one("#stake", Input).value = "5000000"
        await pilot.press("ctrl+s")
        error = form.query_one("#form-error", Label)
        await wait_for(pilot, lambda: "stake" in str(error.render()), "the refusal")
        assert app.screen is form
        assert form.query_one("#name", Input).value == "Rich"
        assert form.query_one("#options", Input).value == "players=3"
        assert (str(form.query_one("#preset", Select).value), seats.value) == ("pagat", 3)
        # Changed, it makes the table, and the form goes.
        form.query_one("#stake", Input).value = "5"
        await pilot.press("ctrl+s")
        await screen_shown(pilot, TableScreen, "the new table")
        await wait_for(pilot, lambda: table_state(app) is not None, "the table")
        assert table_state(app).name == "Rich" and table_state(app).stake == 5  # type: ignore[union-attr]
        await pilot.press("q")
        await screen_shown(pilot, LobbyScreen, "the lobby again, without the form")


def seated_strategies(app: TonkApp) -> list[str | None]:
    """Each seat's bot strategy as the server's table message gives it (None for a person)."""
    connection = app.connection
    assert connection is not None and connection.model.table is not None
    info = connection.model.table.info
    return [player.strategy for player in info.players] if info is not None else []


@pytest.mark.slow
async def test_the_create_table_form_seats_the_bot_strategy_chosen(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            form = await new_table_form(pilot)
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
            assert sorted(bot.strategy for bot in table.play.bots.values()) == ["expert", "expert"]


@pytest.mark.parametrize("opened", [False, True], ids=["kept", "open"])
async def test_the_form_says_whether_a_stranger_may_take_a_bots_seat(
    tmp_path: Path, opened: bool
) -> None:
    """The creator's choice in the form (`bot seats: kept`/`open`) is the table's
    open_bot_seats: a friend who never sat there is refused a bot's seat, or takes it."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            form = await new_table_form(pilot)
            assert form.query_one("#bot-seats", Select).value is False  # kept, unless opened
            form.query_one("#seats", Select).value = 2
            form.query_one("#bots", Select).value = 1
            form.query_one("#bot-seats", Select).value = opened
            await pilot.press("ctrl+s")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the first deal (the table is full)",
            )
            number = int(table_state(app).table_id)  # type: ignore[union-attr]
            assert server.tables[number].config.open_bot_seats is opened
            dee = await NetClient.connect(server.port, "Dee")
            try:
                await dee.send({"type": "take_bot_seat", "table": number, "seat": 1})
                answer = await dee.recv()
                while answer["type"] not in ("error", "table", "seated"):  # (the lobby's)
                    answer = await dee.recv()
            finally:
                await dee.close()
            if opened:
                assert answer["type"] in ("table", "seated"), answer
            else:
                assert answer["type"] == "error" and answer["code"] == "bad_bot", answer
                assert "keeps its bots' seats" in answer["message"]


async def test_a_practice_table_seats_the_bots_named_on_the_command_line() -> None:
    app = practice_app(bots=2, bot_strategies=("expert", "sharp"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot,
            lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
            "the first deal (the table is full)",
        )
        assert seated_strategies(app) == [None, "expert", "sharp"]


@pytest.mark.slow
async def test_the_form_explains_a_bad_option_without_sending(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            form = await new_table_form(pilot)
            form.query_one("#options", Input).value = "hit_lock=9"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, CreateTableScreen)
            error = str(app.screen.query_one("#form-error").render())
            assert "option hit_lock cannot be 9" in error
            # Fixed, the error goes: it was about the form as it was.
            form.query_one("#options", Input).value = "hit_lock=1"
            await pilot.pause()
            assert str(app.screen.query_one("#form-error").render()) == ""
            # The box beside "Session ends" is closed until hands or minutes are chosen,
            # and then asks for how many.
            box = form.query_one("#ends-n", Input)
            assert box.disabled and box.placeholder == "(never ends)"
            form.query_one("#ends", Select).value = "hands"
            await pilot.pause()
            assert not box.disabled and box.placeholder == "how many hands"
            await pilot.press("escape")
            await screen_shown(pilot, LobbyScreen, "the lobby")


def screen_lines(app: TonkApp) -> list[str]:
    """The terminal's lines as the player sees them now."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_the_lobbys_help_lists_the_lobbys_keys_and_no_notice_covers_it(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            await pilot.press("z")  # not a key here: a notice
            await wait_for(pilot, lambda: bool(app._notifications), "the notice")
            await pilot.press("question_mark")
            await screen_shown(pilot, HelpScreen, "the help")
            await pilot.pause()
            text = "\n".join(screen_lines(app))
            assert "Keys in the lobby" in text
            for key, does in (("n", "create a table"), ("w", "watch the table"), ("q", "quit")):
                assert re.search(rf"█ {re.escape(key)} +{does}", text), text
            # Not the table's keys, nor its marks.
            assert "select or unselect" not in text and "On the table" not in text
            assert not app._notifications


@pytest.mark.slow
async def test_the_help_and_the_form_list_every_house_rule_option(tmp_path: Path) -> None:
    """The lobby's help lists the options from the core's table; in the form, the option being
    typed is explained under the field, and f1 opens the help at the options."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            await pilot.press("question_mark")
            await screen_shown(pilot, HelpScreen, "the help")
            assert not any("House-rule options" in line for line in screen_lines(app))
            # The help scrolls down a page at a time (no line skipped) to every option, each named
            # on a line of its own. (Each page is read where it ends: scrolled there at once, not
            # animated.)
            app.animation_level = "none"
            body = app.screen.query_one("#help-body", VerticalScroll)
            seen: set[str] = set()
            for _ in range(300):
                # (less the scroll bar's blocks at the right)
                seen.update(
                    re.sub(r"[▁-█ ]+$", "", line.split("█")[1]).strip()
                    for line in screen_lines(app)[2:-2]
                )
                if body.scroll_y >= body.max_scroll_y:
                    break
                await pilot.press("pagedown")
                await pilot.pause()
            assert set(OPTIONS) <= seen
            await pilot.press("escape")
            await screen_shown(pilot, LobbyScreen, "the lobby")
            form = await new_table_form(pilot)
            hint = form.query_one("#option-help", Label)
            form.query_one("#options", Input).focus()
            await type_text(pilot, "hit_l")
            await wait_for(pilot, lambda: "hit_lock" in str(hint.render()), "the names")
            assert str(hint.render()) == "Options: hit_lock"
            await type_text(pilot, "ock=")
            await wait_for(pilot, lambda: "takes" in str(hint.render()), "the option's help")
            shown = "\n".join(screen_lines(app))
            text = str(hint.render())
            assert "hit_lock: takes a whole number of turns, 0 (off) to 5; classic: 0." in text
            assert "player whose spread is hit may not drop" in text  # (what it does, after)
            # Right under the field it explains, in the column typed in.
            rows = shown.splitlines()
            at = next(i for i, row in enumerate(rows) if "Options " in row)
            assert "hit_lock: takes a whole number" in rows[at + 1], shown
            assert rows[at + 1].index("hit_lock:") == rows[at].index("hit_lock=")
            await pilot.press("f1")
            await screen_shown(pilot, HelpScreen, "the help")
            await wait_for(
                pilot,
                lambda: any("House-rule options" in line for line in screen_lines(app)),
                "the help at the options",
            )
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is form, "the form")
            assert form.query_one("#options", Input).value == "hit_lock="


@pytest.mark.slow
async def test_the_form_reads_options_as_the_core_does(tmp_path: Path) -> None:
    """`deal_tonk_low=off` (the core's word for no low tonk) and `hit_books=yes` make the table;
    the form once read `off` as false and refused it."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateTableScreen), "the form")
            form = app.screen
            form.query_one("#preset", Select).value = "speno"
            form.query_one("#options", Input).value = "deal_tonk_low=off, hit_books=yes"
            await pilot.pause()
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, TableScreen), "the new table")
            await wait_for(pilot, lambda: table_state(app) is not None, "the table")
            rules = table_state(app).rules  # type: ignore[union-attr]
            assert rules.preset == "speno" and rules.deal_tonk_low is None
            assert rules.hit_books is True and rules.name == "speno+"


async def test_watching_shows_no_hand_and_only_the_keys_a_spectator_has(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send(
            {"type": "create_table", "name": "Open", "seats": 2, "bot_pause": 0.0, "seed": 3}
        )
        await alice.expect("seated")
        await alice.send({"type": "add_bot"})
        await alice.expect("update")
        app = joined_app(server.port, tmp_path / "state")
        async with running(app, lambda: app.lobby.tables, "the list of tables") as pilot:
            await pilot.press("w")
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the table's view",
            )
            state = table_state(app)
            assert state is not None and state.seat is None
            assert state.view is not None and state.view.hand == ()
            note = app.table_screen.query_one(HandView).note
            assert str(note).startswith("You are watching this table.")
            # Only the keys that work for a spectator are on the key bar: no moves, no sort;
            # chat, the history, taking the bot's seat, help and leaving.
            for action in ("draw", "pickup", "drop", "spread", "hit", "discard", "order"):
                assert app.table_screen.check_action(action, ()) is False, action
            shown = {entry.key for entry in app.table_screen.query_one(KeyBar).entries}
            assert shown == {"c", "l", "t", "question_mark", "q"}, shown
            await pilot.press("d")  # pressed anyway: it says why not
            await pilot.pause()
            assert any("You are watching" in n.message for n in app._notifications)
            await alice.close()


def screen_words(screen: Screen[Any]) -> str:
    """Every line the screen's texts and tables show."""
    console = Console(width=76, record=True, file=io.StringIO())
    for widget in screen.query(Static):
        content = widget.content
        console.print(content if isinstance(content, Table | Text) else str(content))
    return console.export_text()


async def test_the_last_hand_s_window_comes_before_the_standings(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request(hands=2))
        async with at_my_turn(app) as pilot:
            status = app.table_screen.query_one(StatusBar)
            assert "hand 1 of 2" in status.text, status.text
            await pilot.press("k", "k")  # 36 against the bot's 35: caught
            await wait_for(pilot, lambda: "last hand (2 of 2)" in status.text, "the last hand")
            await wait_for(pilot, lambda: my_turn(app), "our turn in the last hand")
            await pilot.press("k", "k")
            # The last hand's window, its cards shown, stays until it is closed: the final
            # standings wait behind it.
            await screen_shown(pilot, EndOfHandModal, "the last hand's window")
            window = app.screen
            await wait_for(
                pilot,
                lambda: "enter: the final standings" in screen_words(window),
                "the way on to the standings",
            )
            shown = screen_words(window)
            assert "Hand 2 is over" in shown and "Ada (bot)" in shown and "pays" in shown
            assert not any(isinstance(s, StandingsScreen) for s in app.screen_stack)
            await pilot.press("enter")
            await screen_shown(pilot, StandingsScreen, "the standings")
            standings = app.screen
            assert isinstance(standings, StandingsScreen)
            assert "l: history" in screen_words(standings)
            # l: the session's hands, over the standings; escape goes back to them.
            await pilot.press("l")
            await screen_shown(pilot, HistoryScreen, "the history")
            await pilot.press("escape")
            await screen_shown(pilot, StandingsScreen, "the standings again")
            assert standings.standings == [("Ada (bot)", 1), ("Tester", -1)]
            assert standings.hands == 2
            assert standings.ended.last_hand[0].startswith("Hand 2: ")
            assert standings.ended.settle_up == (("Tester", "Ada (bot)", 1),)
            assert "The session is over." in log_text(app)
            await pilot.press("enter")
            await screen_shown(pilot, LobbyScreen, "the lobby")


async def test_rematch_answers_given_behind_the_last_hands_window_are_on_the_standings(
    tmp_path: Path,
) -> None:
    """A friend says yes while the last hand's window is still up (its cards being read):
    the standings that come after it say so, not the offer as if nobody had answered."""
    async with start_server(tmp_path) as server:
        request = table_request(bots=0, seats=2, hands=1)
        app = joined_app(server.port, tmp_path / "state", table=request)
        alice = await NetClient.connect(server.port, "Alice")
        try:
            async with running(app, lambda: table_state(app) is not None, "the table") as pilot:
                table_id = int(table_state(app).table_id)  # type: ignore[union-attr]
                await alice.request({"type": p.SIT, "table": table_id}, p.SEATED)
                await wait_for(pilot, lambda: my_turn(app), "our turn")
                await pilot.press("k", "k")  # 36 against Alice's 35: caught, and over
                await screen_shown(pilot, EndOfHandModal, "the last hand's window")
                await alice.expect(p.SESSION_END)
                await alice.request({"type": p.REMATCH, "answer": True}, p.REMATCH_STATUS)
                # Her chat after it comes after it: once it is in the log, so is her answer.
                await alice.send({"type": p.CHAT, "text": "again?"})
                await wait_for(pilot, lambda: "<Alice> again?" in log_text(app), "her chat")
                assert isinstance(app.screen, EndOfHandModal)
                await pilot.press("enter")
                await screen_shown(pilot, StandingsScreen, "the standings")
                await wait_for(
                    pilot,
                    lambda: "Alice: yes" in screen_words(app.screen),
                    "Alice's yes on the standings",
                )
                assert "Tester (you): not answered yet" in screen_words(app.screen)
        finally:
            await alice.close()


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
        async with in_the_lobby(app) as pilot:
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


async def test_on_a_phone_the_key_for_a_friend_who_lost_the_link_is_on_the_bar(
    tmp_path: Path,
) -> None:
    """At 40 columns the key bar's two rows cannot hold every key: f, which applies only
    while a friend has lost the connection, is kept on it then, before the keys that are
    always there to be read in the help."""
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await start_kitchen(alice)
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(40, 36)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
            table = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: table.row_count == 1, "the table listed")
            await pilot.press("enter")
            await wait_for(pilot, lambda: my_turn(app), "our turn")
            bar = app.table_screen.query_one(KeyBar)
            assert "f Don't wait" not in " ".join(line.plain for line in bar.lines)
            await alice.close()
            await wait_for(
                pilot,
                lambda: app.table_screen.check_action("play_for_now", ()) is True,
                "f open: Alice lost the connection",
            )
            await wait_for(
                pilot,
                lambda: "f Don't wait" in " ".join(line.plain for line in bar.lines),
                "f on the key bar",
            )
            assert len(bar.lines) == 2
            shown = " ".join(line.plain for line in bar.lines)
            assert all(key in shown for key in ("d Draw", "k Drop", "q Leave")), shown


@pytest.mark.slow
async def test_the_creator_starts_a_table_that_is_not_full_with_g(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            form = await new_table_form(pilot)
            form.query_one("#seats", Select).value = 4
            form.query_one("#bots", Select).value = 1
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


async def test_the_lobby_follows_the_server_by_itself_and_keeps_the_cursor(tmp_path: Path) -> None:
    """Tables created, filled, started and closed show without a key pressed; the cursor
    stays on the table it is on while rows above it come and go."""
    async with start_server(tmp_path, lobby_interval=0.05) as server:
        makers = [await NetClient.connect(server.port, name) for name in ("Ann", "Ben", "Cy")]
        ids = []
        for maker in makers:
            seated = await maker.request(
                {"type": "create_table", "name": f"{maker.name}'s", "seats": 3}, "seated"
            )
            ids.append(seated["table"])
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(100, 30)) as pilot:
            await screen_shown(pilot, LobbyScreen, "the lobby")
            grid = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: grid.row_count == 3, "three tables")
            await pilot.press("down", "down")
            assert app.lobby.selected().name == "Cy's"  # type: ignore[union-attr]
            # A seat is taken at Cy's table: its row says so.
            dee = await NetClient.connect(server.port, "Dee")
            await dee.request({"type": "sit", "table": ids[2]}, "seated")
            await wait_for(
                pilot, lambda: app.lobby.tables[-1].seats_taken == 2, "Cy's table with two"
            )
            assert "Dee" in str(grid.get_row(str(ids[2]))[-1])
            # Ann's table closes (her last player leaves), a new one comes: the cursor stays
            # on Cy's.
            await makers[0].request({"type": "leave"}, "left")
            eve = await NetClient.connect(server.port, "Eve")
            await eve.request({"type": "create_table", "name": "Eve's", "seats": 2}, "seated")
            await wait_for(
                pilot,
                lambda: [t.name for t in app.lobby.tables] == ["Ben's", "Cy's", "Eve's"],
                "Ann's gone and Eve's come",
            )
            assert grid.row_count == 3
            assert app.lobby.selected().name == "Cy's"  # type: ignore[union-attr]
            # Eve's fills up and starts: shown playing.
            fay = await NetClient.connect(server.port, "Fay")
            await fay.request({"type": "sit", "table": app.lobby.tables[-1].number}, "seated")
            await wait_for(pilot, lambda: app.lobby.tables[-1].playing, "Eve's table playing")
            assert str(grid.get_row(app.lobby.tables[-1].table_id)[5]) == "playing"
            assert "r" not in {binding.key for binding in LobbyScreen.BINDINGS}
            for client in (*makers, dee, eve, fay):
                await client.close()


async def test_a_long_list_comes_page_by_page_and_stays_whole(tmp_path: Path) -> None:
    async with start_server(tmp_path, limit_changes={"max_tables_per_address": 300}) as server:
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(230):
            await maker.send({"type": "create_table", "name": f"T{i:03}", "sit": False})
        await maker.expect("table", lambda m: m["table"]["name"] == "T229")
        app = joined_app(server.port, tmp_path / "state")
        async with running(app, lambda: len(app.lobby.tables) == 230, "every page") as pilot:
            assert [t.name for t in app.lobby.tables] == [f"T{i:03}" for i in range(230)]
            assert app.lobby.query_one(DataTable).row_count == 230
            await maker.send({"type": "create_table", "name": "T230", "sit": False})
            await wait_for(pilot, lambda: len(app.lobby.tables) == 231, "one more")
            await maker.close()


async def test_a_spectator_cannot_pass_for_a_seated_player_in_the_chat(tmp_path: Path) -> None:
    """Somebody watching who goes by a player's name: the server says the line is a
    spectator's (seat nil), and the client shows it marked, unlike the player's own."""
    async with start_server(tmp_path) as server:
        bob = await NetClient.connect(server.port, "Bob")
        seated = await bob.request({"type": "create_table", "name": "Den", "seats": 3}, "seated")
        app = joined_app(server.port, tmp_path / "state", name="Bob")
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: len(app.lobby.tables) == 1, "the table")
            await pilot.press("w")
            await wait_for(pilot, lambda: table_state(app) is not None, "watching")
            assert table_state(app).seat is None  # type: ignore[union-attr]
            await pilot.press("c")
            await type_text(pilot, "I am Bob")
            await pilot.press("enter")
            heard = await bob.expect("chat")
            assert (heard["name"], heard["seat"], heard["text"]) == ("Bob", None, "I am Bob")
            await bob.send({"type": "chat", "text": "No, I am"})
            mine = await bob.expect("chat", lambda m: m["text"] == "No, I am")
            assert (mine["name"], mine["seat"]) == ("Bob", seated["seat"])
            await wait_for(pilot, lambda: "No, I am" in log_text(app), "Bob's line")
            lines = [line.text.plain for line in table_state(app).log if line.chat]  # type: ignore[union-attr]
            assert lines == ["[Bob, watching] I am Bob", "<Bob> No, I am"]
            await bob.close()


async def test_the_list_that_comes_with_the_welcome_is_shown_at_once(tmp_path: Path) -> None:
    """The first page arrives right behind `welcome`, often in the same read: it is shown
    without waiting for anything more from the server. A scripted server writes the two in
    one write, and then nothing (no ping) until the client hangs up."""
    summary = {
        "id": 3,
        "name": "Early",
        "rules": {"preset": "classic"},
        "rules_name": "classic",
        "stake": 1,
        "unit": "chips",
        "seats": 4,
        "taken": 1,
        "free": 3,
        "state": "waiting",
        "spectators": 0,
        "turn_timer": None,
        "hands": None,
        "minutes": None,
        "bot_pause": 1.0,
        "hands_played": 0,
        "creator": None,
        "dealer": None,
        "paused": None,
        "players": [],
        "changes": {},
    }

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = p.FrameDecoder()
        while (hello := decoder.next_message()) is None:
            decoder.feed(await reader.read(4096))
        welcome = {
            "type": p.WELCOME,
            "version": p.PROTOCOL_VERSION,
            "server": "scripted",
            "name": hello["name"],
            "limits": {"heartbeat": 3600.0},
            "dev": False,
        }
        page = {"type": p.TABLES, "tables": [summary], "after": 0, "more": False, "total": 1}
        writer.write(p.encode(welcome) + p.encode(page))
        await writer.drain()
        while await reader.read(4096):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        app = joined_app(port, tmp_path / "state")
        async with in_the_lobby(app):
            assert [t.name for t in app.lobby.tables] == ["Early"]


@pytest.mark.slow
async def test_every_options_explanation_fits_the_form_at_80x24(tmp_path: Path) -> None:
    """Typing any option's name explains it under the field, and the form's buttons and its
    line of keys stay on the screen at 80x24 (the longest explanation once pushed the keys
    off the bottom)."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        async with in_the_lobby(app) as pilot:
            form = await new_table_form(pilot)
            field = form.query_one("#options", Input)
            hint = form.query_one("#option-help", Label)
            for name in OPTIONS:
                field.value = f"{name}="
                await wait_for(pilot, lambda n=name: f"{n}:" in str(hint.render()), name)
                await pilot.pause()
                lines = screen_lines(app)
                assert len(lines) == 24
                shown = "\n".join(lines)
                assert "ctrl+s: create" in shown and "escape: cancel" in shown, (name, shown)
                assert "Create" in shown and "Cancel" in shown, name
                assert f"{name}:" in shown, name  # the explanation is shown, if shortened


def test_a_long_row_wraps_its_name_and_players_to_fit_the_screen_and_cuts_nothing() -> None:
    from tonk.client.screens.lobby import lobby_layout

    people = "Bartholomew, Maximiliana, Konstantin + 1 bot"
    cells = ("1", "Friday night", "classic", "1 chip", "4/4", "playing, your seat", "0", people)
    rows = {"1": cells}
    shown, laid = lobby_layout(rows, 79)
    assert shown == tuple(range(len(LOBBY_COLUMNS)))  # (80 columns and up: every column)
    widths = [
        max(len(h), *(len(line) for line in c.split("\n"))) + 2
        for (_, h), c in zip(LOBBY_COLUMNS, laid["1"], strict=True)
    ]
    assert sum(widths) <= 79, widths
    # On more rows, whole (a word longer than the room broken where it must be).
    assert "".join(laid["1"][-1].split()) == "".join(people.split())
    # With room, the row is as it was.
    assert lobby_layout(rows, 200) == (shown, rows)


async def test_the_lobby_at_40_columns_fits_without_a_sideways_scroll_and_cuts_nothing(
    tmp_path: Path,
) -> None:
    """An upright phone's lobby: the title on two rows, the list without the columns it has
    no room for (what they say is under it, for the table chosen), a long name on two rows,
    and every key on the key bar's two rows."""
    async with start_server(tmp_path) as server:
        ada = await NetClient.connect(server.port, "Ada")
        await ada.send({"type": "create_table", "name": "The long kitchen table", "seats": 4})
        await ada.expect("seated")
        app = joined_app(server.port, tmp_path / "state")
        async with app.run_test(size=(40, 24)) as pilot:
            await screen_shown(pilot, LobbyScreen, "the lobby")
            grid = app.lobby.query_one(DataTable)
            await wait_for(pilot, lambda: grid.row_count == 1, "the list of tables")
            await pilot.pause()
            assert grid.virtual_size.width <= grid.scrollable_content_region.width
            assert grid.max_scroll_x == 0
            text = "\n".join(screen_lines(app))
            assert "playing as Tester" in text and "127.0.0.1" in text, text
            assert "…" not in text
            assert re.search(r"The long +\d/4 +Ada", text) and "kitchen table" in text, text
            assert "The long kitchen table: classic · 1 chip · waiting · 0 watching" in " ".join(
                line.strip() for line in text.splitlines()
            ), text
            # Broken between its parts, not inside one ("1" at a row's end, "chip" under it).
            assert any("1 chip" in line for line in text.splitlines()), text
            for key in ("n New table", "w Watch", "s Standings", "? Help", "q Quit"):
                assert key in text, text
        await ada.close()


async def test_the_form_at_40_and_43_columns_shows_the_bots_strategy_and_the_end_whole(
    tmp_path: Path,
) -> None:
    """Upright (a phone's page, a narrow pane): the bots' strategy, the longest one too, and
    the box for how many hands or minutes are not cut (they once showed "eas" and "(never
    ends"); each label is above its field."""
    async with start_server(tmp_path) as server:
        for width in (40, 43):
            app = joined_app(server.port, tmp_path / f"state-{width}")
            async with app.run_test(size=(width, 30)) as pilot:
                await screen_shown(pilot, LobbyScreen, "the lobby")
                form = await new_table_form(pilot)
                await pilot.pause()
                for strategy in ("easy", "sharp", "expert"):
                    form.query_one("#strategy", Select).value = strategy
                    await pilot.pause()
                    row = under_label(screen_lines(app), "Seats, bots")
                    assert re.search(rf"\b{strategy} +▼", row), (width, row)
                # (How the session ends, and under it how many: each row to itself.)
                lines = screen_lines(app)
                at = next(n for n, line in enumerate(lines) if "Session ends" in line)
                assert re.search(r"\bnever +▼", lines[at + 1]), (width, lines[at + 1])
                assert "(never ends)" in lines[at + 2], (width, lines[at + 2])


def under_label(lines: list[str], label: str) -> str:
    """The form's row under `label` (upright, each label is above its field)."""
    at = next(n for n, line in enumerate(lines) if label in line)
    assert lines[at].strip("█│ ") == label, lines[at]  # the label's row is its own
    return lines[at + 1]


@pytest.mark.e2e
async def test_the_lobby_says_what_a_tables_rules_changed_and_when_it_ends(
    tmp_path: Path, term: Term
) -> None:
    """`pagat+` in the list; under it, for the table under the cursor, the options changed,
    as they are typed in the form, the turn timer and when the session ends. A table of a
    preset as it is, with neither, has no such line. On a real terminal, a real server."""
    with tonk_server(tmp_path) as port:
        ada, cy = await NetClient.connect(port, "Ada"), await NetClient.connect(port, "Cy")
        await cy.create_table(name="Plain", rules={"preset": "classic"})
        rules = {"preset": "pagat", "hit_lock": 1, "no_rediscard": True}
        await ada.create_table(name="Kitchen", rules=rules)
        dot = await NetClient.connect(port, "Dot")
        await dot.create_table(name="Quick", hands=10, turn_timer=30)
        term.start(
            [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Bo"],
            {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")},
        )
        await term.wait_for_all("Plain", "Kitchen", "pagat+", "Quick")
        assert "hit_lock" not in term.screen()  # the cursor is on Plain: classic as it is
        term.keys("Down")
        note = "Kitchen, pagat+: hit_lock=1 no_rediscard=true"
        await term.wait_for(note)
        term.keys("Up")
        await term.wait_gone("hit_lock")
        # What the row does not say: the turn timer and when the session ends.
        term.keys("End")
        await term.wait_for("Quick: 30 s a turn; ends after 10 hands")
        for client in (ada, cy, dot):
            await client.close()


class Television(WatchApp):
    """The web door's television page, its last hand's window given a shorter time."""

    LAST_WINDOW_SECONDS = WatchApp.LAST_WINDOW_SECONDS / 10


async def test_a_page_that_takes_no_keys_shows_the_standings_after_the_last_hand(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path, bot_pause=0.0) as server:
        bob = await NetClient.connect(server.port, "Bob")
        table = await bob.create_table("easy", name="Telly", seats=2, hands=1)
        await bob.expect("update")
        config = ClientConfig(
            name="Tv", host="127.0.0.1", port=server.port, state_dir=tmp_path / "tv"
        )
        app = Television(config, table)
        async with running(app, lambda: table_state(app) is not None, "watching") as pilot:
            await bob.play_until(lambda m: m["type"] == "session_end", timeout=60)
            # No key pressed: the standings come once the last hand has been seen.
            await screen_shown(pilot, StandingsScreen, "the standings, by themselves")
        await bob.close()
