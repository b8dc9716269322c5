"""The table screen: the away mark, a resync that logs each event once, the ledger's whole
history after the client is started again, the hand's order and marks, what the status line
asks of you, and how little is repainted when something changes."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from clientkit import (
    BOTS,
    MINE,
    at_my_turn,
    at_the_table,
    deck_text,
    hand_text,
    joined_app,
    log_text,
    my_turn,
    practice_app,
    running,
    screen_shown,
    table_request,
    table_state,
    wait_for,
)
from netclient import NetClient, start_server
from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Static
from tonk.client.app import TonkApp
from tonk.client.dialogs import DropModal, EndOfHandModal
from tonk.client.messages import TableChanged
from tonk.client.model import reports
from tonk.client.model.model import ClientModel
from tonk.client.model.state import LogLine, PlayerInfo, TableState
from tonk.client.model.tableseen import TableSeen
from tonk.client.screens import TableScreen
from tonk.client.widgets import (
    CentrePanel,
    HandView,
    KeyBar,
    KeyEntry,
    LedgerPanel,
    LineWidget,
    LogPanel,
    PlayersPanel,
    StatusBar,
    changed_to,
    player_lines,
    turn_message,
)
from tonk.client.widgets.status import AWAY, AWAY_TOUCH, hand_words
from tonk.client.widgets.table import fitted
from tonk.client.widgets.touchkeys import TouchKeyBar
from tonk.shared.game.cards import format_cards, parse_card
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.view import Phase, SeatView
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p


def me_away(app: Any) -> bool:
    state = table_state(app)
    return bool(state and state.seat is not None and state.players[state.seat].away)


async def alice_plays(alice: NetClient) -> None:
    """Alice plays her own turns at once (never dropping), until cancelled."""
    while True:
        await alice.recv(timeout=60)
        await alice.play_turn_if_mine()


async def test_a_timed_out_seat_is_shown_away_until_its_player_acts_or_is_back(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        # A 2 s turn timer; an away seat is played for after 10 s (the table's bot pause).
        request = table_request(bots=0, seats=2, turn_timer=2, bot_pause=10)
        app = joined_app(server.port, tmp_path / "state", table=request)
        alice = await NetClient.connect(server.port, "Alice")
        playing: asyncio.Task[None] | None = None
        try:
            async with at_the_table(app) as pilot:
                table_id = int(table_state(app).table_id)  # type: ignore[union-attr]
                await alice.request({"type": "sit", "table": table_id}, "seated")
                playing = asyncio.create_task(alice_plays(alice))
                players = app.table_screen.query_one(PlayersPanel)

                # Our first turn: we do nothing, the timer runs out, the seat is played for.
                await wait_for(pilot, lambda: my_turn(app), "our first turn")
                await wait_for(pilot, lambda: me_away(app), "our seat shown away")
                line = players.line_text(0)
                assert "Tester" in line and "(you)" in line and "away (any key)" in line
                # The move the table made for us is logged as made for us, not as ours.
                await wait_for(pilot, lambda: "Played for you: " in log_text(app), "the log")
                assert "You drew" not in log_text(app) and "You took" not in log_text(app)
                assert "Alice" in players.line_text(1) and "away" not in players.line_text(1)
                assert app.table_screen.check_action("back", ()) is True

                # While away, each of our moves is made for us only after the bot pause (the
                # move after the timeout too): we act first, and acting clears the mark.
                await wait_for(pilot, lambda: my_turn(app) and me_away(app), "our turn, away")
                drawing = table_state(app).view.phase is Phase.START  # type: ignore[union-attr]
                await pilot.press("d" if drawing else "x")
                await wait_for(pilot, lambda: not me_away(app), "the mark cleared by acting")
                assert "away" not in players.line_text(0)
                assert app.table_screen.check_action("back", ()) is False  # hidden again
                if drawing:
                    await wait_for(pilot, lambda: len(hand_text(app).split()) == 6, "our draw")
                    await pilot.press("x")

                # Away again (the timer runs out once more), then b brings us back.
                await wait_for(pilot, lambda: me_away(app), "our seat away again")
                await pilot.press("b")
                await wait_for(pilot, lambda: not me_away(app), "back with b")
                assert "away" not in players.line_text(0)
        finally:
            if playing is not None:
                playing.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await playing
            await alice.close()


async def test_a_resync_after_a_missed_update_logs_each_event_once(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        # The bot deals and plays first; we lose the update of its draw.
        request = table_request(dealer=0, deck=deck_text([MINE, BOTS], dealer=0))
        app = joined_app(server.port, tmp_path / "state", table=request)
        async with running(app, lambda: app.connection is not None, "the connection") as pilot:
            connection = app.connection
            assert connection is not None
            model = connection.model
            handle = model.receive
            dropped: list[dict[str, Any]] = []
            resumes: list[m.ClientMessage] = []
            send = model.send

            def lossy(message: dict[str, Any]) -> None:
                if message["type"] == "update":
                    kinds = [e["kind"] for e in message["events"] if e.get("seat") == 1]
                    started = kinds[:1] in (["draw_stock"], ["take_discard"])
                    if message["from"] > 0 and started and not dropped:
                        dropped.append(message)  # lost on the way
                        return
                handle(message)

            def sending(message: m.ClientMessage) -> bool:
                if isinstance(message, m.Resume):
                    resumes.append(message)
                return send(message)

            model.receive = lossy  # type: ignore[method-assign]
            model.send = sending  # type: ignore[method-assign]
            await wait_for(pilot, lambda: my_turn(app), "our turn, after the bot's")
            assert dropped and resumes  # an update was lost, and the whole hand asked for
            assert table_state(app).hand_number == 1  # type: ignore[union-attr]
            log = log_text(app)
            for line in ("Hand 1: You deal.", "Your hand:", "Up card:", ", discarded"):
                assert log.count(line) == 1, (line, log)
            # The bot's first move (lost, then in the whole hand sent again) is logged once.
            assert log.count("Ada drew") + log.count("Ada took") == 1, log


async def test_the_hand_is_shown_in_order_with_the_new_card_marked() -> None:
    app = practice_app(bots=1)
    async with at_my_turn(app, "our turn") as pilot:
        hand = app.table_screen.query_one(HandView)
        hand.cursor = 3  # the 9h
        await pilot.press("d")
        await wait_for(pilot, lambda: len(hand.cards) == 6, "the 8s drawn")
        # By suit (spades, hearts, diamonds, clubs), ace low: the 8s goes among the spades.
        assert format_cards(hand.cards) == "5s 6s 7s 8s 9h 9d"
        assert hand_text(app) == "5s 6s 7s 9h 9d 8s"  # the core's own order is untouched
        assert hand.fresh == parse_card("8s")
        assert hand.card_under_cursor == parse_card("9h")  # the cursor kept its card
        number_row = app.table_screen.query_one(HandView).render()
        assert "4*" in str(number_row.renderables[4])  # type: ignore[attr-defined]
        box = app.table_screen.query_one("#hand-box")
        assert str(box.border_title) == "Your hand · count 44 · by suit (o)"
        await pilot.press("o")
        assert format_cards(hand.cards) == "5s 6s 7s 8s 9h 9d"  # by rank: the same here
        assert str(box.border_title).endswith("by rank (o)")
        await pilot.press("o")
        assert format_cards(hand.cards) == "5s 6s 7s 9h 9d 8s"  # as dealt
        assert hand.card_under_cursor == parse_card("9h")
        assert hand.fresh == parse_card("8s")  # still the card just drawn
        # The status line names the card x would throw, and follows the cursor.
        status = app.table_screen.query_one(StatusBar)
        assert status.message.startswith("Your turn: x discard 9♥ · s spread")
        await pilot.press("right")
        assert status.message.startswith("Your turn: x discard 9♦")
        # b (back) is for a seat played for its player: not now, and it says so.
        assert app.table_screen.check_action("back", ()) is False
        await pilot.press("b")
        await pilot.pause()
        assert any("You are not away" in n.message for n in app._notifications)


def _view(**fields: Any) -> SeatView:
    data: dict[str, Any] = {
        "seat": 0,
        "rules": HouseRules().to_dict(),
        "players": 3,
        "dealer": 2,
        "turn": 0,
        "phase": "start",
        "hand": "Ks Qh 2c 3d 4d",
        "card_counts": [5, 5, 5],
        "spreads": [],
        "discard_top": "9c",
        "discard_size": 1,
        "stock_size": 36,
        "hit_locks": [0, 0, 0],
        "stakes": [1],
        "multiplier": 1,
        "taken_discard": None,
        "settlement": None,
        "event_count": 5,
    }
    data.update(fields)
    return SeatView.from_dict(data)


def _state(view: SeatView, away: bool = False) -> TableState:
    players = (
        PlayerInfo(0, "Kim", away=away),
        PlayerInfo(1, "Ada (bot)", bot=True),
        PlayerInfo(2, "Bix (bot)", bot=True),
    )
    return TableState("1", "t", HouseRules(), 1, "chips", 0, players, view=view, playing=True)


def test_the_status_line_says_what_you_may_do_and_whose_turn_it_is() -> None:
    start = _state(_view())
    assert turn_message(start) == "Your turn: d draw · p pick up 9♣ · k drop at 29"
    drawn = _state(_view(phase="play", hand="Ks Qh 2c 3d 4d 5d"))
    assert turn_message(drawn, cursor=parse_card("Ks")) == (
        "Your turn: x discard K♠ · s spread"  # 3d 4d 5d is a run
    )
    waiting = _state(_view(turn=2))
    assert turn_message(waiting) == "Bix (bot) to play. You are next."
    assert turn_message(_state(_view(turn=1))) == "Ada (bot) to play."
    assert turn_message(_state(_view(turn=1), away=True)) == (
        "You are away, played for. Press any key to come back."
    )
    assert turn_message(_state(_view(turn=1), away=True), touch=True) == (
        "You are away, played for. Tap Back to come back."
    )
    # Short enough that an 80-column top line keeps the hand beside it, even the session's
    # last ("last hand (9 of 10)"), where the table's name, rules and stake give way.
    for away in (AWAY, AWAY_TOUCH):
        assert len(away) + 2 + len(hand_words(10, 10)) <= 80
    # A table waiting for its players, as its creator sees it: the key, or the button to tap.
    waiting = replace(_state(_view()), view=None, playing=False, creator=True, seats=4)
    assert turn_message(waiting) == "Waiting: 1 of 4 seats open. g: start now with 3 players."
    assert turn_message(waiting, touch=True) == (
        "Waiting: 1 of 4 seats open. Tap Start to start now with 3 players."
    )
    alone = replace(waiting, players=waiting.players[:1])
    assert turn_message(alone, touch=True) == (
        "Waiting: 3 of 4 seats open. Start works once another player sits."
    )
    ended = _state(_view(phase="ended", hand="Ks"))
    assert turn_message(ended).startswith("The hand is over")
    assert _view().phase is Phase.START


def test_a_row_is_repainted_only_as_far_as_it_changed() -> None:
    def row(text: str) -> Strip:
        return Strip([Segment(text)])

    assert changed_to(row("Ada (bot) to play."), row("Bix (bot) to play."), 30) == 3
    assert changed_to(row("Stock: 30  Discard"), row("Stock: 29  Discard"), 30) == 9
    assert changed_to(row("a long old line"), row("short"), 30) == len("a long old line")
    assert changed_to(row("same"), row("same"), 30) == 0
    assert changed_to(None, row("new"), 30) == 3
    assert changed_to(row("10♠ x"), row("10♠ y"), 30) == 5  # a symbol is one cell


class Panels(App[None]):
    CSS = "LogPanel { height: 6; width: 30; } LineWidget { width: 30; }"

    def compose(self) -> ComposeResult:
        yield LogPanel(id="log")
        yield LineWidget(id="lines")


def spy_refresh(widget: Any) -> list[Region]:
    regions: list[Region] = []
    refresh = widget.refresh

    def spy(*args: Any, **kwargs: Any) -> Any:
        regions.extend(arg for arg in args if isinstance(arg, Region))
        return refresh(*args, **kwargs)

    widget.refresh = spy
    return regions


async def test_the_log_has_its_newest_line_at_the_bottom_and_amends_a_line_in_place() -> None:
    app = Panels()
    async with app.run_test(size=(40, 10)) as pilot:
        log = app.query_one(LogPanel)
        lines = [LogLine(n, Text(f"line {n}")) for n in range(6)]
        log.log_lines = tuple(lines)
        await pilot.pause()
        assert [log.line_text(y) for y in range(6)] == [f"line {n}" for n in range(6)]
        regions = spy_refresh(log)
        # Full: a new line goes at the bottom and the others move up, oldest out.
        lines.append(LogLine(6, Text("line 6")))
        log.log_lines = tuple(lines)
        assert [log.line_text(y) for y in range(6)] == [f"line {n}" for n in range(1, 7)]
        # A line taking two rows: only whole lines are shown, the newest at the bottom.
        lines.append(LogLine(7, Text("a long line " * 4)))  # 48 cells: two rows
        log.log_lines = tuple(lines)
        assert [log.line_text(y) for y in range(6)] == [
            "line 3",
            "line 4",
            "line 5",
            "line 6",
            "a long line a long line a long",
            "line a long line",
        ]
        # The same line number with new text (a turn's next move): drawn again in place,
        # and only its row is repainted.
        lines.append(LogLine(8, Text("Ada drew a card")))
        log.log_lines = tuple(lines)
        assert log.line_text(5) == "Ada drew a card"
        regions.clear()
        lines[-1] = LogLine(8, Text("Ada drew a card, discarded 8h"))
        log.log_lines = tuple(lines)
        assert log.line_text(5) == "Ada drew a card, discarded 8h"
        assert log.line_text(4) == "line a long line"
        assert [(r.y, r.height) for r in regions] == [(5, 1)]
        # Shown again unchanged: nothing is repainted.
        regions.clear()
        log.log_lines = tuple(lines)
        assert regions == []


async def test_lines_repaint_only_the_rows_that_change() -> None:
    app = Panels()
    async with app.run_test(size=(40, 10)) as pilot:
        widget = app.query_one("#lines", LineWidget)
        widget.set_lines([Text("▶ Ada (bot) 5 cards"), Text("  Bix (bot) 5 cards")])
        await pilot.pause()
        regions = spy_refresh(widget)
        widget.set_lines([Text("  Ada (bot) 5 cards"), Text("▶ Bix (bot) 5 cards")])
        assert [(r.y, r.width) for r in regions] == [(0, 1), (1, 1)]
        regions.clear()
        widget.set_lines([Text("  Ada (bot) 6 cards"), Text("▶ Bix (bot) 5 cards")])
        assert [(r.y, r.width) for r in regions] == [(0, len("  Ada (bot) 6"))]
        regions.clear()
        widget.set_lines([Text("  Ada (bot) 6 cards"), Text("▶ Bix (bot) 5 cards")])
        assert regions == []


class PileOverRest(App[None]):
    """A wrapping LineWidget of auto height over a panel taking the rows it leaves, in a box
    of 12 rows: the table's pile over its spreads."""

    CSS = "#box { height: 12; } #rest { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield LineWidget(wrap=True, id="pile")
            yield Static("spreads", id="rest")


async def test_lines_set_twice_before_a_layout_take_the_second_rows_height() -> None:
    """Rows set, the box laid out again before the widget's own layout (here by hand; in
    play, another panel's change resizing the table's centre in the same frame), then rows
    of another height: the widget is laid out at the second rows' height, and the panel under
    it gets the rest. (Textual counts a pending layout once in its box model's cache key: the
    widget stayed 4 rows high around 1 row, the flake of the upright spreads test.)"""
    app = PileOverRest()
    async with app.run_test(size=(40, 20)) as pilot:
        pile = app.query_one("#pile", LineWidget)
        pile.set_lines([Text("the pile")])
        await pilot.pause()
        assert pile.size.height == 1
        pile.set_lines([Text(f"card row {n}") for n in range(4)])
        app.query_one("#box")._clear_arrangement_cache()
        app.screen._refresh_layout()  # the layout that came first
        assert pile.size.height == 4
        pile.set_lines([Text("Stock: 29   Discard: 9♣")])
        await pilot.pause()
        await pilot.pause()
        assert (pile.size.height, app.query_one("#rest").size.height) == (1, 11)


class Bar(App[None]):
    """A key bar alone, styled by `css`, the keys its clicks press kept."""

    def __init__(self, css: str) -> None:
        self.CSS = css
        super().__init__()
        self.pressed: list[str] = []

    def compose(self) -> ComposeResult:
        yield KeyBar(id="keys")

    def on_key_bar_pressed(self, event: KeyBar.Pressed) -> None:
        self.pressed.append(event.key)


class Buttons(Bar):
    """A touch screen's key bar alone."""

    def compose(self) -> ComposeResult:
        yield TouchKeyBar(id="keys")


#: Six keys: more than a 40-column row holds.
SIX_KEYS = (
    KeyEntry("d", "d", "Draw", True, 9),
    KeyEntry("x", "x", "Discard", False, 9),
    KeyEntry("o", "o", "Sort", True, 1),
    KeyEntry("c", "c", "Chat", True, 2),
    KeyEntry("question_mark", "?", "Help", True, 6),
    KeyEntry("q", "q", "Leave", True, 7),
)


async def test_a_key_bar_is_as_tall_as_its_keys_take_at_the_width_it_is_laid_out_at() -> None:
    """The bar's height is what its keys take at the layout's width, before the bar is built
    at that width: built first at 80 columns (one row), laid out at 40 it takes its two rows
    from that first layout, not only from a layout asked for once it is built at 40, which
    a screen just made current may leave waiting (the lobby's keys cut to one row at 40
    columns); as buttons, three rows a row of them."""
    app = Bar("KeyBar { height: auto; max-height: 2; }")
    async with app.run_test(size=(80, 6)) as pilot:
        bar = app.query_one(KeyBar)
        bar.entries = SIX_KEYS
        await pilot.pause()
        assert len(bar.lines) == 1  # (at 80 columns, one row)
        view = Size(40, 6)
        assert bar.get_content_height(view, view, 40) == 2
        assert bar.get_content_height(view, view, 80) == 1
    touch = Buttons("TouchKeyBar { height: auto; max-height: 6; }")
    async with touch.run_test(size=(80, 8)) as pilot:
        buttons = touch.query_one(TouchKeyBar)
        buttons.entries = SIX_KEYS
        await pilot.pause()
        assert buttons.size.height == 3 and len(buttons.lines) == 3
        view = Size(30, 8)
        assert buttons.get_content_height(view, view, 30) == 6


async def test_the_key_bar_greys_keys_and_drops_the_least_needed_when_narrow() -> None:
    app = Bar("KeyBar { width: 40; height: 1; }")
    async with app.run_test(size=(40, 3)) as pilot:
        bar = app.query_one(KeyBar)
        bar.entries = SIX_KEYS
        await pilot.pause()
        assert bar.line_text(0) == "d Draw x Discard c Chat ? Help q Leave"
        dim = [s for s in bar.rows[0] if s.style is not None and s.style.dim]
        assert "".join(s.text for s in dim).strip() == "x Discard"
        await pilot.click(KeyBar, offset=(1, 0))
        await pilot.click(KeyBar, offset=(25, 0))
        await pilot.pause()
        assert app.pressed == ["d", "question_mark"]


async def test_the_key_bar_takes_a_second_row_rather_than_leave_a_key_out() -> None:
    app = Bar("KeyBar { width: 40; height: auto; max-height: 2; }")
    async with app.run_test(size=(40, 4)) as pilot:
        bar = app.query_one(KeyBar)
        few = (SIX_KEYS[0], SIX_KEYS[-1])
        bar.entries = few
        await pilot.pause()
        assert (bar.size.height, bar.line_text(0)) == (1, "d Draw q Leave")
        bar.entries = (*SIX_KEYS, KeyEntry("l", "l", "History", True, 2))
        await pilot.pause()
        # Every key, on two rows, each whole.
        assert bar.size.height == 2
        assert bar.line_text(0) == "d Draw x Discard o Sort c Chat ? Help"
        assert bar.line_text(1) == "q Leave l History"
        await pilot.click(KeyBar, offset=(9, 1))
        await pilot.pause()
        assert app.pressed == ["l"]
        bar.entries = few
        await pilot.pause()
        assert bar.size.height == 1


def test_player_lines_mark_the_turn_the_dealer_bots_and_away_seats() -> None:
    state = _state(_view(card_counts=[5, 4, 5]), away=True)
    lines = [line.plain for line in player_lines(state)]
    # Your own name, as the ledger and the chat show it, marked as you; the names in one
    # column as wide as the longest.
    assert lines[0] == "▶ Kim         5 cards (you) away (any key)"
    assert lines[1] == "  Ada (bot)   4 cards"
    assert lines[2] == "  Bix (bot) D 5 cards"
    # A seat given to a bot keeps its player's name: there the column says it is a bot.
    given = _state(_view(card_counts=[5, 4, 5]))
    given = replace(given, players=(*given.players[:2], PlayerInfo(2, "Bob", bot=True)))
    assert [line.plain for line in player_lines(given)][2] == "  Bob       D 5 cards bot"
    ascii_lines = [line.plain for line in player_lines(state, ascii_only=True)]
    assert ascii_lines[0].startswith("> Kim")
    # On a touch screen, the way back is a button, not a key.
    assert player_lines(state, touch=True)[0].plain.endswith("away (tap Back)")


def test_player_lines_say_each_last_move_in_a_column_where_the_panel_has_room() -> None:
    """At 100x30 (a panel of 64 cells) each player's last move of the hand stands in a column
    after the cards, cut to the room left; at 80x24 (44 cells) there is no room to say it."""
    moves = {
        0: Text("drew 8♠, spread 5♠ 6♠ 7♠"),
        2: Text("took 9♣, discarded K♠, and was caught out at last"),
    }
    state = replace(_state(_view(card_counts=[5, 4, 5])), last_moves=moves)
    lines = [line.plain for line in player_lines(state, width=64)]
    assert lines[0] == "▶ Kim         5 cards (you)  drew 8♠, spread 5♠ 6♠ 7♠"
    assert lines[1] == "  Ada (bot)   4 cards"
    assert lines[2].startswith("  Bix (bot) D 5 cards        took 9♣, discarded")
    assert lines[2].endswith("…") and len(lines[2]) == 64
    # With the balances at the end (no ledger beside), the move is cut before them.
    owed = [line.plain for line in player_lines(state, width=64, balances=True)]
    assert owed[2].endswith("…  0") and len(owed[2]) == 64, owed
    assert [line.plain for line in player_lines(state, width=44)] == [
        line.plain for line in player_lines(replace(state, last_moves={}), width=44)
    ]


async def drop_every_turn(pilot: Pilot[Any], app: TonkApp, hands: int) -> None:
    """Drop whenever it is our turn and close each end-of-hand window still up, until
    `hands` hands have been settled."""

    def settled() -> int:
        state = table_state(app)
        return len(state.series.get("Tester", ())) - 1 if state is not None else 0

    while settled() < hands:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, EndOfHandModal) or my_turn(app),
            "our turn or a hand's end",
        )
        if isinstance(app.screen, EndOfHandModal):
            await pilot.press("enter")
            await screen_shown(pilot, TableScreen, "the table")
        else:
            before = settled()
            await pilot.press("k", "k")  # k asks first; k again drops
            # Settled, or no longer our turn (with no delay between hands the next is dealt
            # at once, and the end-of-hand window closes as it is).
            await wait_for(pilot, lambda b=before: settled() > b or not my_turn(app), "the drop")


@pytest.mark.slow
async def test_a_client_started_again_draws_the_whole_ledger(tmp_path: Path) -> None:
    """Three hands played (each dropped at once), the client closed and started again on the
    same state directory: it takes its seat back and its ledger shows all three hands."""
    state_dir = tmp_path / "state"
    async with start_server(tmp_path) as server:
        first = joined_app(server.port, state_dir, table=table_request(seed=5))
        async with first.run_test(size=(80, 24)) as pilot:
            await drop_every_turn(pilot, first, hands=3)
            state = table_state(first)
            assert state is not None
            seen = dict(state.series)
            assert len(seen["Tester"]) == 4  # 0, then after each of the three hands
        second = joined_app(server.port, state_dir)
        async with second.run_test(size=(80, 24)) as pilot:
            await wait_for(
                pilot,
                lambda: (
                    table_state(second) is not None
                    and len(table_state(second).series.get("Tester", ())) > 1
                ),  # type: ignore[union-attr]
                "the ledger's history",
            )
            state = table_state(second)
            assert state is not None
            [table] = server.tables.values()
            for name in ("Tester", "Ada (bot)"):
                # Every hand the server settled (the three, and one more if the bot ended
                # the fourth before the first client closed), drawn from 0.
                nets = (entry.net().get(name, 0) for entry in table.session.ledger.history)
                assert list(state.series[name]) == [0, *accumulate(nets)]
                assert list(state.series[name][: len(seen[name])]) == list(seen[name])
            net = table.session.ledger.history[-1].net()
            assert state.last_net.get("Tester", 0) == net.get("Tester", 0)
            ledger = second.table_screen.query_one(LedgerPanel)
            await pilot.pause()
            line = ledger.line_text(0)
            assert line.startswith("Tester") and any(ch in line for ch in "▁▂▃▄▅▆▇█"), line


@pytest.mark.slow
async def test_a_waiting_table_says_how_many_seats_are_open_and_that_g_starts_it(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        request = table_request(bots=0, seats=3)
        app = joined_app(server.port, tmp_path / "state", table=request)
        async with at_the_table(app) as pilot:
            status = app.table_screen.query_one(StatusBar)
            await wait_for(pilot, lambda: "seats open" in status.message, "the waiting line")
            assert status.message == (
                "Waiting: 2 of 3 seats open. g starts once another player sits."
            )
            # The table's middle, before the deal: the seats, the terms and the rules in words.
            pile = app.table_screen.query_one(CentrePanel).query_one("#pile", LineWidget)

            def centre() -> str:
                return "\n".join(line.plain for line in pile.lines)

            assert centre().startswith("Seats: Tester (you) · open · open\nStake 1 chip")
            assert "Rules: " in centre() and centre().endswith("The rules in full: press ?.")
            alice = await NetClient.connect(server.port, "Alice")
            table_id = int(table_state(app).table_id)  # type: ignore[union-attr]
            await alice.request({"type": "sit", "table": table_id}, "seated")
            await wait_for(pilot, lambda: "1 of 3" in status.message, "Alice seated")
            assert status.message == ("Waiting: 1 of 3 seats open. g: start now with 2 players.")
            assert centre().startswith("Seats: Tester (you) · Alice · open\n")
            await pilot.press("g")
            await wait_for(pilot, lambda: table_state(app).playing, "the game started")  # type: ignore[union-attr]
            await alice.close()


def test_what_is_cut_to_fit_leaves_its_last_line_and_no_blank_before_it() -> None:
    lines = [Text(word) for word in ("seats", "stake", "", "rule one", "rule two", "see ?")]
    rows = len  # (a line of n letters takes n rows here)
    assert fitted(lines, rows, 100) == lines
    # 5 + 5 + 5 (the last line) rows: the blank line goes with the rules cut after it.
    assert [line.plain for line in fitted(lines, rows, 16)] == ["seats", "stake", "see ?"]
    assert [line.plain for line in fitted(lines, rows, 30)] == [
        "seats",
        "stake",
        "",
        "rule one",
        "see ?",
    ]
    # No room even for the last line: the first lines that fit, else that line alone.
    assert [line.plain for line in fitted(lines, lambda line: 1, 2)] == ["seats", "see ?"]
    assert fitted(lines, rows, 3) == [lines[-1]]


def test_a_cut_tied_and_cut_again_says_so() -> None:
    model = ClientModel("Kim", "127.0.0.1:1", clock=lambda: 0.0)
    players = tuple(
        m.PlayerSummary(seat, name, m.SeatKind.HUMAN, None, m.SeatStatus.CONNECTED, 1, 0)
        for seat, name in enumerate(("Kim", "Ada"))
    )
    info = m.TableSummary(
        1,
        "Kitchen",
        {"preset": "classic"},
        "classic",
        1,
        "",
        2,
        2,
        0,
        m.TableState.WAITING,
        0,
        None,
        None,
        None,
        1.0,
        0,
        0,
        None,
        None,
        players,
    )
    model.hello()
    welcome = m.Welcome(p.PROTOCOL_VERSION, "tonk-server test", "Kim", {}, False)
    model.welcome(welcome.to_wire(), reconnect=False)
    model.table = TableSeen(1, 0, info=info)
    model.receive(m.Cut(1, (("7s", "7h"), ("2c", "Jd")), 0).to_wire())
    line = model.log.lines[-1].text.plain
    assert line == (
        "Cut for the deal: You 7♠ Ada 7♥; a tie, so they cut again: You 2♣ Ada J♦. You deal first."
    )


async def test_the_drop_question_goes_when_the_chance_to_drop_has_gone(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        # A 2 s turn timer: we ask to drop, and do not answer; the turn is played for us
        # (its first move when the timer runs out, the next after the 10 s bot pause).
        request = table_request(turn_timer=2, bot_pause=10)
        app = joined_app(server.port, tmp_path / "state", table=request)
        async with at_my_turn(app, "our first turn") as pilot:
            await pilot.press("k")
            await screen_shown(pilot, DropModal, "the question")
            await screen_shown(pilot, TableScreen, "the question gone")
            assert "Played for you: " in log_text(app)
            assert table_state(app).view.settlement is None  # type: ignore[union-attr]


async def test_a_new_table_state_is_drawn_without_repainting_the_whole_screen() -> None:
    """A table state comes with every move: it reaches the widgets whose rows changed, and
    never repaints the App, the table screen or any of its widgets whole (every byte goes
    down an SSH link)."""
    app = practice_app(bots=1)
    async with at_my_turn(app, "our turn") as pilot:
        # The turn's own layout first: a panel resized is drawn again whole, as it must be.
        await pilot.pause()
        state = table_state(app)
        assert state is not None
        whole: list[str] = []
        screen = app.table_screen
        widgets = [
            *screen.query(LineWidget),
            screen.query_one(CentrePanel),
            screen.query_one(HandView),
        ]
        # players, pile, spreads, ledger, log, status, keys; the five places around the
        # table (a large terminal's)
        assert len(widgets) == 14
        for node in (app, screen, *widgets):
            real = node.refresh

            def spy(*regions: Any, _real: Any = real, _node: Any = node, **kwargs: Any) -> Any:
                if not regions:
                    whole.append(type(_node).__name__)
                return _real(*regions, **kwargs)

            node.refresh = spy  # type: ignore[method-assign]
        app.post_message(TableChanged(reports.TableChanged(replace(state, turn_deadline=None))))
        await pilot.pause()
        assert app.table_screen.state is not None
        assert app.table_screen.state.turn_deadline is None  # drawn
        assert whole == []
