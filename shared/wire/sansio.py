"""One connection's end, sans-I/O, for each side, as python-websockets' `Protocol`: bytes in,
messages and what to do out. The program around it (`server/connection.py`,
`client/connection.py`) only moves the bytes and hands the messages on; no socket, no clock
(the time comes in as an argument), no asyncio.

- `ServerProtocol`: the server's end. Feed it what the client sent (`receive_data`, and
  `receive_eof` when it shuts its side), then while `ready()` take `next_events(now)`: each
  whole frame decoded, read into its message and checked (its types and ranges), counted
  against the rate limit (by when it arrived, after a stall), and answered by the connection's
  link (the handshake, heartbeats: link.py). What comes out is link.py's outputs (`Send`,
  `Welcomed`, `Request`, `Closed`) and `Broken`: the client broke the protocol.
- `ClientProtocol`: the client's end. `hello(link_hello)` and `send(message)` give the bytes to
  write; `receive_data` takes the server's, refusing an SSH server's banner in place of a tonk
  server's first frame, and `messages()` gives each whole message as its decoded map (the
  client's model reads it: `client/model/model.py`, where its link lives).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..records import record
from . import messages as m
from . import protocol as p
from .link import Send, ServerLink, ServerOutput

__all__ = ["Broken", "ClientProtocol", "NotTonk", "ServerEvent", "ServerProtocol"]


@record
class Broken:
    """Server: the client broke the protocol (a frame, its msgpack, a message's shape):
    send `error` (fatal: it says what) and close."""

    error: m.Error


ServerEvent = ServerOutput | Broken


class ServerProtocol:
    """The server's end of one connection. `link` is its handshake and heartbeats; `max_frame`
    the largest frame the client may send; `rate` and `burst` its rate limit (a token bucket
    of `burst` messages refilled at `rate` a second, full at `now`)."""

    # (A server holds one per player.)
    __slots__ = (
        "_backlog",
        "_burst",
        "_decoder",
        "_end",
        "_failed",
        "_rate",
        "_refilled",
        "_tokens",
        "fed",
        "handled",
        "link",
    )

    def __init__(
        self, link: ServerLink, *, max_frame: int, rate: float, burst: float, now: float
    ) -> None:
        self.link = link
        self._decoder = p.FrameDecoder(max_frame)
        self._failed = False
        self._rate = rate
        self._burst = burst
        self._tokens = burst
        self._refilled = now
        # Bytes of the client's stream: fed so far, up to the end of the last message handled
        # (`message_done`), and to the end of the message last read.
        self.fed = 0
        self.handled = 0
        self._end = 0
        # After a stall: the stream's bytes from `_backlog[0]` to `_backlog[1]` were waiting
        # when the server came back; they arrived from `_backlog[2]` over `_backlog[3]` s.
        self._backlog: tuple[int, int, float, float] | None = None

    # -- bytes in -----------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Bytes the client sent, as they came."""
        self.fed += len(data)
        self._decoder.feed(data)

    def receive_eof(self) -> Sequence[ServerEvent]:
        """The client shut its side: nothing to do, unless it did so inside a frame."""
        if self._decoder.buffered and not self._failed:
            cut = p.ProtocolError(p.BAD_FRAME, "the connection ended in the middle of a frame")
            return self._broken(cut)
        return []

    def ready(self) -> bool:
        """Whether `next_events` has a message (or a fault) to give."""
        return not self._failed and self._decoder.ready()

    def next_events(self, now: float) -> Sequence[ServerEvent]:
        """The next whole message, read at `now`: what to do about it. Every whole message
        counts against the rate limit, hello included, judged by when it arrived (after a
        stall, not when it could be read); one of the right shape with a value out of its
        range is refused by the link (not fatal)."""
        if self._failed:
            return []
        decoder = self._decoder
        try:
            data = decoder.next_message()
            if data is None:
                return []
            request: m.ClientMessage | m.OutOfRangeMessage
            try:
                request = m.read_client(data)
            except m.OutOfRangeMessage as exc:  # (any other ProtocolError: below)
                request = exc
        except p.ProtocolError as exc:
            return self._broken(exc)
        self._end = end = self.fed - decoder.buffered
        if not self._take_token(self._arrival(end, now)):
            self._failed = True
            limit = f"too many messages: the limit is {self._rate:g} a second"
            return [Send(m.Error.of(p.RATE_LIMITED, limit))]
        if isinstance(request, m.OutOfRangeMessage):
            return self.link.refuse(request)
        return self.link.receive(request)

    def message_done(self) -> None:
        """The message last read is handled (its answer sent): the bytes up to its end are
        no longer waiting."""
        self.handled = self._end

    def _broken(self, exc: p.ProtocolError) -> Sequence[ServerEvent]:
        self._failed = True
        return [Broken(m.Error.of(exc.code, exc.message))]

    # -- the rate limit, and the time a message arrived ---------------------------------------

    @property
    def unhandled(self) -> int:
        """Bytes fed that are not handled yet (the message being handled included)."""
        return self.fed - self.handled

    def stalled(self, since: float, lost: float, waiting: int) -> None:
        """The server did not run from `since` for `lost` seconds, and `waiting` bytes of the
        client's (from the end of the last message handled) were waiting when it came back:
        they arrived meanwhile."""
        if waiting > 0:
            self._backlog = (self.handled, self.handled + waiting, since, lost)

    def _arrival(self, end: int, now: float) -> float:
        """When the message ending at byte `end` of the stream arrived, as well as the server
        knows: `now`, unless it was waiting when the server came back from a stall; then a
        time in the stall, in proportion to its place among the bytes that waited."""
        backlog = self._backlog
        if backlog is None:
            return now
        start, stop, since, lost = backlog
        if end > stop:
            self._backlog = None
            return now
        return since + lost * (end - start) / (stop - start)

    def _take_token(self, now: float) -> bool:
        if now > self._refilled:  # the bucket never goes back in time
            self._tokens = min(self._burst, self._tokens + (now - self._refilled) * self._rate)
            self._refilled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class NotTonk(p.ProtocolError):
    """Client: the server's first bytes are an SSH server's banner (`SSH-2.0-...`), not a
    tonk server's frame (an easy mistake: tonk-server prints its SSH door's port too)."""

    def __init__(self) -> None:
        super().__init__(p.BAD_FRAME, "an SSH server's banner, not a tonk server's frame")


#: What an SSH server says first (RFC 4253, 4.2).
SSH_BANNER = b"SSH-"


class ClientProtocol:
    """The client's end of one connection (a new one for each): the bytes of what it sends,
    frames of up to MAX_CLIENT_FRAME; the server's bytes in, its messages out, frames of up to
    MAX_SERVER_FRAME. A frame the client cannot read raises ProtocolError."""

    __slots__ = ("_decoder", "_heard")

    def __init__(self) -> None:
        self._decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
        self._heard = False

    def send(self, message: m.ClientMessage) -> bytes:
        """The frame of `message`."""
        return m.encode(message, p.MAX_CLIENT_FRAME)

    def receive_data(self, data: bytes) -> None:
        """Bytes the server sent, as they came; the first raise NotTonk if they are an SSH
        server's banner."""
        if not self._heard and data:
            self._heard = True
            if data.startswith(SSH_BANNER):
                raise NotTonk()
        self._decoder.feed(data)

    def next_message(self) -> m.Wire | None:
        """The next whole message as its decoded map (None: none is whole yet)."""
        return self._decoder.next_message()

    def messages(self) -> Iterator[m.Wire]:
        """Every whole message received so far, in order."""
        return self._decoder.messages()
