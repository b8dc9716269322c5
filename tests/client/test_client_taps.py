"""The client by taps alone (clicks, as a touch screen sends them through the web door's
terminal): a card, the key bar, the spread chooser and the end of a hand, against a real
server on loopback, dealt from a stacked deck."""

from __future__ import annotations

import re
from pathlib import Path

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
    wait_for,
)
from netclient import start_server
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from tonk.client.dialogs import DropModal, EndOfHandModal, HelpScreen, HitChooser
from tonk.client.dialogs.confirm import TapHint
from tonk.client.dialogs.taps import TapButtons
from tonk.client.messages import Request
from tonk.client.screens import LobbyScreen, TableScreen
from tonk.client.text.render import CARD_WIDTH
from tonk.client.widgets import HandView, KeyBar, LogPanel, StatusBar
from tonk.client.widgets.screenkeys import ScreenButtons
from tonk.client.widgets.touchkeys import TouchKeyBar
from tonk.shared.game.cards import format_cards, parse_card
from tonk.shared.wire import messages as m


async def tap_card(pilot: Pilot[None], hand: HandView, index: int) -> None:
    """A tap on the middle of card `index` (from 0) of the hand."""
    gap = 2 if hand.size.width >= len(hand.cards) * 7 + 2 else 1
    await pilot.click(HandView, offset=(index * (CARD_WIDTH + gap) + 2, 2))


async def tap_key(pilot: Pilot[None], bar: KeyBar, key: str) -> None:
    """A tap on `key` in the key bar, where it is drawn."""
    row, start = next((y, s) for y, s, _, k in bar._spans if k == key)
    await pilot.click(KeyBar, offset=(start, row))


@pytest.mark.slow
async def test_a_hand_played_by_taps(tmp_path: Path) -> None:
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            screen = app.table_screen
            hand = screen.query_one(HandView)
            bar = screen.query_one(KeyBar)
            await tap_key(pilot, bar, "d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the 8s drawn")
            # A tap on a card puts the cursor on it and selects it; a second tap unselects.
            spades = [i for i, card in enumerate(hand.cards) if card.suit.value == "s"]
            run = [hand.cards[i] for i in spades if hand.cards[i] != parse_card("8s")]
            for card in run:
                await tap_card(pilot, hand, hand.cards.index(card))
                assert hand.card_under_cursor == card
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            assert format_cards(hand.selected_cards()) == "5s 6s 7s"
            await tap_key(pilot, bar, "s")
            await wait_for(pilot, lambda: "5s" not in hand_text(app), "the run spread")
            # The spread chooser by a tap on the spread's line.
            await tap_card(pilot, hand, hand.cards.index(parse_card("8s")))
            await tap_key(pilot, bar, "h")
            await screen_shown(pilot, HitChooser, "the spread chooser")
            await laid_out(pilot, "#choices")
            await pilot.click("#choices", offset=(4, 0))
            await wait_for(pilot, lambda: "8s" not in hand_text(app), "the 8s hit onto the run")
            # Discard; on the next turn drop, and answer the question by a tap.
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            await tap_key(pilot, bar, "x")
            await wait_for(pilot, lambda: hand_text(app) == "9d", "the 9h discarded")
            await wait_for(pilot, lambda: screen.check_action("drop", ()) is True, "the turn")
            await tap_key(pilot, bar, "k")
            await screen_shown(pilot, DropModal, "the question")
            await laid_out(pilot, TapHint)
            await pilot.click(TapHint, offset=(2, 0))  # "k or enter: drop"
            await screen_shown(pilot, EndOfHandModal, "the hand's end")
            # A tap anywhere on the end of the hand goes back to the table.
            await pilot.click(offset=(2, 2))
            await screen_shown(pilot, TableScreen, "the table again")


async def laid_out(pilot: Pilot[None], target: str | type[Widget]) -> None:
    """Wait until `target` has its place on the screen shown, and the App is idle: a tap goes
    where it is drawn."""
    screen = pilot.app.screen
    await wait_for(
        pilot, lambda: any(w.region.area for w in screen.query(target)), f"{target} laid out"
    )
    await pilot.pause()


async def tap_button(pilot: Pilot[None], bar: KeyBar, key: str, row: int) -> None:
    """A tap on `key`'s button in a touch screen's key bar, on `row` of its three."""
    assert isinstance(bar, TouchKeyBar)
    line, start, end = next((n, s, e) for n, s, e, k in bar._buttons if k == key)
    assert bar.size.height % 3 == 0, "a button is three rows tall"
    await pilot.click(KeyBar, offset=((start + end) // 2, line * 3 + row))


async def tap_label(pilot: Pilot[None], label: str) -> None:
    """A tap on the button `label` of the window shown."""
    for buttons in pilot.app.screen.query(TapButtons):
        for start, part in enumerate(buttons.parts):
            if part[0] == label:
                x = sum(len(p[0]) + 2 + TapButtons.GAP for p in buttons.parts[:start]) + 1
                await pilot.click(buttons, offset=(x, 1))
                return
    raise AssertionError(f"no button {label!r} in {pilot.app.screen!r}")


async def test_a_touch_screens_table_says_tap_shows_buttons_and_throws_the_card_shown(
    tmp_path: Path,
) -> None:
    """The web door's page on a touch screen: the top line names the buttons to tap, each
    key is a button three rows tall (a tap on its top or bottom row presses it), Discard
    throws the card left raised (the cursor goes back to it from the card a tap lowered), and each
    window closes by a tap on its button or outside it."""
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        app.config.touch = True
        async with at_my_turn(app) as pilot:
            screen = app.table_screen
            hand = screen.query_one(HandView)
            bar = screen.query_one(KeyBar)
            status = screen.query_one(StatusBar)
            await wait_for(pilot, lambda: "tap Draw" in status_text(status), "tap Draw")
            assert "d draw" not in status_text(status)
            await tap_button(pilot, bar, "d", 0)
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the 8s drawn")
            # 9h raised; then 5s tapped twice (raised, lowered): the card shown chosen, under
            # the cursor again, and thrown, is the 9h.
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            for _ in range(2):
                await tap_card(pilot, hand, hand.cards.index(parse_card("5s")))
            assert hand.card_under_cursor == parse_card("9h")
            assert "Discard 9" in status_text(status), status_text(status)
            await tap_button(pilot, bar, "x", 2)
            await wait_for(pilot, lambda: "9h" not in hand_text(app), "the 9h discarded")
            assert "5s" in hand_text(app)
            # The next turn: a spread, then the hit chooser closed by a tap outside it, and
            # again by its Cancel button.
            await wait_for(pilot, lambda: my_turn(app), "the next turn")
            await tap_button(pilot, bar, "d", 1)
            await wait_for(pilot, lambda: screen.check_action("spread", ()) is True, "drawn")
            for card in ("5s", "6s", "7s"):
                await tap_card(pilot, hand, hand.cards.index(parse_card(card)))
            await tap_button(pilot, bar, "s", 1)
            await wait_for(pilot, lambda: "5s" not in hand_text(app), "the run spread")
            await tap_card(pilot, hand, hand.cards.index(parse_card("8s")))
            for way_out in ("outside", "Cancel"):
                await tap_button(pilot, bar, "h", 1)
                await screen_shown(pilot, HitChooser, "the spread chooser")
                await laid_out(pilot, TapButtons)
                if way_out == "outside":
                    await pilot.click(offset=(0, 0))
                else:
                    await tap_label(pilot, "Cancel")
                await screen_shown(pilot, TableScreen, f"the table again ({way_out})")
            assert "8s" in hand_text(app)
            # Help closes by its Close button.
            await tap_button(pilot, bar, "question_mark", 1)
            await screen_shown(pilot, HelpScreen, "the help")
            await laid_out(pilot, TapButtons)
            await tap_label(pilot, "Close")
            await screen_shown(pilot, TableScreen, "the table after the help")


def status_text(status: StatusBar) -> str:
    return status.message


async def test_a_touch_screens_lobby_help_and_too_small_notice_name_taps_not_keys(
    tmp_path: Path,
) -> None:
    """Upright on a phone: the lobby's keys are buttons named by what they do, its help lists
    what to tap (the table's help, the table's buttons), and the "too small" notice names no
    key to press."""
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state")
        app.config.touch = True
        async with app.run_test(size=(40, 30)) as pilot:
            await screen_shown(pilot, LobbyScreen, "the lobby")
            await pilot.pause()
            shown = screen_text(app)
            assert "New table" in shown and "Standings" in shown and "Quit" in shown, shown
            assert "n New table" not in shown and "q Quit" not in shown, shown
            assert "tap New table to create one" in " ".join(shown.split()), shown
            bar = app.screen.query_one(ScreenButtons)
            await tap_button(pilot, bar, "question_mark", 2)
            await screen_shown(pilot, HelpScreen, "the lobby's help")
            await pilot.pause()
            shown = screen_text(app)
            assert "Taps and buttons in the lobby" in shown, shown
            assert re.search(r"New table +create a table", shown), shown
            assert "enter j" not in shown and "Keys" not in shown, shown
            await tap_label(pilot, "Close")
            await screen_shown(pilot, LobbyScreen, "the lobby again")
            # Too small: nothing to press, the phone to turn.
            await pilot.resize_terminal(30, 20)
            await wait_for(pilot, lambda: "too small" in screen_text(app), "the notice")
            shown = screen_text(app)
            assert "press" not in shown and "Turn the phone" in shown, shown
    # The table's help, on a touch screen: its buttons by name, not its keys.
    help_screen = HelpScreen(None)
    assert ("Discard", "discard the card under the cursor") in help_screen.taps
    assert all(not tapped.startswith(("left", "1-6", "escape")) for tapped, _ in help_screen.taps)


def screen_text(app: App[None]) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_touch_screens_hand_and_log_titles_name_the_button_and_the_taps() -> None:
    """On a touch screen the hand's title names the Sort button, not the o key, and the log's
    border says where to tap for earlier and newer lines, not pgup and pgdn; a tap on the
    log's top half scrolls it back, on its bottom half forward."""
    app = practice_app(bots=1)
    app.config.touch = True
    async with at_my_turn(app) as pilot:
        screen = app.table_screen
        hand_box = screen.query_one("#hand-box")
        assert str(hand_box.border_title) == "Your hand · count 36 · by suit (Sort)"
        await tap_button(pilot, screen.query_one(KeyBar), "o", 1)
        await wait_for(pilot, lambda: "by rank" in str(hand_box.border_title), "sorted")
        assert str(hand_box.border_title).endswith("by rank (Sort)")
        log = screen.query_one(LogPanel)
        log_box = screen.query_one("#log-box")
        for n in range(20):
            screen.post_message(Request(m.Chat(f"line {n}")))
        await wait_for(pilot, lambda: "line 19" in log_text(app), "the chat in the log")
        await wait_for(pilot, lambda: bool(log_box.border_subtitle), "the log's border")
        assert str(log_box.border_subtitle) == "tap top: earlier"
        await pilot.click(LogPanel, offset=(2, 0))
        await wait_for(pilot, lambda: log.newer > 0, "the log scrolled back")
        await pilot.pause()
        assert str(log_box.border_subtitle) == f"{log.newer} newer: tap bottom"
        assert "pg" not in str(log_box.border_subtitle)
        await pilot.click(LogPanel, offset=(2, log.size.height - 1))
        await wait_for(pilot, lambda: log.newer == 0, "the log forward again")
        await pilot.pause()
        assert str(log_box.border_subtitle) == "tap top: earlier"
