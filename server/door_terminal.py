"""The table app on an SSH channel: tonk-client's Textual App run in the server's process,
drawn through a Textual driver that writes to the channel and reads the keys it receives, at
the terminal type, size and character set the SSH client reported."""

from __future__ import annotations

import asyncio
import codecs
import io
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from textual import events
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.driver import Driver
from textual.geometry import Size
from textual.message import Message
from tonk.client import app as client_app
from tonk.client.app import ClientConfig, TonkApp, practice_request
from tonk.client.render import CardStyle
from tonk.client.tokens import SeatRecord, SeatTokens

from . import store as st
from .door_names import DoorNames

#: Seconds the input parser waits after a lone ESC before taking it as the escape key.
ESCAPE_WAIT = 0.1


class Screen(Protocol):
    """Where the driver writes: the SSH session (bytes in the terminal's character set)."""

    def write_screen(self, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class TerminalInfo:
    """What the SSH client said about its terminal: `TERM`, its size, and its environment
    as sent (OpenSSH sends LANG and LC_* where its config says SendEnv)."""

    term: str
    width: int
    height: int
    environ: Mapping[str, str]

    @property
    def charset(self) -> str:
        """The terminal's character set: LC_ALL, LC_CTYPE or LANG's codeset (UTF-8 when
        none is said, which is what nearly every terminal is)."""
        for name in ("LC_ALL", "LC_CTYPE", "LANG"):
            value = self.environ.get(name, "")
            if value:
                if value in ("C", "POSIX"):
                    return "ascii"
                _, _, codeset = value.partition(".")
                codeset = codeset.partition("@")[0]
                if not codeset:
                    return "utf-8"
                try:
                    return codecs.lookup(codeset).name
                except LookupError:
                    return "ascii"
        return "utf-8"

    @property
    def utf8(self) -> bool:
        return self.charset == "utf-8"

    @property
    def colour(self) -> bool:
        return "NO_COLOR" not in self.environ and self.term not in ("dumb", "unknown")

    def console_environ(self) -> dict[str, str]:
        """The environment Rich decides the colours from (TERM, COLORTERM)."""
        environ = {"TERM": self.term}
        if "COLORTERM" in self.environ:
            environ["COLORTERM"] = self.environ["COLORTERM"]
        return environ


class ChannelDriver(Driver):
    """A Textual driver on an SSH session: output goes to `app.screen_out`, input comes
    from `feed`, and the terminal's size from `resize` (the window-change request)."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        assert isinstance(app, DoorApp)
        self._door_app = app
        self._out = app.screen_out
        self._parser = XTermParser(debug)
        self._tick: asyncio.TimerHandle | None = None
        self._input = False
        app.driver_ready(self)

    def write(self, data: str) -> None:
        self._out.write_screen(data)

    def send_message(self, message: Message) -> None:
        # Everything happens on the event loop here: no thread to cross.
        self._app.post_message(message)

    def start_application_mode(self) -> None:
        width, height = self._size or (80, 24)
        self._resize(width, height)
        write = self.write
        write("\x1b[?1049h")  # the alternate screen
        if self._mouse:
            write("\x1b[?1000h\x1b[?1003h\x1b[?1015h\x1b[?1006h")
        write("\x1b[?25l")  # hide the cursor
        write("\x1b[?1004h")  # focus in/out
        write("\x1b[?2026$p")  # does the terminal draw synchronised updates?
        write("\x1b[?2004h")  # bracketed paste
        write("\x1b[?7l")  # no line wrap
        self._input = True

    def feed(self, text: str) -> None:
        """Keys (and mouse, paste, replies) from the SSH client."""
        if not self._input:
            return
        for message in self._parser.feed(text):
            self.process_message(message)
        self._schedule_tick()

    def _schedule_tick(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        if self._parser._timeout_time is not None:  # a lone ESC, so far
            self._tick = self._loop.call_later(ESCAPE_WAIT * 1.5, self._on_tick)

    def _on_tick(self) -> None:
        self._tick = None
        if self._input:
            for message in self._parser.tick():
                self.process_message(message)
            self._schedule_tick()

    def resize(self, width: int, height: int) -> None:
        if self._input:
            self._resize(width, height)

    def _resize(self, width: int, height: int) -> None:
        size = Size(max(1, width), max(1, height))
        self.send_message(events.Resize(size, size))

    def disable_input(self) -> None:
        self._input = False
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def stop_application_mode(self) -> None:
        self.disable_input()
        write = self.write
        write("\x1b[?2004l\x1b[?7h")
        if self._mouse:
            write("\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l")
        write("\x1b[?1049l\x1b[?25h\x1b[?1004l")


class _NullFile(io.StringIO):
    """Textual renders through its console without printing to it."""

    def write(self, text: str) -> int:
        return len(text)


class DoorApp(TonkApp):
    """tonk-client's App, drawn on an SSH session: the terminal's colours from its TERM, and
    whatever the App would print on exit kept for the session to say."""

    CSS_PATH = str(Path(client_app.__file__).parent / TonkApp.CSS_PATH)

    def __init__(self, config: ClientConfig, screen_out: Screen, terminal: TerminalInfo) -> None:
        super().__init__(config)
        self.screen_out = screen_out
        self.driver_class = ChannelDriver
        self.door_driver: ChannelDriver | None = None
        self.console = Console(
            color_system="auto" if terminal.colour else None,
            file=_NullFile(),
            markup=True,
            highlight=False,
            emoji=False,
            legacy_windows=False,
            _environ=terminal.console_environ(),
            force_terminal=True,
            safe_box=False,
            soft_wrap=False,
        )
        self.said = io.StringIO()  # the exit message, for the session to write
        self.error_console = Console(file=self.said, markup=False, highlight=False, width=78)

    def driver_ready(self, driver: ChannelDriver) -> None:
        self.door_driver = driver


class DoorSeats(SeatTokens):
    """The seat tokens of a player at the door: not a file but the seats their name holds.
    The tables where they sat through the door are in the database; each token is a new
    one the table makes for the seat when asked (the key proved who is asking)."""

    def __init__(
        self,
        names: DoorNames,
        tables: Callable[[int], Any],
        write: Callable[[list[st.Op]], Any],
        name: str,
    ) -> None:
        super().__init__()
        self._names = names
        self._tables = tables
        self._save = write
        self._name = name
        self._tokens: dict[int, str] = {}

    def seats(self, server: str) -> list[SeatRecord]:
        records = []
        for saved in self._names.seats(self._name):
            token = self._tokens.get(saved.table_id)
            if token is None:
                table = self._tables(saved.table_id)
                token = table.door_token(self._name) if table is not None else None
                if token is None:
                    continue
                self._tokens[saved.table_id] = token
            records.append(SeatRecord(saved.table_id, token, self._name, saved.left))
        return records

    def remember(self, server: str, record: SeatRecord) -> None:
        self._tokens[record.table] = record.token
        seat = st.SavedDoorSeat(record.table, record.left, time.time())
        self._save([self._names.remember_seat(self._name, seat)])

    def mark_left(self, server: str, table: int) -> None:
        for saved in self._names.seats(self._name):
            if saved.table_id == table and not saved.left:
                seat = st.SavedDoorSeat(table, True, saved.taken)
                self._save([self._names.remember_seat(self._name, seat)])

    def forget(self, server: str, table: int) -> None:
        self._tokens.pop(table, None)
        op = self._names.forget_seat(self._name, table)
        if op is not None:
            self._save([op])


def door_config(
    name: str,
    server_label: str,
    terminal: TerminalInfo,
    tokens: SeatTokens,
    opener: Any,
    practice_bots: int | None,
) -> ClientConfig:
    """The client's configuration for one session at the door."""
    style = CardStyle(ascii=not terminal.utf8, four_colour=False, colour=terminal.colour)
    host, _, port = server_label.rpartition(":")
    config = ClientConfig(name=name, host=host or server_label, style=style)
    if port.isdigit():
        config.port = int(port)
    config.opener = opener
    config.tokens = tokens
    if practice_bots is not None:
        practice = ClientConfig(name=name, bots=practice_bots, table_name=f"{name}'s practice"[:32])
        config.table = practice_request(practice)
    return config
