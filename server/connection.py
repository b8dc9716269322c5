"""One client connection: its read loop (the bytes to its sans-I/O end, `ServerProtocol`, and
what that says to do: the requests to the server's handlers), its bounded outgoing queue and
writer task. Sending never waits: a connection that falls too far behind (more than `max_queue`
frames, or more than `max_bytes` bytes its client has not taken yet, those the kernel holds
included) is dropped, and so is one that takes nothing of what it is sent for a while."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import socket
import sys
import termios
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from tonk.shared.wire import protocol
from tonk.shared.wire.link import (
    Broken,
    Closed,
    Request,
    Send,
    ServerEvent,
    ServerLink,
    ServerProtocol,
    Welcomed,
)
from tonk.shared.wire.messages import ClientMessage, Error, ServerMessage

from .tables.seating import Places

log = logging.getLogger("tonk.server")

#: Seconds a closing connection gets to flush its last frames before it is cut.
FLUSH_TIMEOUT = 2.0
#: After a fatal error, what the client still sends is read and dropped until it closes its
#: side, or sends nothing for this many seconds (see `linger`).
LINGER_QUIET = 0.25
#: The kernel's send buffer of a TCP connection. Left to itself Linux grows it to megabytes
#: (net.ipv4.tcp_wmem) for a client that does not read, out of the server's sight and count;
#: a game's frames need far less (Linux doubles the value for its own bookkeeping).
SEND_BUFFER = 64 * 1024


def unlink_transport(writer: asyncio.StreamWriter) -> None:
    """Once the connection is lost (`writer.wait_closed()` has returned), undo the reference
    cycle CPython 3.11's socket transport keeps: it holds a bound method of itself
    (`_read_ready_cb`), so that every closed transport, with its socket objects, waited for
    the collector's rare full collection, and pinned the memory around it
    (docs/benchmarks-journal.md, "Memory after lobby clients that never read"). Nothing to do
    where the attribute is gone."""
    transport = writer.transport
    if transport.is_closing() and getattr(transport, "_read_ready_cb", None) is not None:
        transport._read_ready_cb = None  # type: ignore[attr-defined]


#: What answers a request: `handle(connection, request, reply_to)` (server/requests.py's).
Handler = Callable[["Connection", ClientMessage, int | None], Awaitable[None]]


def encode_message(message: ServerMessage) -> bytes:
    """The frame of `message`."""
    return protocol.encode(message.to_wire())


class Connection:
    """The server side of one client. `serve` reads it; `send` queues a message; the writer
    task writes the queue out, awaiting `drain()` so the kernel buffer stays bounded too."""

    # (A server holds one per player: slots keep each about 1.2 KiB smaller than a __dict__.)
    __slots__ = (
        "_flush_then_close",
        "_linger",
        "_page_burst",
        "_page_rate",
        "_pages",
        "_pages_refilled",
        "_places",
        "_queue",
        "_queued_bytes",
        "_taken",
        "_taken_at",
        "_wake",
        "address",
        "busy",
        "closed",
        "closing",
        "door_name",
        "input_done",
        "last_ping",
        "last_received",
        "link",
        "max_bytes",
        "max_queue",
        "name",
        "number",
        "opened",
        "peer",
        "protocol",
        "reader",
        "request_id",
        "sent_bytes",
        "sent_frames",
        "transport",
        "writer",
        "writer_task",
    )

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        number: int,
        link: ServerLink,
        places: Places,
        max_queue: int,
        rate: float,
        burst: float,
        max_frame: int = protocol.MAX_CLIENT_FRAME,
        max_bytes: int = 0,
        page_rate: float = 2.0,
        page_burst: float = 20.0,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.transport = writer.transport  # (StreamWriter.transport is a property)
        self.number = number
        peer = writer.get_extra_info("peername")
        self.address: str = peer[0] if isinstance(peer, tuple) else str(peer)
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.name: str | None = None
        # The name the SSH door proved with a key (a connection it opened), else None.
        self.door_name: str | None = None
        self.link = link  # the handshake and heartbeats (tonk.shared.wire.link): its protocol's
        self._places = places
        self.request_id: int | None = None  # the "id" of the request being handled
        self.busy = False  # a request of it is being handled (nothing more is read meanwhile)
        self.max_queue = max_queue
        self.max_bytes = max_bytes  # 0: no limit in bytes
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0
        self._wake = asyncio.Event()
        self.closing = False
        self.closed = asyncio.Event()
        self._flush_then_close = False
        self._linger = False  # half-close after the last frame, and wait for `input_done`
        self.input_done = asyncio.Event()  # nothing more is read from the client
        loop = asyncio.get_running_loop()
        self.opened = loop.time()
        self.last_received = self.opened
        self.last_ping = self.opened
        # The bytes read to messages, checked, rate-limited and through the link.
        self.protocol = ServerProtocol(
            link, max_frame=max_frame, rate=rate, burst=burst, now=self.opened
        )
        self._page_rate = page_rate
        self._page_burst = page_burst
        self._pages = page_burst
        self._pages_refilled = self.opened
        self.sent_frames = 0
        # Bytes handed to the transport so far; of those, the client had taken `_taken` (as
        # last looked at, `_taken_at`): see `unread_for`.
        self.sent_bytes = 0
        self._taken = 0
        self._taken_at = self.opened
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        self.writer_task = asyncio.create_task(self._write_loop(), name=f"conn-{number}-writer")

    def __repr__(self) -> str:
        return f"<Connection #{self.number} {self.peer} {self.name!r}>"

    def is_closing(self) -> bool:
        return self.closing

    @property
    def welcomed(self) -> bool:
        return self.link.open

    @property
    def place(self) -> tuple[object, int | None] | None:
        """The table this connection is at and its seat there (None: watching), as the
        server's seating says; None in the lobby."""
        return self._places.get(self)

    @property
    def table(self) -> object | None:
        """The table this connection is at (seated or watching), as the server's seating
        says (the tables write it, the connection only reads it)."""
        place = self._places.get(self)
        return None if place is None else place[0]

    @property
    def seat(self) -> int | None:
        """The seat it holds at `table`; None for a spectator or in the lobby."""
        place = self._places.get(self)
        return None if place is None else place[1]

    # -- sending ------------------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        """Queue one message. Never blocks; drops the connection if its queue is full."""
        if self.closing:
            return
        self.send_frame(encode_message(message))

    def reply(self, message: ServerMessage) -> None:
        """Send the answer to the request being handled, with its `reply_to`."""
        self.send(message.answering(self.request_id))

    def send_frame(self, frame: bytes) -> None:
        if self.closing:
            return
        transport = self.transport
        if not self._queue and not transport.get_write_buffer_size():
            # The socket keeps up: hand the frame to it now. Waking the writer task for
            # every frame costs more than the write (several frames go out per action).
            # Frames wait in the bounded queue only while the socket is backed up.
            transport.write(frame)
            self.sent_frames += 1
            self.sent_bytes += len(frame)
            return
        if len(self._queue) >= self.max_queue:
            log.warning("connection %s dropped: %d frames unsent", self.peer, len(self._queue))
            self.abort()
            return
        if self.max_bytes:
            # Everything not taken by the client yet: one frame alone always fits.
            pending = self.unsent()
            if pending and pending + len(frame) > self.max_bytes:
                log.warning("connection %s dropped: %d bytes unsent", self.peer, pending)
                self.abort()
                return
        self._queue.append(frame)
        self._queued_bytes += len(frame)
        self._wake.set()

    def in_kernel(self) -> int:
        """Bytes the kernel holds for the client: not sent yet, or sent and not acknowledged
        (SIOCOUTQ); 0 where it cannot be read (a socket pair of the SSH door's included)."""
        sock = self.transport.get_extra_info("socket")
        if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
            return 0
        try:
            raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        except (OSError, ValueError):
            return 0
        return int.from_bytes(raw, sys.byteorder)

    def unsent(self) -> int:
        """Bytes sent to this connection that its client has not taken yet: queued here, in
        the transport's buffer and in the kernel's."""
        return self._queued_bytes + self.transport.get_write_buffer_size() + self.in_kernel()

    def unread_for(self, now: float) -> float:
        """Seconds for which the client has taken none of the bytes waiting for it (0 when
        none wait, or it took some since the last look). Looked at a few times a second; the
        kernel is asked only while bytes were handed to it since everything was taken."""
        if self.sent_bytes == self._taken:
            self._taken_at = now
            return 0.0
        taken = self.sent_bytes - self.transport.get_write_buffer_size() - self.in_kernel()
        if taken > self._taken:
            self._taken, self._taken_at = taken, now
            return 0.0
        return now - self._taken_at

    async def _write_loop(self) -> None:
        writer = self.writer
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    frames = list(self._queue)
                    self._queue.clear()
                    self._queued_bytes = 0
                    writer.writelines(frames)
                    self.sent_frames += len(frames)
                    self.sent_bytes += sum(map(len, frames))
                    await writer.drain()
                if self._flush_then_close:
                    break
            if self._linger and writer.can_write_eof():
                # Our side is done (the client sees the end after our last frame); closing
                # while it still sends would answer it with a reset, and a reset can make its
                # system drop that last frame unread. `linger` reads until it stops sending.
                writer.write_eof()
                await self.input_done.wait()
        except (ConnectionError, OSError):
            pass
        finally:
            self.closing = True
            self._queue.clear()
            with contextlib.suppress(Exception):
                writer.close()
            self.closed.set()

    def close(self, final: ServerMessage | None = None, *, linger: bool = False) -> None:
        """Send `final` (if any) and whatever is queued, then close; with `linger`, shut our
        side first and close once the client has stopped sending (a fatal error: the client
        may be sending when it comes, and must still get it)."""
        if self.closing:
            return
        if final is not None:
            self.send(final)
        self.closing = True
        self._flush_then_close = True
        self._linger = linger
        self._wake.set()
        asyncio.get_running_loop().call_later(FLUSH_TIMEOUT, self._give_up)

    def _give_up(self) -> None:
        if not self.closed.is_set():
            self.abort()

    def abort(self) -> None:
        """Cut the connection now, dropping anything unsent."""
        self.closing = True
        self._queue.clear()
        self._queued_bytes = 0
        transport = self.writer.transport
        with contextlib.suppress(Exception):
            transport.abort()
        # The writer task ends by itself: there is nothing left to write, and a `drain` it
        # waits in returns once the transport is gone. (Cancelled, it would keep its
        # CancelledError, whose traceback holds its frame and so this connection: a cycle
        # that kept every dropped connection, its streams and buffers, until the collector's
        # rare full collection.)
        self._flush_then_close = True
        self._linger = False
        self._wake.set()
        with contextlib.suppress(Exception):
            self.reader.feed_eof()

    def error(
        self,
        code: str,
        message: str,
        *,
        reply_to: int | None = None,
        detail: str | None = None,
        fatal: bool | None = None,
    ) -> None:
        """Send an error; a fatal one (by its code, or `fatal`) closes the connection after
        it, and carries no `reply_to`."""
        error = Error.of(code, message, reply_to=reply_to, detail=detail, fatal=fatal)
        self.send_error(error)

    def send_error(self, error: Error) -> None:
        """Send `error`; if it is fatal, close the connection after it (see `close`)."""
        if error.fatal:
            self.close(error, linger=True)
        else:
            self.send(error)

    async def linger(self) -> None:
        """Nothing more is taken from this client: read and drop what it still sends until it
        closes its side or is quiet for LINGER_QUIET seconds (FLUSH_TIMEOUT at most)."""
        try:
            if self._linger:
                async with asyncio.timeout(FLUSH_TIMEOUT):
                    while await asyncio.wait_for(self.reader.read(65536), LINGER_QUIET):
                        pass
        except (TimeoutError, ConnectionError, OSError):
            pass
        finally:
            self.input_done.set()

    # -- receiving ----------------------------------------------------------------------------

    async def serve(
        self,
        handle: Handler,
        clock: Callable[[], float],
        arrived: Callable[[Connection], bool],
        welcome: Callable[[Connection], Awaitable[None]],
    ) -> None:
        """The read loop, until the client closes its side or the connection closes: the
        client's bytes to the protocol, and each whole message's events done (a request to
        `handle`, a message sent, the connection closed). `clock()` is the time each message is
        read (the server's, caught up after a stall). Once each message is handled, a
        connection that has just `arrived` in the lobby (welcomed, or left its table) is sent
        its `welcome` there (the list, then its changes)."""
        ours = self.protocol
        reader = self.reader
        try:
            while not self.closing:
                data = await reader.read(65536)
                if not data:
                    await self._do(ours.receive_eof(), handle)  # (cut inside a frame?)
                    break
                ours.receive_data(data)
                while ours.ready():
                    # Only whole messages count as signs of life: a frame trickled in a byte
                    # at a time does not keep a connection open.
                    self.last_received = clock()
                    self.busy = True
                    try:
                        # (The events go with this call, not kept alive by this loop until
                        # the next message, seconds later at a table.)
                        await self._do(ours.next_events(self.last_received), handle)
                    finally:
                        self.busy = False
                    # Nothing was read from it while the request was handled (a write that
                    # waits for the storage may take long): its silence counts from now.
                    self.last_received = clock()
                    ours.message_done()
                    if self.is_closing():  # (a method: mypy takes `closing` for still False)
                        return
                    if arrived(self):
                        await welcome(self)
        except protocol.ProtocolError as exc:  # (a frame too large to send, say)
            log.info("connection #%d: %s: %s", self.number, exc.code, exc.message)
            self.error(exc.code, exc.message)
        except (ConnectionError, OSError):
            pass

    async def _do(self, events: Sequence[ServerEvent], handle: Handler) -> None:
        """Do what the protocol says, a request by `handle`."""
        for event in events:
            if isinstance(event, Request):  # (the most frequent first)
                await handle(self, event.message, event.reply_to)
            elif isinstance(event, Send):
                message = event.message
                assert isinstance(message, ServerMessage)
                if isinstance(message, Error):
                    self.send_error(message)
                else:
                    self.send(message)
            elif isinstance(event, Welcomed):
                self.name = event.name
                log.info("connection #%d is %s", self.number, event.name)
            elif isinstance(event, Closed):
                self.close()
            elif isinstance(event, Broken):
                error = event.error
                log.info("connection #%d: %s: %s", self.number, error.code, error.message)
                self.send_error(error)

    def waiting_bytes(self) -> int:
        """Bytes the client sent that the server has not handled yet: in the kernel's
        receive buffer, in the stream reader's and read but not yet handled."""
        waiting = self.protocol.unhandled
        buffer = getattr(self.reader, "_buffer", None)  # asyncio's StreamReader keeps it there
        if buffer is not None:
            waiting += len(buffer)
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError, ValueError):
                raw = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
                waiting += int.from_bytes(raw, sys.byteorder)
        return waiting

    def stalled(self, since: float, lost: float) -> None:
        """The server did not run from `since` for `lost` seconds: what waits to be handled
        arrived meanwhile (the rate limit judges it by that); its silence is not held
        against it."""
        self.last_received += lost
        self.last_ping += lost
        self.opened += lost
        self._taken_at += lost
        self.protocol.stalled(since, lost, self.waiting_bytes())

    def take_page(self, now: float) -> float:
        """Pace of the lobby's `tables` pages: a bucket of `page_burst` pages refilled at
        `page_rate` a second. Takes one; returns the seconds to wait before sending it."""
        refill = (now - self._pages_refilled) * self._page_rate
        self._pages = min(self._page_burst, self._pages + refill)
        self._pages_refilled = now
        self._pages -= 1
        return -self._pages / self._page_rate if self._pages < 0 else 0.0
