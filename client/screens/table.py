"""The table screen: players, the stock and discard, spreads, your hand, the ledger, the log."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input
from tonk.shared.game import actions
from tonk.shared.game.cards import Card, count
from tonk.shared.game.view import NO_ACTIONS, LegalActions, Phase, why_not
from tonk.shared.game.waiting import bell_after, votes_needed
from tonk.shared.wire import messages as m

from ..dialogs import ChoiceModal, ConfirmModal, DropModal, HelpScreen, HitChooser
from ..messages import RefusedHere, Request
from ..model.state import PlayerInfo, TableState
from ..tablekeys import BAR_KEYS, HIDDEN_KEYS, MOVE_KEYS, TABLE_KEYS, bindings
from ..text.render import HAND_ORDERS, CardStyle, signed, sort_hand
from ..touch import by_touch
from ..widgets import (
    PORTRAIT,
    CentrePanel,
    HandView,
    KeyBar,
    KeyEntry,
    LedgerPanel,
    LogPanel,
    PlayersPanel,
    Status,
    StatusBar,
    TableArea,
    TooSmall,
    hand_title,
    turn_message,
)
from ..widgets.touchkeys import TouchKeyBar
from .common import too_small

#: From this size (columns, rows) the table is drawn large (see TableScreen.on_resize).
LARGE = (140, 44)
#: From this size (columns, rows) the hand's cards are drawn larger.
BIG_HAND = (100, 30)
#: How many of the discard pile's cards a large table lists with who threw them.
PILE_SHOWN = 6
#: How long a key shown only while it applies is kept on a short key bar, while it is open:
#: as long as `q` (the moves are kept longer; the help, the chat, sorting and the history,
#: always there, go first).
APPLIES_KEEP = next(key.keep for key in TABLE_KEYS if key.key == "q")

#: From this many rows an upright table has room for the log (the App's `-tall`), which keeps
#: at least LOG_LEAST rows (its border and three lines) under a table sized to its cards: the
#: top line, five seats, the hand and the keys take 19, a table of small cards 7 to 9. (An
#: upright 360x640 phone's page has 35 rows: under 40, its table was left half empty.)
TALL = 34
LOG_LEAST = 5
#: The rows the top line is counted as on an upright table (the turn's message on two, the
#: table's name and hand on the third): a message on fewer rows gives the log a row rather
#: than the table a new size, so the hand does not move under a finger from turn to turn.
TOP_LINE_ROWS = 3

#: For this long after the end-of-hand window closed by itself, enter and escape (pressed to
#: close it) are let go without a word.
CLOSED_GRACE = 3.0

#: What `g` says once the game is under way.
STARTED = "The game has started."

#: The field of `LegalActions` that opens each move's action.
MOVE_ACTIONS = {entry.action: entry.legal for entry in TABLE_KEYS if entry.legal}


def watching_line(state: TableState) -> str:
    """That a spectator watches, and, if they asked for a bot's seat during the hand, that it
    is theirs as the hand ends."""
    asked = state.player(state.awaiting_seat) if state.awaiting_seat is not None else None
    if asked is None:
        return "You are watching this table."
    whose = "your own seat" if asked.holds_for == state.me else f"{asked.name}'s seat"
    return f"You are watching: {whose} is yours as this hand ends."


def watching_note(state: TableState) -> str | Text:
    """What a spectator's hand panel shows: each player's last turn of the hand in play (every
    move in it is public, as the log says it), or that they are watching."""
    watching = watching_line(state)
    if state.view is None or not state.last_turns:
        return watching
    return Text("\n").join([Text(watching, style="dim"), *(turn for _, turn in state.last_turns)])


class TableScreen(Screen[None]):
    """The table: players, the stock and discard, spreads, your hand, the ledger, the log."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings())

    AUTO_FOCUS = None  # keys go to the table; the chat line takes focus only on `c`

    def __init__(
        self,
        style: CardStyle,
        practice: bool = False,
        confirm_drop: bool = True,
        bell: bool = True,
        guest: bool = False,
    ) -> None:
        super().__init__()
        self.card_style = style
        self.practice = practice
        self.confirm_drop = confirm_drop  # ask before a drop (--no-confirm-drop: never)
        self.guest = guest  # a door's guest: tonk-client's options are not theirs to give
        # What the App's reactives say, as last drawn (see on_mount).
        self.state: TableState | None = None
        self.link_note = ""
        self._my_turn = False  # as last drawn: a selection ends with the player's turn
        self.bell = bell  # ring once when our turn waits untouched (--no-bell: never)
        self.back_asked = False  # a key pressed while away has asked to come back
        self.last_key = 0.0  # when a key was last pressed (monotonic)
        self.my_turn_since: float | None = None  # since when it is our turn (None: it is not)
        self.rung = False  # the bell has rung this turn
        # When the end-of-hand window last closed by itself, at the next deal (monotonic).
        self.window_closed_at = -CLOSED_GRACE
        # The seat (and its player) we voted to play for now, until the vote is decided.
        self.voted_for: tuple[int, str] | None = None

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield StatusBar(id="status")
        # Each panel's border is a box around the widget drawing its rows, so that a row
        # repainted is only the row's cells, not the border and padding beside it too.
        with Horizontal(id="body"):
            with Vertical(id="left"):
                with Vertical(id="players-box", classes="box") as box:
                    box.border_title = "Players"
                    yield PlayersPanel(self.card_style.ascii, id="players")
                area = TableArea(self.card_style, id="table-area", classes="box")
                area.border_title = "Table"
                yield area
                with Vertical(id="hand-box", classes="box") as box:
                    box.border_title = "Your hand"
                    yield HandView(self.card_style, id="hand")
            with Vertical(id="right"):
                with Vertical(id="ledger-box", classes="box") as box:
                    box.border_title = "Ledger"
                    box.border_subtitle = "balance · trend · last"
                    yield LedgerPanel(self.card_style, id="ledger")
                with Vertical(id="log-box", classes="box") as box:
                    box.border_title = "Log and chat"
                    yield LogPanel(id="log")
                yield Input(
                    placeholder="Say something; enter sends, escape cancels",
                    id="chat",
                    max_length=200,
                    disabled=True,
                )
        # (A touch screen's keys are buttons: the same bar, drawn for a finger.)
        yield (TouchKeyBar if by_touch(self.app) else KeyBar)(id="keys")

    def on_resize(self, event: events.Resize) -> None:
        """A narrow terminal (under PORTRAIT columns) stacks the panels; from BIG_HAND the
        hand's cards are larger; a large terminal (LARGE and up) has room for more: the
        players around the table (each with their last move). The table's own cards grow
        with its panel (CentrePanel)."""
        width, height = event.size
        big_hand = width >= BIG_HAND[0] and height >= BIG_HAND[1]
        if big_hand != self.has_class("-big-hand"):
            self.set_class(big_hand, "-big-hand")
            self.query_one(HandView).big = big_hand
        portrait = width < PORTRAIT
        self.query_one(PlayersPanel).balances = portrait  # (the ledger is not beside them)
        self._players_title()
        status = self.query_one(StatusBar)
        if status.wrap != portrait:
            status.wrap = portrait
            status.refit()
        self.call_after_refresh(self._fit_upright)
        large = width >= LARGE[0] and height >= LARGE[1]
        if large == self.has_class("-large"):
            return
        self.set_class(large, "-large")
        self.query_one(TableArea).around = large
        self.query_one(CentrePanel).pile_shown = PILE_SHOWN if large else 0
        if self.state is not None:
            self._show_state(self.state)

    def _fit_upright(self) -> None:
        """Upright and tall enough for the log (under PORTRAIT columns, TALL rows and up):
        the table's panel takes the rows its cards take, chosen for what the rest leaves
        when the log keeps LOG_LEAST (the log takes the rows left: no panel left mostly
        empty); else each panel as the style sheet says."""
        centre = self.query_one(CentrePanel)
        area = self.query_one(TableArea)
        width, height = self.size
        if not (0 < width < PORTRAIT and height >= TALL):
            centre.budget = None
            if area.styles.inline.has_rule("height"):
                area.styles.height = None  # (the style sheet's again)
            return
        others = TOP_LINE_ROWS + sum(
            self.query_one(f"#{name}").outer_size.height
            for name in ("players-box", "hand-box", "keys", "chat")
        )
        centre.budget = max(3, height - others - LOG_LEAST - area.styles.gutter.height)

    @on(CentrePanel.Sized)
    def _table_sized(self, event: CentrePanel.Sized) -> None:
        area = self.query_one(TableArea)
        if self.query_one(CentrePanel).budget is not None:
            area.styles.height = event.rows + area.styles.gutter.height

    def on_mount(self) -> None:
        # The table flows down from the App's reactives: each is drawn now and on every change.
        self.watch(self.app, "link_note", self._show_link_note)
        self.watch(self.app, "table_state", self._show_state)
        self.watch(self.app, "too_small", self._show_too_small, init=False)
        self.set_interval(1.0, self._tick)

    # -- rendering ---------------------------------------------------------------------------

    def _show_state(self, state: TableState | None) -> None:
        """Draw `state`: attributes down to every widget, each of which draws its part as
        far as it changed."""
        if state is None:
            return
        self.state = state
        self._follow_turn(state)
        self.query_one(PlayersPanel).state = state
        self.query_one(TableArea).state = state
        hand = self.query_one(HandView)
        view = state.view
        my_turn = view is not None and state.seat is not None and view.my_turn
        if self._my_turn and not my_turn:
            hand.selected = frozenset()  # raised for this turn's moves: they end with it
        self._my_turn = my_turn
        hand.cards = sort_hand(view.hand, hand.order) if view is not None else ()
        if state.seat is None:
            # (On a large table each player's last turn is beside their name already.)
            around = self.query_one(TableArea).around
            hand.note = watching_line(state) if around else watching_note(state)
        elif view is None:
            hand.note = "Waiting for the deal."
        else:
            hand.note = "No cards."
        self._hand_title()
        unit_title = f"Ledger ({state.unit})" if state.unit else "Ledger"
        box = self.query_one("#ledger-box")
        if box.border_title != unit_title:
            box.border_title = unit_title
        self._players_title()
        self.query_one(LedgerPanel).state = state
        log = self.query_one(LogPanel)
        log.table_id = state.table_id
        log.log_lines = state.log
        self._status()
        self.refresh_keys()
        self.call_after_refresh(self._fit_upright)  # (the players may have come or gone)
        stack = self.app.screen_stack
        question = stack[-1] if stack else None
        if isinstance(question, DropModal) and question.asked_at != self._moment():
            # The hand moved on since the question (the turn was played for you, the hand
            # ended): the question goes, rather than a late k dropping in another moment.
            question.dismiss("cancel")
        self._vote_decided(state)

    def _vote_decided(self, state: TableState) -> None:
        """A vote of ours that others carried: its notice ("1 of the 2 votes needed") is
        replaced by the outcome."""
        voted = self.voted_for
        if voted is None:
            return
        player = state.player(voted[0])
        if player is None or player.name != voted[1]:
            self.voted_for = None  # the seat is someone else's now: nothing to say
        elif player.away:
            self.voted_for = None
            self.notify(f"The vote passed: {player.name}'s seat is played for now.")
        elif player.connected:
            self.voted_for = None  # back before the vote was decided

    def _players_title(self) -> None:
        """The players' box says when it holds the balances too (an upright table's)."""
        state = self.state
        if state is None:
            return
        title = "Players"
        if self.query_one(PlayersPanel).balances:
            title += f" · balance ({state.unit})" if state.unit else " · balance"
        box = self.query_one("#players-box")
        if box.border_title != title:
            box.border_title = title

    def _hand_title(self) -> None:
        state = self.state
        if state is None:
            return
        hand = self.query_one(HandView)
        if state.seat is not None:
            title = hand_title(state.view, hand.order, by_touch(self.app))
        elif state.view is not None and state.last_turns and not self.query_one(TableArea).around:
            title = "Watching · each player's last turn"
        else:
            title = "Watching"
        box = self.query_one("#hand-box")
        if box.border_title != title:
            box.border_title = title

    def refresh_keys(self) -> None:
        """The key bar: every key, greyed out when it is not open now (it is redrawn only
        as far as it changed)."""
        entries = []
        for key in BAR_KEYS:
            state = self.check_action(key.action, ())
            if state is False:
                continue  # hidden: not a key for this table now
            keep = key.keep
            if key.hidden and state is True:
                # Shown only while it applies, and open: its being there is news (a friend
                # lost the connection), kept on a short bar as long as the key to leave.
                keep = max(keep, APPLIES_KEEP)
            entries.append(KeyEntry(key.key, key.shown, key.label, state is True, keep))
        self.query_one(KeyBar).entries = tuple(entries)

    def _status(self) -> None:
        if self.state is None:
            return
        hand = self.query_one(HandView)
        message = self.link_note or turn_message(
            self.state,
            legal=self.legal(),
            cursor=hand.card_under_cursor,
            ascii_only=self.card_style.ascii,
            touch=by_touch(self.app),
        )
        self.query_one(StatusBar).status = Status(self.state, message)

    def _tick(self) -> None:
        # Only a running turn timer, a countdown for a player who lost the connection, and
        # the bell for a turn left waiting change with time.
        state = self.state
        if state is None:
            return
        if state.turn_deadline is not None:
            self._status()
        if any(player.played_for_at is not None for player in state.players):
            self.query_one(PlayersPanel).state = state
            self.query_one(TableArea).state = state
        self._ring_if_waiting(state)

    def _ring_if_waiting(self, state: TableState) -> None:
        """The terminal bell, once a turn: our turn has waited `bell_after` seconds with no
        key pressed."""
        since = self.my_turn_since
        if not self.bell or self.rung or since is None or self.link_note:
            return
        me = state.player(state.seat) if state.seat is not None else None
        if me is None or me.away:
            return
        if time.monotonic() - max(since, self.last_key) >= bell_after(state.turn_timer):
            self.rung = True
            self.app.bell()

    def _follow_turn(self, state: TableState) -> None:
        view = state.view
        mine = view is not None and view.my_turn and view.phase is not Phase.ENDED
        if mine and self.my_turn_since is None:
            self.my_turn_since = time.monotonic()
            self.rung = False
        elif not mine:
            self.my_turn_since = None
        me = state.player(state.seat) if state.seat is not None else None
        if me is None or not me.away:
            self.back_asked = False

    def _show_link_note(self, note: str) -> None:
        self.link_note = note
        self._status()
        self.refresh_keys()

    def _show_too_small(self, small: bool) -> None:
        self.refresh_keys()  # greyed while the terminal is too small

    # -- what is open now (the core says; the client only greys keys) ------------------------

    def legal(self) -> LegalActions:
        state = self.state
        if state is None or state.view is None or self.link_note:
            return NO_ACTIONS
        return state.view.legal()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("help", "leave"):
            return True
        if too_small(self):
            return None
        state = self.state
        opened_by = MOVE_ACTIONS.get(action)
        if opened_by is not None:
            if state is not None and state.seat is None:
                return False  # watching: no moves, so not on the key bar (pressed: said why)
            return True if getattr(self.legal(), opened_by) else None
        if action == "chat":
            return True if state is not None and not self.link_note else None
        if action == "order":
            if state is not None and state.seat is None:
                return False  # watching: no hand to sort
            return True if state is not None else None
        if action == "play_for_now":
            return self._absent(connected=False) is not None and not self.link_note
        if action == "seat_to_bot":
            return (
                state is not None
                and state.creator
                and state.playing
                and bool(self._all_absent())
                and not self.link_note
            )
        if action == "take_bot_seat":
            return (
                state is not None
                and state.seat is None
                and state.awaiting_seat is None  # (asked already: it comes as the hand ends)
                and not state.session_over
                and any(p.bot for p in state.players)
                and not self.link_note
            )
        if action == "hint":
            # On our turn, at a table where every other seat is a bot (the server says so too).
            return (
                state is not None
                and state.view is not None
                and state.view.my_turn
                and all(p.bot for p in state.players if p.seat != state.seat)
                and not self.link_note
            )
        if action == "back":
            # Shown only while your seat is played for you.
            me = state.player(state.seat) if state is not None and state.seat is not None else None
            return me is not None and me.away and not self.link_note
        if action == "start":
            # Only the creator of a waiting table starts it; hidden otherwise.
            return (
                state is not None
                and state.creator
                and not state.playing
                and state.view is None
                and not state.session_over
            )
        return True

    def _absent(self, connected: bool) -> PlayerInfo | None:
        """Another player who lost the connection (with `connected`: or is away): the seat
        `f` (or `a`) is about; the first such whose seat we have not voted for yet."""
        state = self.state
        if state is None or not state.playing or (state.seat is None and not connected):
            return None
        me = state.player(state.seat) if state.seat is not None else None
        mine = me.name if me is not None else ""
        for player in state.players:
            if player.seat == state.seat or player.bot:
                continue
            if not player.connected and player.played_for_at is not None:
                if mine not in player.votes:
                    return player
            elif connected and (player.away or not player.connected):
                return player
        return None

    def _voted(self, state: TableState) -> str:
        """What `f` says when we have voted for every seat there is to vote for ("" if not)."""
        me = state.player(state.seat) if state.seat is not None else None
        for player in state.players:
            if me is not None and not player.connected and me.name in player.votes:
                return f"You have voted to play for {player.name} now: the others' votes decide."
        return ""

    def on_key(self, event: events.Key) -> None:
        """A game key that is greyed out is explained, never silently ignored. While our
        seat is played for us, any key brings us back."""
        if self.query_one("#chat", Input).has_focus:
            return
        self.last_key = time.monotonic()
        if (
            event.key in ("enter", "escape")
            and self.last_key - self.window_closed_at < CLOSED_GRACE
        ):
            # Pressed to close the end-of-hand window, which closed by itself just before
            # (the next deal came): it is closed; the key is not for the new hand.
            event.stop()
            event.prevent_default()
            return
        state = self.state
        me = state.player(state.seat) if state is not None and state.seat is not None else None
        if me is not None and me.away and not self.link_note:
            if not self.back_asked:
                self.back_asked = True
                self.post_message(Request(m.Back()))
            if event.key == "b":
                event.stop()
                event.prevent_default()
                return
        hidden = HIDDEN_KEYS.get(event.key)
        if hidden is not None and self.check_action(hidden.action, ()) is not True:
            event.stop()
            event.prevent_default()
            state = self.state
            message = hidden.hidden
            if event.key == "g" and state is not None and state.session_over:
                message = "The session is over."
            elif event.key == "g" and state is not None and (state.playing or state.view):
                message = STARTED
            elif event.key == "f" and state is not None:
                message = self._voted(state) or message
            self.notify(message)
            return
        move = MOVE_KEYS.get(event.key)
        if move is None or self.check_action(move.action, ()) is True:
            return
        event.stop()
        event.prevent_default()
        self.explain(move.action)

    def explain(self, action: str) -> None:
        """Say why `action` cannot be taken, as the core says it from this seat's view (the
        words the server would refuse it with), without sending it."""
        state = self.state
        if too_small(self):
            least = f"{TooSmall.MIN_WIDTH}x{TooSmall.MIN_HEIGHT}"
            self.notify(f"The terminal is too small to play: make it at least {least}.")
            return
        if state is None:
            return
        if self.link_note:
            self.notify(f"Not connected: {self.link_note}", severity="warning")
            return
        if state.seat is None:
            self.notify("You are watching this table: you have no hand to play.")
            return
        if state.view is None:
            self.notify("No hand is being played yet.")
            return
        view = state.view
        names = state.names(me_as_you=False)
        if view.phase is not Phase.ENDED and view.turn != state.seat:
            # Whose turn it is comes first, whatever the move and the cards selected (the
            # core checks it first for every move), said by name.
            who = names[view.turn] if 0 <= view.turn < len(names) else "another player"
            self._refused(f"It is {who}'s turn, not yours.")
            return
        move = self._action_message(action, explain=True)
        if move is None:
            return
        reason = why_not(state.view, move, state.names(me_as_you=False))
        if reason is None:  # greyed for now (a move on its way): the server answers it
            self.post_message(Request(m.action_request(move)))
        else:
            self._refused(reason)

    def _refused(self, reason: str) -> None:
        """A move refused here, before anything was sent: a notice, and a line in the log
        (as the server's refusals are)."""
        self.notify(reason, title="Not allowed", severity="warning")
        self.post_message(RefusedHere(reason))

    def _action_message(self, action: str, explain: bool = False) -> actions.Action | None:
        """The move a key asks for, with its cards as they are in the hand (the message for
        the server is written from it: messages.action_request)."""
        hand = self.query_one(HandView)
        seat = self.state.seat if self.state is not None else None
        if seat is None:
            return None  # watching: no moves
        if action == "draw":
            return actions.DrawStock(seat)
        if action == "pickup":
            return actions.TakeDiscard(seat)
        if action == "drop":
            return actions.Drop(seat)
        if action == "discard":
            card = hand.card_under_cursor
            if card is None:
                self.notify("You have no card to discard.")
                return None
            return actions.Discard(seat, card)
        if action == "spread":
            cards = hand.selected_cards()
            if not cards:
                self.notify(
                    "Select the cards of the spread first: space or 1-6, then s.",
                    severity="warning",
                )
                return None
            return actions.LaySpread(seat, cards)
        if action == "hit":
            card = self._hit_card()
            if card is None:
                return None
            view = self.state.view if self.state is not None else None
            if explain or view is None or not view.spreads:
                spread = view.spreads[0].id if view is not None and view.spreads else 0
                return actions.Hit(seat, card, spread)
            return None
        return None

    def _hit_card(self) -> Card | None:
        """The card `h` hits with: the one selected, or with none selected the card under
        the cursor (the one the top line offers to hit with), as `x` discards it."""
        hand = self.query_one(HandView)
        cards = hand.selected_cards()
        if len(cards) == 1:
            return cards[0]
        if not cards and hand.card_under_cursor is not None:
            return hand.card_under_cursor
        if not cards:
            self.notify("You have no card to hit with.")
        else:
            self.notify(
                f"{len(cards)} cards are selected: a hit is one card. Unselect all but one "
                "(space or 1-6), or none to hit with the card under the cursor.",
                severity="warning",
            )
        return None

    # -- the keys ----------------------------------------------------------------------------

    @on(KeyBar.Pressed)
    def _key_clicked(self, event: KeyBar.Pressed) -> None:
        self.app.simulate_key(event.key)

    @on(HandView.Tapped)
    def _card_tapped(self, event: HandView.Tapped) -> None:
        """A tap on a card is its number's key: the cursor goes to it, and it is selected
        (or no longer: then, if one card is left raised, the cursor goes back to that one,
        the card the player sees chosen, which Discard throws)."""
        self.action_select(event.number)
        hand = self.query_one(HandView)
        raised = hand.selected_cards()
        if len(raised) == 1 and hand.card_under_cursor not in hand.selected:
            hand.cursor = hand.cards.index(raised[0])
            self._status()

    def action_cursor(self, step: int) -> None:
        hand = self.query_one(HandView)
        hand.cursor = hand.cursor + step
        self._status()

    def action_log_page(self, direction: int) -> None:
        log = self.query_one(LogPanel)
        before = log.newer
        log.page(direction)
        if log.newer == before:
            self.notify(
                "The log shows its newest line." if direction > 0 else "That is the log's start."
            )

    @on(LogPanel.Scrolled)
    def _log_title(self, event: LogPanel.Scrolled) -> None:
        """The log's lower border: how to scroll it back, or how far it is scrolled (by its
        keys in a terminal; on a touch screen, by a tap on the log's top or bottom half)."""
        touch = by_touch(self.app)
        if event.newer:
            subtitle = f"{event.newer} newer: " + ("tap bottom" if touch else "pgdn")
        elif event.earlier:
            subtitle = "tap top: earlier" if touch else "pgup: earlier"
        else:
            subtitle = ""
        box = self.query_one("#log-box")
        if box.border_subtitle != subtitle:
            box.border_subtitle = subtitle

    def action_cursor_to_end(self, end: int) -> None:
        hand = self.query_one(HandView)
        hand.cursor = len(hand.cards) - 1 if end > 0 else 0
        self._status()

    def action_raise_card(self, up: bool) -> None:
        hand = self.query_one(HandView)
        card = hand.card_under_cursor
        if card is None:
            self.notify("You have no cards.")
        elif up:
            hand.selected = hand.selected | {card}
        else:
            hand.selected = hand.selected - {card}

    def action_unselect_all(self) -> None:
        if self.has_class("chatting"):
            self._close_chat()  # escape cancels the chat line first
            return
        hand = self.query_one(HandView)
        if not hand.selected:
            self.notify("No card is selected.")
        hand.selected = frozenset()

    def action_toggle_card(self) -> None:
        hand = self.query_one(HandView)
        card = hand.card_under_cursor
        if card is not None:
            hand.selected = hand.selected ^ {card}

    def action_select(self, number: int) -> None:
        hand = self.query_one(HandView)
        if number > len(hand.cards):
            self.notify(f"You have no card {number}.")
            return
        hand.cursor = number - 1
        self.action_toggle_card()
        self._status()

    def action_order(self) -> None:
        """Show the hand by suit, by rank, or as dealt (only the display changes)."""
        hand = self.query_one(HandView)
        orders = [order for order, _ in HAND_ORDERS]
        hand.order = orders[(orders.index(hand.order) + 1) % len(orders)]
        view = self.state.view if self.state is not None else None
        if view is not None:
            hand.cards = sort_hand(view.hand, hand.order)
        self._hand_title()
        self._status()

    def action_back(self) -> None:
        self.post_message(Request(m.Back()))

    def action_play_for_now(self) -> None:
        state = self.state
        player = self._absent(connected=False)
        if state is None or player is None:
            return
        self.post_message(Request(m.PlayForNow(player.seat)))
        if state.creator:
            self.notify(f"{player.name}'s seat is played for now.")
            return
        here = [p.connected and not p.bot for p in state.players]
        needed = votes_needed(here, player.seat)
        votes = len(player.votes) + 1
        if votes >= needed:
            self.notify(f"Your vote makes a majority: {player.name}'s seat is played for now.")
        else:
            self.voted_for = (player.seat, player.name)
            self.notify(
                f"You voted to play for {player.name} now: {votes} of the {needed} votes needed."
            )

    def action_seat_to_bot(self) -> None:
        absent = self._all_absent()
        if not absent:
            return
        after = (
            "Their balance stays under their name; back, they are told, and can watch or take"
            " their seat back from the bot."
        )

        def give(player: PlayerInfo) -> None:
            self.post_message(Request(m.SeatToBot(player.seat)))
            self.notify(f"{player.name}'s seat goes to a bot.")

        if len(absent) == 1:
            (player,) = absent

            def answered(yes: bool | None) -> None:
                if yes:
                    give(player)

            question = f"Give {player.name}'s seat to a bot? {after}"
            self.app.push_screen(ConfirmModal(question), answered)
            return

        def chosen(index: int | None) -> None:
            if index is not None:
                give(absent[index])

        answers = [f"{p.name} ({'away' if p.away else 'lost the connection'})" for p in absent]
        question = f"Give whose seat to a bot? {after}"
        self.app.push_screen(ChoiceModal(question, answers), chosen)

    def _all_absent(self) -> list[PlayerInfo]:
        """The other players who are away or lost the connection: the seats `a` may give."""
        state = self.state
        if state is None or not state.playing:
            return []
        return [
            p
            for p in state.players
            if p.seat != state.seat and not p.bot and (p.away or not p.connected)
        ]

    def action_take_bot_seat(self) -> None:
        state = self.state
        if state is None:
            return
        bot = state.bot_to_take()
        if bot is None:
            return
        self.post_message(Request(m.TakeBotSeat(int(state.table_id), bot.seat)))
        when = "as this hand ends" if state.hand_in_play else "now"
        if bot.holds_for == state.me:
            balance = signed(state.balances.get(state.me, 0))
            self.notify(
                f"You take your own seat back from {bot.name} {when}, in your place in the order"
                f" of play; you play on from your balance here ({balance})."
            )
            return
        self.notify(
            f"You take {bot.name}'s seat {when}; you play from your own balance here (0 if "
            "you are new), and the bot's stays the bot's."
        )

    def _play(self, action: str) -> None:
        # The selection is left as it is: the cards played leave the hand (and the
        # selection with them), and a move the server refuses leaves both as they were.
        move = self._action_message(action)
        if move is not None:
            self.post_message(Request(m.action_request(move)))

    def action_draw(self) -> None:
        self._play("draw")

    def action_pickup(self) -> None:
        self._play("pickup")

    def _moment(self) -> tuple[int, int]:
        """Where the hand is: its number and how many of its events have happened."""
        state = self.state
        if state is None or state.view is None:
            return (0, 0)
        return (state.hand_number, state.view.event_count)

    def action_drop(self) -> None:
        view = self.state.view if self.state is not None else None
        if not self.confirm_drop or view is None:
            self._play("drop")
            return

        def answered(answer: str | None) -> None:
            if answer == "always":
                self.confirm_drop = False
            if answer in ("drop", "always"):
                self._play("drop")

        self.app.push_screen(
            DropModal(count(view.hand), self._moment(), command_line=not self.guest), answered
        )

    def action_spread(self) -> None:
        self._play("spread")

    def action_discard(self) -> None:
        self._play("discard")

    def action_hit(self) -> None:
        state = self.state
        seat = state.seat if state is not None else None
        if state is None or state.view is None or not state.view.spreads:
            self._play("hit")
            return
        if seat is None:
            return  # watching: no moves
        card = self._hit_card()
        if card is None:
            return
        legal = frozenset(spread for hit_card, spread in self.legal().hits if hit_card == card)

        def chosen(spread: int | None) -> None:
            if spread is None:
                return
            self.post_message(Request(m.action_request(actions.Hit(seat, card, spread))))

        self.app.push_screen(
            HitChooser(card, state.view.spreads, legal, state.names(), self.card_style), chosen
        )

    def action_start(self) -> None:
        self.post_message(Request(m.Start()))

    def action_history(self) -> None:
        """Look back at the session's hands (the App shows them when the server answers)."""
        state = self.state
        if state is not None:
            self.post_message(Request(m.History(int(state.table_id))))

    def action_hint(self) -> None:
        """Ask the coach for the expert's view of our move now (the App shows its answer)."""
        state = self.state
        if state is not None:
            self.post_message(Request(m.CoachRequest(int(state.table_id), state.hand_number)))
            self.notify("Asking the coach...", timeout=3)

    def action_help(self) -> None:
        rules = self.state.rules if self.state is not None else None
        self.app.push_screen(HelpScreen(rules, self.card_style.ascii))

    def action_chat(self) -> None:
        chat = self.query_one("#chat", Input)
        chat.disabled = False
        self.add_class("chatting")
        chat.focus()

    @on(Input.Submitted, "#chat")
    def _send_chat(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        self._close_chat()
        if text:
            self.post_message(Request(m.Chat(text)))

    def _close_chat(self) -> None:
        self.remove_class("chatting")
        self.query_one("#chat", Input).disabled = True
        self.set_focus(None)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if event.widget is self.query_one("#chat", Input):
            self._close_chat()

    def action_leave(self) -> None:
        state = self.state
        if self.practice:
            leaving = "Quit the practice table?"
        else:
            leaving = (
                "Leave this table? The table plays your seat for you, and your balance keeps "
                "moving, until you sit down at it again or the session ends."
            )
        if state is not None and state.hand_in_play and state.seat is not None:

            def answered(yes: bool | None) -> None:
                if yes:
                    self._leave()

            self.app.push_screen(ConfirmModal(f"A hand is being played. {leaving}"), answered)
            return
        self._leave()

    def _leave(self) -> None:
        if self.practice:
            self.app.exit()
            return
        self.post_message(Request(m.Leave()))
