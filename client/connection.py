"""The link to a tonk-server: asyncio streams around the shared protocol codec, run as a worker
owned by the App. It keeps what the client knows (the lobby, the table, the log), posts
messages to the App when that changes, and reconnects by itself with the seat token."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rich.text import Text
from textual.message import Message
from tonk.shared import protocol as p
from tonk.shared.actions import Event
from tonk.shared.cards import parse_card
from tonk.shared.rules import HouseRules, RulesError
from tonk.shared.settlement import Ending, Settlement
from tonk.shared.view import SeatView

from .messages import (
    Connected,
    ConnectFailed,
    HandEnded,
    LeftTable,
    LinkLost,
    LobbyChanged,
    ServerRefused,
    SessionEnded,
    TableChanged,
)
from .render import (
    ENDED_BY,
    MOVES,
    CardStyle,
    amount_text,
    card_text,
    ending_line,
    event_line,
    move_phrase,
)
from .seatnews import seat_news
from .state import LogLine, PlayerInfo, TableInfo, TableState
from .tokens import SeatRecord, SeatTokens

CLIENT_NAME = "tonk-client 0.1.0"
CONNECT_TIMEOUT = 10.0
#: Requests remembered (by id) for reading the errors that answer them.
MAX_REQUESTS = 256
RETRY_DELAYS = (0.5, 1.0, 2.0, 3.0, 5.0)
LOG_KEEP = 300

#: The messages that are moves in the hand: an event of our seat's that none of these asked
#: for is a move the server made for us.
MOVE_REQUESTS = frozenset({p.DRAW_STOCK, p.TAKE_DISCARD, p.SPREAD, p.HIT, p.DISCARD, p.DROP})

# Fatal errors after which trying again is worthwhile (the server restarts, a hiccup).
RETRYABLE = frozenset({p.SERVER_SHUTTING_DOWN, p.IDLE_TIMEOUT, p.RATE_LIMITED, p.HANDSHAKE_TIMEOUT})


class Fatal(Exception):
    """The server cannot be used: a reason for a person, after which the client stops."""


class LinkDown(Exception):
    """The connection dropped or the server said goodbye: try again."""


#: Opens the link to the server in place of a TCP connection to host:port (the SSH door's).
Opener = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


@dataclass
class TableRequest:
    """A table to create on connecting (the practice table) or from the lobby's form: the
    create_table fields, and the bots to seat once we sit: `bots` bots playing `strategy`,
    or, when `strategies` is given, one bot for each strategy named there."""

    fields: dict[str, Any]
    bots: int = 0
    strategy: str = "easy"
    strategies: tuple[str, ...] = ()

    def bot_strategies(self) -> tuple[str, ...]:
        """Each bot's strategy, in the order they are seated."""
        return self.strategies or (self.strategy,) * self.bots


@dataclass
class _Table:
    """The table as the connection accumulates it; `state()` freezes it for the screens."""

    table_id: int
    seat: int | None
    info: Mapping[str, Any] = field(default_factory=dict)
    view: SeatView | None = None
    hand: int = 0
    events: int = 0
    deadline: float | None = None
    balances: dict[str, int] = field(default_factory=dict)
    series: dict[str, list[int]] = field(default_factory=dict)
    last_net: dict[str, int] = field(default_factory=dict)
    hands_seen: int = 0
    session_over: bool = False
    # The hand whose events are in the log, and how many of its events: an event is logged
    # once, however often it arrives (a resync sends the whole hand again).
    logged_hand: int = 0
    logged_events: int = 0
    resyncing: bool = False  # asked for the whole hand again; later parts are ignored till then
    # The log line of the turn being played (seat, line number, text): the turn's moves are
    # one line, amended as each comes ("drew 8♥, discarded 2♣").
    turn_line: tuple[int, int, Text] | None = None


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
    server; `post` is how it tells the App (its `post_message`)."""

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
        clock: Callable[[], float] | None = None,
        opener: Opener | None = None,
    ) -> None:
        self.host = host
        self.opener = opener
        self.port = port
        self.name = name
        self.post = post
        self.tokens = tokens
        self.create = create
        self.style = style or CardStyle()
        self._clock = clock
        self.address = f"{host}:{port}"
        self.server = ""
        self.connected = False
        self.closing = False
        self.tables: tuple[TableInfo, ...] = ()
        self._lobby: dict[int, TableInfo] = {}  # the server's tables as far as we know them
        self._asked_after: set[int] = set()  # pages of the list asked for and not yet come
        # Asked the server for a table (to resume, watch or create) and not yet answered: the
        # lobby's list is kept, but the lobby screen is not to be shown for it.
        self.joining = False
        self.table: _Table | None = None
        self.token: str | None = None
        self._pending_bots: tuple[str, ...] | None = None
        self._log: list[LogLine] = []
        self._log_numbers = itertools.count()
        self._ids = itertools.count(1)
        self._requests: dict[int, str] = {}
        self._outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._writer: asyncio.StreamWriter | None = None
        self._heartbeat = 15.0
        self._resumed_from_disk = False
        self._moves_asked = 0  # moves sent whose event has not come back (nor a refusal)

    # -- the worker -------------------------------------------------------------------------

    def now(self) -> float:
        return self._clock() if self._clock is not None else time.monotonic()

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
            self.server = ""
            try:
                await self._session(reader, writer, reconnect=ever_connected)
            except Fatal as exc:
                self.closing = True
                self.post(ConnectFailed(str(exc)))
                return
            except (LinkDown, OSError, asyncio.IncompleteReadError, p.ProtocolError) as exc:
                if self.stopping():
                    return
                if self.server:  # this session got as far as the handshake
                    ever_connected = True
                    attempt = 0
                if not ever_connected:
                    self.post(ConnectFailed(self._reason(exc)))
                    return
                attempt += 1
                await self._wait_to_retry(self._reason(exc), attempt)
                continue
            finally:
                self.connected = False
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
            self._outbox.put_nowait({"type": p.BYE})
        self._outbox.put_nowait(None)

    def send(self, message: dict[str, Any]) -> bool:
        """Queue a message for the server; False (and nothing sent) while the link is down."""
        if not self.connected:
            return False
        if "id" not in message:
            message = {**message, "id": next(self._ids)}
        self._requests[message["id"]] = message["type"]
        if message["type"] in MOVE_REQUESTS:
            self._moves_asked += 1
        if len(self._requests) > MAX_REQUESTS:
            # An action that went through is answered by the next update, with no reply_to:
            # its request is forgotten here when newer ones crowd it out.
            del self._requests[next(iter(self._requests))]
        self._outbox.put_nowait(message)
        return True

    # -- one session: handshake, then read and write until it drops --------------------------

    async def _session(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reconnect: bool
    ) -> None:
        decoder = p.FrameDecoder(max_frame=p.MAX_SERVER_FRAME)
        self._outbox = asyncio.Queue()
        writer.write(
            p.encode(
                {
                    "type": p.HELLO,
                    "version": p.PROTOCOL_VERSION,
                    "name": self.name,
                    "client": CLIENT_NAME,
                },
                p.MAX_CLIENT_FRAME,
            )
        )
        await writer.drain()
        welcome = await self._read_one(reader, decoder, CONNECT_TIMEOUT)
        if welcome["type"] == p.ERROR:
            self._fail_handshake(welcome)
        if welcome["type"] != p.WELCOME:
            raise Fatal(f"{self.address} did not answer like a tonk-server")
        self.server = welcome["server"]
        self.name = welcome["name"]
        limits = welcome.get("limits", {})
        heartbeat = limits.get("heartbeat")
        if isinstance(heartbeat, int | float) and heartbeat > 0:
            self._heartbeat = float(heartbeat)
        self._writer = writer
        self.connected = True
        self._moves_asked = 0  # what a lost link carried is not coming back
        self.post(Connected(self.server, self.name, self.address, reconnect))
        self._after_welcome()
        writing = asyncio.create_task(self._write_loop(writer))
        try:
            # What came with the welcome (the lobby's first page, sent right after it).
            for message in decoder.messages():
                self._handle(message)
            while True:
                # The server pings a silent connection every heartbeat: hearing nothing for
                # well over that means the link is dead even if TCP has not noticed.
                data = await asyncio.wait_for(reader.read(65536), self._heartbeat * 3 + 5)
                if not data:
                    raise LinkDown("the server closed the connection")
                decoder.feed(data)
                for message in decoder.messages():
                    self._handle(message)
        except TimeoutError:
            raise LinkDown("the server stopped answering") from None
        finally:
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writing

    async def _read_one(
        self, reader: asyncio.StreamReader, decoder: p.FrameDecoder, timeout: float
    ) -> dict[str, Any]:
        while True:
            message = decoder.next_message()
            if message is not None:
                return message
            try:
                data = await asyncio.wait_for(reader.read(65536), timeout)
            except TimeoutError:
                raise LinkDown("the server did not answer the handshake") from None
            if not data:
                raise LinkDown("the server closed the connection during the handshake")
            decoder.feed(data)

    def _fail_handshake(self, error: Mapping[str, Any]) -> None:
        code = error.get("code")
        if code == p.VERSION_MISMATCH:
            theirs = error.get("version")
            raise Fatal(
                f"{self.address} speaks tonk protocol version {theirs}; this client speaks "
                f"version {p.PROTOCOL_VERSION}. Use a tonk-client of the server's version."
            )
        if code in RETRYABLE:
            raise LinkDown(str(error.get("message", code)))
        if code == p.BAD_NAME:
            raise Fatal(f"the server refused the name {self.name!r}: {error.get('message')}")
        raise Fatal(f"{self.address} refused the connection: {error.get('message', code)}")

    async def _write_loop(self, writer: asyncio.StreamWriter) -> None:
        while True:
            message = await self._outbox.get()
            if message is None:
                writer.close()
                return
            writer.write(p.encode(message, p.MAX_CLIENT_FRAME))
            await writer.drain()

    def _after_welcome(self) -> None:
        """Where to go once connected: back to our table, or the table to create, or a seat
        we held before this client started, or the lobby."""
        table = self.table
        # (In the lobby the server sends the list of tables by itself, and then its changes.)
        self._lobby.clear()
        self._asked_after.clear()
        self.joining = True
        if table is not None and table.seat is not None and self.token:
            self._send({"type": p.RESUME, "table": table.table_id, "token": self.token})
            return
        if table is not None:
            self._send({"type": p.WATCH, "table": table.table_id})
            return
        if self.create is not None:
            request, self.create = self.create, None
            self.create_table(request)
            return
        if self.tokens is not None and not self._resumed_from_disk:
            self._resumed_from_disk = True
            seats = [s for s in self.tokens.seats(self.address, self.name) if not s.left]
            if seats:
                record = seats[0]
                self.token = record.token
                self._send({"type": p.RESUME, "table": record.table, "token": record.token})
                return
        self.joining = False

    def _send(self, message: dict[str, Any]) -> None:
        self.send(message)

    # -- requests from the screens -----------------------------------------------------------

    def create_table(self, request: TableRequest) -> bool:
        self._pending_bots = request.bot_strategies() or None
        return self.send({"type": p.CREATE_TABLE, **request.fields})

    def leave(self) -> bool:
        """Back to the lobby. During a session the server keeps the seat (and plays it), so
        the token is kept, marked as left: sitting at that table again resumes the seat."""
        if self.table is not None and self.tokens is not None:
            self.tokens.mark_left(self.address, self.table.table_id, self.name)
        return self.send({"type": p.LEAVE})

    def sit(self, table_id: int) -> bool:
        """Take a seat at a table, or take back the one we hold there."""
        if self.tokens is not None:
            for record in self.tokens.seats(self.address, self.name):
                if record.table == table_id:
                    self.token = record.token
                    return self.send({"type": p.RESUME, "table": table_id, "token": record.token})
        return self.send({"type": p.SIT, "table": table_id})

    # -- what the server says -----------------------------------------------------------------

    def _handle(self, message: dict[str, Any]) -> None:
        try:
            p.validate_server(message)
        except p.ProtocolError as exc:
            raise Fatal(
                f"the server sent a message this client cannot read: {exc.message}"
            ) from None
        kind = message["type"]
        if kind != p.ERROR and "reply_to" in message:
            self._requests.pop(message["reply_to"], None)  # answered
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(message)

    def _on_ping(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"type": p.PONG}
        if "n" in message:
            reply["n"] = message["n"]
        self._outbox.put_nowait(reply)

    def _on_goodbye(self, message: dict[str, Any]) -> None:
        raise LinkDown(f"the server said goodbye: {message['message']}")

    def _on_error(self, message: dict[str, Any]) -> None:
        code = message["code"]
        text = message["message"]
        request = self._requests.pop(message.get("reply_to", -1), "")
        if message["fatal"]:
            if code in RETRYABLE:
                raise LinkDown(text)
            if code == p.VERSION_MISMATCH:
                self._fail_handshake(message)
            raise Fatal(f"the server closed the connection: {text}")
        if request == p.RESUME or code == p.BAD_TOKEN:
            # The seat we remembered is gone (the table closed, or the token is old).
            table = self.table
            if table is not None and self.tokens is not None:
                self.tokens.forget(self.address, table.table_id, self.name)
            elif self.tokens is not None:
                for record in self.tokens.seats(self.address, self.name):
                    if record.token == self.token:
                        self.tokens.forget(self.address, record.table, self.name)
            self.table = None
            self.token = None
            self.joining = False
            self.post(LeftTable(f"Your seat could not be taken back: {text}"))
            self._post_lobby()
            return
        if code == p.SEAT_RESUMED_ELSEWHERE:
            self.table = None
            self.token = None
            self.post(LeftTable("Your seat was taken back from another terminal."))
            return
        if request in (p.CREATE_TABLE, p.WATCH, p.SIT) and self.joining:
            self.joining = False
            self._post_lobby()
        if request == p.CREATE_TABLE:
            self._pending_bots = None
        if request in MOVE_REQUESTS:
            self._moves_asked = max(0, self._moves_asked - 1)
        if request == p.SIT and code == p.ALREADY_STARTED:
            # A seat we hold there would have been taken back with its token (see `sit`).
            text = (
                f"That table's game has started: w watches it. You, {self.name}, hold no "
                "seat there from this computer account to take back."
            )
        if self.table is not None:
            self._add_log(Text(f"Not allowed: {text}", style="bold red"))
            self._publish()
        self.post(ServerRefused(code, text, message.get("detail", "")))

    def _on_tables(self, message: dict[str, Any]) -> None:
        """A page of the list: every table with an id above `after`, up to its last one (to
        the end when there are no `more`); what we knew of that stretch is replaced."""
        self._requests.pop(message.get("reply_to", -1), None)
        after = message["after"]
        self._asked_after.discard(after)
        page = [table_info(t) for t in message["tables"]]
        last = page[-1].number if page and message["more"] else None
        for number in list(self._lobby):
            if number > after and (last is None or number <= last):
                del self._lobby[number]
        for info in page:
            self._lobby[info.number] = info
        if last is not None and last not in self._asked_after:
            # The next page: the server paces them, so a long list comes in a few steps.
            self._asked_after.add(last)
            self._send({"type": p.LIST_TABLES, "after": last})
        self._post_lobby()

    def _on_lobby(self, message: dict[str, Any]) -> None:
        """The tables changed since the last `lobby` message."""
        for data in message["tables"]:
            info = table_info(data)
            self._lobby[info.number] = info
        for number in message["removed"]:
            self._lobby.pop(number, None)
        self._post_lobby()

    def _post_lobby(self) -> None:
        held = (
            {record.table for record in self.tokens.seats(self.address, self.name)}
            if self.tokens is not None
            else set()
        )
        self.tables = tuple(
            replace(info, mine=info.number in held) for _, info in sorted(self._lobby.items())
        )
        self.post(LobbyChanged(self.tables, show=not self.joining and self.table is None))

    def _on_seated(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.joining = False
        table_id = message["table"]
        self.token = message["token"]
        if self.table is None or self.table.table_id != table_id:
            self.table = _Table(table_id, message["seat"])
            self._log.clear()
        else:
            self.table.seat = message["seat"]
        if self.tokens is not None:
            self.tokens.remember(self.address, SeatRecord(table_id, self.token, self.name))
        if self._pending_bots is not None:
            strategies = self._pending_bots
            self._pending_bots = None
            for strategy in strategies:
                self._send({"type": p.ADD_BOT, "strategy": strategy})

    def _on_watching(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.joining = False
        table_id = message["table"]
        if self.table is None or self.table.table_id != table_id:
            self.table = _Table(table_id, None)
            self._log.clear()
        self.token = None

    def _on_left(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.table = None
        self.token = None
        self.post(LeftTable())

    def _on_table(self, message: dict[str, Any]) -> None:
        info = message["table"]
        table = self.table
        if table is None or info.get("id") != table.table_id:
            if table is None and self.joining:
                # The table created without sitting: we are still in the lobby.
                self.joining = False
                self._post_lobby()
            return
        first = not table.info
        if self._back_on_my_turn(table.info, info):
            # Back during our own turn: the server starts the turn clock again.
            timer = info.get("turn_timer")
            table.deadline = self.now() + float(timer) if timer else table.deadline
        if not first:
            for line in seat_news(
                table.info.get("players", []), info.get("players", []), table.seat
            ):
                self._add_log(Text(line))
        table.info = info
        for player in info.get("players", []):
            name = player.get("name")
            if name is None or player.get("kind") == "empty":
                continue
            balance = int(player.get("balance", 0))
            table.balances[name] = balance
            series = table.series.setdefault(name, [balance])
            if series[-1] != balance:
                series.append(balance)
        if first:
            self._add_log(Text(f"At table {info.get('name', '')!s}."))
        self._publish()

    def _on_ledger(self, message: dict[str, Any]) -> None:
        """The ledger's newest hands (after `resume` or `watch`): each balance over them,
        drawn back from the balance now, replaces what this connection had seen."""
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        names = [str(name) for name in message["names"]]
        hands = [nets for _, nets in message["hands"] if len(nets) == len(names)]
        balances = {str(k): int(v) for k, v in message["balances"].items()}
        table.balances.update(balances)
        for i, name in enumerate(names):
            balance = balances.get(name, 0)
            series = [balance - sum(int(nets[i]) for nets in hands)]
            for nets in hands:
                series.append(series[-1] + int(nets[i]))
            table.series[name] = series
        table.last_net = {name: int(hands[-1][i]) for i, name in enumerate(names)} if hands else {}
        table.hands_seen = len(hands)
        self._publish()

    def _on_cut(self, message: dict[str, Any]) -> None:
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        names = self._names()
        line = Text("Cut for the deal:")
        for number, round_ in enumerate(message["rounds"]):
            if number:
                line.append("; a tie, so they cut again:")
            for seat, card in enumerate(round_):
                if card is None:
                    continue
                line.append(f" {names[seat] if seat < len(names) else seat} ")
                with contextlib.suppress(ValueError):
                    line.append_text(card_text(parse_card(card), self.style))
        dealer = message["dealer"]
        who = names[dealer] if dealer < len(names) else str(dealer)
        line.append(f". {who} {'deal' if who == 'You' else 'deals'} first.")
        self._add_log(line)
        self._publish()

    def _on_update(self, message: dict[str, Any]) -> None:
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        hand, start = message["hand"], message["from"]
        if table.resyncing and start > 0:
            return  # the whole hand is on its way
        expected = table.events if hand == table.hand else 0
        if start > expected:
            # We missed part of the hand: ask for all of it again.
            self._resync()
            return
        table.resyncing = False
        view = SeatView.from_dict(message["view"])
        events = [Event.from_dict(e) for e in message["events"]]
        table.hand = hand
        table.view = view
        table.seat = view.seat
        table.events = view.event_count
        deadline = message.get("deadline")
        table.deadline = None if deadline is None else self.now() + float(deadline)
        if hand != table.logged_hand:
            table.logged_hand, table.logged_events = hand, 0
            table.turn_line = None
        names = self._names()
        for index, event in enumerate(events, start=start):
            if index >= table.logged_events:  # not logged already
                self._log_event(table, view, hand, event, names, live=start > 0)
        table.logged_events = max(table.logged_events, start + len(events))
        self._publish()

    def _log_event(
        self,
        table: _Table,
        view: SeatView,
        hand: int,
        event: Event,
        names: list[str],
        live: bool = True,
    ) -> None:
        """Log one event of the hand: a turn's moves on one line, said as made for the
        player when the server made them (the seat away); what the hand's ending line says
        (a drop, going out) is not said twice. `live`: the event is new, not part of the
        whole hand sent again."""
        kind = event.kind
        if kind == "deal" and event.seat == 0:
            dealer = names[view.dealer]
            verb = "deal" if dealer == "You" else "deals"
            self._add_log(Text(f"Hand {hand}: {dealer} {verb}.", style="bold"))
        if kind == "turn":
            table.turn_line = None
            return
        if kind == "hand_end":
            table.turn_line = None
            settlement = view.settlement
            # A tonk on the deal was logged with its cards already.
            if settlement is not None and settlement.ending is not Ending.DEAL_TONK:
                self._add_log(Text(ending_line(settlement, names), style="bold"))
            return
        played_for = kind in MOVES and self._played_for(table, event.seat, live)
        if kind in ENDED_BY and not played_for:
            return
        phrase = move_phrase(event, names, view.seat, self.style, self._spread_owner)
        if phrase is None or event.seat is None:
            line = event_line(event, names, view.seat, self.style, self._spread_owner)
            if line is not None:
                self._add_log(line)
            return
        open_line = table.turn_line
        if open_line is not None and open_line[0] == event.seat:
            _, number, text = open_line
            text = text.copy().append(", ").append_text(phrase)
            number = self._amend_log(number, text)
        else:
            who = names[event.seat] if event.seat < len(names) else f"seat {event.seat + 1}"
            if played_for:
                text = Text(f"Played for {'you' if who == 'You' else who}: ", style="italic")
            else:
                text = Text(f"{who} ")
            text.append_text(phrase)
            number = self._add_log(text)
        table.turn_line = (event.seat, number, text)

    def _played_for(self, table: _Table, seat: int | None, live: bool) -> bool:
        """Whether the move just come from `seat` was made for it by the server: for our
        own seat, a move we did not ask for; for another (or in a hand sent again), a seat
        shown away."""
        if seat is None:
            return False
        if seat == table.seat and live:
            if self._moves_asked > 0:
                self._moves_asked -= 1
                return False
            return True
        players = table.info.get("players", [])
        return seat < len(players) and players[seat].get("status") == "away"

    def _on_hand_end(self, message: dict[str, Any]) -> None:
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        settlement = Settlement.from_dict(message["settlement"])
        net: dict[str, int] = {}
        for payer, payee, amount in message["payments"]:
            net[payer] = net.get(payer, 0) - amount
            net[payee] = net.get(payee, 0) + amount
        table.last_net = net
        table.hands_seen += 1
        for name, balance in message["balances"].items():
            table.balances[name] = balance
            table.series.setdefault(name, [balance - net.get(name, 0)]).append(balance)
        names = list(message["names"])
        balances = [message["balances"].get(name) for name in names]
        if table.seat is not None and table.seat < len(names):
            names[table.seat] = "You"
        unit = str(table.info.get("unit", ""))
        self._publish()
        self.post(HandEnded(message["hand"], settlement, names, unit, balances))

    def _on_session_end(self, message: dict[str, Any]) -> None:
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        table.session_over = True
        standings = [(str(name), int(balance)) for name, balance in message["standings"]]
        unit = str(table.info.get("unit", ""))
        why = {"abandoned": ": every player had left"}.get(str(message.get("reason")), ".")
        self._add_log(Text(f"The session is over{why}", style="bold"))
        if self.tokens is not None:
            self.tokens.forget(self.address, table.table_id, self.name)
        self._publish()
        self.post(SessionEnded(str(table.info.get("name", "")), message["hands"], standings, unit))

    def _on_chat(self, message: dict[str, Any]) -> None:
        table = self.table
        if table is None or message["table"] != table.table_id:
            return
        self._add_log(chat_line(message["name"], message["seat"], message["text"]), chat=True)
        self._publish()

    # -- helpers ---------------------------------------------------------------------------

    def _resync(self) -> None:
        table = self.table
        if table is None:
            return
        table.hand = 0
        table.events = 0
        table.resyncing = True
        if table.seat is not None and self.token:
            self._send({"type": p.RESUME, "table": table.table_id, "token": self.token})
        else:
            self._send({"type": p.WATCH, "table": table.table_id})

    def _back_on_my_turn(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Our seat was away in `old` and is not in `new`, and it is our turn."""
        table = self.table
        seat = table.seat if table is not None else None
        view = table.view if table is not None else None
        if seat is None or view is None or not view.my_turn:
            return False

        def status(info: Mapping[str, Any]) -> object:
            players = info.get("players", [])
            return players[seat].get("status") if seat < len(players) else None

        return status(old) == "away" and status(new) != "away"

    def _names(self) -> list[str]:
        table = self.table
        if table is None:
            return []
        names = [
            str(player.get("name") or f"seat {player.get('seat', i) + 1}")
            for i, player in enumerate(table.info.get("players", []))
        ]
        if table.view is not None and len(names) < table.view.players:
            names += [f"seat {i + 1}" for i in range(len(names), table.view.players)]
        if table.seat is not None and table.seat < len(names):
            names[table.seat] = "You"
        return names

    def _spread_owner(self, spread_id: int) -> tuple[int, str] | None:
        table = self.table
        if table is None or table.view is None:
            return None
        for spread in table.view.spreads:
            if spread.id == spread_id:
                return spread.owner, spread.kind.value
        return None

    def _add_log(self, text: Text, chat: bool = False) -> int:
        number = next(self._log_numbers)
        self._log.append(LogLine(number, text, chat))
        if len(self._log) > LOG_KEEP:
            del self._log[: len(self._log) - LOG_KEEP]
        return number

    def _amend_log(self, number: int, text: Text) -> int:
        """Replace the text of log line `number` (one of the newest), keeping its place; a
        line no longer among the newest is added again instead. Returns the line's number."""
        for at in range(len(self._log) - 1, max(-1, len(self._log) - 9), -1):
            line = self._log[at]
            if line.number == number:
                self._log[at] = LogLine(number, text, line.chat)
                return number
        return self._add_log(text)

    def state(self) -> TableState | None:
        """The table as the screens see it now."""
        table = self.table
        if table is None:
            return None
        info = table.info
        try:
            rules = HouseRules.from_dict(info.get("rules", {}))
        except RulesError:
            rules = HouseRules()
        players = tuple(
            PlayerInfo(
                seat=int(player.get("seat", i)),
                name=str(player.get("name") or f"seat {i + 1}"),
                connected=player.get("status") != "disconnected",
                away=player.get("status") == "away",
                bot=player.get("kind") == "bot",
            )
            for i, player in enumerate(info.get("players", []))
            if player.get("kind") != "empty"
        )
        seat = table.seat
        return TableState(
            table_id=str(table.table_id),
            name=str(info.get("name", "")),
            rules=rules,
            stake=int(info.get("stake", 1)),
            unit=str(info.get("unit", "")),
            seat=seat,
            players=players,
            view=table.view,
            hand_number=table.hand,
            balances=dict(table.balances),
            series={name: tuple(values) for name, values in table.series.items()},
            last_net=dict(table.last_net),
            log=tuple(self._log),
            creator=info.get("creator") is not None and info.get("creator") == seat,
            playing=info.get("state") == "playing",
            turn_deadline=table.deadline,
            session_over=table.session_over,
            paused=str(info.get("paused") or ""),
            seats=int(info.get("seats", len(players))),
        )

    def _publish(self) -> None:
        state = self.state()
        if state is not None:
            self.post(TableChanged(state))


def table_info(data: Mapping[str, Any]) -> TableInfo:
    """A lobby line from the server's table map."""
    players = tuple(
        str(player["name"])
        for player in data.get("players", [])
        if player.get("name") and player.get("kind") != "empty"
    )
    rules_name = str(data.get("rules_name") or data.get("rules", {}).get("preset", ""))
    return TableInfo(
        table_id=str(data.get("id", "")),
        name=str(data.get("name", "")),
        rules=rules_name,
        stake=int(data.get("stake", 1)),
        unit=str(data.get("unit", "")),
        seats_taken=int(data.get("taken", 0)),
        seats=int(data.get("seats", 0)),
        playing=data.get("state") == "playing",
        spectators=int(data.get("spectators", 0)),
        players=players,
        state=str(data.get("state", "")),
    )


def chat_line(name: str, seat: int | None, text: str) -> Text:
    """A chat line in the log. A player's name is unique among the seats, but somebody
    watching may have any name, a player's too: a spectator's line is marked as one, so that
    nobody watching can pass for a player (`<Bob> hi` is Bob in his seat; `[Bob, watching] hi`
    is somebody watching who goes by Bob)."""
    line = Text()
    if seat is None:
        line.append(f"[{name}, watching] ", style="italic magenta")
    else:
        line.append(f"<{name}> ", style="bold cyan")
    line.append(text)
    return line


def stake_text(info: TableInfo) -> str:
    return amount_text(info.stake, info.unit)
