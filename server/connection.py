"""One client connection: its frame decoder, its bounded outgoing queue and writer task, its
rate limit. Sending never waits: a connection that falls too far behind (more than `max_queue`
frames, or more than `max_bytes` bytes not yet taken by the kernel) is dropped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tonk.shared import protocol

if TYPE_CHECKING:
    from .table import Table

log = logging.getLogger("tonk.server")

#: Seconds a closing connection gets to flush its last frames before it is cut.
FLUSH_TIMEOUT = 2.0
#: After a fatal error, what the client still sends is read and dropped until it closes its
#: side, or sends nothing for this many seconds (see `linger`).
LINGER_QUIET = 0.25


class Connection:
    """The server side of one client. `send` queues a message; the writer task writes the
    queue out, awaiting `drain()` so the kernel buffer stays bounded too."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        number: int,
        max_queue: int,
        rate: float,
        burst: float,
        max_bytes: int = 0,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.transport = writer.transport  # (StreamWriter.transport is a property)
        self.number = number
        peer = writer.get_extra_info("peername")
        self.address: str = peer[0] if isinstance(peer, tuple) else str(peer)
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.name: str | None = None
        self.welcomed = False
        self.table: Table | None = None
        self.seat: int | None = None  # the seat held at `table`; None for a spectator
        self.request_id: int | None = None  # the "id" of the request being handled
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
        self.pings = 0
        self._rate = rate
        self._burst = burst
        self._tokens = burst
        self._refilled = self.opened
        self.sent_frames = 0
        self.writer_task = asyncio.create_task(self._write_loop(), name=f"conn-{number}-writer")

    def __repr__(self) -> str:
        return f"<Connection #{self.number} {self.peer} {self.name!r}>"

    def is_closing(self) -> bool:
        return self.closing

    # -- sending ------------------------------------------------------------------------------

    def send(self, message: Mapping[str, Any]) -> None:
        """Queue one message. Never blocks; drops the connection if its queue is full."""
        if self.closing:
            return
        self.send_frame(protocol.encode(message))

    def reply(self, message: dict[str, Any]) -> None:
        """Send the answer to the request being handled, with its `reply_to`."""
        if self.request_id is not None:
            message["reply_to"] = self.request_id
        self.send(message)

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
            return
        if len(self._queue) >= self.max_queue:
            log.warning("connection %s dropped: %d frames unsent", self.peer, len(self._queue))
            self.abort()
            return
        if self.max_bytes:
            # Frames queued here and bytes the transport holds: one frame alone always fits.
            pending = self._queued_bytes + transport.get_write_buffer_size()
            if pending and pending + len(frame) > self.max_bytes:
                log.warning("connection %s dropped: %d bytes unsent", self.peer, pending)
                self.abort()
                return
        self._queue.append(frame)
        self._queued_bytes += len(frame)
        self._wake.set()

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

    def close(self, final: Mapping[str, Any] | None = None, *, linger: bool = False) -> None:
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
        self.writer_task.cancel()
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
        **extra: Any,
    ) -> None:
        """Send an error; a fatal one (by its code, or `fatal`) closes the connection after
        it, and carries no `reply_to`."""
        data = protocol.error_message(code, message, reply_to=reply_to, detail=detail, fatal=fatal)
        data.update(extra)
        if data["fatal"]:
            self.close(data, linger=True)
        else:
            self.send(data)

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

    def take_token(self, now: float) -> bool:
        """Rate limit: a token bucket of `burst` messages refilled at `rate` a second."""
        self._tokens = min(self._burst, self._tokens + (now - self._refilled) * self._rate)
        self._refilled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
