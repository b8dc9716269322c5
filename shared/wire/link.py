"""The life of one connection, sans-I/O, for both ends: the handshake (`hello`, `welcome`, or a
fatal refusal), heartbeats, and on the client's side getting back to its place (resuming its
seat after a reconnect, asking for the whole hand again when it missed part of one).

Each side's link is a plain state machine: feed it the messages received (`receive`) and it
returns what to do: messages to send and events for the program around it. Around it, each
end's protocol takes bytes, as python-websockets' `Protocol` does: bytes in, messages and what
to do out. The program around them (`server/connection.py`, `client/connection.py`) only moves
the bytes and hands the messages on. No sockets, no clock (the time comes in as an argument),
no asyncio.

- `ServerProtocol`: the server's end. Feed it what the client sent (`receive_data`, and
  `receive_eof` when it shuts its side), then while `ready()` take `next_events(now)`: each
  whole frame decoded, read into its message and checked (its types and ranges), counted
  against the rate limit (by when it arrived, after a stall), and answered by the connection's
  `ServerLink`. What comes out is the link's outputs (`Send`, `Welcomed`, `Request`, `Closed`)
  and `Broken`: the client broke the protocol.
- `ClientProtocol`: the client's end. `send(message)` gives the bytes to write;
  `receive_data` takes the server's, refusing an SSH server's banner in place of a tonk
  server's first frame, and `messages()` gives each whole message as its decoded map (the
  client's model reads it and feeds its `ClientLink`: `client/model/model.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import Enum

from ..records import record
from . import messages as m
from . import protocol as p


class LinkState(Enum):
    HANDSHAKE = "handshake"  # server: waiting for hello; client: hello sent, no welcome yet
    OPEN = "open"  # welcomed
    CLOSED = "closed"  # a fatal error was sent or received, or bye / goodbye


# -- what a side is told to do ------------------------------------------------------------------


@record
class Send:
    """Send this message (a fatal error: then close the connection)."""

    message: m.Message


@record
class Welcomed:
    """The handshake is done: the player's name as the server accepted it (client: and the
    server's `welcome`)."""

    name: str
    welcome: m.Welcome | None = None


@record
class Request:
    """Server: a request for the program (the lobby, a table) to answer; `reply_to` is its
    `id`, to copy into its answer."""

    message: m.ClientMessage
    reply_to: int | None


@record
class Deliver:
    """Client: a message for the program (the table model, the screens)."""

    message: m.ServerMessage


@record
class Refused:
    """Client: the server refused the handshake (a fatal error, the connection is over)."""

    error: m.Error


@record
class Closed:
    """The connection is over by the peer's word: a client's `bye`, the server's `goodbye`
    (client: `goodbye` is also delivered, for its words)."""


ServerOutput = Send | Welcomed | Request | Closed
ClientOutput = Send | Welcomed | Deliver | Refused | Closed


# -- the server's end ---------------------------------------------------------------------------


def version_mismatch(version: int) -> m.Error:
    age = "an older" if version < p.PROTOCOL_VERSION else "a newer"
    return m.Error.of(
        p.VERSION_MISMATCH,
        f"this server speaks tonk protocol version {p.PROTOCOL_VERSION}, and your client "
        f"speaks version {version}, {age} one: use a client of version {p.PROTOCOL_VERSION}",
        version=p.PROTOCOL_VERSION,
    )


#: The messages the server's link answers itself once the handshake is done; every other one
#: is a request for the program.
LINK_MESSAGES = frozenset({m.Hello, m.Ping, m.Pong, m.Bye})


class ServerLink:
    """The server's end of one connection. `check_name(name)` is the server's word on a name
    (None: it may be used; else why not, for the player); the welcome carries `server`,
    `limits` and `dev`."""

    __slots__ = ("_check_name", "_dev", "_limits", "_server", "name", "pings", "state")

    def __init__(
        self,
        *,
        server: str,
        limits: Mapping[str, int | float],
        dev: bool,
        check_name: Callable[[str], str | None],
    ) -> None:
        self.state = LinkState.HANDSHAKE
        self.name: str | None = None
        self.pings = 0
        self._server = server
        self._limits = limits
        self._dev = dev
        self._check_name = check_name

    @property
    def open(self) -> bool:
        return self.state is LinkState.OPEN

    def receive(self, message: m.ClientMessage) -> list[ServerOutput]:
        """A message read from the client, of the right shape and in range."""
        if self.state is LinkState.OPEN and type(message) not in LINK_MESSAGES:
            return [Request(message, message.id)]  # (the most frequent: first, in one test)
        if self.state is LinkState.CLOSED:
            return []
        if self.state is LinkState.HANDSHAKE:
            if not isinstance(message, m.Hello):
                return self._fatal(self._hello_first())
            return self._hello(message)
        reply_to = message.id
        if isinstance(message, m.Hello):
            return self._fatal(self._hello_first())
        if isinstance(message, m.Ping):
            return [Send(m.ServerPong(message.n, reply_to))]
        if isinstance(message, m.Pong):
            return []
        if isinstance(message, m.Bye):
            self.state = LinkState.CLOSED
            return [Closed()]
        return [Request(message, reply_to)]

    def refuse(self, exc: m.OutOfRangeMessage) -> list[ServerOutput]:
        """A message whose only fault is a value out of its range: a non-fatal error naming the
        field and its range; in the handshake, the handshake's fatal error."""
        if self.state is LinkState.CLOSED:
            return []
        if self.state is LinkState.HANDSHAKE or exc.kind == p.HELLO:
            if exc.kind != p.HELLO or self.state is LinkState.OPEN:
                return self._fatal(self._hello_first())
            if exc.version is not None and exc.version != p.PROTOCOL_VERSION:
                # A client of another version is told that first, whatever else is wrong.
                return self._fatal(version_mismatch(exc.version))
            return self._fatal(m.Error.of(exc.code, exc.message, detail=exc.field, fatal=True))
        error = m.Error.of(exc.code, exc.message, reply_to=exc.request_id, detail=exc.field)
        return [Send(error)]

    def ping(self) -> m.ServerPing | None:
        """The heartbeat's ping (the program decides when: after a silence); None before the
        welcome (the handshake's timeout governs that) and once closed."""
        if self.state is not LinkState.OPEN:
            return None
        self.pings += 1
        return m.ServerPing(self.pings)

    def _hello(self, hello: m.Hello) -> list[ServerOutput]:
        if hello.version != p.PROTOCOL_VERSION:
            return self._fatal(version_mismatch(hello.version))
        name = hello.name.strip()
        refusal = self._check_name(name)
        if refusal is not None:
            return self._fatal(m.Error.of(p.BAD_NAME, refusal, fatal=True))
        self.state = LinkState.OPEN
        self.name = name
        welcome = m.Welcome(
            p.PROTOCOL_VERSION, self._server, name, self._limits, self._dev, hello.id
        )
        return [Welcomed(name, welcome), Send(welcome)]

    def _hello_first(self) -> m.Error:
        said = self.state is LinkState.OPEN
        return m.Error.of(p.HELLO_FIRST, "hello was already said" if said else "send hello first")

    def _fatal(self, error: m.Error) -> list[ServerOutput]:
        self.state = LinkState.CLOSED
        return [Send(error)]


# -- the client's end ---------------------------------------------------------------------------


@record
class Place:
    """Where a client is: a table, and its seat and the seat's token (None: watching)."""

    table: int
    seat: int | None = None
    token: str | None = None

    def rejoin(self) -> m.ClientMessage:
        """The request that takes this place again, whole (the hand from its first event)."""
        if self.seat is not None and self.token is not None:
            return m.Resume(self.table, self.token)
        return m.Watch(self.table)


class ClientLink:
    """The client's end of one connection to a server, kept across reconnects: `hello()` on
    every new connection, then `receive` each message. After a reconnect it takes back the
    place it had (its seat by token, or the table it watched); when an `update` shows it missed
    part of a hand it asks for the whole hand again and drops the updates until it comes; when
    the server refuses that request (the seat's token is old, the table is gone), the place is
    gone. `number()` gives a request its `id`: the program's requests and the link's own are
    numbered in one series, so an answer's `reply_to` names one request."""

    __slots__ = (
        "_next_id",
        "_rejoin",
        "client",
        "events",
        "hand",
        "name",
        "place",
        "resyncing",
        "state",
    )

    def __init__(self, name: str, client: str | None = None) -> None:
        self.name = name
        self.client = client
        self.state = LinkState.CLOSED
        self.place: Place | None = None
        self.hand = 0  # the hand number of the updates followed at `place`
        self.events = 0  # how many of its events are held
        self.resyncing = False  # the whole hand was asked for; later parts are dropped
        self._next_id = 1
        self._rejoin: int | None = None  # the id of the request taking `place` again

    def hello(self) -> m.Hello:
        """The first message on a new connection."""
        self.state = LinkState.HANDSHAKE
        self._rejoin = None
        return m.Hello(p.PROTOCOL_VERSION, self.name, self.client)

    def number(self, message: m.ClientMessage) -> m.ClientMessage:
        """`message` with the next request id (as it is when it has one)."""
        if message.id is not None:
            return message
        self._next_id += 1
        return message.replaced(id=self._next_id - 1)

    def connection_lost(self) -> None:
        self.state = LinkState.CLOSED

    def receive(self, message: m.ServerMessage) -> list[ClientOutput]:
        state = self.state
        if state is LinkState.HANDSHAKE:
            return self._handshake(message)
        if state is LinkState.CLOSED:
            return []
        if isinstance(message, m.Update):  # (the most frequent first)
            return self._update(message)
        if isinstance(message, m.ServerPing):
            return [Send(m.Pong(message.n))]
        if isinstance(message, m.Goodbye):
            self.state = LinkState.CLOSED
            return [Deliver(message), Closed()]
        if isinstance(message, m.Seated):
            self._moved(Place(message.table, message.seat, message.token))
        elif isinstance(message, m.Watching):
            self._moved(Place(message.table))
        elif isinstance(message, m.Left):
            self._moved(None)
        elif isinstance(message, m.Error):
            refused = self._rejoin is not None and message.reply_to == self._rejoin
            if message.code == p.SEAT_RESUMED_ELSEWHERE or refused:
                self.forget()
            if message.fatal:
                self.state = LinkState.CLOSED
        return [Deliver(message)]

    def resync(self) -> list[ClientOutput]:
        """Ask for the whole hand again (the program may, as the link does on a gap)."""
        if self.place is None or self.state is not LinkState.OPEN:
            return []
        self.hand = self.events = 0
        self.resyncing = True
        return [Send(self._rejoining(self.place))]

    def forget(self) -> None:
        """The program is done with its place (the server refused its own request to take
        the seat back): there is nothing to take back after a reconnect."""
        self._moved(None)
        self.resyncing = False

    def _handshake(self, message: m.ServerMessage) -> list[ClientOutput]:
        if isinstance(message, m.Welcome):
            self.state = LinkState.OPEN
            self.name = message.name
            out: list[ClientOutput] = [Welcomed(message.name, message)]
            if self.place is not None:
                # Back where it was: the seat by its token, or the table watched.
                self.hand = self.events = 0
                self.resyncing = True
                out.append(Send(self._rejoining(self.place)))
            return out
        self.state = LinkState.CLOSED
        if isinstance(message, m.Error):
            return [Refused(message)]
        error = m.Error.of(p.BAD_MESSAGE, f"the server answered hello with {message.TYPE}")
        return [Refused(error)]

    def _rejoining(self, place: Place) -> m.ClientMessage:
        rejoin = self.number(place.rejoin())
        self._rejoin = rejoin.id
        return rejoin

    def _moved(self, place: Place | None) -> None:
        if place != self.place:
            self.hand = self.events = 0
        self.place = place

    def _update(self, update: m.Update) -> list[ClientOutput]:
        place = self.place
        if place is None or update.table != place.table:
            return [Deliver(update)]
        if self.resyncing and update.start > 0:
            return []  # the whole hand is on its way
        expected = self.events if update.hand == self.hand else 0
        if update.start > expected:
            return self.resync()  # a part of the hand was missed
        self.resyncing = False
        self.hand = update.hand
        self.events = update.view.event_count
        return [Deliver(update)]


# -- the bytes: each end's protocol ------------------------------------------------------------


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
        """Bytes the client sent, as they came (once it broke the protocol, dropped)."""
        self.fed += len(data)
        if not self._failed:
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
        return p.encode(message.to_wire(), p.MAX_CLIENT_FRAME)

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
