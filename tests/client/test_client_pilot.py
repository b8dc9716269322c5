"""The client driven by its keys (Textual's Pilot) against a real server on loopback, dealt
from stacked decks so every hand is known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clientkit import (
    at_my_turn,
    hand_text,
    joined_app,
    log_text,
    my_turn,
    practice_app,
    screen_shown,
    table_request,
    table_state,
    type_text,
    wait_for,
)
from netclient import start_server
from textual.widgets._toast import Toast
from tonk.client.app import TonkApp
from tonk.client.dialogs import ConfirmModal, DropModal, EndOfHandModal, HelpScreen, HitChooser
from tonk.client.screens import LobbyScreen, TableScreen
from tonk.client.widgets import HandView, StatusBar
from tonk.shared.game.cards import format_cards, parse_card
from tonk.shared.game.spreads import SpreadKind
from tonk.shared.game.view import Phase


async def test_a_whole_hand_played_with_the_keys(tmp_path: Path) -> None:
    # The next hand is not dealt while the test reads the end-of-hand window (it would
    # close the window).
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            assert isinstance(app.screen, TableScreen)
            assert hand_text(app) == "5s 6s 7s 9h 9d"
            # Before drawing: draw, pick up and drop are open; spread, hit, discard greyed.
            screen = app.table_screen
            assert screen.check_action("draw", ()) is True
            assert screen.check_action("pickup", ()) is True
            assert screen.check_action("drop", ()) is True
            assert screen.check_action("spread", ()) is None
            assert screen.check_action("discard", ()) is None

            await pilot.press("d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the 8s drawn from the stock")
            assert table_state(app).view.phase is Phase.PLAY  # type: ignore[union-attr]
            assert screen.check_action("draw", ()) is None
            assert screen.check_action("spread", ()) is True

            # Digits select cards 1-3, s spreads them.
            await pilot.press("1", "2", "3")
            hand = app.table_screen.query_one(HandView)
            assert format_cards(hand.selected_cards()) == "5s 6s 7s"
            await pilot.press("s")
            await wait_for(pilot, lambda: table_state(app).view.spreads, "the run on the table")  # type: ignore[union-attr]
            run = table_state(app).view.spreads[0]  # type: ignore[union-attr]
            assert run.kind is SpreadKind.RUN and run.owner == 0
            assert hand_text(app) == "9h 9d 8s"
            assert hand.selected == frozenset()

            # The hand is shown by suit (the 8s drawn goes before the nines); the cursor
            # moves with the arrows, space selects, h asks which spread.
            assert format_cards(hand.cards) == "8s 9h 9d"
            assert hand.cursor == 2  # where the 7s was
            await pilot.press("left", "left", "space")
            assert hand.selected_cards() == (parse_card("8s"),)
            await pilot.press("h")
            await screen_shown(pilot, HitChooser, "the spread chooser")
            await pilot.press("1")
            await wait_for(
                pilot,
                lambda: len(table_state(app).view.spreads[0].cards) == 4,  # type: ignore[union-attr]
                "the 8s hit onto the run",
            )
            assert table_state(app).view.spreads[0].hit_by(parse_card("8s")) == 0  # type: ignore[union-attr]
            # The turn's moves so far, on one line.
            assert "You drew 8♠, spread 5♠ 6♠ 7♠, hit 8♠ on your own run" in log_text(app)

            # x discards the card under the cursor: move it to the 9h first.
            await pilot.press("left", "left", "left")
            assert hand.card_under_cursor == parse_card("9h")
            await pilot.press("x")
            await wait_for(pilot, lambda: hand_text(app) == "9d", "the 9h discarded")
            assert "hit 8♠ on your own run, discarded 9♥" in log_text(app)

            # The bot plays; on your next turn, k asks before dropping with 9: escape keeps
            # playing, k again drops.
            await wait_for(pilot, lambda: my_turn(app), "your second turn")
            await pilot.press("k")
            await screen_shown(pilot, DropModal, "the question")
            assert "Drop with 9?" in str(app.screen.query_one("#question").render())
            await pilot.press("escape")
            await screen_shown(pilot, TableScreen, "the table")
            await pilot.pause(0.2)
            assert my_turn(app) and table_state(app).view.settlement is None  # type: ignore[union-attr]
            await pilot.press("k")
            await screen_shown(pilot, DropModal, "the question")
            await pilot.press("k")
            await screen_shown(pilot, EndOfHandModal, "the hand's end")
            modal = app.screen
            assert isinstance(modal, EndOfHandModal)
            assert modal.settlement.ending.value == "drop_won"
            assert modal.settlement.winners == (0,)
            text = str(modal.query_one("#ending").render())
            assert "Tester dropped with 9 and won" in text  # by name, as the table shows it
            # Said once, by the hand's ending line, not "dropped with 9" and then again.
            assert log_text(app).count("dropped with 9") == 1, log_text(app)
            assert "You dropped with 9 and won." in log_text(app)
            await pilot.press("enter")
            await screen_shown(pilot, TableScreen, "the table again")
            state = table_state(app)
            assert state is not None
            assert state.balances["Tester"] == 1
            assert state.balances["Ada (bot)"] == -1
            assert state.last_net["Tester"] == 1


async def test_picking_up_the_discard_and_a_book(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            await pilot.press("p")
            await wait_for(pilot, lambda: "9c" in hand_text(app), "the 9c taken from the pile")
            assert "You took 9♣" in log_text(app)
            await pilot.press("4", "5", "6", "s")
            await wait_for(pilot, lambda: table_state(app).view.spreads, "the book")  # type: ignore[union-attr]
            book = table_state(app).view.spreads[0]  # type: ignore[union-attr]
            assert book.kind is SpreadKind.BOOK
            assert format_cards(book.cards) == "9h 9d 9c"


def sent_messages(app: TonkApp) -> list[dict[str, Any]]:
    """Every message the app sends the server from now on, as it sends it."""
    connection = app.connection
    assert connection is not None
    sent: list[dict[str, Any]] = []
    send = connection.send

    def recording(message: dict[str, Any]) -> bool:
        sent.append(message)
        return send(message)

    connection.send = recording  # type: ignore[method-assign]
    return sent


def notified(app: TonkApp, text: str) -> bool:
    return any(text in n.message and n.title == "Not allowed" for n in app._notifications)


@pytest.mark.parametrize("size", [(40, 36), (100, 30)], ids=str)
async def test_a_notice_comes_under_the_top_line_however_many_rows_it_takes(
    size: tuple[int, int],
) -> None:
    """Upright the top line takes two or three rows (what the turn asks, then the table): a
    notice comes under it, not over what to do; wide, right under its one row."""
    app = practice_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn")
        status = app.table_screen.query_one(StatusBar)
        assert (status.size.height > 1) == (size[0] == 40)
        await pilot.press("x")  # not yet: draw first
        await wait_for(pilot, lambda: app.screen.query(Toast), "the notice shown")
        toast = app.screen.query_one(Toast)
        assert toast.region.y == status.region.bottom, (toast.region, status.region)


async def test_a_greyed_out_key_is_explained_by_the_core_without_asking_the_server(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            await pilot.press("d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the draw")
            # Drawing again and dropping are greyed now; pressed anyway, the core says why in
            # the words the server refuses with, and nothing is sent.
            assert app.table_screen.check_action("drop", ()) is None
            sent = sent_messages(app)
            await pilot.press("k")
            await wait_for(
                pilot, lambda: notified(app, "you have drawn this turn already"), "the reason"
            )
            await pilot.press("d")
            await wait_for(
                pilot, lambda: notified(app, "you have drawn this turn already: spread"), "again"
            )
            assert sent == []
            # A spread that is not one: s is open (a run is possible) but the server refuses.
            await pilot.press("1", "4", "s")
            await wait_for(pilot, lambda: "is not a spread" in log_text(app), "the refusal")
            assert hand_text(app) == "5s 6s 7s 9h 9d 8s"
            # The refused move leaves the selection as it was, to be mended.
            hand = app.table_screen.query_one(HandView)
            assert format_cards(hand.selected_cards()) == "5s 8s"
            # g during a game says the game has started (not who may start it).
            await pilot.press("g")
            await pilot.pause()
            assert app._notifications and list(app._notifications)[-1].message == (
                "The game has started."
            )
            # s with nothing selected is explained without asking anyone.
            app.table_screen.query_one(HandView).selected = frozenset()
            await pilot.press("s")
            await pilot.pause()
            assert any("Select the cards" in n.message for n in app._notifications)


async def test_a_move_refused_before_sending_stays_in_the_log(tmp_path: Path) -> None:
    """The notice goes after a few seconds; the reason stays in the log to be read, as the
    server's refusals do."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            await pilot.press("d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the draw")
            sent = sent_messages(app)
            await pilot.press("k")
            await wait_for(
                pilot,
                lambda: "Not allowed: you have drawn this turn already" in log_text(app),
                "the reason in the log",
            )
            assert sent == []


async def test_out_of_turn_keys_are_greyed_and_explained(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        # The bot thinks for a long while, so its turn lasts.
        request = table_request(bot_pause=10, dealer=0)
        app = joined_app(server.port, tmp_path / "state", table=request)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(
                pilot,
                lambda: table_state(app) is not None and table_state(app).view is not None,  # type: ignore[union-attr]
                "the deal",
            )
            assert not my_turn(app)
            for action in ("draw", "pickup", "drop", "spread", "hit", "discard"):
                assert app.table_screen.check_action(action, ()) is None, action
            sent = sent_messages(app)
            await pilot.press("d")
            await wait_for(pilot, lambda: notified(app, "turn, not yours"), "the reason")
            first = next(iter(app._notifications))
            await pilot.press("x")  # said again: a second notice, in the first one's place
            await wait_for(
                pilot,
                lambda: (
                    [n is not first and "turn, not yours" in n.message for n in app._notifications]
                    == [True]
                ),
                "the reason for x",
            )
            assert sent == []


@pytest.mark.slow
async def test_chat_help_and_leaving_during_a_hand(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            await pilot.press("c")
            await type_text(pilot, "hello table")
            await pilot.press("enter")
            await wait_for(pilot, lambda: "<Tester> hello table" in log_text(app), "the chat")
            assert not app.table_screen.has_class("chatting")
            # Keys go back to the table after chatting.
            await pilot.press("?")
            await screen_shown(pilot, HelpScreen, "the help")
            rules = str(app.screen.query_one("#help-rules").render())
            assert "Rules: classic (Tonk in one page)." in rules
            assert "A drop with the strictly lowest count wins 1 stake" in rules
            await pilot.press("escape")
            await screen_shown(pilot, TableScreen, "the table")
            # q during a hand asks first: n stays, y leaves for the lobby.
            await pilot.press("q")
            await screen_shown(pilot, ConfirmModal, "the question")
            # It says what leaving during the session means for the seat and the balance.
            question = str(app.screen.query_one("#question").render())
            assert "The table plays your seat for you" in question
            assert "your balance keeps moving" in question
            await pilot.press("n")
            await screen_shown(pilot, TableScreen, "the table")
            await pilot.press("q")
            await screen_shown(pilot, ConfirmModal, "the question")
            await pilot.press("y")
            await screen_shown(pilot, LobbyScreen, "the lobby")
