"""What the client knows of the server, without I/O: the lobby, the table it sits at or watches,
the ledger and the log. `receive()` takes each decoded message from the server; what to show
comes out as plain reports (`take_reports()`, `reports.py`), what to send back as messages for
the server (`take_outgoing()`). The connection around it only moves bytes and reconnects."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from tonk.shared import protocol as p
from tonk.shared.actions import Event
from tonk.shared.ledger import LedgerEntry
from tonk.shared.rules import HouseRules, RulesError
from tonk.shared.settlement import Settlement
from tonk.shared.view import SeatView

from .lobbylist import LobbyList
from .render import CardStyle
from .reports import (
    Connected,
    HandEnded,
    LeftTable,
    LobbyChanged,
    Report,
    ServerRefused,
    SessionEnded,
    TableChanged,
)
from .seatnews import seat_news
from .state import TableInfo, TableState
from .tablelog import TableLog, chat_line
from .tableseen import TableSeen
from .tokens import SeatRecord, SeatTokens

CLIENT_NAME = "tonk-client 0.1.0"
#: Requests remembered (by id) for reading the errors that answer them.
MAX_REQUESTS = 256

#: The messages that are moves in the hand: an event of our seat's that none of these asked
#: for is a move the server made for us.
MOVE_REQUESTS = frozenset({p.DRAW_STOCK, p.TAKE_DISCARD, p.SPREAD, p.HIT, p.DISCARD, p.DROP})

# Fatal errors after which trying again is worthwhile (the server restarts, a hiccup).
RETRYABLE = frozenset({p.SERVER_SHUTTING_DOWN, p.IDLE_TIMEOUT, p.RATE_LIMITED, p.HANDSHAKE_TIMEOUT})


class Fatal(Exception):
    """The server cannot be used: a reason for a person, after which the client stops."""


class LinkDown(Exception):
    """The connection dropped or the server said goodbye: try again."""


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
    ) -> None:
        self.name = name
        self.address = address
        self.clock = clock
        self.tokens = tokens
        self.create = create
        self.style = style or CardStyle()
        self.server = ""
        self.connected = False
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
        self._ids = itertools.count(1)
        self._requests: dict[int, str] = {}
        self._resumed_from_disk = False
        self._moves_asked = 0  # moves sent whose event has not come back (nor a refusal)
        self._outgoing: list[dict[str, Any]] = []
        self._reports: list[Report] = []
        # The last rules read: a view carrying the same rules is not read again.
        self._rules: tuple[Mapping[str, Any], HouseRules] | None = None

    # -- what comes out ----------------------------------------------------------------------

    def take_outgoing(self) -> list[dict[str, Any]]:
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

    def hello(self) -> dict[str, Any]:
        """The first message of a connection."""
        return {
            "type": p.HELLO,
            "version": p.PROTOCOL_VERSION,
            "name": self.name,
            "client": CLIENT_NAME,
        }

    def welcome(self, message: dict[str, Any], reconnect: bool) -> None:
        """The server's answer to `hello`: connected, then on to a table or the lobby."""
        if message["type"] == p.ERROR:
            self._fail_handshake(message)
        if message["type"] != p.WELCOME:
            raise Fatal(f"{self.address} did not answer like a tonk-server")
        self.server = message["server"]
        self.name = message["name"]
        heartbeat = message.get("limits", {}).get("heartbeat")
        if isinstance(heartbeat, int | float) and heartbeat > 0:
            self.heartbeat = float(heartbeat)
        self.connected = True
        self._moves_asked = 0  # what a lost link carried is not coming back
        self.report(Connected(self.server, self.name, self.address, reconnect))
        self._after_welcome()

    def link_lost(self) -> None:
        self.connected = False

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

    def _after_welcome(self) -> None:
        """Where to go once connected: back to our table, or the table to create, or a seat
        we held before this client started, or the lobby."""
        table = self.table
        # (In the lobby the server sends the list of tables by itself, and then its changes.)
        self.lobby.clear()
        self.joining = True
        if table is not None and table.seat is not None and self.token:
            self.send({"type": p.RESUME, "table": table.table_id, "token": self.token})
            return
        if table is not None:
            self.send({"type": p.WATCH, "table": table.table_id})
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
                self.send({"type": p.RESUME, "table": record.table, "token": record.token})
                return
        self.joining = False

    # -- requests ------------------------------------------------------------------------------

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
        self._outgoing.append(message)
        return True

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

    # -- what the server says ------------------------------------------------------------------

    def receive(self, message: dict[str, Any]) -> None:
        """One message from the server, decoded: the one way in after the handshake."""
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
        self._outgoing.append(reply)

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
            self.report(LeftTable(f"Your seat could not be taken back: {text}"))
            self._post_lobby()
            return
        if code == p.SEAT_RESUMED_ELSEWHERE:
            self.table = None
            self.token = None
            self.report(LeftTable("Your seat was taken back from another terminal."))
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
            self.log.add(Text(f"Not allowed: {text}", style="bold red"))
            self._publish()
        self.report(ServerRefused(code, text, message.get("detail", "")))

    def _on_tables(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        after = self.lobby.page(message)
        if after is not None:
            self.send({"type": p.LIST_TABLES, "after": after})
        self._post_lobby()

    def _on_lobby(self, message: dict[str, Any]) -> None:
        self.lobby.changes(message)
        self._post_lobby()

    def _post_lobby(self) -> None:
        tokens = self.tokens
        held = [] if tokens is None else [r.table for r in tokens.seats(self.address, self.name)]
        self.tables = self.lobby.tables(held)
        self.report(LobbyChanged(self.tables, show=not self.joining and self.table is None))

    def _on_seated(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.joining = False
        table_id = message["table"]
        self.token = message["token"]
        if self.table is None or self.table.table_id != table_id:
            self.table = TableSeen(table_id, message["seat"])
            self.log.clear()
        else:
            self.table.seat = message["seat"]
        if self.tokens is not None:
            self.tokens.remember(self.address, SeatRecord(table_id, self.token, self.name))
        if self._pending_bots is not None:
            strategies = self._pending_bots
            self._pending_bots = None
            for strategy in strategies:
                self.send({"type": p.ADD_BOT, "strategy": strategy})

    def _on_watching(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.joining = False
        table_id = message["table"]
        if self.table is None or self.table.table_id != table_id:
            self.table = TableSeen(table_id, None)
            self.log.clear()
        self.token = None

    def _on_left(self, message: dict[str, Any]) -> None:
        self._requests.pop(message.get("reply_to", -1), None)
        self.table = None
        self.token = None
        self.report(LeftTable())

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
            table.deadline = self.clock() + float(timer) if timer else table.deadline
        if not first:
            for line in seat_news(
                table.info.get("players", []), info.get("players", []), table.seat
            ):
                self.log.add(Text(line))
        table.info = info
        table.rules = self._read_rules(info.get("rules", {}))
        table.ledger.seated(info.get("players", []))
        if first:
            self.log.add(Text(f"At table {info.get('name', '')!s}."))
        self._publish()

    def _read_rules(self, data: Mapping[str, Any]) -> HouseRules:
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

    def _on_ledger(self, message: dict[str, Any]) -> None:
        """The ledger's newest hands (after `resume` or `watch`): each balance over them,
        drawn back from the balance now, replaces what this connection had seen."""
        table = self._table_of(message)
        if table is None:
            return
        names = [str(name) for name in message["names"]]
        hands = [nets for _, nets in message["hands"] if len(nets) == len(names)]
        balances = {str(k): int(v) for k, v in message["balances"].items()}
        table.ledger.ledger(names, hands, balances)
        self._publish()

    def _on_cut(self, message: dict[str, Any]) -> None:
        table = self._table_of(message)
        if table is None:
            return
        self.log.cut(message["rounds"], message["dealer"], self._names())
        self._publish()

    def _on_update(self, message: dict[str, Any]) -> None:
        table = self._table_of(message)
        if table is None:
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
        data = message["view"]
        known = self._rules
        rules = known[1] if known is not None and known[0] == data["rules"] else None
        view = SeatView.from_dict(data, rules)
        if rules is None:
            self._rules = (data["rules"], view.rules)
        events = [Event.from_dict(e) for e in message["events"]]
        table.hand = hand
        table.view = view
        table.seat = view.seat
        table.events = view.event_count
        deadline = message.get("deadline")
        table.deadline = None if deadline is None else self.clock() + float(deadline)
        if hand != table.logged_hand:
            table.logged_hand, table.logged_events = hand, 0
            self.log.turn_line = None
        names = self._names()
        live = start > 0

        def played_for(seat: int | None) -> bool:
            return self._played_for(table, seat, live)

        for index, event in enumerate(events, start=start):
            if index >= table.logged_events:  # not logged already
                self.log.event(view, hand, event, names, played_for, self._spread_owner)
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
        players = table.info.get("players", [])
        return seat < len(players) and players[seat].get("status") == "away"

    def _on_hand_end(self, message: dict[str, Any]) -> None:
        table = self._table_of(message)
        if table is None:
            return
        settlement = Settlement.from_dict(message["settlement"])
        payments = tuple((str(a), str(b), int(n)) for a, b, n in message["payments"])
        entry = LedgerEntry(message["hand"], settlement.ending.value, payments)
        table.ledger.settled(entry, message["balances"])
        names = list(message["names"])
        balances = [message["balances"].get(name) for name in names]
        if table.seat is not None and table.seat < len(names):
            names[table.seat] = "You"
        unit = str(table.info.get("unit", ""))
        self._publish()
        self.report(HandEnded(message["hand"], settlement, tuple(names), unit, tuple(balances)))

    def _on_session_end(self, message: dict[str, Any]) -> None:
        table = self._table_of(message)
        if table is None:
            return
        table.session_over = True
        standings = tuple((str(name), int(balance)) for name, balance in message["standings"])
        unit = str(table.info.get("unit", ""))
        why = {"abandoned": ": every player had left"}.get(str(message.get("reason")), ".")
        self.log.add(Text(f"The session is over{why}", style="bold"))
        if self.tokens is not None:
            self.tokens.forget(self.address, table.table_id, self.name)
        self._publish()
        self.report(
            SessionEnded(str(table.info.get("name", "")), message["hands"], standings, unit)
        )

    def _on_chat(self, message: dict[str, Any]) -> None:
        table = self._table_of(message)
        if table is None:
            return
        self.log.add(chat_line(message["name"], message["seat"], message["text"]), chat=True)
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
            self.send({"type": p.RESUME, "table": table.table_id, "token": self.token})
        else:
            self.send({"type": p.WATCH, "table": table.table_id})

    def _back_on_my_turn(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        table = self.table
        return table is not None and table.back_on_my_turn(old, new)

    def _table_of(self, message: Mapping[str, Any]) -> TableSeen | None:
        """Our table, when `message` is about it (one about a table we have left is late)."""
        table = self.table
        return table if table is not None and message["table"] == table.table_id else None

    def _names(self) -> list[str]:
        return self.table.names() if self.table is not None else []

    def _spread_owner(self, spread_id: int) -> tuple[int, str] | None:
        return self.table.spread_owner(spread_id) if self.table is not None else None

    def state(self) -> TableState | None:
        """The table as the screens see it now."""
        table = self.table
        return table.state(tuple(self.log.lines)) if table is not None else None

    def _publish(self) -> None:
        state = self.state()
        if state is not None:
            self.report(TableChanged(state))
