"""The full screens: connecting, the lobby, and the table. Screens render the state the App
hands them and post `Request` messages up for what the player wants done."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Label, Static
from tonk.shared import protocol as p
from tonk.shared.actions import action_from_dict
from tonk.shared.cards import count, format_cards
from tonk.shared.view import NO_ACTIONS, LegalActions, why_not

from .dialogs import ConfirmModal, CreateTableScreen, DropModal, HelpScreen, HitChooser
from .messages import Request
from .render import HAND_ORDERS, CardStyle, amount_text, sort_hand
from .state import TableInfo, TableState
from .widgets import (
    CentrePanel,
    HandView,
    KeyBar,
    KeyEntry,
    LedgerPanel,
    LogPanel,
    PlayersPanel,
    StatusBar,
    TooSmall,
    hand_title,
    turn_message,
)


def too_small(screen: Screen[None]) -> bool:
    # The App's mark, set from the resize event's own size as the terminal changes: while it
    # handles that event `app.size` may still be the old size (the key line stayed greyed
    # after the terminal grew back until something else redrew it).
    return screen.app.has_class("-too-small")


class ConnectingScreen(Screen[None]):
    """Shown while the first connection is made (and the practice server started)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.quit", "Quit")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield Static(self.text, id="connecting")
        yield Footer()

    def say(self, text: str) -> None:
        self.query_one("#connecting", Static).update(text)


#: The lobby's columns: (key, heading).
LOBBY_COLUMNS = (
    ("name", "Table"),
    ("rules", "Rules"),
    ("stake", "Stake"),
    ("seats", "Seats"),
    ("state", "State"),
    ("watching", "Watching"),
    ("players", "Players"),
)


def lobby_row(info: TableInfo) -> tuple[str, ...]:
    """One table's cells in the lobby, in the order of LOBBY_COLUMNS."""
    state = info.state or ("playing" if info.playing else "waiting")
    return (
        info.name,
        info.rules,
        amount_text(info.stake, info.unit),
        f"{info.seats_taken}/{info.seats}",
        f"{state}, your seat" if info.mine else state,
        str(info.spectators),
        ", ".join(info.players),
    )


class LobbyScreen(Screen[None]):
    """The server's tables, kept up to date by the server; keys to create one, take a seat,
    and watch."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "create", "New table"),
        Binding("enter,j", "sit", "Take a seat"),
        Binding("w", "watch", "Watch"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, server: str = "", player: str = "") -> None:
        super().__init__()
        self.server = server
        self.player = player
        self.tables: tuple[TableInfo, ...] = ()
        self._rows: dict[str, tuple[str, ...]] = {}  # the rows shown, by table id, in order
        self._ready = False  # the table's columns exist

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield Static(self._title(), id="lobby-title")
        table: DataTable[str | Text] = DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield table
        yield Label("", id="lobby-empty")
        yield Footer(compact=True)

    def _title(self) -> Text:
        line = Text("tonk · lobby", style="bold")
        if self.server:
            line.append(f" · {self.server}")
        if self.player:
            line.append(f" · playing as {self.player}")
        return line

    def on_mount(self) -> None:
        table = self.query_one("#tables", DataTable)
        for key, heading in LOBBY_COLUMNS:
            table.add_column(heading, key=key)
        self._ready = True
        self.show(self.tables)

    def on_unmount(self) -> None:
        self._ready = False

    def set_identity(self, server: str, player: str) -> None:
        self.server, self.player = server, player
        if self._ready:
            self.query_one("#lobby-title", Static).update(self._title())

    def show(self, tables: tuple[TableInfo, ...]) -> None:
        """Show `tables` (in id order), changing only the rows that changed: the list is
        updated by the server as tables come, fill up, play and go, and the cursor stays on
        the table it is on."""
        chosen = self.selected()
        self.tables = tables
        if not self._ready:
            return
        try:
            table = self.query_one("#tables", DataTable)
        except NoMatches:
            return  # the screen is being taken down (the list keeps coming till the end)
        rows = {info.table_id: lobby_row(info) for info in tables}
        shown = self._rows
        for key in [key for key in shown if key not in rows]:
            table.remove_row(key)
            del shown[key]
        kept = [key for key in rows if key in shown]
        added = [key for key in rows if key not in shown]
        if kept != list(shown) or (kept and added and int(added[0]) < int(kept[-1])):
            # Out of order (cannot happen with ids that only grow): draw it all again.
            table.clear()
            shown.clear()
            added = list(rows)
        for key in rows:
            cells = rows[key]
            old = shown.get(key)
            if old is None:
                continue
            for (column, _), before, after in zip(LOBBY_COLUMNS, old, cells, strict=True):
                if before != after:
                    table.update_cell(key, column, after)
            shown[key] = cells
        for key in added:
            table.add_row(*rows[key], key=key)
            shown[key] = rows[key]
        if chosen is not None and chosen.table_id in shown:
            table.move_cursor(row=table.get_row_index(chosen.table_id))
        self.query_one("#lobby-empty", Label).update(
            "" if tables else "No tables yet: press n to create one."
        )
        self.refresh_bindings()

    def selected(self) -> TableInfo | None:
        """The table under the cursor."""
        if not self._ready or not self.tables:
            return None
        try:
            table = self.query_one("#tables", DataTable)
        except NoMatches:
            return None
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((info for info in self.tables if info.table_id == key), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("sit", "watch"):
            return True if self.tables else None
        return True

    def action_create(self) -> None:
        def created(request: dict[str, object] | None) -> None:
            if request is not None:
                self.post_message(Request({"type": "create_table", **request}))

        self.app.push_screen(CreateTableScreen(f"{self.player or 'my'} table"[:32]), created)

    @on(DataTable.RowSelected)
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_sit()

    def action_sit(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("There is no table to sit at: press n to create one.")
            return
        self.post_message(Request({"type": p.SIT, "table": int(info.table_id)}))

    def action_watch(self) -> None:
        info = self.selected()
        if info is None:
            self.notify("There is no table to watch.")
            return
        self.post_message(Request({"type": p.WATCH, "table": int(info.table_id)}))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(None))


#: Game keys and the action each stands for, for explaining a greyed-out key.
GAME_KEYS = {
    "d": "draw",
    "p": "pickup",
    "s": "spread",
    "h": "hit",
    "x": "discard",
    "k": "drop",
}

#: Keys shown only when they apply, and what pressing one says when it does not.
HIDDEN_KEYS = {
    "b": ("back", "You are not away: your turns are yours to play."),
    "g": ("start", "Only the table's creator starts the game, before the table is full."),
}

#: What `g` says once the game is under way.
STARTED = "The game has started."


class TableScreen(Screen[None]):
    """The table: players, the stock and discard, spreads, your hand, the ledger, the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", "Left", show=False),
        Binding("right", "cursor(1)", "Right", show=False),
        Binding("space", "toggle_card", "Select", show=False),
        *(Binding(str(n), f"select({n})", show=False) for n in range(1, 7)),
        Binding("d", "draw", "Draw"),
        Binding("p", "pickup", "Pick up"),
        Binding("s", "spread", "Spread"),
        Binding("h", "hit", "Hit"),
        Binding("x", "discard", "Discard"),
        Binding("k", "drop", "Drop"),
        Binding("o", "order", "Sort"),
        Binding("b", "back", "Back"),
        Binding("c", "chat", "Chat"),
        Binding("g", "start", "Start"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "leave", "Leave"),
    ]

    #: The key bar: (binding key, shown as, action, how much it is kept when space is short).
    KEYS: ClassVar[tuple[tuple[str, str, str, str, int], ...]] = (
        ("d", "d", "Draw", "draw", 9),
        ("p", "p", "Pick up", "pickup", 9),
        ("s", "s", "Spread", "spread", 9),
        ("h", "h", "Hit", "hit", 9),
        ("x", "x", "Discard", "discard", 9),
        ("k", "k", "Drop", "drop", 9),
        ("b", "b", "Back", "back", 8),
        ("g", "g", "Start", "start", 8),
        ("o", "o", "Sort", "order", 3),
        ("c", "c", "Chat", "chat", 4),
        ("question_mark", "?", "Help", "help", 6),
        ("q", "q", "Leave", "leave", 7),
    )

    AUTO_FOCUS = None  # keys go to the table; the chat line takes focus only on `c`

    def __init__(self, style: CardStyle, practice: bool = False, confirm_drop: bool = True) -> None:
        super().__init__()
        self.card_style = style
        self.practice = practice
        self.confirm_drop = confirm_drop  # ask before a drop (--no-confirm-drop: never)
        self.state: TableState | None = None
        self.link_note = ""
        self._ready = False  # mounted: the widgets exist

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield StatusBar(id="status")
        # Each panel's border is a box around the widget drawing its rows, so that a row
        # repainted is only the row's cells, not the border and padding beside it too.
        with Horizontal(id="body"):
            with Vertical(id="left"):
                with Vertical(id="players-box", classes="box") as box:
                    box.border_title = "Players"
                    yield PlayersPanel(id="players")
                centre = CentrePanel(id="centre", classes="box")
                centre.border_title = "Table"
                yield centre
                with Vertical(id="hand-box", classes="box") as box:
                    box.border_title = "Your hand"
                    yield HandView(self.card_style, id="hand")
            with Vertical(id="right"):
                with Vertical(id="ledger-box", classes="box") as box:
                    box.border_title = "Ledger"
                    box.border_subtitle = "balance · trend · last"
                    yield LedgerPanel(id="ledger")
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
        self._ready = True
        if self.state is not None:
            self.show(self.state)
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        self._ready = False  # (the App shutting down: a late table change draws nothing)

    # -- rendering ---------------------------------------------------------------------------

    def show(self, state: TableState) -> None:
        """Draw `state` (attributes down to every widget)."""
        changed_table = self.state is None or self.state.table_id != state.table_id
        self.state = state
        if not self._ready:
            return
        if changed_table:
            self.query_one(LogPanel).clear()
        self.query_one(PlayersPanel).show(state, self.card_style.ascii)
        self.query_one(CentrePanel).show(state, self.card_style)
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
        ledger = self.query_one(LedgerPanel)
        unit_title = f"Ledger ({state.unit})" if state.unit else "Ledger"
        box = self.query_one("#ledger-box")
        if box.border_title != unit_title:
            box.border_title = unit_title
        ledger.show(state, self.card_style)
        self.query_one(LogPanel).show(state.log)
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
        if not self._ready:
            return
        entries = []
        for key, shown, description, action, keep in self.KEYS:
            state = self.check_action(action, ())
            if state is False:
                continue  # hidden: not a key for this table now
            entries.append(KeyEntry(key, shown, description, state is True, keep))
        self.query_one(KeyBar).show(entries)

    def _status(self) -> None:
        if self.state is None or not self._ready:
            return
        hand = self.query_one(HandView)
        message = self.link_note or turn_message(
            self.state,
            legal=self.legal(),
            cursor=hand.card_under_cursor,
            ascii_only=self.card_style.ascii,
        )
        self.query_one(StatusBar).show(self.state, message)

    def _tick(self) -> None:
        # Only a running turn timer changes with time.
        if self.state is not None and self.state.turn_deadline is not None:
            self._status()

    def set_link_note(self, note: str) -> None:
        self.link_note = note
        if self._ready:
            self._status()
            self.refresh_keys()

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
        legal = self.legal()
        state = self.state
        if action == "draw":
            return True if legal.draw_stock else None
        if action == "pickup":
            return True if legal.take_discard else None
        if action == "drop":
            return True if legal.drop else None
        if action == "spread":
            return True if legal.spreads else None
        if action == "hit":
            return True if legal.hits else None
        if action == "discard":
            return True if legal.discards else None
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
        if (
            event.key in HIDDEN_KEYS
            and self.check_action(HIDDEN_KEYS[event.key][0], ()) is not True
        ):
            event.stop()
            event.prevent_default()
            state = self.state
            message = HIDDEN_KEYS[event.key][1]
            if event.key == "g" and state is not None and state.session_over:
                message = "The session is over."
            elif event.key == "g" and state is not None and (state.playing or state.view):
                message = STARTED
            self.notify(message)
            return
        action = GAME_KEYS.get(event.key)
        if action is None or self.check_action(action, ()) is True:
            return
        event.stop()
        event.prevent_default()
        self.explain(action)

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
        message = self._action_message(action, explain=True)
        if message is None:
            return
        move = action_from_dict({**message, "seat": state.seat})
        reason = why_not(state.view, move, state.names(me_as_you=False))
        if reason is None:  # greyed for now (a move on its way): the server answers it
            self.post_message(Request(message))
        else:
            self.notify(reason, title="Not allowed", severity="warning")

    def _action_message(self, action: str, explain: bool = False) -> dict[str, object] | None:
        hand = self.query_one(HandView)
        if action == "draw":
            return {"type": p.DRAW_STOCK}
        if action == "pickup":
            return {"type": p.TAKE_DISCARD}
        if action == "drop":
            return {"type": p.DROP}
        if action == "discard":
            card = hand.card_under_cursor
            if card is None:
                self.notify("You have no card to discard.")
                return None
            return {"type": p.DISCARD, "card": str(card)}
        if action == "spread":
            cards = hand.selected_cards()
            if not cards:
                self.notify(
                    "Select the cards of the spread first: space or 1-6, then s.",
                    severity="warning",
                )
                return None
            return {"type": p.SPREAD, "cards": format_cards(cards)}
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
                return {"type": p.HIT, "card": str(cards[0]), "spread": spread}
            return None
        return None

    # -- the keys ----------------------------------------------------------------------------

    @on(KeyBar.Pressed)
    def _key_clicked(self, event: KeyBar.Pressed) -> None:
        self.app.simulate_key(event.key)

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
        self.post_message(Request({"type": p.BACK}))

    def _play(self, action: str) -> None:
        # The selection is left as it is: the cards played leave the hand (and the
        # selection with them), and a move the server refuses leaves both as they were.
        message = self._action_message(action)
        if message is not None:
            self.post_message(Request(message))

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
        if len(cards) != 1 or state is None or state.view is None or not state.view.spreads:
            self._play("hit")
            return
        card = cards[0]
        legal = frozenset(spread for hit_card, spread in self.legal().hits if hit_card == card)

        def chosen(spread: int | None) -> None:
            if spread is None:
                return
            self.post_message(Request({"type": p.HIT, "card": str(card), "spread": spread}))

        self.app.push_screen(
            HitChooser(card, state.view.spreads, legal, state.names(), self.card_style), chosen
        )

    def action_start(self) -> None:
        self.post_message(Request({"type": p.START}))

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
            self.post_message(Request({"type": p.CHAT, "text": text}))

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
        self.post_message(Request({"type": p.LEAVE}))
