"""The tonk client App: owns the connection worker (and, for a practice table, the embedded
server), routes what the connection reports to the screens, and sends what the screens ask."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.keys import _character_to_key
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input
from tonk.shared import protocol as p

from .connection import Connection, TableRequest
from .dialogs import (
    ConfirmModal,
    CreateTableScreen,
    EndOfHandModal,
    HelpScreen,
    HitChooser,
    StandingsScreen,
)
from .messages import (
    Connected,
    ConnectFailed,
    HandEnded,
    KeyDone,
    LeftTable,
    LinkLost,
    LobbyChanged,
    Request,
    ServerRefused,
    SessionEnded,
    TableChanged,
)
from .practice import PracticeServer, start_practice_server
from .render import CardStyle
from .screens import ConnectingScreen, LobbyScreen, TableScreen
from .state import TableState
from .tokens import SeatTokens
from .widgets import TooSmall

DEFAULT_PORT = 7777

#: Seconds a key waits at most for the one before it to be handled (a safety net: it is
#: normally a few milliseconds), and for the server's answer to a move (normally one round
#: trip).
KEY_WAIT = 3.0
MOVE_WAIT = 3.0
#: A paste at the table is typed key by key, as far as this many characters.
MAX_PASTE_KEYS = 200

#: Windows that only show something: a key they do not use closes them and goes on to the
#: table under them.
PASS_THROUGH: tuple[type[Screen[Any]], ...] = (EndOfHandModal, HelpScreen)

#: What to press instead, said when a key means nothing where it was pressed.
KEY_HINTS: tuple[tuple[type[Screen[Any]], str], ...] = (
    (ConfirmModal, "y answers yes, n or escape no"),
    (HitChooser, "the spread's number, or arrows and enter, hits; escape cancels"),
    (StandingsScreen, "enter goes back, q quits"),
    (ConnectingScreen, "q quits"),
)


@dataclass
class ClientConfig:
    """Everything the command line decides. `host` None means a practice table on this
    machine with `bots` bots and the `rules` preset; `seed`, `deck` and `dealer` fix the
    practice table's deals (the embedded server runs with --dev for them)."""

    name: str
    host: str | None = None
    port: int = DEFAULT_PORT
    style: CardStyle = field(default_factory=CardStyle)
    theme: str | None = None
    bots: int = 2
    rules: str = "classic"
    bot_pause: float | None = None
    seed: int | None = None
    deck: str | None = None
    dealer: int | None = None
    state_dir: Path | None = None
    table_name: str = "Practice"
    # A table to create and sit at as soon as we are connected (the practice table's, or a
    # test's); and, for tests, options for the embedded server's ServerConfig.
    table: TableRequest | None = None
    server_options: dict[str, Any] = field(default_factory=dict)

    @property
    def practice(self) -> bool:
        return self.host is None


class TonkApp(App[None]):
    """Tonk at a terminal."""

    CSS_PATH = "tonk.tcss"
    TITLE = "tonk"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012

    def __init__(self, config: ClientConfig) -> None:
        super().__init__()
        self.config = config
        self.card_style = config.style
        self.connection: Connection | None = None
        self.practice_server: PracticeServer | None = None
        self.lobby = LobbyScreen()
        self.table_screen = TableScreen(config.style, practice=config.practice)
        where = (
            "Starting a practice table..."
            if config.practice
            else f"Connecting to {config.host}:{config.port}..."
        )
        self.connecting = ConnectingScreen(where)
        self.last_table_state: TableState | None = None
        self._standings: SessionEnded | None = None
        self.failure: str | None = None  # why the client gave up, said on exit
        # Keys waiting their turn (see on_event), the one being handled, and the table's
        # (hand, events) when a move went to the server and is not answered yet.
        self._keys: deque[tuple[int, events.Key]] = deque()  # (arrival number, key)
        self._keys_arrived = 0
        self._key_serial = 0
        self._key_busy = False
        self._key_target: Widget | None = None
        self._key_timer: Timer | None = None
        self._move_sent: tuple[int, int] | None = None
        self._move_timer: Timer | None = None

    def on_mount(self) -> None:
        if self.config.theme:
            self.theme = self.config.theme
        if self.card_style.ascii:
            self.add_class("-ascii")
        self.add_mode("connecting", lambda: self.connecting)
        self.add_mode("lobby", lambda: self.lobby)
        self.add_mode("table", lambda: self.table_screen)
        self.switch_mode("connecting")
        self.run_connection()

    def on_resize(self, event: events.Resize) -> None:
        width, height = event.size
        self.set_class(width < TooSmall.MIN_WIDTH or height < TooSmall.MIN_HEIGHT, "-too-small")
        self.table_screen.refresh_keys()

    # -- keys, one at a time -------------------------------------------------------------------
    #
    # Textual handles a key in two steps: it forwards the key to the focused widget (or the
    # screen), and runs the key's bindings only when the key has bubbled back up to the App.
    # Keys that arrive in one read (typed fast, pasted, bunched by SSH) are all forwarded
    # before the first one's binding has run, so the second key goes where focus was before
    # the first (into the table, not the chat line the first opened), and a key the screen
    # answers itself (a greyed-out one, explained) overtakes the bindings of the keys before
    # it ("123s" spread nothing: the s was answered before 1, 2 and 3 selected). So each key
    # is let in only when the one before it is handled to its end, and, after a move, when
    # the server has answered it: "dx" discards after the draw, as it would typed slowly.

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self._queue_key(event)
            await self._next_key()
            return
        if isinstance(event, events.Paste) and not event.is_forwarded and self._paste_as_keys():
            self._paste_keys(event.text)
            await self._next_key()
            return
        await super().on_event(event)

    def _paste_as_keys(self) -> bool:
        """A paste is typed key by key, except into a text field with nothing before it."""
        waiting = self._key_busy or self._move_sent is not None or bool(self._keys)
        text_field = isinstance(self.focused, Input) or isinstance(self.screen, CreateTableScreen)
        return waiting or not text_field

    def _paste_keys(self, text: str) -> None:
        if len(text) > MAX_PASTE_KEYS:
            self.notify(
                f"Only the first {MAX_PASTE_KEYS} of the {len(text)} characters pasted were "
                "used as keys.",
                severity="warning",
            )
        for char in text[:MAX_PASTE_KEYS]:
            if char in "\r\n":
                self._queue_key(events.Key("enter", "\r"))
            elif char == "\t":
                self._queue_key(events.Key("tab", "\t"))
            elif char.isprintable():
                self._queue_key(events.Key(_character_to_key(char), char))

    def _queue_key(self, key: events.Key) -> None:
        self._keys_arrived += 1
        self._keys.append((self._keys_arrived, key))

    async def _next_key(self) -> None:
        if self._key_busy or self._move_sent is not None or not self._keys:
            return
        arrival, key = self._keys.popleft()
        top = self.screen
        if isinstance(top, PASS_THROUGH) and key.key not in top.active_bindings:
            if isinstance(top, EndOfHandModal) and arrival <= top.keys_before:
                # Typed during the hand, and held until the move before it was answered,
                # which ended the hand: it is for a hand that is over.
                self.notify(f"The hand was over before {key.character or key.key}: not used.")
                await self._next_key()
                return
            top.dismiss(None)  # out of the way: the key is for the table under it
        self._key_target = self.focused or self.screen
        self._key_serial += 1
        self._key_busy = True
        self._key_timer = self.set_timer(KEY_WAIT, partial(self._key_handled, self._key_serial))
        await super().on_event(key)
        self._key_target.post_message(KeyDone(self._key_serial))

    def on_key_done(self, message: KeyDone) -> None:
        """A key's marker back at the App. It goes the key's way twice more: after the
        key's bindings (which ran when the key came back) from where the key went, so what
        they posted there (the chat line's text sent, say) is handled first; then through
        the table, so a move its handlers asked for reaches the App (and holds the keys
        after it) before the next key is let in."""
        if message.serial != self._key_serial or not self._key_busy:
            return  # late: the key was given up on
        if message.stage < 3:
            target = self._key_target if message.stage == 1 else self.table_screen
            if target is None or not (target.is_attached and target.is_running):
                target = self.screen
            target.post_message(KeyDone(message.serial, message.stage + 1))
            return
        self.call_later(self._key_handled, message.serial)

    async def _key_handled(self, serial: int) -> None:
        if serial != self._key_serial or not self._key_busy:
            return  # that key was done with already
        if self._key_timer is not None:
            self._key_timer.stop()
            self._key_timer = None
        self._key_busy = False
        await self._next_key()

    def _move_answered(self) -> None:
        """The server answered the move the keys were waiting on (or never will)."""
        if self._move_timer is not None:
            self._move_timer.stop()
            self._move_timer = None
        if self._move_sent is not None:
            self._move_sent = None
            self.call_later(self._next_key)

    def on_key(self, event: events.Key) -> None:
        """A key back at the App, just before its bindings run: a printable key that means
        nothing here says so (and what to press), never silently nothing."""
        screen = self.screen
        if (
            not event.is_printable
            or event.key in screen.active_bindings
            or isinstance(screen, CreateTableScreen)
            or isinstance(self.focused, Input)
        ):
            return
        hint = next((h for kind, h in KEY_HINTS if isinstance(screen, kind)), "? shows the keys")
        char = event.character or event.key
        if char != char.lower() and char.lower() in screen.active_bindings:
            hint = f"is caps lock on? The keys are lower case ({char.lower()}, not {char})"
        self.notify(f"{char} is not a key here: {hint}.")

    @work(exclusive=True, group="connection", exit_on_error=False)
    async def run_connection(self) -> None:
        """The connection worker: it lives as long as the App."""
        config = self.config
        create = config.table
        tokens: SeatTokens | None = None
        if config.practice:
            dev = config.seed is not None or config.deck is not None or config.dealer is not None
            try:
                self.practice_server = await start_practice_server(dev=dev, **config.server_options)
            except Exception as exc:  # the embedded server could not start: say why
                self.exit(
                    return_code=1, message=f"tonk-client: cannot start a practice table: {exc}"
                )
                return
            host, port = "127.0.0.1", self.practice_server.port
            create = create or practice_request(config)
        else:
            assert config.host is not None
            host, port = config.host, config.port
            tokens = SeatTokens(config.state_dir)
        self.connection = Connection(
            host,
            port,
            config.name,
            self.post_message,
            tokens=tokens,
            create=create,
            style=config.style,
        )
        try:
            await self.connection.run()
        finally:
            if self.practice_server is not None:
                await self.practice_server.close()
                self.practice_server = None

    async def action_quit(self) -> None:
        if self.connection is not None:
            await self.connection.close()
        self.exit()

    # -- what the connection reports ---------------------------------------------------------

    def on_connected(self, message: Connected) -> None:
        host = "" if self.config.practice else str(self.config.host)
        self.lobby.set_identity(host, message.name)
        self.table_screen.set_link_note("")
        if message.reconnect:
            self.notify("Connected again.", title="Connection")

    def on_link_lost(self, message: LinkLost) -> None:
        self._move_answered()
        note = f"Connection lost: reconnecting (attempt {message.attempt})"
        self.table_screen.set_link_note(note)
        if message.attempt == 1 or message.attempt % 10 == 0:
            self.notify(
                f"{message.reason}. Trying again...", title="Connection lost", severity="warning"
            )

    def on_connect_failed(self, message: ConnectFailed) -> None:
        self.failure = f"tonk-client: {message.reason}"
        self.exit(return_code=1, message=self.failure)

    def on_lobby_changed(self, message: LobbyChanged) -> None:
        self.lobby.show(message.tables)
        if self.current_mode == "connecting":
            self.switch_mode("lobby")

    def on_table_changed(self, message: TableChanged) -> None:
        self.last_table_state = state = message.state
        # A move that ended the hand is answered by the end-of-hand window (the hand_end
        # that follows): the keys after it find the window up (see _next_key).
        ended = state.view is not None and state.view.settlement is not None
        if self._move_sent is not None and self._move_sent != progress(state) and not ended:
            self._move_answered()
        # The end-of-hand window gets out of the way when the next hand is dealt.
        top = self.screen
        if (
            isinstance(top, EndOfHandModal)
            and message.state.hand_in_play
            and message.state.hand_number > top.hand_number
        ):
            top.dismiss(None)
        self.table_screen.show(message.state)
        if self.current_mode != "table":
            self.switch_mode("table")

    def on_left_table(self, message: LeftTable) -> None:
        self._move_answered()
        if message.reason:
            self.notify(message.reason, severity="warning")
        if self.config.practice:
            return
        self._close_modals()
        self.switch_mode("lobby")

    def _close_modals(self) -> None:
        if self.current_mode == "table":
            while len(self.screen_stack) > 1:
                self.pop_screen()

    def on_hand_ended(self, message: HandEnded) -> None:
        modal = EndOfHandModal(
            message.hand_number,
            message.settlement,
            message.names,
            message.unit,
            self.card_style,
            message.balances,
        )
        modal.keys_before = self._keys_arrived
        if self.current_mode == "table":
            # A modal left open from the last hand is replaced by this one.
            if isinstance(self.screen, EndOfHandModal):
                self.pop_screen()
            self.push_screen(modal, lambda _: self._show_standings())
        self._move_answered()

    def on_session_ended(self, message: SessionEnded) -> None:
        self._standings = message
        if not isinstance(self.screen, EndOfHandModal):
            self._show_standings()

    def _show_standings(self) -> None:
        """The final standings, once the last hand's modal is closed."""
        message, self._standings = self._standings, None
        if message is None:
            return

        def done(_: None) -> None:
            if self.config.practice:
                self.exit()
            elif self.connection is not None:
                self.connection.leave()

        self.push_screen(
            StandingsScreen(message.table_name, message.standings, message.hands, message.unit),
            done,
        )

    def on_server_refused(self, message: ServerRefused) -> None:
        self._move_answered()
        title = "Not allowed" if message.code == p.ILLEGAL_ACTION else "The server says"
        self.notify(message.message, title=title, severity="warning")

    def on_request(self, message: Request) -> None:
        connection = self.connection
        request = dict(message.message)
        if connection is None or not connection.connected:
            self.notify("Not connected to the server right now.", severity="warning")
            return
        kind = request.get("type")
        if kind == "create_table":
            bots = int(request.pop("bots", 0) or 0)
            connection.create_table(TableRequest(request, bots))
        elif kind == p.LEAVE:
            connection.leave()
        elif kind == p.SIT:
            connection.sit(int(request["table"]))
        elif connection.send(request) and kind in p.ACTION_TYPES:
            # The keys after a move wait for its answer (see on_event).
            state = self.last_table_state
            self._move_sent = progress(state) if state is not None else (0, 0)
            if self._move_timer is not None:
                self._move_timer.stop()
            self._move_timer = self.set_timer(MOVE_WAIT, self._move_answered)


def progress(state: TableState) -> tuple[int, int]:
    """How far the table has got: the hand, and the events of it seen."""
    return state.hand_number, state.view.event_count if state.view is not None else 0


def practice_request(config: ClientConfig) -> TableRequest:
    """The practice table: seats for you and the bots, the chosen rules, started as soon as the
    bots sit (the server starts a full table by itself)."""
    fields: dict[str, Any] = {
        "name": config.table_name,
        "rules": {"preset": config.rules},
        "seats": config.bots + 1,
    }
    if config.bot_pause is not None:
        fields["bot_pause"] = config.bot_pause
    if config.seed is not None:
        fields["seed"] = config.seed
    if config.deck is not None:
        fields["deck"] = config.deck
    if config.dealer is not None:
        fields["dealer"] = config.dealer
    return TableRequest(fields, bots=config.bots)
