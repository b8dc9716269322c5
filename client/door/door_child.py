"""One door session's table app: tonk-client's App in a process of its own, started by the
SSH door on a pseudo-terminal (the door sends SIGWINCH when it is resized), or by the web door
(`--web`) with Textual's web driver on a socket (the page's terminal in packets, the protocol of
textual-serve), and handed its link to the server as an open socket (and a socket to ask the
door for another), the seats its player holds through a pipe, and a pipe for its errors: a
traceback goes to the server's log, never to the player's terminal. `--watch TABLE`: the web
door's television page, watching that table.

    python -m tonk.client.door.door_child --link FD --seats FD --errors FD --relink FD --name NAME
        [--server HOST] [--port PORT] [--logs DIR] [--bots N --table-name NAME] [--join TABLE]
        [--ascii]
        [--no-bell] [--web [--watch TABLE]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import inspect
import io
import json
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from textual import events
from textual.message import Message
from textual.widgets import Input, TextArea
from tonk.client.app import ClientConfig, TonkApp, practice_request
from tonk.client.door.web_driver import Repaint
from tonk.client.logstore import LogStore
from tonk.client.messages import Connected
from tonk.client.text.render import CardStyle
from tonk.client.tokens import SeatRecord, SeatTokens
from tonk.shared.wire import messages as m
from tonk.shared.wire.terminal_packets import DATA, packet

#: prctl(2)'s option for a signal on the parent's death.
PR_SET_PDEATHSIG = 1
#: The exit status of a session's app that stopped on an error: the door then logs what the
#: app wrote to its error pipe and tells the player in one line.
CRASHED = os.EX_SOFTWARE
#: What the web driver leaves set on the page's terminal, undone before a parting line.
LEAVE_SCREEN = "\x1b[?1049l\x1b[?25h"
#: What the web door's page is told when a text field takes or loses the focus (its own OSC
#: sequence, which the page's script reads: it raises a phone's keyboard only for typing).
TYPING = "\x1b]7731;typing={}\x07"


class DoorLogs(LogStore):
    """The door's players' table logs, in the folder the door names (the server's own, private
    to its user): a seat's log is found by its player's name (claimed by their key) and the
    table, as the door keeps their seats: the door hands a seat a new token each session, and
    the guest may come in by any of the server's addresses."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, server: str, name: str, table: int) -> Path:
        return super()._path("door", name, table)


class HeldSeats(SeatTokens):
    """The seats the door found for this player, in memory: the server itself keeps which
    tables a player sat at through the door, so no seat is written here; their logs are kept
    where the door says (`logs`; None: nowhere, the session keeps its log while it lasts)."""

    def __init__(self, records: list[SeatRecord], logs: Path | None = None) -> None:
        super().__init__()
        self.records = {r.table: r for r in records}
        self.logs = logs

    def seats(self, server: str, name: str | None = None) -> list[SeatRecord]:
        return [r for r in self.records.values() if name is None or r.name == name]

    def remember(self, server: str, record: SeatRecord) -> None:
        self.records[record.table] = record

    def mark_left(self, server: str, table: int, name: str) -> None:
        record = self.records.get(table)
        if record is not None:
            self.records[table] = SeatRecord(record.table, record.token, record.name, True)

    def forget(self, server: str, table: int, name: str) -> None:
        self.records.pop(table, None)

    def log_store(self) -> LogStore | None:
        return None if self.logs is None else DoorLogs(self.logs)


def read_seats(fd: int, name: str) -> list[SeatRecord]:
    with os.fdopen(fd, "rb") as pipe:
        data = json.loads(pipe.read() or b"[]")
    return [SeatRecord(int(s["table"]), str(s["token"]), name, bool(s["left"])) for s in data]


class Links:
    """The app's links to the server: the first one it was started with, then one more from
    the door each time it connects again (the server closed the last one: too many messages
    at once, say, or a slow screen), as tonk-client connects again over TCP."""

    def __init__(self, first: int, door: int) -> None:
        self.first: socket.socket | None = socket.socket(fileno=first)
        self.door = socket.socket(fileno=door)
        self.door.setblocking(False)

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        sock, self.first = self.first, None
        if sock is None:
            sock = await self._from_the_door()
        return await asyncio.open_connection(sock=sock)

    async def _from_the_door(self) -> socket.socket:
        loop = asyncio.get_running_loop()
        try:
            await loop.sock_sendall(self.door, b"L")
            while True:
                try:
                    _, fds, _, _ = socket.recv_fds(self.door, 1, 1)
                except BlockingIOError:
                    await self._readable()
                    continue
                break
        except OSError:
            fds = []
        if not fds:  # the door is closing this session (the server is shutting down)
            raise ConnectionRefusedError("the server has closed the door")
        for extra in fds[1:]:
            os.close(extra)
        return socket.socket(fileno=fds[0])

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(self.door.fileno(), ready)
        try:
            await readable
        finally:
            loop.remove_reader(self.door.fileno())


def config_for(args: argparse.Namespace) -> ClientConfig:
    links = Links(args.link, args.relink)

    async def opener() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await links.open()

    style = CardStyle(ascii=args.ascii, colour="NO_COLOR" not in os.environ)
    config = ClientConfig(
        name=args.name, host=args.server, style=style, join=args.join, bell=args.bell
    )
    config.guest = True  # (no computer account here: the door keeps seats by name)
    config.touch = args.touch  # (the web door's page on a touch screen)
    if args.port:  # the door's: what the player typed, for any line that names the server
        config.port = args.port
    config.opener = opener
    config.tokens = HeldSeats(read_seats(args.seats, args.name), args.logs)
    if args.bots:
        practice = ClientConfig(name=args.name, bots=args.bots)
        practice.table_name = args.table_name
        config.table = practice_request(practice)
    return config


#: Messages an app may have waiting before the keys and mouse events that come are dropped.
MAX_WAITING_INPUT = 64


class DoorApp(TonkApp):
    """tonk-client's App, whose parting line (a refusal, a lost server: `failure`) is said on
    the terminal by main(), so that what Textual prints on its error console at the end is
    only ever an error: that goes to the server's log."""

    # Textual looks for CSS_PATH beside the module that defines the class: tonk.client's.
    CSS_PATH = str(Path(inspect.getfile(TonkApp)).with_name(str(TonkApp.CSS_PATH)))

    def post_message(self, message: Message) -> bool:
        """A key or a mouse event while MAX_WAITING_INPUT messages wait already is dropped:
        what the app cannot keep up with is shed, not queued (input within the door's budget
        can come faster than a table is drawn: the queue grew the apps by hundreds of MB)."""
        if (
            isinstance(message, events.Key | events.MouseEvent)
            and self._message_queue.qsize() >= MAX_WAITING_INPUT
        ):
            return False
        return super().post_message(message)

    #: The web door's page is the terminal (the page is told when text is typed).
    web = False
    _typing: bool | None = None

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.call_after_refresh(self.say_typing)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.call_after_refresh(self.say_typing)

    def say_typing(self) -> None:
        """The web page told whether a text field has the focus now (once a change)."""
        typing = isinstance(self.focused, Input | TextArea)
        if not self.web or typing == self._typing or self._driver is None:
            return
        self._typing = typing
        self._driver.write(TYPING.format(int(typing)))

    def on_repaint(self, message: Repaint) -> None:
        """The door asks for the whole screen again (a page that joined, or fell behind)."""
        self._typing = None
        self.say_typing()
        self.screen.refresh()

    @property
    def parting(self) -> str | None:
        """The player typed ssh, not tonk-client: the door's lines say "tonk:"."""
        if self.failure is None:
            return None
        return "tonk: " + self.failure.removeprefix("tonk-client: ")


class WatchApp(DoorApp):
    """The television page's app: it watches one table (and takes back the watch when the
    link comes back); the door sends it no keys, and it shows none. The session's last
    hand's window gives way to the final standings by itself."""

    LAST_WINDOW_SECONDS = 15.0

    def __init__(self, config: ClientConfig, table: int) -> None:
        super().__init__(config)
        self.watched = table
        self.add_class("-watch-only")

    # (Textual calls TonkApp's handler of the message too, first.)
    def on_connected(self, message: Connected) -> None:
        if not message.report.reconnect and self.connection is not None:
            self.connection.send(m.Watch(self.watched))


class ErrorPipe(io.TextIOWrapper):
    """The pipe to the door for errors: the door logs what comes through it."""

    used = False

    def write(self, text: str) -> int:
        self.used = self.used or bool(text.strip())
        with contextlib.suppress(OSError, ValueError):  # the server is gone: nowhere to say it
            super().write(text)
        return len(text)


def error_pipe(fd: int) -> ErrorPipe:
    return ErrorPipe(io.FileIO(fd, "w"), encoding="utf-8", errors="replace", write_through=True)


def stop_with_the_server() -> None:
    """Linux: be sent SIGTERM if the server dies (killed, say, with no time to stop us)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() == 1:  # it died before we asked
        sys.exit(1)


def main(
    argv: Sequence[str] | None = None,
    stop_with_the_server: Callable[[], None] = stop_with_the_server,
) -> int:
    """The session's app, run to its end; `stop_with_the_server` makes sure the session ends
    if the server dies (a session forked from the template, whose parent is not the server,
    watches it another way)."""
    parser = argparse.ArgumentParser(prog="tonk-door-session")
    parser.add_argument("--link", type=int, required=True)
    parser.add_argument("--seats", type=int, required=True)
    parser.add_argument("--errors", type=int, required=True)
    parser.add_argument("--relink", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--server", default="tonk-server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--logs", type=Path, default=None)
    parser.add_argument("--bots", type=int, default=0)
    parser.add_argument("--table-name", default="practice")
    parser.add_argument("--join", default=None)
    parser.add_argument("--ascii", action="store_true")
    parser.add_argument("--no-bell", dest="bell", action="store_false")
    parser.add_argument("--web", action="store_true")
    parser.add_argument("--watch", type=int, default=0)
    parser.add_argument("--touch", action="store_true")
    args = parser.parse_args(argv)
    if args.web:  # the terminal is the page's, in packets on stdout: nothing else goes there
        os.dup2(args.errors, 2)
    errors = error_pipe(args.errors)
    # Python's own error output (an exception here, a warning) goes to the door's log, not to
    # the terminal; Textual draws on sys.__stderr__, which stays the terminal.
    sys.stderr = errors
    # What Textual prints on its error console at the end: an error that stopped the app
    # (a warning on sys.stderr is logged, but the app did not stop on it).
    fatal = error_pipe(os.dup(args.errors))
    try:
        # (The door started this process at a lower priority than the server's: when the
        # machine is busy, the tables, everybody's, come first and a session's screen waits.)
        stop_with_the_server()
        config = config_for(args)
        app = WatchApp(config, args.watch) if args.watch else DoorApp(config)
        app.web = args.web
        app.error_console = Console(file=fatal, width=120, markup=False, highlight=False)
        app.run()
    except Exception:
        traceback.print_exc(file=errors)
        return CRASHED
    if fatal.used:  # the app stopped on an error: Textual printed it on its error console
        return CRASHED
    if args.web:
        with contextlib.suppress(OSError):
            os.write(
                1,
                packet(
                    DATA, (LEAVE_SCREEN + (app.parting + "\r\n" if app.parting else "")).encode()
                ),
            )
    elif app.parting:
        terminal = sys.__stderr__
        if terminal is not None:
            terminal.write(app.parting + "\n")
            terminal.flush()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
