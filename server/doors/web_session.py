"""One web door session: the same table app as an SSH door session's (door_session.py, whose
child process, links and seats it shares), run with Textual's web driver on a socket instead
of a pty, and copied to the browser's websocket. Between the app and the door go the packets of
the web driver (tonk.shared.wire.terminal_packets); between the door and the page, the messages
of textual-serve's page (JSON `["stdin", text]`, `["resize", {...}]`; the terminal's bytes as
binary)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections import deque
from typing import Any

from aiohttp import web
from tonk.shared.wire.terminal_packets import DATA, META, PacketReader, packet

from .door_host import Door
from .door_request import DoorCommand, TerminalInfo
from .door_session import DoorSession, InputBudget

log = logging.getLogger("tonk.server")

#: Bytes waiting for the browser before the app's output is left to wait in its socket.
HIGH_WATER = 256 * 1024
#: ...and read again once the browser has taken this much of it.
LOW_WATER = 64 * 1024
#: The page's terminal: its type, and what it can show.
WEB_TERMINAL = "xterm-256color"
#: Bytes of output that are a screen (the driver's set-up sequences before it are short): the
#: app is running, and reads a new size as the page's.
FIRST_SCREEN = 256
#: Seconds between two sizes told to the app, at the least (the newest is told).
RESIZE_PAUSE = 0.25
#: The sizes a page may ask for, in cells.
MIN_SIZE, MAX_WIDTH, MAX_HEIGHT = 10, 500, 200
#: The television picture's bounds, in cells (its size is its first page's, within these:
#: every television page fits its font to show it whole).
PICTURE_MIN, PICTURE_MAX = (80, 24), (160, 60)
#: The most kept of the terminal's set-up (what the driver writes before its first screen),
#: for a television page that joins later.
MAX_SETUP = 4096
#: What a television page is told of the picture's size (the page's own OSC sequence).
PICTURE = "\x1b]7731;cols={};rows={}\x07"
#: Seconds a repaint waits for others asked at the same time (pages opened together).
REPAINT_PAUSE = 0.05
#: Bytes of keys (and the page's meta messages among them) on their way to a session's app:
#: the socket's send buffer (the kernel doubles it), then the session's own queue, past
#: which keys are dropped. A player types a few bytes a second; a paste fits.
KEYS_IN_FLIGHT = 8 * 1024


def clamp_size(width: Any, height: Any) -> tuple[int, int]:
    """A page's terminal size as cells, within bounds (80x24 for what is not a number)."""
    try:
        cols, rows = int(width), int(height)
    except (TypeError, ValueError):
        return 80, 24
    return max(MIN_SIZE, min(cols, MAX_WIDTH)), max(MIN_SIZE, min(rows, MAX_HEIGHT))


def picture_size(width: int, height: int) -> tuple[int, int]:
    """The television picture's size for a first page of `width` x `height` cells."""
    return (
        max(PICTURE_MIN[0], min(width, PICTURE_MAX[0])),
        max(PICTURE_MIN[1], min(height, PICTURE_MAX[1])),
    )


def envelope(text: str) -> tuple[str | None, Any]:
    """A page's message as (its kind, its value): `["kind", value]`; (None, None) for what
    is not one (not JSON, a list nested thousands deep, another shape)."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        return None, None
    return message[0], message[1] if len(message) > 1 else None


class WebLink:
    """The browser a session runs for (door_host.DoorLink): its door, its address, and the
    host name it reached the page by."""

    conn = None  # no SSH connection

    def __init__(self, door: Door, address: str, host: str) -> None:
        self.door = door
        self.address = address
        self.host = host

    def ssh_command(self, name: str = "NAME", *, tty: bool = False) -> str:
        """(A browser always has its terminal: said only of an SSH guest's command.)"""
        return f"the page at http://{self.host}/"


class Viewer:
    """One page showing a session's terminal: the bytes for it wait in its own queue, sent in
    order by a task of its own. A television page has its own input budget (the picture it
    shows is shared: one page's flood closes that page, not the others')."""

    def __init__(self, channel: WebChannel, socket: web.WebSocketResponse) -> None:
        self.channel = channel
        self.socket = socket
        self.outbox: deque[bytes] = deque()
        self.queued = 0  # bytes waiting for the browser
        self.behind = False  # what waited was shed: the page is sent a whole screen next
        self.closing = False
        self.ready = asyncio.Event()
        self.budget: InputBudget | None = None
        self.sender = asyncio.create_task(self._send(), name=f"web-{channel.session.name}-out")

    def send(self, data: bytes) -> None:
        if self.behind or self.closing or not data:
            return
        self.outbox.append(data)
        self.queued += len(data)
        self.ready.set()

    def shed(self) -> None:
        """The page is behind: what waits for it is dropped, and once it has taken what it
        is being sent, it is sent a whole screen (at most one frame waits for a page)."""
        self.outbox.clear()
        self.queued = 0
        self.behind = True
        self.ready.set()

    def close(self, line: bytes = b"") -> None:
        """What waits goes (and `line`), then the websocket is closed."""
        self.behind = False
        self.send(line)
        self.closing = True
        self.ready.set()

    async def _send(self) -> None:
        try:
            while not (self.closing and not self.outbox):
                await self.ready.wait()
                self.ready.clear()
                while self.outbox:
                    data = self.outbox.popleft()
                    self.queued -= len(data)
                    await self.socket.send_bytes(data)
                    self.channel.sent(self)
                if self.behind and not self.closing:
                    self.behind = False
                    self.channel.caught_up(self)
        except (ConnectionError, RuntimeError):  # the browser is gone
            self.channel.lost(self)
        finally:
            await self.socket.close()


class WebChannel:
    """The session's channel: the app's packets in, the terminal's bytes out to its pages
    (one, a player's; or every television page watching the table, `shared`); once the app is
    gone, what the session writes is text for the terminal (its parting line). A player's page
    that falls behind leaves the app's output waiting in its socket (the app waits to draw); a
    television page that falls behind has its frames shed and is sent the whole screen once
    it has caught up: the app, whose picture the other pages show too, never waits for it."""

    def __init__(self, session: WebSession, shared: bool = False) -> None:
        self.session = session
        self.shared = shared
        self.viewers: set[Viewer] = set()
        self.packets = PacketReader()  # the app's output
        self.raw = False  # the app is gone: writes are the terminal's text
        self.drawn = False  # the app's first screen has come
        self.setup = bytearray()  # the driver's set-up of the terminal, before its first screen
        self.paused = False

    def join(self, socket: web.WebSocketResponse) -> Viewer:
        """A page that shows this terminal from now on: a page joining a picture already
        drawn is sent the terminal's set-up, and the app draws its whole screen again."""
        viewer = Viewer(self, socket)
        self.viewers.add(viewer)
        self.caught_up(viewer)
        return viewer

    def caught_up(self, viewer: Viewer) -> None:
        viewer.send(self.session.picture_line() + bytes(self.setup))
        if self.drawn:
            self.session.repaint()

    def write(self, data: bytes) -> None:
        if self.raw:
            self._queue(data)
            return
        for kind, payload in self.packets.feed(data):
            if kind == DATA:
                self._queue(payload)
                if not self.drawn and len(payload) >= FIRST_SCREEN:
                    self.drawn = True
                    self.session.app_drew()
                elif not self.drawn and len(self.setup) + len(payload) <= MAX_SETUP:
                    self.setup += payload
            # `M` (meta: the app's exit, a link to open) and `P` (files): nothing to do here.

    def write_stderr(self, data: bytes) -> None:
        self._queue(data)

    def _queue(self, data: bytes) -> None:
        for viewer in list(self.viewers):
            viewer.send(data)
            if viewer.queued <= HIGH_WATER:
                continue
            if self.shared:
                viewer.shed()
            elif not self.paused:
                self.paused = True
                self.session.pause_writing()

    def sent(self, viewer: Viewer) -> None:
        if self.paused and viewer.queued < LOW_WATER:
            self.paused = False
            self.session.resume_writing()

    def lost(self, viewer: Viewer) -> None:
        self.leave(viewer)

    def leave(self, viewer: Viewer) -> None:
        """A page is gone: a player's session ends with it, a table's picture with its last
        television page."""
        self.viewers.discard(viewer)
        viewer.close()
        if not self.viewers or not self.shared:
            self.session.end(None, None)

    def exit(self, status: int) -> None:
        """The session is over: what is queued goes, then the websockets are closed."""
        self.close()

    def close(self) -> None:
        for viewer in list(self.viewers):
            viewer.close()


class WebSession(DoorSession):
    """One browser's session: the app with the web driver on a socket pair (the session's
    end is the door session's "master"), its output parsed into the page's terminal bytes.
    `watch`: the table's picture on television pages, which watches that table, takes no
    keys and is shown by every television page watching it (one app however many watch)."""

    def __init__(
        self, link: WebLink, name: str, size: tuple[int, int], watch: int | None = None
    ) -> None:
        super().__init__(link, name)
        self.link = link
        self.watch = watch
        self.player = watch is None
        if watch is not None:
            size = picture_size(*size)
        self.terminal = TerminalInfo(WEB_TERMINAL, size[0], size[1], {"COLORTERM": "truecolor"})
        self.channel: WebChannel | None = None
        # The size the app was told, or None before it has drawn (a size said before may
        # come before the size it starts with, and lose: it is said once it has drawn).
        self.app_size: tuple[int, int] | None = None
        self.start_size = size  # the size the app starts with
        self.resized_at = -RESIZE_PAUSE  # (the loop's time) the app was last told a size
        self.resizing: asyncio.TimerHandle | None = None  # a size to tell it after the pause
        # The page's terminal changed size since the app was last told one: its lines have
        # moved (xterm.js reflows them), so the app draws them all again even where the
        # size comes back to its own (a phone turned there and back within the pause).
        self.reflowed = False
        self.repainting: asyncio.TimerHandle | None = None  # a repaint asked for, to come

    door_label = "web door"
    max_pending_keys = KEYS_IN_FLIGHT
    touch = False  # a touch screen's page: the app says "tap" and shows buttons
    crash_line = (
        "tonk: the table stopped on an error (the host will find it in the server's log); "
        "open the page again to carry on: any seat you hold is kept"
    )

    def attach(self, socket: web.WebSocketResponse) -> Viewer:
        """A page for this session: a player's one page, or one more television page."""
        if self.channel is None:
            self.channel = WebChannel(self, shared=not self.player)
            self.chan = self.channel  # type: ignore[assignment]
        viewer = self.channel.join(socket)
        if not self.player:
            limits = self.door.limits
            now = asyncio.get_running_loop().time()
            viewer.budget = InputBudget(limits.door_input_rate, limits.door_input_burst, now)
        return viewer

    @property
    def pages(self) -> int:
        return 0 if self.channel is None else len(self.channel.viewers)

    def picture_line(self) -> bytes:
        """What a television page is told first: the picture's size, which it fits its font
        to show whole (nothing for a player's page, whose terminal is the app's size)."""
        if self.player or self.terminal is None:
            return b""
        return PICTURE.format(self.start_size[0], self.start_size[1]).encode()

    def repaint(self) -> None:
        """The app draws its whole screen again, soon (once for pages asking together)."""
        if self.repainting is None:
            loop = asyncio.get_running_loop()
            self.repainting = loop.call_later(REPAINT_PAUSE, self._repaint)

    def _repaint(self) -> None:
        self.repainting = None
        self._to_app({"type": "repaint"})

    def open_terminal(self, terminal: TerminalInfo) -> tuple[int, int]:
        ours, theirs = socket.socketpair()
        # What goes to the app (keys, and the page's size and focus among them, in order) waits
        # a little in the socket, not the 200 KB and more it would hold by default: a page's
        # new size is not taken behind seconds of keys the app reads but cannot act on as fast.
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, KEYS_IN_FLIGHT)
        return ours.detach(), theirs.detach()

    def child_args(self) -> list[str]:
        watch = ["--watch", str(self.watch)] if self.watch is not None else []
        touch = ["--touch"] if self.touch else []
        return [*super().child_args(), "--web", *watch, *touch]

    def child_environ(self) -> dict[str, str]:
        assert self.terminal is not None
        environ = super().child_environ()
        self.start_size = (self.terminal.width, self.terminal.height)
        environ.update(
            TEXTUAL_DRIVER="tonk.client.door.web_driver:DoorWebDriver",
            TEXTUAL_COLOR_SYSTEM="truecolor",
            COLUMNS=str(self.terminal.width),
            ROWS=str(self.terminal.height),
        )
        return environ

    def _held_seats(self) -> list[dict[str, Any]]:
        return super()._held_seats() if self.player else []

    def _label(self) -> str:
        return self.link.host

    async def _run_child(self, command: DoorCommand) -> int:
        try:
            return await super()._run_child(command)
        finally:
            if self.channel is not None:
                self.channel.raw = True

    # -- from the page -------------------------------------------------------------------------

    def received(self, text: str, viewer: Viewer | None = None) -> None:
        """One message from the page (textual-serve's page's JSON); anything else is
        ignored. Every message, whatever it is, counts against the session's input budget:
        keys by their bytes (as a terminal's), any other message by its length, so that a
        page that sends more than a player does is closed, as a terminal would be. A
        television page's (`viewer`) counts against its own, and it is the page that is
        closed; the picture's size is its first page's, and keys are not the page's."""
        if viewer is not None and viewer.budget is not None:
            self._watcher_said(viewer, len(text))
            return
        kind, value = envelope(text)
        if kind == "stdin" and isinstance(value, str):
            keys = value.encode("utf-8", "replace")
            if self.within_budget(len(keys)) and self.player:
                self.keys_received(packet(DATA, keys))
            return
        if not self.within_budget(len(text)):
            return
        if kind == "resize" and isinstance(value, dict):
            width, height = clamp_size(value.get("width"), value.get("height"))
            self.terminal_size_changed(width, height, 0, 0)
        # `focus` and `blur`: the app is told it is looked at once, as it draws (app_drew);
        # a page's every change of focus would be a screen drawn again for nothing.

    def _watcher_said(self, viewer: Viewer, size: int) -> None:
        assert viewer.budget is not None and self.channel is not None
        if viewer.budget.take(size, asyncio.get_running_loop().time()):
            return
        log.warning("web door: a television page sent more than a page does: closed")
        self.channel.viewers.discard(viewer)
        viewer.close(("\r\n" + viewer.budget.too_much() + "\r\n").encode())
        if not self.channel.viewers:
            self.end(None, None)

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        if self.terminal is not None:
            if (width, height) != (self.terminal.width, self.terminal.height):
                self.reflowed = True
            self.terminal = TerminalInfo(self.terminal.term, width, height, self.terminal.environ)
        if self.app_size is None or self.resizing is not None:
            return  # said once the app has drawn, or when the pause below is over
        loop = asyncio.get_running_loop()
        wait = self.resized_at + RESIZE_PAUSE - loop.time()
        if wait > 0:
            self.resizing = loop.call_later(wait, self._resize_app)
        else:
            self._resize_app()

    def _resize_app(self) -> None:
        """The app is told the page's size, if it is new to it: once in RESIZE_PAUSE at most
        (a window dragged, or a page that sends sizes in a loop, costs the app a layout a
        pause, not one a message). A page whose terminal came back to the app's size has
        still moved its lines: the app draws the whole screen again."""
        self.resizing = None
        terminal = self.terminal
        if terminal is None or self.app_size is None:
            return
        reflowed, self.reflowed = self.reflowed, False
        if self.app_size == (terminal.width, terminal.height):
            if reflowed:
                self._to_app({"type": "repaint"})
            return
        self.app_size = (terminal.width, terminal.height)
        self.resized_at = asyncio.get_running_loop().time()
        self._to_app({"type": "resize", "width": terminal.width, "height": terminal.height})

    def app_drew(self) -> None:
        """The app's first screen has come: from now on it is told each size, the first
        if the page's terminal has changed since the app started."""
        self.app_size = self.start_size
        # The app hides its keys while it thinks the page is not looked at (the web driver
        # starts it so); the table is the page's whole point, and a tap must find its keys.
        self._to_app({"type": "focus"})
        terminal = self.terminal
        if terminal is not None:
            self.terminal_size_changed(terminal.width, terminal.height, 0, 0)

    def _over(self) -> None:
        for timer in (self.resizing, self.repainting):
            if timer is not None:
                timer.cancel()
        self.resizing = self.repainting = None
        super()._over()

    def _to_app(self, meta: dict[str, Any]) -> None:
        """A meta packet for the app (not a key: the idle clock does not restart)."""
        if self.master < 0:
            return
        self.pending += packet(META, json.dumps(meta).encode())
        self._to_child()
