"""The tonk client App: owns the connection worker (and, for a practice table, the embedded
server), routes what the connection reports to the screens, and sends what the screens ask."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual import events, work
from textual.app import ScreenError
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.filter import Monochrome, NoColor
from textual.notifications import Notify, SeverityLevel
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

from .connection import Connection, Opener, TableRequest
from .dialogs import (
    CreateTableScreen,
    EndOfHandModal,
    HandReplayScreen,
    HistoryScreen,
    StandingsScreen,
)
from .dialogs.standings import MOVED
from .keys import KeyedApp
from .messages import (
    Connected,
    ConnectFailed,
    HandEnded,
    HandReplayed,
    HistoryListed,
    JoinNotice,
    LeftTable,
    LinkLost,
    LobbyChanged,
    RefusedHere,
    RematchChanged,
    Reported,
    Request,
    ServerRefused,
    SessionEnded,
    TableChanged,
)
from .model.state import TableInfo, TableState
from .parsed_css import share_parsed_css
from .practice import PracticeServer, start_practice_server
from .recent import client_address, remember
from .screens import ConnectingScreen, LobbyScreen, NightsScreen, TableScreen
from .screens.table import TALL
from .terminal import AsciiOnly, NoColour
from .text.coaching import advice_text
from .text.render import CardStyle
from .tokens import SeatTokens
from .widgets import PORTRAIT, TooSmall


@dataclass
class ClientConfig:
    """Everything the command line decides. `host` None means a practice table on this
    machine with `bots` bots and the `rules` preset; `seed`, `deck` and `dealer` fix the
    practice table's deals (the embedded server runs with --dev for them)."""

    name: str
    name_given: bool = False  # by --name (not the login name): kept even if in use here
    host: str | None = None
    port: int = p.DEFAULT_PORT
    style: CardStyle = field(default_factory=CardStyle)
    theme: str | None = None
    bots: int = 2
    bot_strategies: tuple[str, ...] = ()  # each bot's strategy; empty: every bot `easy`
    rules: str = "classic"
    confirm_drop: bool = True  # ask before a drop
    bell: bool = True  # ring the terminal bell once when our turn waits untouched
    bot_pause: float | None = None
    hands: int | None = None  # the practice table's session length (None: no end)
    seed: int | None = None
    deck: str | None = None
    dealer: int | None = None
    state_dir: Path | None = None
    table_name: str = "Practice"
    # A table to create and sit at as soon as we are connected (the practice table's, or a
    # test's); and, for tests, options for the embedded server's ServerConfig.
    table: TableRequest | None = None
    server_options: dict[str, Any] = field(default_factory=dict)
    # Another way to reach the server than TCP to host:port, and another keeper of seat
    # tokens than the file in state_dir (the SSH door gives both).
    opener: Opener | None = None
    tokens: SeatTokens | None = None
    #: A table to go to by name once connected (--table, the door's `join`).
    join: str | None = None
    #: An SSH door guest (no computer account here: seats are held by their name).
    guest: bool = False
    #: A touch screen's web page: the words say "tap" and name buttons, not keys.
    touch: bool = False
    #: The server's name as found on the LAN (kept with it among the servers joined).
    server_name: str = ""

    @property
    def practice(self) -> bool:
        return self.host is None


class TonkApp(KeyedApp):
    """Tonk at a terminal."""

    CSS_PATH = "tonk.tcss"
    TITLE = "tonk"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]
    # Each screen is marked by the terminal's width: `-portrait` under 80 columns (the panels
    # stacked: a phone held upright; tonk.tcss), `-wide` from 110; and by its height:
    # `-tall` from TALL rows (an upright table has room for the log).
    HORIZONTAL_BREAKPOINTS = [(0, "-portrait"), (PORTRAIT, "-narrow"), (110, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL, "-tall")]  # noqa: RUF012
    LATE_KEY = "The hand was over before {key}: not used."
    #: How long the session's last hand's window stays before the final standings replace it
    #: by themselves (None: until it is closed; a page that takes no keys sets a time).
    LAST_WINDOW_SECONDS: float | None = None

    # What the connection reports, flowing down to the screens that watch it.
    #: The server's tables, for the lobby.
    tables: var[tuple[TableInfo, ...]] = var(())
    #: (the server's host, or "" for a practice table; our name as the server accepted it)
    identity: var[tuple[str, str]] = var(("", ""))
    #: The table we sit at or watch (drawn every time it comes: it is new every time).
    table_state: var[TableState | None] = var(None, always_update=True)
    #: Why the link is down while it reconnects, or "".
    link_note: var[str] = var("")
    #: The terminal is smaller than the table needs.
    too_small: var[bool] = var(False)

    def __init__(self, config: ClientConfig) -> None:
        share_parsed_css()  # (the CSS parsed once a process, not twice a start: parsed_css)
        super().__init__()
        self.config = config
        self.card_style = config.style
        self.connection: Connection | None = None
        self.practice_server: PracticeServer | None = None
        self._claims: SeatTokens | None = None  # the tokens file whose names we claimed
        self.lobby = LobbyScreen()
        self.table_screen = TableScreen(
            config.style,
            practice=config.practice,
            confirm_drop=config.confirm_drop,
            bell=config.bell,
            guest=config.guest,
        )
        where = (
            "Starting a practice table..."
            if config.practice
            else f"Connecting to {config.host}:{config.port}..."
        )
        self.connecting = ConnectingScreen(where)
        # Why the client gave up: said on exit by main(), as one line (Textual's exit message
        # is wrapped at the terminal's width).
        self.failure: str | None = None
        # The final standings, held back while the last hand's window is open.
        self._standings_held: StandingsScreen | None = None

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """One notice at a time: a new one replaces the one before (three in a row covered the
        ledger and half the log); an error stays beside it for its time (`_clear_notices`)."""
        self._clear_notices()
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _clear_notices(self) -> None:
        """Every notice gone but the errors, shown again for the time they had left: a deck
        that did not check is said loud until its time is up, not replaced by the next notice
        or hidden as the next window opens ("No card is selected.", a late key, a window:
        whichever came after the error was shown took it away)."""
        errors = [n for n in self._notifications if n.severity == "error" and n.time_left > 0]
        self.clear_notifications()
        for notification in errors:
            self.post_message(Notify(notification))

    def clear_notifications(self) -> None:
        """Every notice gone, with the boxes they sat in. Textual's clearing removes a notice
        but leaves its box (a `ToastHolder`) in the screen's rack of notices: an empty widget
        for each notice replaced, laid out on every frame, for as long as the screen lasts (a
        door session sent keys that meant nothing, each replacing the last notice, had
        thousands after a few minutes). So the boxes go here, on every screen that shows
        notices, before Textual clears."""
        for screen in {self.connecting, self.lobby, self.table_screen, *self.screen_stack}:
            for rack in screen.query_children("ToastRack"):
                rack.query_children("ToastHolder").remove()
        super().clear_notifications()

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A window opened (the history, help, a hand's end): the notice about the screen
        under it goes, rather than cover the window's title at 80x24."""
        if isinstance(screen, ModalScreen):
            self._clear_notices()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, asking a POSIX terminal for clicks only
        (`driver.py` says why); a driver named in the environment (the web's) as it is."""
        driver = super().get_driver_class()
        if driver.__module__ == "textual.drivers.linux_driver":
            from .driver import ClicksOnlyDriver

            return ClicksOnlyDriver
        return driver

    def on_mount(self) -> None:
        if self.no_color or not self.card_style.colour:
            # In place of Textual's NO_COLOR filter, which still writes colour codes.
            self._filters = [f for f in self._filters if not isinstance(f, Monochrome | NoColor)]
            self._filters.append(NoColour())
        if self.card_style.ascii:
            self._filters.append(AsciiOnly())
        if self.config.theme:
            self.theme = self.config.theme
        if self.card_style.ascii:
            self.add_class("-ascii")
        if self.touch:
            self.add_class("-touch")
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.add_mode("connecting", lambda: self.connecting)
        self.add_mode("lobby", lambda: self.lobby)
        self.add_mode("table", lambda: self.table_screen)
        self.switch_mode("connecting")
        self.run_connection()

    @property
    def touch(self) -> bool:
        """Played by taps on a touch screen (the web door's page on a phone or a tablet)."""
        return self.config.touch

    def on_resize(self, event: events.Resize) -> None:
        width, height = event.size
        small = width < TooSmall.MIN_WIDTH or height < TooSmall.MIN_HEIGHT
        self.set_class(small, "-too-small")
        self.too_small = small
        # The whole screen drawn again at each resize the terminal reports. A terminal that
        # reflows its lines as it resizes (xterm.js in the web door, most desktop terminals)
        # has moved the rows Textual drew, and Textual redraws all of them only where the
        # size it lays out at changes: a phone turned and back at once (two sizes within
        # Textual's 1/120 s, or read after the second) left stale rows above the table and
        # blank rows for its buttons, until something else changed there. It costs a frame
        # more a resize (80x24 to 100x30: 48 KB written, not 40 KB), where a window dragged
        # is a new layout a size anyway. (Before the first screen nothing is drawn.)
        with contextlib.suppress(ScreenError):
            self.screen.refresh()

    def key_route(self) -> Widget:
        """The table posts the moves the keys ask for (see KeyedApp.on_key_done)."""
        return self.table_screen if self.table_screen.is_running else self.screen

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
                self.failure = f"tonk-client: cannot start a practice table: {exc}"
                self.exit(return_code=1)
                return
            host, port = "127.0.0.1", self.practice_server.port
            create = create or practice_request(config)
        else:
            assert config.host is not None
            host, port = config.host, config.port
            tokens = config.tokens or SeatTokens(config.state_dir)
        name = config.name
        if config.tokens is None and tokens is not None:
            self._claims = tokens
            name = self._claim_name(tokens, f"{host}:{port}")
        self.connection = Connection(
            host,
            port,
            name,
            self.post_message,
            tokens=tokens,
            create=create,
            style=config.style,
            opener=None if config.practice else config.opener,
            join=None if config.practice else config.join,
            guest=config.guest,
            touch=config.touch,
        )
        try:
            await self.connection.run()
        finally:
            if self.practice_server is not None:
                await self.practice_server.close()
                self.practice_server = None

    def on_unmount(self) -> None:
        # (The names claimed go with the process anyway; an App that ends inside a longer
        # process, as in the tests, lets go of them here.)
        if self._claims is not None:
            self._claims.release()

    def _claim_name(self, tokens: SeatTokens, server: str) -> str:
        """The name to play under on `server`. Another running client of this account may
        play there under the name asked for (a friend on the same computer account): its
        seats, kept on disk under that name, are not ours to take back. Then, unless the
        name was given with --name, the first of "NAME 2" to "NAME 9" that nobody here plays
        under."""
        name = self.config.name
        if tokens.claim(server, name):
            return name
        if self.config.name_given:
            self.notify(
                f"Another tonk-client of this account plays as {name} on this server: a seat "
                "you take back as that name is taken from it.",
                title="Your name",
                severity="warning",
                timeout=15,
            )
            return name
        base = name[: p.MAX_NAME_LEN - 2].rstrip()
        for number in range(2, 10):
            other = f"{base} {number}"
            if tokens.claim(server, other):
                self.notify(
                    f"Another tonk-client of this account plays as {name} on this server, so "
                    f"you are {other} here: its seats stay its own. (If it is yours, left "
                    f"running, --name {name} takes them back; --name chooses any name.)",
                    title="Your name",
                    timeout=15,
                )
                return other
        return name

    def hang_up(self) -> None:
        """The terminal was closed (SIGHUP), or the client asked to end (SIGTERM; called from
        the signal's handler): the practice
        table's files go at once (the process may not live to stop its server), and the App
        is asked to end."""
        if self.practice_server is not None:
            self.practice_server.remove_files()
        with contextlib.suppress(RuntimeError):  # (not running: nothing to end)
            asyncio.get_running_loop().call_soon_threadsafe(self.exit)

    async def action_quit(self) -> None:
        if self.connection is not None:
            await self.connection.close()
        self.exit()

    # -- what the connection reports ---------------------------------------------------------

    def on_connected(self, message: Connected) -> None:
        connected = message.report
        host = "" if self.config.practice else str(self.config.host)
        self.identity = (host, connected.name)
        self.link_note = ""
        if not self.config.practice and self.config.opener is None and not connected.reconnect:
            remember(
                client_address(str(self.config.host), self.config.port),
                self.config.server_name,
                self.config.state_dir,
            )
        if connected.reconnect:
            self.notify("Connected again.", title="Connection")

    def on_link_lost(self, message: LinkLost) -> None:
        self.link_note = f"Connection lost: reconnecting (attempt {message.attempt})"
        if message.attempt == 1 or message.attempt % 10 == 0:
            self.notify(
                f"{message.reason}. Trying again...", title="Connection lost", severity="warning"
            )

    def on_connect_failed(self, message: ConnectFailed) -> None:
        self.failure = f"tonk-client: {message.reason}"
        self.exit(return_code=1)

    def on_lobby_changed(self, message: LobbyChanged) -> None:
        lobby = message.report
        self.tables = lobby.tables
        if self.current_mode == "connecting" and lobby.show:
            self.switch_mode("lobby")

    def on_table_changed(self, message: TableChanged) -> None:
        state = message.report.state
        # The end-of-hand window gets out of the way when the next hand is dealt.
        top = self.screen
        if isinstance(top, StandingsScreen) and str(top.table_id) != state.table_id:
            top.dismiss(MOVED)  # seated at the rematch
        elif (
            isinstance(top, EndOfHandModal)
            and state.hand_in_play
            and state.hand_number > top.hand_number
        ):
            top.dismiss(None)
            self.table_screen.window_closed_at = time.monotonic()
        self.table_state = state
        if self.current_mode != "table":
            if isinstance(self.screen, CreateTableScreen):
                self.screen.dismiss(None)  # its table is made: we sit at it
            self.switch_mode("table")

    def on_left_table(self, message: LeftTable) -> None:
        reason = message.report.reason
        if reason:
            self.notify(reason, severity="warning", timeout=15)
        if self.config.practice:
            return
        self._close_modals()
        self.switch_mode("lobby")

    def _close_modals(self) -> None:
        self._standings_held = None
        if self.current_mode == "table":
            while len(self.screen_stack) > 1:
                self.pop_screen()

    def on_hand_ended(self, message: HandEnded) -> None:
        ended = message.report
        modal = EndOfHandModal(
            ended.hand_number,
            ended.settlement,
            ended.names,
            ended.unit,
            self.card_style,
            ended.balances,
            table=None if self.table_state is None else int(self.table_state.table_id),
            seat=ended.seat,
            spreads=ended.spreads,
            deck_line=ended.deck_line,
            deck_ok=ended.deck_ok,
        )
        if not ended.deck_ok:
            # Loud, wherever the player is: the host's server changed a deck it committed to.
            self.notify(
                ended.deck_line, title="The deck did not check", severity="error", timeout=120
            )
        over = any(isinstance(screen, StandingsScreen) for screen in self.screen_stack)
        if self.current_mode == "table" and not over:
            # (Once the session is over its standings hold the last hand's result: no window
            # on top of them promising a next deal.)
            # A modal left open from the last hand is replaced by this one.
            if isinstance(self.screen, EndOfHandModal):
                self.pop_screen()
            self.push_screen(modal, self._hand_window_closed)

    def _close_window(self, window: EndOfHandModal) -> None:
        if self.screen is window:
            window.dismiss(None)

    def _hand_window_closed(self, _result: None) -> None:
        """The last hand's window is closed: the final standings it held back come now."""
        self._show_standings()

    def _show_standings(self) -> None:
        if self._standings_held is not None:
            standings, self._standings_held = self._standings_held, None
            self.push_screen(standings, self._standings_closed)

    def _standings_closed(self, result: str | None) -> None:
        if result == MOVED:
            return
        if self.config.practice:
            self.exit()
        elif self.connection is not None:
            self.connection.leave()

    def on_session_ended(self, message: SessionEnded) -> None:
        """The final standings, over everything else at once (the last hand's result is on
        them); sent again when the seat is taken back during the rematch offer."""
        ended = message.report
        top = self.screen
        if isinstance(top, StandingsScreen) and top.table_id == ended.table_id:
            return
        standings = StandingsScreen(ended, self.identity[1], practice=self.config.practice)
        if isinstance(top, EndOfHandModal) and top.table == ended.table_id:
            # The last hand's window stays until it is closed: its cards and payments are
            # seen before the standings take its place.
            self._standings_held = standings
            top.last_of_session()
            if self.LAST_WINDOW_SECONDS is not None:
                self.set_timer(self.LAST_WINDOW_SECONDS, lambda: self._close_window(top))
            return
        self._close_modals()
        if self.current_mode != "table":
            self.switch_mode("table")
        self._standings_held = standings
        self._show_standings()

    def on_rematch_changed(self, message: RematchChanged) -> None:
        # (The standings held behind the last hand's window are told too: they show it when
        # they come.)
        for screen in [*self.screen_stack, self._standings_held]:
            if isinstance(screen, StandingsScreen) and screen.table_id == message.report.table_id:
                screen.show_rematch(message.report)

    def on_join_notice(self, message: JoinNotice) -> None:
        notice = message.report
        if notice.found:
            self.notify(notice.message, title="Table")
        else:
            self.notify(notice.message, title="No such table", severity="warning", timeout=10)
            if self.current_mode == "connecting":
                self.switch_mode("lobby")

    def on_history_listed(self, message: HistoryListed) -> None:
        """A page of the table's history: shown over the table (or the window on top), or
        added to the history already shown."""
        page = message.report
        if self.current_mode != "table":
            return
        shown = [s for s in self.screen_stack if isinstance(s, HistoryScreen)]
        if shown and shown[-1].table == page.table:
            while self.screen is not shown[-1]:
                self.pop_screen()  # (a replay open over it)
            shown[-1].show(page)
            return
        if isinstance(self.screen, EndOfHandModal):
            # The history takes the window's place: it would be stale under it once the next
            # hand is dealt (the hand's result stays in the log and the ledger). After the
            # session's last hand the final standings come under the history.
            self.pop_screen()
            self._show_standings()
        self.push_screen(HistoryScreen(page))

    def on_hand_replayed(self, message: HandReplayed) -> None:
        if self.current_mode == "table" and isinstance(self.screen, HistoryScreen):
            self.push_screen(HandReplayScreen(message.report, self.card_style))

    def on_coach_advice(self, message: Reported[m.CoachAdvice]) -> None:
        """The coach's answer: in the replay that asked, or (a hint) said over the table."""
        answer = message.report
        if answer.step is not None:
            for screen in self.screen_stack:
                if isinstance(screen, HandReplayScreen) and screen.replayed.hand == answer.hand:
                    screen.show_advice(answer.step, advice_text(answer.advice, self.card_style))
            return
        text = advice_text(answer.advice, self.card_style)
        self.notify(text, title="The coach", timeout=30)

    def on_server_refused(self, message: ServerRefused) -> None:
        refused = message.report
        if refused.request == m.StandingsRequest.TYPE and isinstance(self.screen, NightsScreen):
            self.screen.refused = refused.message
        if refused.request == m.CreateTable.TYPE and isinstance(self.screen, CreateTableScreen):
            self.screen.refused(refused.message)  # the form stays, with what was typed
        if refused.request == m.CoachRequest.TYPE and isinstance(self.screen, HandReplayScreen):
            self.screen.show_advice(None, refused.message)
        title = "Not allowed" if refused.code == p.ILLEGAL_ACTION else "The server says"
        self.notify(refused.message, title=title, severity="warning")

    def on_refused_here(self, message: RefusedHere) -> None:
        if self.connection is not None:
            self.connection.refused_here(message.reason)

    def on_standings(self, message: Reported[m.Standings]) -> None:
        """The standings across nights, for the screen that asked (if it is still open)."""
        for screen in self.screen_stack:
            if isinstance(screen, NightsScreen):
                screen.answer = message.report

    def on_request(self, message: Request) -> None:
        connection = self.connection
        if connection is None or not connection.connected:
            self.notify("Not connected to the server right now.", severity="warning")
            return
        match message.message:
            case TableRequest() as request:
                connection.create_table(request)
            case m.Leave():
                connection.leave()
            case m.Sit(table=table):
                connection.sit(table)
            case request:
                if connection.send(request) and isinstance(request, m.ActionRequest):
                    # The keys after a move wait for its answer (see KeyedApp).
                    state = self.table_state
                    self.move_sent(state.progress if state is not None else (0, 0))


def practice_request(config: ClientConfig) -> TableRequest:
    """The practice table: seats for you and the bots, the chosen rules, started as soon as the
    bots sit (the server starts a full table by itself)."""
    message = m.CreateTable(
        config.table_name,
        rules={"preset": config.rules},
        seats=config.bots + 1,
        bot_pause=config.bot_pause,
        hands=config.hands,
        seed=config.seed,
        deck=config.deck,
        dealer=config.dealer,
    )
    return TableRequest(message, bots=config.bots, strategies=config.bot_strategies)
