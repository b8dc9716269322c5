"""The link to a tonk-server: asyncio streams around the client's sans-I/O end
(`tonk.shared.wire.link.ClientProtocol`), run as a worker owned by the App. It moves bytes,
feeds the messages the server sends to the client's model (`model.py`), sends what the model
answers, posts the model's messages to the App, and reconnects by itself."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from textual.message import Message
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.link import ClientProtocol, NotTonk

from .messages import ConnectFailed, LinkLost, wrapped
from .model.model import ClientModel, Fatal, LinkDown, TableRequest
from .text.render import CardStyle
from .tokens import SeatTokens

__all__ = ["Connection", "Opener", "TableRequest", "describe_os_error"]

CONNECT_TIMEOUT = 10.0
RETRY_DELAYS = (0.5, 1.0, 2.0, 3.0, 5.0)

#: Opens the link to the server in place of a TCP connection to host:port (the SSH door's).
Opener = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


def describe_os_error(exc: BaseException, address: str) -> str:
    """A connection failure in words, not a traceback."""
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return f"cannot reach {address}: no answer after {CONNECT_TIMEOUT:g} s"
    if isinstance(exc, socket.gaierror):
        return f"cannot find the host of {address}: {exc.strerror or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection to {address} refused: is tonk-server running there on that port?"
    if isinstance(exc, OSError):
        code = exc.errno
        if code in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return f"cannot reach {address}: {exc.strerror or 'no route to the host'}"
        if code in (errno.ECONNREFUSED,):
            return f"connection to {address} refused: is tonk-server running there on that port?"
        if code in (errno.ECONNRESET, errno.EPIPE):
            return f"the connection to {address} was reset"
        return f"cannot connect to {address}: {exc.strerror or exc}"
    return f"cannot connect to {address}: {exc}"


class Connection:
    """One client's link. `run()` is the worker's body; `send()` queues a message for the
    server; `post` is how it tells the App (its `post_message`); `model` is what the client
    knows."""

    def __init__(
        self,
        host: str,
        port: int,
        name: str,
        post: Callable[[Message], Any],
        *,
        tokens: SeatTokens | None = None,
        create: TableRequest | None = None,
        style: CardStyle | None = None,
        opener: Opener | None = None,
        join: str | None = None,
        guest: bool = False,
        touch: bool = False,
    ) -> None:
        self.host = host
        self.opener = opener
        self.port = port
        self.post = post
        self.address = f"{host}:{port}"
        self.model = ClientModel(
            name,
            self.address,
            time.monotonic,
            tokens=tokens,
            create=create,
            style=style,
            join=join,
            guest=guest,
            touch=touch,
        )
        self.closing = False
        self._outbox: asyncio.Queue[m.ClientMessage | None] = asyncio.Queue()
        self._writer: asyncio.StreamWriter | None = None

    @property
    def connected(self) -> bool:
        return self.model.connected

    @property
    def name(self) -> str:
        return self.model.name

    # -- the worker -------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, talk, and reconnect when the link drops, until `close()` or a fatal error."""
        ever_connected = False
        attempt = 0
        while not self.stopping():
            try:
                opening = (
                    asyncio.open_connection(self.host, self.port)
                    if self.opener is None
                    else self.opener()
                )
                reader, writer = await asyncio.wait_for(opening, CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                reason = describe_os_error(exc, self.address)
                if not ever_connected:
                    self.post(ConnectFailed(reason))
                    return
                attempt += 1
                await self._wait_to_retry(reason, attempt)
                continue
            self.model.server = ""
            try:
                await self._session(reader, writer, reconnect=ever_connected)
            except Fatal as exc:
                self.closing = True
                self._flush()
                self.post(ConnectFailed(str(exc)))
                return
            except (LinkDown, OSError, asyncio.IncompleteReadError, p.ProtocolError) as exc:
                self._flush()
                if self.stopping():
                    return
                if self.model.server:  # this session got as far as the handshake
                    ever_connected = True
                    attempt = 0
                if not ever_connected:
                    self.post(ConnectFailed(self._reason(exc)))
                    return
                attempt += 1
                await self._wait_to_retry(self._reason(exc), attempt)
                continue
            finally:
                self.model.link_lost()
                self._writer = None
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            return

    def stopping(self) -> bool:
        return self.closing

    def _reason(self, exc: BaseException) -> str:
        if isinstance(exc, LinkDown):
            return str(exc)
        if isinstance(exc, p.ProtocolError):
            return f"the server sent something this client cannot read ({exc.message})"
        if isinstance(exc, asyncio.IncompleteReadError):
            return "the server closed the connection"
        return describe_os_error(exc, self.address)

    async def _wait_to_retry(self, reason: str, attempt: int) -> None:
        delay = RETRY_DELAYS[min(attempt - 1, len(RETRY_DELAYS) - 1)]
        self.post(LinkLost(reason, delay, attempt))
        await asyncio.sleep(delay)

    async def close(self) -> None:
        """Say bye and stop; the worker's loop ends."""
        self.closing = True
        if self.connected:
            self._outbox.put_nowait(m.Bye())
        self._outbox.put_nowait(None)

    def send(self, message: m.ClientMessage) -> bool:
        """Queue a message for the server; False (and nothing sent) while the link is down."""
        return self._flushed(self.model.send(message))

    def create_table(self, request: TableRequest) -> bool:
        return self._flushed(self.model.create_table(request))

    def leave(self) -> bool:
        return self._flushed(self.model.leave())

    def sit(self, table_id: int) -> bool:
        return self._flushed(self.model.sit(table_id))

    def refused_here(self, reason: str) -> None:
        """A move refused before it was sent: its reason to the table's log (and the App)."""
        self.model.refused_here(reason)
        self._flush()

    def _flushed(self, sent: bool) -> bool:
        """`sent` (the model's answer to a request), once what the request queued is on its
        way."""
        self._flush()
        return sent

    def _flush(self) -> None:
        """What the model has for the server to the outbox, and its reports to the App (as
        the App's messages)."""
        for message in self.model.take_outgoing():
            self._outbox.put_nowait(message)
        for report in self.model.take_reports():
            self.post(wrapped(report))

    # -- one session: handshake, then read and write until it drops --------------------------

    async def _session(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reconnect: bool
    ) -> None:
        ours = ClientProtocol()
        self._outbox = asyncio.Queue()
        writer.write(ours.send(self.model.hello()))
        await writer.drain()
        welcome = None
        while welcome is None:
            await self._read_into(ours, reader, CONNECT_TIMEOUT, handshake=True)
            welcome = ours.next_message()
        self._writer = writer
        self.model.welcome(welcome, reconnect)
        self._flush()
        writing = asyncio.create_task(self._write_loop(writer, ours))
        try:
            while True:
                # (First what came with the welcome: the lobby's first page, sent after it.)
                for message in ours.messages():
                    self._receive(message)
                # The server pings a silent connection every heartbeat: hearing nothing for
                # well over that means the link is dead even if TCP has not noticed.
                await self._read_into(ours, reader, self.model.heartbeat * 3 + 5)
        finally:
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writing

    async def _read_into(
        self,
        ours: ClientProtocol,
        reader: asyncio.StreamReader,
        timeout: float,
        *,
        handshake: bool = False,
    ) -> None:
        """The server's next bytes to the protocol. An SSH server's banner (the address is
        tonk-server's SSH door, an easy mistake as the server prints both ports) is Fatal,
        with the command to use instead."""
        try:
            data = await asyncio.wait_for(reader.read(65536), timeout)
        except TimeoutError:
            said = "did not answer the handshake" if handshake else "stopped answering"
            raise LinkDown(f"the server {said}") from None
        if not data:
            during = " during the handshake" if handshake else ""
            raise LinkDown(f"the server closed the connection{during}")
        try:
            ours.receive_data(data)
        except NotTonk:
            raise Fatal(
                f"{self.address} is an SSH server (tonk-server's SSH door, say), not the port "
                "tonk-client plays on: connect with "
                f"ssh -t -p {self.port} YOUR-NAME@{self.host}, or give tonk-client the "
                "server's other port (tonk-server prints both)"
            ) from None

    def _receive(self, message: m.Wire) -> None:
        try:
            self.model.receive(message)
        finally:
            self._flush()

    async def _write_loop(self, writer: asyncio.StreamWriter, ours: ClientProtocol) -> None:
        while True:
            message = await self._outbox.get()
            if message is None:
                writer.close()
                return
            writer.write(ours.send(message))
            await writer.drain()
