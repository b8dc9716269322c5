"""The table screen: players, the stock and discard, spreads, your hand, the ledger, the log."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input
from tonk.shared import actions
from tonk.shared import messages as m
from tonk.shared.cards import count
from tonk.shared.view import NO_ACTIONS, LegalActions, why_not

from ..dialogs import ConfirmModal, DropModal, HelpScreen, HitChooser
from ..messages import Request
from ..render import HAND_ORDERS, CardStyle, sort_hand
from ..state import TableState
from ..tablekeys import BAR_KEYS, HIDDEN_KEYS, MOVE_KEYS, TABLE_KEYS, bindings
from ..widgets import (
    CentrePanel,
    HandView,
    KeyBar,
    KeyEntry,
    LedgerPanel,
    LogPanel,
    PlayersPanel,
    Status,
    StatusBar,
    TooSmall,
    hand_title,
    turn_message,
)
from .common import too_small

#: What `g` says once the game is under way.
STARTED = "The game has started."

#: The field of `LegalActions` that opens each move's action.
MOVE_ACTIONS = {entry.action: entry.legal for entry in TABLE_KEYS if entry.legal}


class TableScreen(Screen[None]):
    """The table: players, the stock and discard, spreads, your hand, the ledger, the log."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings())

    AUTO_FOCUS = None  # keys go to the table; the chat line takes focus only on `c`

    def __init__(self, style: CardStyle, practice: bool = False, confirm_drop: bool = True) -> None:
        super().__init__()
        self.card_style = style
        self.practice = practice
        self.confirm_drop = confirm_drop  # ask before a drop (--no-confirm-drop: never)
        # What the App's reactives say, as last drawn (see on_mount).
        self.state: TableState | None = None
        self.link_note = ""

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
                centre = CentrePanel(self.card_style, id="centre", classes="box")
                centre.border_title = "Table"
                yield centre
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
        yield KeyBar(id="keys")

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
        self.query_one(PlayersPanel).state = state
        self.query_one(CentrePanel).state = state
        hand = self.query_one(HandView)
        view = state.view
        hand.cards = sort_hand(view.hand, hand.order) if view is not None else ()
        if state.seat is None:
            hand.note = "You are watching this table."
        elif view is None:
            hand.note = "Waiting for the deal."
        else:
            hand.note = "No cards."
        self._hand_title()
        unit_title = f"Ledger ({state.unit})" if state.unit else "Ledger"
        box = self.query_one("#ledger-box")
        if box.border_title != unit_title:
            box.border_title = unit_title
        self.query_one(LedgerPanel).state = state
        log = self.query_one(LogPanel)
        log.table_id = state.table_id
        log.log_lines = state.log
        self._status()
        self.refresh_keys()
        stack = self.app.screen_stack
        question = stack[-1] if stack else None
        if isinstance(question, DropModal) and question.asked_at != self._moment():
            # The hand moved on since the question (the turn was played for you, the hand
            # ended): the question goes, rather than a late k dropping in another moment.
            question.dismiss("cancel")

    def _hand_title(self) -> None:
        state = self.state
        if state is None:
            return
        hand = self.query_one(HandView)
        title = hand_title(state.view, hand.order) if state.seat is not None else "Watching"
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
            entries.append(KeyEntry(key.key, key.shown, key.label, state is True, key.keep))
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
        )
        self.query_one(StatusBar).status = Status(self.state, message)

    def _tick(self) -> None:
        # Only a running turn timer changes with time.
        if self.state is not None and self.state.turn_deadline is not None:
            self._status()

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
            return True if getattr(self.legal(), opened_by) else None
        if action == "chat":
            return True if state is not None and not self.link_note else None
        if action == "order":
            return True if state is not None and state.seat is not None else None
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

    def on_key(self, event: events.Key) -> None:
        """A game key that is greyed out is explained, never silently ignored."""
        if self.query_one("#chat", Input).has_focus:
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
            self.notify("The terminal is too small to play: make it at least 80x24.")
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
        move = self._action_message(action, explain=True)
        if move is None:
            return
        reason = why_not(state.view, move, state.names(me_as_you=False))
        if reason is None:  # greyed for now (a move on its way): the server answers it
            self.post_message(Request(m.action_request(move)))
        else:
            self.notify(reason, title="Not allowed", severity="warning")

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
            cards = hand.selected_cards()
            if len(cards) != 1:
                self.notify(
                    "Select the one card to hit with first: space or 1-6, then h.",
                    severity="warning",
                )
                return None
            view = self.state.view if self.state is not None else None
            if explain or view is None or not view.spreads:
                spread = view.spreads[0].id if view is not None and view.spreads else 0
                return actions.Hit(seat, cards[0], spread)
            return None
        return None

    # -- the keys ----------------------------------------------------------------------------

    @on(KeyBar.Pressed)
    def _key_clicked(self, event: KeyBar.Pressed) -> None:
        self.app.simulate_key(event.key)

    @on(HandView.Tapped)
    def _card_tapped(self, event: HandView.Tapped) -> None:
        """A tap on a card is its number's key: the cursor goes to it, and it is selected
        (or no longer)."""
        self.action_select(event.number)

    def action_cursor(self, step: int) -> None:
        hand = self.query_one(HandView)
        hand.cursor = hand.cursor + step
        self._status()

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

        self.app.push_screen(DropModal(count(view.hand), self._moment()), answered)

    def action_spread(self) -> None:
        self._play("spread")

    def action_discard(self) -> None:
        self._play("discard")

    def action_hit(self) -> None:
        hand = self.query_one(HandView)
        cards = hand.selected_cards()
        state = self.state
        seat = state.seat if state is not None else None
        if len(cards) != 1 or state is None or state.view is None or not state.view.spreads:
            self._play("hit")
            return
        if seat is None:
            return  # watching: no moves
        card = cards[0]
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

    def key_escape(self) -> None:
        if self.has_class("chatting"):
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
