"""What the client knows of the server, without I/O: the lobby, the table it sits at or watches,
the ledger and the log. `receive()` takes each decoded message from the server and reads it
once into its typed value (tonk.shared.wire.messages); the handshake, resuming after a reconnect and
resyncing after a gap are the shared link's (tonk.shared.wire.link). What to show comes out as plain
reports (`take_reports()`, `reports.py`), what to send back as typed client messages
(`take_outgoing()`).
The connection around it only moves bytes and reconnects."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar, get_args

from rich.text import Text
from tonk.shared.game.history import HistoryStep
from tonk.shared.game.ledger import LedgerEntry
from tonk.shared.game.rules import HouseRules, RulesError
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.waiting import away_text
from tonk.shared.records import replaced
from tonk.shared.wire import link as ln
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.handlers import Handlers

from ..logstore import KeptLog
from ..tablerequest import TableRequest
from ..text.render import CardStyle, ending_line, payment_lines, short_names
from ..tokens import SeatRecord, SeatTokens
from .lobbylist import LobbyList, named
from .replay import names_by_step
from .reports import (
    Connected,
    HandEnded,
    HandReplayed,
    HistoryListed,
    JoinNotice,
    LeftTable,
    LobbyChanged,
    RematchChanged,
    Report,
    ServerRefused,
    SessionEnded,
    TableChanged,
)
from .seatnews import seat_news
from .state import TableInfo, TableState
from .tablelog import TableLog, chat_line
from .tableseen import TableSeen

#: The server's messages about one table, which the model reads only while it is at it.
TableNews = (
    m.LedgerMessage
    | m.DealCommit
    | m.DealReveal
    | m.Cut
    | m.Update
    | m.HandEnd
    | m.SessionEnd
    | m.RematchStatus
    | m.ChatLine
    | m.HistoryPage
    | m.HistoryHandSteps
    | m.AwaySummary
)

CLIENT_NAME = "tonk-client 0.1.0"
#: Requests remembered (by id) for reading the errors that answer them.
MAX_REQUESTS = 256

#: The messages that are moves in the hand: an event of our seat's that none of these asked
#: for is a move the server made for us.
MOVE_REQUESTS = frozenset(cls.TYPE for cls in get_args(m.ActionRequest))

# Fatal errors after which trying again is worthwhile (the server restarts, a hiccup).
RETRYABLE = frozenset({p.SERVER_SHUTTING_DOWN, p.IDLE_TIMEOUT, p.RATE_LIMITED, p.HANDSHAKE_TIMEOUT})


class Fatal(Exception):
    """The server cannot be used: a reason for a person, after which the client stops."""


class LinkDown(Exception):
    """The connection dropped or the server said goodbye: try again."""


__all__ = ["CLIENT_NAME", "ClientModel", "Fatal", "LinkDown", "TableRequest"]


_S = TypeVar("_S", bound=m.ServerMessage)
#: A receiver: a method of ClientModel that reads a server message into what the client knows.
Receiver: TypeAlias = Callable[["ClientModel", _S], None]

#: The model's receiver of each server message (its methods marked `@receives`).
RECEIVERS: Handlers[m.ServerMessage, Receiver[Any]] = Handlers("receivers")


def receives(*kinds: type[_S]) -> Callable[[Receiver[_S]], Receiver[_S]]:
    """Mark a method of ClientModel the receiver of the server's messages of `kinds` (one
    receiver each; the method's message is of those kinds, as mypy checks)."""

    def mark(receiver: Receiver[_S]) -> Receiver[_S]:
        RECEIVERS.add(kinds, receiver)
        return receiver

    return mark


class ClientModel:
    """One client's knowledge of the server, fed the server's messages one at a time.

    The connection calls `hello()` and `welcome()` for the handshake, `receive()` for each
    message after it, `link_lost()` when the link drops, and `send()` (with `create_table`,
    `sit`, `leave`) for what the screens ask; after each it sends `take_outgoing()` and hands
    the App `take_reports()`. `Fatal` and `LinkDown` raised from these end the session."""

    def __init__(
        self,
        name: str,
        address: str,
        clock: Callable[[], float],
        *,
        tokens: SeatTokens | None = None,
        create: TableRequest | None = None,
        style: CardStyle | None = None,
        join: str | None = None,
        guest: bool = False,
        touch: bool = False,
    ) -> None:
        self.name = name
        self.address = address
        self.clock = clock
        self.tokens = tokens
        self.create = create
        # A table asked for by name (--table, the door's `join`), gone to once the lobby's
        # list has come whole; then the table it found, while the server answers.
        self.join = join
        self._joining_table: TableInfo | None = None
        self._join_line: str | None = None  # said when that table's first news comes
        self.guest = guest  # an SSH door guest: seats are held by name, not by this account
        self.touch = touch  # the web door's page on a touch screen: its words name buttons
        self.style = style or CardStyle()
        self.server = ""
        self.connected = False
        self.link = ln.ClientLink(name, CLIENT_NAME)
        self._reconnect = False
        self.heartbeat = 15.0
        self.tables: tuple[TableInfo, ...] = ()
        self.lobby = LobbyList()  # the server's tables as far as we know them
        # Asked the server for a table (to resume, watch or create) and not yet answered: the
        # lobby's list is kept, but the lobby screen is not to be shown for it.
        self.joining = False
        self.table: TableSeen | None = None
        self.token: str | None = None
        self._pending_bots: tuple[str, ...] | None = None
        self.log = TableLog(self.style)
        # Where our seats' logs are kept (none: not kept), and what was last written there.
        self.logs = tokens.log_store() if tokens is not None else None
        if self.logs is not None:
            self.logs.prune()
        self._log_kept: tuple[int, int, int, Text] | None = None
        self._requests: dict[int, str] = {}
        self._resumed_from_disk = False
        self._moves_asked = 0  # moves sent whose event has not come back (nor a refusal)
        self._seat_asked: tuple[int, int] | None = None  # take_bot_seat's table and seat
        self._outgoing: list[m.ClientMessage] = []
        self._reports: list[Report] = []
        # The steps come so far of the hand of the history asked for (hand, steps): a hand
        # longer than one answer comes in several.
        self._replaying: tuple[int, list[HistoryStep]] | None = None
        # The last rules read: a view carrying the same rules is not read again.
        self._rules: tuple[Mapping[str, m.RuleValue], HouseRules] | None = None

    # -- what comes out ----------------------------------------------------------------------

    def take_outgoing(self) -> list[m.ClientMessage]:
        """The messages for the server since the last call, in order."""
        out, self._outgoing = self._outgoing, []
        return out

    def take_reports(self) -> list[Report]:
        """What the screens are to show since the last call, in order."""
        out, self._reports = self._reports, []
        return out

    def report(self, report: Report) -> None:
        self._reports.append(report)

    # -- the handshake and the link ------------------------------------------------------------

    def hello(self) -> m.Hello:
        """The first message of a connection."""
        return self.link.hello()

    def welcome(self, data: m.Wire, reconnect: bool) -> None:
        """The server's answer to `hello`: connected, then on to a table or the lobby."""
        self._reconnect = reconnect
        try:
            message = self._read(data)
        except Fatal:
            message = None
        if message is None:
            raise Fatal(f"{self.address} did not answer like a tonk-server")
        self._take(message)

    def link_lost(self) -> None:
        self.connected = False
        self.link.connection_lost()

    def _welcomed(self, welcome: m.Welcome) -> None:
        self.server = welcome.server
        self.name = welcome.name
        heartbeat = welcome.limits.get("heartbeat")
        if isinstance(heartbeat, int | float) and heartbeat > 0:
            self.heartbeat = float(heartbeat)
        self.connected = True
        self._moves_asked = 0  # what a lost link carried is not coming back
        self._seat_asked = None
        self.report(Connected(self.server, self.name, self.address, self._reconnect))
        # (In the lobby the server sends the list of tables by itself, and then its changes.)
        self.lobby.clear()
        self.joining = True

    def _fail_handshake(self, error: m.Error) -> None:
        code = error.code
        if code == p.VERSION_MISMATCH:
            raise Fatal(
                f"{self.address} speaks tonk protocol version {error.version}; this client "
                f"speaks version {p.PROTOCOL_VERSION}. Use a tonk-client of the server's version."
            )
        if code in RETRYABLE:
            raise LinkDown(error.message)
        if code == p.BAD_NAME:
            raise Fatal(f"the server refused the name {self.name!r}: {error.message}")
        raise Fatal(f"{self.address} refused the connection: {error.message}")

    def _after_welcome(self) -> None:
        """Where to go once connected when the link is not taking back our table: the table
        to create, or a seat we held before this client started, or the lobby."""
        if self.create is not None:
            request, self.create = self.create, None
            self.create_table(request)
            return
        if self.join is not None:
            self._resumed_from_disk = True  # the table asked for, not the seat held last
            return  # (still joining: `_on_tables` goes on once the list is whole)
        if self.tokens is not None and not self._resumed_from_disk:
            self._resumed_from_disk = True
            seats = [s for s in self.tokens.seats(self.address, self.name) if not s.left]
            if seats:
                record = seats[0]
                self.token = record.token
                self.send(m.Resume(record.table, record.token))
                return
        self.joining = False

    # -- requests ------------------------------------------------------------------------------

    def send(self, message: m.ClientMessage) -> bool:
        """Queue a message for the server; False (and nothing sent) while the link is down."""
        if not self.connected:
            return False
        message = self.link.number(message)
        assert message.id is not None
        self._requests[message.id] = message.TYPE
        if message.TYPE in MOVE_REQUESTS:
            self._moves_asked += 1
        if isinstance(message, m.TakeBotSeat):
            self._seat_asked = (message.table, message.seat)
        if len(self._requests) > MAX_REQUESTS:
            # An action that went through is answered by the next update, with no reply_to:
            # its request is forgotten here when newer ones crowd it out.
            del self._requests[next(iter(self._requests))]
        self._outgoing.append(message)
        return True

    def create_table(self, request: TableRequest) -> bool:
        self._pending_bots = request.bot_strategies() or None
        return self.send(request.message)

    def leave(self) -> bool:
        """Back to the lobby. During a session the server keeps the seat (and plays it), so
        the token is kept, marked as left: sitting at that table again resumes the seat."""
        table = self.table
        if table is not None and self.tokens is not None:
            if table.session_over:
                # Over: leaving it leaves the rematch offered too; there is no seat to keep.
                self.tokens.forget(self.address, table.table_id, self.name)
                if self.logs is not None:
                    self.logs.forget(self.address, self.name, table.table_id)
            else:
                self.tokens.mark_left(self.address, table.table_id, self.name)
        return self.send(m.Leave())

    def sit(self, table_id: int) -> bool:
        """Take a seat at a table, or take back the one we hold there."""
        if self.tokens is not None:
            for record in self.tokens.seats(self.address, self.name):
                if record.table == table_id:
                    self.token = record.token
                    return self.send(m.Resume(table_id, record.token))
        return self.send(m.Sit(table_id))

    def refused_here(self, reason: str) -> None:
        """A refusal for the table's log: the server's, or a move's refused before it was
        sent (the core's reason, in the words the server refuses it with), so that it stays
        to be read after its notice has gone."""
        if self.table is not None:
            self.log.add(Text(f"Not allowed: {reason}", style="bold red"))
            self._publish()

    # -- what the server says ------------------------------------------------------------------

    def receive(self, data: m.Wire) -> None:
        """One message from the server, decoded: the one way in after the handshake. A
        message of a type this client does not know is skipped (PROTOCOL.md, "Versions")."""
        message = self._read(data)
        if message is not None:
            self._take(message)

    def _read(self, data: m.Wire) -> m.ServerMessage | None:
        """The typed message of a decoded map (None: a type this client does not know; a
        field it does not know is left out); an update's view's rules are read as the
        table's were (once)."""
        try:
            return m.read_known(data, self._read_rules)
        except p.ProtocolError as exc:
            raise Fatal(
                f"the server sent a message this client cannot read: {exc.message}"
            ) from None

    def _take(self, message: m.ServerMessage) -> None:
        """A message through the link (the handshake, pings, resume and resync are its), then
        what it delivers to the table and the lobby."""
        for out in self.link.receive(message):
            match out:
                case ln.Deliver(delivered):
                    self._dispatch(delivered)
                case ln.Send(request) if isinstance(request, m.Pong):
                    self._outgoing.append(request)
                case ln.Send(request):
                    assert isinstance(request, m.ClientMessage)
                    self.send(request)
                case ln.Welcomed(_, welcome) if welcome is not None:
                    self._welcomed(welcome)
                    if self.link.place is None:
                        self._after_welcome()
                case ln.Refused(error):
                    if not isinstance(message, m.Error):
                        raise Fatal(f"{self.address} did not answer like a tonk-server")
                    self._fail_handshake(error)
                case ln.Closed():
                    pass  # the goodbye, delivered just before, says it

    def _dispatch(self, message: m.ServerMessage) -> None:
        if not isinstance(message, m.Error):
            reply_to = getattr(message, "reply_to", None)
            if reply_to is not None:
                self._requests.pop(reply_to, None)  # answered
        receiver = RECEIVERS.get(type(message))
        if receiver is not None:  # (None: a message ignored, below)
            receiver(self, message)

    @receives(m.Standings, m.CoachAdvice)
    def _answered(self, message: m.ServerMessage) -> None:
        """A server's answer the screens take as it is: the App's message for it is derived
        from its class (tonk.client.messages.wrapped; the App's `on_standings`)."""
        self.report(message)

    @receives(m.Goodbye)
    def _on_goodbye(self, message: m.Goodbye) -> None:
        raise LinkDown(f"the server said goodbye: {message.message}")

    @receives(m.Error)
    def _on_error(self, message: m.Error) -> None:
        code = message.code
        text = message.message
        request = self._requests.pop(message.reply_to, "") if message.reply_to is not None else ""
        if request == m.DealValue.TYPE and not message.fatal and message.reply_to is not None:
            # Our value for a deal came after it: not a fault, said with the deal's check.
            if self.table is not None:
                self.table.deals.refused(message.reply_to)
            return
        if message.fatal:
            if code in RETRYABLE:
                raise LinkDown(text)
            if code == p.VERSION_MISMATCH:
                self._fail_handshake(message)
            raise Fatal(f"the server closed the connection: {text}")
        if request == m.Sit.TYPE and self._joining_table is not None:
            # The table named filled up or started meanwhile: watch it instead.
            self._watch_named(self._joining_table, started=code == p.ALREADY_STARTED)
            return
        if request in (m.Watch.TYPE, m.Sit.TYPE, m.Resume.TYPE):
            self._joining_table = self._join_line = None
        if request == m.TakeBotSeat.TYPE:
            self._seat_asked = None
            if self.table is not None and self.table.awaiting_seat is not None:
                self.table.awaiting_seat = None
                self._publish()
        if request == m.Resume.TYPE or code == p.BAD_TOKEN:
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
            self.link.forget()
            if code == p.NO_SUCH_TABLE:
                note = "The table you sat at has closed since: its session ended, or all left."
            elif code == p.BAD_TOKEN:  # (the server says why: a seat given to a bot, say)
                note = f"{text[:1].upper()}{text[1:]}."
            else:
                note = f"Your seat could not be taken back: {text}"
            self.report(LeftTable(note))
            self._post_lobby()
            return
        if code == p.SEAT_RESUMED_ELSEWHERE:
            self.table = None
            self.token = None
            self.report(LeftTable("Your seat was taken back from another terminal."))
            return
        if request in (m.CreateTable.TYPE, m.Watch.TYPE, m.Sit.TYPE) and self.joining:
            self.joining = False
            self._post_lobby()
        if request == m.CreateTable.TYPE:
            self._pending_bots = None
        if request in MOVE_REQUESTS:
            self._moves_asked = max(0, self._moves_asked - 1)
        if request == m.Sit.TYPE and code == p.ALREADY_STARTED:
            # A seat we hold there would have been taken back with its token (see `sit`).
            where = (
                "under your name at this server's door"
                if self.guest
                else "from this computer account"
            )
            watches = "the Watch button watches it" if self.touch else "w watches it"
            text = (
                f"That table's game has started: {watches}. You, {self.name}, hold no "
                f"seat there {where} to take back."
            )
        self.refused_here(text)
        self.report(ServerRefused(code, text, message.detail or "", request))

    @receives(m.Tables)
    def _on_tables(self, message: m.Tables) -> None:
        after = self.lobby.page(message)
        if after is not None:
            self.send(m.ListTables(after))
        if self.join is not None and self.lobby.whole and self.connected:
            self._join_named(self.join)
        self._post_lobby()

    def _join_named(self, wanted: str) -> None:
        """Go to the table named `wanted`: our own seat there back, a free seat, or watch it;
        with no such table, the lobby, saying so."""
        self.join = None
        table = named(self._lobby_tables(), wanted)
        if table is None:
            self.joining = False
            self.report(
                JoinNotice(
                    f"There is no table named {wanted} on this server: here are the tables "
                    "there are (n creates one).",
                    found=False,
                )
            )
            return
        self._joining_table = table
        if table.mine:
            self._join_line = f"Back in your seat at {table.name}."
            self.sit(table.number)
        elif table.free:
            self._join_line = f"You sit at {table.name}: a seat was free."
            self.send(m.Sit(table.number))
        else:
            self._watch_named(table, started=table.playing)

    def _watch_named(self, table: TableInfo, *, started: bool) -> None:
        if started:
            self._join_line = f"{table.name} is full: you are watching (its game has started)."
        else:
            self._join_line = (
                f"{table.name} is full: you are watching. A seat frees when someone leaves."
            )
        self._joining_table = None
        self.send(m.Watch(table.number))

    @receives(m.LobbyChanges)
    def _on_lobby(self, message: m.LobbyChanges) -> None:
        self.lobby.changes(message)
        self._post_lobby()

    def _lobby_tables(self) -> tuple[TableInfo, ...]:
        """The lobby's tables, those where we hold a seat marked."""
        tokens = self.tokens
        held = [] if tokens is None else [r.table for r in tokens.seats(self.address, self.name)]
        return self.lobby.tables(held)

    def _post_lobby(self) -> None:
        self.tables = self._lobby_tables()
        self.report(LobbyChanged(self.tables, show=not self.joining and self.table is None))

    @receives(m.Seated)
    def _on_seated(self, message: m.Seated) -> None:
        self.joining = False
        table_id = message.table
        self.token = message.token
        if self.table is None or self.table.table_id != table_id:
            self.table = TableSeen(table_id, message.seat)
            self.log.clear()
            self._restore_log(self.table)
        else:
            if self.table.seat is None:  # watching: a bot's seat asked for is ours now
                self.log.add(Text(self._took_seat(self.table, message.seat), style="bold"))
            self.table.seat = message.seat
            self.table.awaiting_seat = None
        self._seat_asked = None
        if self.tokens is not None:
            self.tokens.remember(self.address, SeatRecord(table_id, self.token, self.name))
        if self._pending_bots is not None:
            strategies = self._pending_bots
            self._pending_bots = None
            for strategy in strategies:
                self.send(m.AddBot(strategy))

    def _took_seat(self, table: TableSeen, seat: int) -> str:
        """What the log says as we take seat `seat` from its bot, watching the table."""
        info = table.info
        if info is None or not 0 <= seat < len(info.players):
            return "You sit at the table."
        bot = info.players[seat]
        if bot.holds_for is not None and bot.holds_for == self.name:
            return f"You are back in your own seat at {info.name}, from {bot.name}."
        return f"You sit at {info.name}, in {bot.name or 'the bot'}'s seat."

    @receives(m.Watching)
    def _on_watching(self, message: m.Watching) -> None:
        self.joining = False
        table_id = message.table
        if self.table is None or self.table.table_id != table_id:
            self.table = TableSeen(table_id, None)
            self.log.clear()
            self._restore_log(self.table)
        elif self.table.seat is not None:
            # Our seat went to a bot while we were away: we watch the table from now on.
            self.table.seat = None
            if self.tokens is not None:
                self.tokens.forget(self.address, table_id, self.name)
            self.log.add(Text("Your seat was given to a bot: you are watching.", style="bold"))
        self.token = None

    @receives(m.Left)
    def _on_left(self, message: m.Left) -> None:
        self.table = None
        self.token = None
        self.report(LeftTable())

    @receives(m.TableMessage)
    def _on_table(self, message: m.TableMessage) -> None:
        info = message.table
        table = self.table
        if table is None or info.id != table.table_id:
            if table is None and self.joining:
                # The table created without sitting: we are still in the lobby.
                self.joining = False
                self._post_lobby()
            return
        old = table.info
        if old is not None and self._back_on_my_turn(old, info):
            # Back during our own turn: the server starts the turn clock again.
            timer = info.turn_timer
            table.deadline = self.clock() + float(timer) if timer else table.deadline
        if old is not None:
            for line in seat_news(old.players, info.players, table.seat):
                self.log.add(Text(line))
        table.info = info
        table.info_at = self.clock()
        asked = self._seat_asked
        if asked is not None and asked[0] == table.table_id and table.seat is None:
            table.awaiting_seat = asked[1]  # (the answer during a hand: ours as it ends)
        table.rules = self._read_rules(info.rules)
        table.ledger.seated(info.players)
        if old is None:
            # (A log kept from before, restored: the player is back, and the line says so.)
            back = bool(self.log.lines)
            self.log.add(Text(f"{'Back at' if back else 'At'} table {info.name}."))
            if back and table.seat is None:
                holder = next((pl for pl in info.players if pl.holds_for == self.name), None)
                if holder is not None:
                    went = f"Your seat went to {holder.name}: you are watching."
                    self.log.add(Text(went, style="bold"))
        joined, self._join_line = self._join_line, None
        self._joining_table = None
        if old is None and joined is not None:
            self.log.add(Text(joined, style="bold"))
            self.report(JoinNotice(joined))
        self._publish()

    def _read_rules(self, data: Mapping[str, m.RuleValue]) -> HouseRules:
        """House rules from the wire, read once: the table's and each view's are the same
        rules, so a view (or a table map) carrying the rules read last is not read again."""
        known = self._rules
        if known is not None and known[0] == data:
            return known[1]
        try:
            rules = HouseRules.from_dict(dict(data))
        except RulesError:
            rules = HouseRules()
        self._rules = (data, rules)
        return rules

    @receives(m.LedgerMessage)
    def _on_ledger(self, message: m.LedgerMessage) -> None:
        """The ledger's newest hands (after `resume` or `watch`): each balance over them,
        drawn back from the balance now, replaces what this connection had seen."""
        table = self._table_of(message)
        if table is None:
            return
        names = message.names
        hands = [nets for _, nets in message.hands if len(nets) == len(names)]
        table.ledger.ledger(names, hands, message.balances)
        self._publish()

    @receives(m.DealCommit)
    def _on_deal_commit(self, message: m.DealCommit) -> None:
        """The server's commitment for a deal: our value for it goes back at once."""
        table = self._table_of(message)
        if table is None:
            return
        value = table.deals.committed(message, seated=table.seat is not None)
        if value is not None:
            request = self.link.number(m.DealValue(table.table_id, message.hand, value))
            if self.send(request):
                table.deals.sent(message.hand, request.id)

    @receives(m.DealReveal)
    def _on_deal_reveal(self, message: m.DealReveal) -> None:
        """A hand's secret: its deal is checked from what we were shown (the `hand_end` that
        follows shows the result); a deal that does not check is said in the log too."""
        table = self._table_of(message)
        if table is None:
            return
        checked = table.deals.revealed(message, table.table_id)
        if not checked.ok:
            self.log.add(Text(checked.line, style="bold red"))
            self._publish()

    @receives(m.Cut)
    def _on_cut(self, message: m.Cut) -> None:
        table = self._table_of(message)
        if table is None:
            return
        table.deals.cut(message)
        self.log.cut(message.rounds, message.dealer, self._log_names())
        self._publish()

    @receives(m.Update)
    def _on_update(self, message: m.Update) -> None:
        # (The link has asked for the whole hand again when this one showed a gap.)
        table = self._table_of(message)
        if table is None:
            return
        hand, start, view = message.hand, message.start, message.view
        table.deals.update(message)
        table.hand = hand
        table.view = view
        table.seat = view.seat
        deadline = message.deadline
        table.deadline = None if deadline is None else self.clock() + float(deadline)
        if hand != table.logged_hand:
            table.logged_hand, table.logged_events = hand, 0
            self.log.turn_line = None
        names = self._log_names()
        live = start > 0
        holders = message.holders if start == 0 else ()

        told_hand, told = table.played_for
        told = told if told_hand == hand else frozenset()
        index = start

        def played_for(seat: int | None) -> bool:
            # (a move the server said it made for us while we were away: `away_summary`)
            if index in told and seat == table.seat:
                return True
            return self._played_for(table, seat, live and index not in told)

        events = message.events
        for index, event in enumerate(events, start=start):
            if index >= table.logged_events:  # not logged already
                said = self._log_names_at(holders, index) if holders else names
                self.log.event(view, hand, event, said, played_for, self._spread_owner)
        table.logged_events = max(table.logged_events, start + len(events))
        self._publish()

    def _played_for(self, table: TableSeen, seat: int | None, live: bool) -> bool:
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
        return table.away(seat)

    @receives(m.HandEnd)
    def _on_hand_end(self, message: m.HandEnd) -> None:
        table = self._table_of(message)
        if table is None:
            return
        settlement = message.settlement
        entry = LedgerEntry(message.hand, settlement.ending.value, message.payments)
        table.ledger.settled(entry, message.balances)
        names = list(message.names)
        balances = [message.balances.get(name) for name in names]
        seen = list(names)
        if table.seat is not None and table.seat < len(names):
            seen[table.seat] = "You"
        unit = table.info.unit if table.info is not None else ""
        table.last_hand = last_hand_words(message.hand, settlement, seen, unit)
        self._publish()
        view = table.view
        spreads = tuple(view.spreads) if view is not None and table.hand == message.hand else ()
        checked = table.deals.checked.get(message.hand)
        self.report(
            HandEnded(
                message.hand,
                settlement,
                tuple(names),
                unit,
                tuple(balances),
                seat=table.seat,
                spreads=spreads,
                deck_line="" if checked is None else checked.line,
                deck_ok=checked is None or checked.ok,
            )
        )

    @receives(m.SessionEnd)
    def _on_session_end(self, message: m.SessionEnd) -> None:
        table = self._table_of(message)
        if table is None:
            return
        again = table.session_over  # sent again on taking the seat back during the offer
        table.session_over = True
        info = table.info
        unit, name = (info.unit, info.name) if info is not None else ("", "")
        abandoned = message.reason is m.SessionEndReason.ABANDONED
        if not again:
            why = ": every player had left" if abandoned else "."
            self.log.add(Text(f"The session is over{why}", style="bold"))
        if self.tokens is not None and message.rematch is None:
            # (While a rematch is offered the token is kept: a client started again takes
            # the seat back to answer; it goes once the offer is decided.)
            self.tokens.forget(self.address, table.table_id, self.name)
        self._publish()
        combined = message.combined
        view = table.view
        if not table.last_hand and view is not None and view.settlement is not None:
            # Back at the table during the rematch offer: the last hand's end was before we
            # came back, and its view (sent on our return) holds its settlement.
            table.last_hand = last_hand_words(table.hand, view.settlement, table.names(), unit)
        self.report(
            SessionEnded(
                name,
                message.hands,
                tuple(message.standings),
                unit,
                table_id=table.table_id,
                settle_up=message.settle_up,
                sessions=1 if combined is None else combined.sessions,
                combined=() if combined is None else combined.standings,
                combined_settle_up=() if combined is None else combined.settle_up,
                rematch=message.rematch,
                last_hand=table.last_hand,
                abandoned=abandoned,
                timed=message.reason is m.SessionEndReason.MINUTES,
                seated=table.seat is not None,
            )
        )

    @receives(m.RematchStatus)
    def _on_rematch_status(self, message: m.RematchStatus) -> None:
        table = self._table_of(message)
        if table is None:
            return
        if message.outcome != "waiting" and self.tokens is not None:
            self.tokens.forget(self.address, table.table_id, self.name)
        self.report(
            RematchChanged(
                table.table_id, message.seats, message.outcome, message.seconds, message.next
            )
        )

    @receives(m.HistoryPage)
    def _on_history(self, message: m.HistoryPage) -> None:
        table = self._table_of(message)
        if table is None:
            return
        name = table.info.name if table.info is not None else ""
        # Our own name in the hands we played is "You", as at the table (a spectator's name
        # may be anybody's: it is not).
        players = table.info.players if table.info is not None else ()
        seat = table.seat
        mine = players[seat].name if seat is not None and seat < len(players) else None
        hands = tuple(
            replaced(hand, names=tuple("You" if n == mine else n for n in hand.names))
            for hand in message.hands
        )
        self.report(
            HistoryListed(
                message.table,
                name,
                hands,
                message.total,
                message.more,
                message.unit,
                tuple(message.balances.items()),
                message.settle_up,
            )
        )

    @receives(m.HistoryHandSteps)
    def _on_history_hand(self, message: m.HistoryHandSteps) -> None:
        """Steps of a hand of the history: the rest asked for until every step is here."""
        table = self._table_of(message)
        if table is None:
            return
        replaying = self._replaying
        if message.start == 0:
            replaying = self._replaying = (message.hand, list(message.steps))
        elif replaying is None or replaying[0] != message.hand:
            return  # the rest of a hand no longer asked for
        elif len(replaying[1]) == message.start:
            replaying[1].extend(message.steps)
        steps = replaying[1]
        if len(steps) < message.total and message.steps:
            self.send(m.HistoryHand(message.table, message.hand, len(steps)))
            return
        self._replaying = None
        shown = tuple(names_by_step(message.seating, steps))
        unit = table.info.unit if table.info is not None else ""
        self.report(
            HandReplayed(message.table, message.hand, message.seat, shown, tuple(steps), unit)
        )

    @receives(m.AwaySummary)
    def _on_away_summary(self, message: m.AwaySummary) -> None:
        """Back from away: what happened meanwhile, in the log; and which moves of the hand
        in play were made for us, so that the log says so when the hand is sent again."""
        table = self._table_of(message)
        if table is None:
            return
        table.played_for = (message.hand, frozenset(message.played_for))
        unit = table.info.unit if table.info is not None else ""
        text = away_text(message.turns, message.hands, message.net, unit, self.name)
        self.log.add(Text(text, style="bold"))
        self._publish()

    @receives(m.ChatLine)
    def _on_chat(self, message: m.ChatLine) -> None:
        table = self._table_of(message)
        if table is None:
            return
        self.log.add(chat_line(message.name, message.seat, message.text), chat=True)
        self._publish()

    # -- helpers ---------------------------------------------------------------------------

    def _back_on_my_turn(self, old: m.TableSummary, new: m.TableSummary) -> bool:
        table = self.table
        return table is not None and table.back_on_my_turn(old, new)

    def _table_of(self, message: TableNews) -> TableSeen | None:
        """Our table, when `message` is about it (one about a table we have left is late)."""
        table = self.table
        return table if table is not None and message.table == table.table_id else None

    def _names(self) -> list[str]:
        return self.table.names() if self.table is not None else []

    def _log_names(self) -> list[str]:
        """The names the log says moves by: each by its first word where that is the only
        seat's name beginning so (`Ada` for `Ada (bot)`: the players' panel says who is a
        bot), so that a move is one line of the log's narrow column."""
        return short_names(self._names())

    def _log_names_at(self, holders: Sequence[tuple[int, int, str]], index: int) -> list[str]:
        """The log's names as they were at event `index` of a hand in which seats changed
        hands (`holders`: the update's, each holder of such a seat from its first event): a
        seat's event before its present holder's time is named by who held it then."""
        now = self._names()
        names = list(now)
        for seat in {seat for seat, _, _ in holders}:
            if not 0 <= seat < len(names):
                continue
            held = [(start, name) for at, start, name in holders if at == seat]
            then = max(((start, name) for start, name in held if start <= index), default=None)
            if then is not None and then[0] != max(start for start, _ in held):
                names[seat] = then[1]  # (the present holder keeps their name: "You", say)
        return short_names(names)

    def _spread_owner(self, spread_id: int) -> tuple[int, str] | None:
        return self.table.spread_owner(spread_id) if self.table is not None else None

    def state(self) -> TableState | None:
        """The table as the screens see it now."""
        table = self.table
        if table is None:
            return None
        log = self.log
        return table.state(
            tuple(log.lines),
            tuple(sorted(log.last_turns.items())),
            log.moves_beside(self._log_names()),
            tuple(log.pile) if log.pile_followed else (),
            self.name,
        )

    def _keep_log(self) -> None:
        """Write our seat's log to disk as far as it changed (see logstore)."""
        store, table = self.logs, self.table
        if store is None or table is None or table.seat is None:
            return
        lines = self.log.lines
        newest = (table.table_id, len(lines), lines[-1].number, lines[-1].text) if lines else None
        if newest == self._log_kept:
            return
        self._log_kept = newest
        kept = KeptLog(tuple(lines), table.logged_hand, table.logged_events)
        store.save(self.address, self.name, table.table_id, kept)

    def _restore_log(self, table: TableSeen) -> None:
        """Our log at `table` as it was kept, when this client (started again) comes back to
        it: to our seat, or to watch it after our seat went to a bot (the log is our own)."""
        store = self.logs
        kept = None if store is None else store.load(self.address, self.name, table.table_id)
        if kept is not None:
            self.log.restore(kept.lines)
            table.logged_hand, table.logged_events = kept.hand, kept.events

    def _publish(self) -> None:
        self._keep_log()
        state = self.state()
        if state is not None:
            self.report(TableChanged(state))


#: Delivered after the handshake with nothing to show (a welcome again, a pong), or answered
#: by the link itself (a ping).
RECEIVERS.ignores(m.Welcome, m.ServerPong, m.ServerPing)
#: Every server message has one receiver, or is ignored on purpose (TypeError at import).
RECEIVERS.check(m.SERVER_TYPES.values())


def last_hand_words(
    hand: int, settlement: Settlement, seen: list[str], unit: str
) -> tuple[str, ...]:
    """A hand's ending and its payments in words, names as this seat saw them ("You")."""
    return (f"Hand {hand}: {ending_line(settlement, seen)}", *payment_lines(settlement, seen, unit))
