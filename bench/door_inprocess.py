"""The other design of the SSH door, kept to measure it (bench/ssh_door.py): tonk-client's
Textual App run in the server's own process and event loop, drawn through a Textual driver that
writes to the SSH channel and reads the keys it receives. `InProcessSession` replaces the door's
session class (bench/door_server.py --sessions inprocess)."""

from __future__ import annotations

import asyncio
import codecs
import io
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
from tonk.client.door.door_child import HeldSeats, read_seats
from tonk.client.text.render import CardStyle
from tonk.client.tokens import SeatTokens
from tonk.server.doors.door_request import DoorCommand, TerminalInfo
from tonk.server.doors.door_session import DoorSession

#: Seconds the input parser waits after a lone ESC before taking it as the escape key.
ESCAPE_WAIT = 0.1


class Screen(Protocol):
    """Where the driver writes: the SSH session (bytes in the terminal's character set)."""

    def write_screen(self, text: str) -> None: ...


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
            _environ={"TERM": terminal.term},
            force_terminal=True,
            safe_box=False,
            soft_wrap=False,
        )
        self.said = io.StringIO()  # the exit message, for the session to write
        self.error_console = Console(file=self.said, markup=False, highlight=False, width=78)

    def driver_ready(self, driver: ChannelDriver) -> None:
        self.door_driver = driver


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


class InProcessSession(DoorSession):
    """A door session whose app runs in the server's event loop (the prototype)."""

    app: DoorApp | None = None
    app_done = False

    def start(self, command: DoorCommand) -> None:
        bots = command.bots
        assert self.terminal is not None
        self.encoding = self.terminal.charset
        self.decoder = codecs.getincrementaldecoder(self.encoding)("replace").decode
        self.links: list[asyncio.StreamWriter] = []
        server = self.door.server
        address = self.door_conn.address

        async def opener() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            reader, writer = await server.open_door_link(self.name, address)
            self.links.append(writer)
            return reader, writer

        import json
        import os

        seats_in, seats_out = os.pipe()
        os.write(seats_out, json.dumps(self._held_seats()).encode())
        os.close(seats_out)
        tokens = HeldSeats(read_seats(seats_in, self.name))
        config = door_config(self.name, self._label(), self.terminal, tokens, opener, bots)
        self.app = DoorApp(config, self, self.terminal)
        self.task = asyncio.create_task(self._run_app(), name=f"ssh-{self.name}")

    async def _run_app(self) -> None:
        app = self.app
        terminal = self.terminal
        assert app is not None and terminal is not None
        status = 0
        try:
            await app.run_async(size=(terminal.width, terminal.height), mouse=True)
            status = app.return_code or 0
        finally:
            app.workers.cancel_all()
            for writer in self.links:
                writer.close()
            self.app_done = True
            self._finish(self.farewell, None if self.gone else status)

    def write_screen(self, text: str) -> None:
        chan = self.chan
        if self.ended or self.gone or chan is None:
            return
        chan.write(text.encode(self.encoding, "replace"))

    def data_received(self, data: bytes, datatype: int | None) -> None:
        self.last_input = asyncio.get_running_loop().time()
        app = self.app
        if app is not None and app.door_driver is not None:
            app.door_driver.feed(self.decoder(data))

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        app = self.app
        if app is not None and app.door_driver is not None and width and height:
            app.door_driver.resize(width, height)

    def end(self, line: str | None, status: int | None) -> None:
        if self.ended:
            return
        if status is None:
            self.gone = True
        else:
            self.farewell = line
        if self.app is not None and not self.app_done:
            self.app.exit(return_code=status or 0)
            return
        self._finish(line, status)
