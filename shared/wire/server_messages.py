"""The messages the server sends, as typed values (PROTOCOL.md, "Server to client"), the
table map they carry, and `read_server`, which reads one from a decoded map."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

from ..game.actions import Event
from ..game.history import HandSummary, HistoryStep, Occupants
from ..game.rules import HouseRules
from ..game.settlement import Settlement
from ..game.standings import Standing, UnitNet
from ..game.view import SeatView
from . import protocol as p
from .advice import Advice
from .wire import (
    MAPPING,
    TUPLE,
    Codec,
    RuleValue,
    SeatKind,
    SeatStatus,
    ServerMessage,
    SessionEndReason,
    TableState,
    Wire,
    WireValue,
    declared,
    field,
    nullable,
    record_map,
    rows,
    tuple_of,
    wire_value,
)
from .wire import message_type as _message

# -- server to client: the table map ----------------------------------------------------------


@wire_value
class PlayerSummary(WireValue):
    """One seat in the table map."""

    seat: int
    name: str | None
    kind: SeatKind = field(codec=Codec(None, SeatKind))
    strategy: str | None
    status: SeatStatus = field(codec=Codec(None, SeatStatus))
    stake: int
    balance: int
    # A disconnected player's seat: seconds until it is played for (or, before the start,
    # given up); the players who voted to play for it now. Sent only when there are some.
    played_for_in: float | None = None
    votes: tuple[int, ...] = field(default=(), omit=True, codec=TUPLE)
    # A bot's seat given it during the session: the player whose seat it was (sent only then).
    holds_for: str | None = None


_NO_CHANGES: Mapping[str, RuleValue] = MappingProxyType({})


@wire_value
class TableSummary(WireValue):
    """The table map (PROTOCOL.md, "table"): in `table`, `tables` and `lobby`."""

    id: int
    name: str
    rules: Mapping[str, RuleValue]
    rules_name: str
    stake: int
    unit: str
    seats: int
    taken: int
    free: int
    state: TableState = field(codec=Codec(None, TableState))
    spectators: int
    turn_timer: float | None
    hands: int | None
    minutes: float | None
    bot_pause: float
    hands_played: int
    creator: int | None
    dealer: int | None
    paused: str | None
    players: tuple[PlayerSummary, ...] = field(
        codec=tuple_of(Codec(PlayerSummary.to_wire, PlayerSummary.from_wire))
    )
    #: The options that differ from the preset (what the `+` of `rules_name` stands for),
    #: with their values, in the rules reference's order.
    changes: Mapping[str, RuleValue] = field(
        default=_NO_CHANGES, required=True, codec=Codec(dict, None)
    )
    #: May anybody take a bot's seat here (take_bot_seat), or only who has played at it?
    open_bot_seats: bool = field(default=True)


_SUMMARY = Codec(TableSummary.to_wire, TableSummary.from_wire)
_SUMMARIES = tuple_of(_SUMMARY)


# -- server to client ---------------------------------------------------------------------------


@_message(p.WELCOME)
class Welcome(ServerMessage):
    version: int = field(p.integer(0, p.MAX_ID))
    server: str = field(p.string(64))
    name: str = field(p.string(p.MAX_NAME_LEN))
    limits: Mapping[str, int | float] = field(p.MAP)
    dev: bool = field(p.BOOL)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.ERROR)
class Error(ServerMessage):
    """An error; `fatal` ones close the connection and never carry `reply_to`."""

    code: str = field(p.string(64))
    message: str = field(p.string(4096))
    fatal: bool = field(p.BOOL)
    detail: str | None = field(p.string(64), default=None)
    reply_to: int | None = field(p.ID_RANGE, default=None)
    version: int | None = field(p.integer(0, p.MAX_ID), default=None)  # version_mismatch's

    @classmethod
    def of(
        cls,
        code: str,
        message: str,
        *,
        reply_to: int | None = None,
        detail: str | None = None,
        fatal: bool | None = None,
        version: int | None = None,
    ) -> Error:
        """An error, fatal by default for the codes that close the connection; a fatal one
        drops `reply_to` (it answers the connection, not one request)."""
        is_fatal = code in p.FATAL_CODES if fatal is None else fatal
        return cls(code, message, is_fatal, detail, None if is_fatal else reply_to, version)


@_message(p.TABLES)
class Tables(ServerMessage):
    """A page of the lobby's list (the server packs it from summaries packed once: lobby.py)."""

    tables: tuple[TableSummary, ...] = field(p.LIST, shows="list of table", codec=_SUMMARIES)
    after: int = field(p.integer(0, p.MAX_ID))
    more: bool = field(p.BOOL)
    total: int = field(p.integer(0, p.MAX_ID))
    reply_to: int | None = field(p.ID_RANGE, default=None)

    def to_wire(self) -> Wire:
        # Written out: on the wire `tables` comes after `total`, while every caller builds a
        # page as (tables, after, more, total), and a declaration has one order for both.
        out: Wire = {"type": p.TABLES, "after": self.after, "more": self.more}
        out["total"] = self.total
        out["tables"] = [table.to_wire() for table in self.tables]
        if self.reply_to is not None:
            out["reply_to"] = self.reply_to
        return out


@_message(p.LOBBY)
class LobbyChanges(ServerMessage):
    """The tables changed since the last `lobby` message, and the ids of those gone."""

    tables: tuple[TableSummary, ...] = field(p.LIST, shows="list of table", codec=_SUMMARIES)
    removed: tuple[int, ...] = field(p.LIST, shows="list of int", codec=TUPLE)


@_message(p.TABLE)
class TableMessage(ServerMessage):
    table: TableSummary = field(p.MAP, shows="table", codec=_SUMMARY)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.SEATED)
class Seated(ServerMessage):
    table: int = field(p.TABLE_RANGE)
    seat: int = field(p.integer(0, 4))
    token: str = field(p.string(p.MAX_TOKEN_LEN))
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.WATCHING)
class Watching(ServerMessage):
    table: int = field(p.TABLE_RANGE)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.LEFT)
class Left(ServerMessage):
    table: int = field(p.TABLE_RANGE)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.CUT)
class Cut(ServerMessage):
    """The cut for the first dealer: each round's card by seat (None: not cutting)."""

    table: int = field(p.TABLE_RANGE)
    rounds: tuple[tuple[str | None, ...], ...] = field(
        p.LIST, shows="list of list of (str | nil)", codec=tuple_of(TUPLE)
    )
    dealer: int = field(p.integer(0, 4))


@_message(p.UPDATE)
class Update(ServerMessage):
    """A hand's events from the `start`-th on, and the view after them, as one seat sees them
    (the server encodes each seat's whole, the spectators' once per change)."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    start: int = field(p.integer(0, p.MAX_ID), key="from")
    events: tuple[Event, ...] = field(
        p.LIST, shows="list of event", codec=tuple_of(Codec(Event.to_dict, Event.from_dict))
    )
    view: SeatView = field(p.MAP, shows="view", codec=Codec(SeatView.to_dict, SeatView.from_dict))
    deadline: float | None = field(p.number(0, math.inf, nullable=True), required=False)
    reply_to: int | None = field(p.ID_RANGE, default=None)
    # An update from 0 of a hand in which seats changed hands: every holder of each such seat,
    # from the event that was first theirs (sent only then).
    holders: tuple[tuple[int, int, str], ...] = field(
        p.LIST,
        shows="list of [seat: int, from: int, name: str]",
        default=(),
        omit=True,
        codec=rows(3),
    )

    @classmethod
    def from_wire(cls, data: Wire, read_rules: RulesReader | None = None) -> Update:
        # Written out: the view's rules are read by the client's reader (one reading per
        # table), which the declaration's reader has no way to be given.
        if read_rules is None:
            return cls._read(data)  # type: ignore[no-any-return]
        view = data["view"]
        return cls(
            data["table"],
            data["hand"],
            data["from"],
            tuple(Event.from_dict(event) for event in data["events"]),
            SeatView.from_dict(view, read_rules(view["rules"])),
            data["deadline"],
            data.get("reply_to"),
            tuple((seat, start, name) for seat, start, name in data.get("holders", ())),
        )


@_message(p.HAND_END)
class HandEnd(ServerMessage):
    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    settlement: Settlement = field(
        p.MAP, shows="settlement", codec=Codec(Settlement.to_dict, Settlement.from_dict)
    )
    names: tuple[str, ...] = field(p.LIST, shows="list of str", codec=TUPLE)
    payments: tuple[tuple[str, str, int], ...] = field(
        p.LIST, shows="list of [payer: str, payee: str, amount: int]", codec=rows(3)
    )  # payer, payee, amount
    balances: Mapping[str, int] = field(p.MAP, shows="map str → int", codec=MAPPING)


#: One payment that squares a ledger: (payer, payee, amount), by name.
Transfer: TypeAlias = tuple[str, str, int]


def _transfers(data: list[list[object]]) -> tuple[Transfer, ...]:
    out: list[Transfer] = []
    for payer, payee, amount in data:
        if not isinstance(payer, str) or not isinstance(payee, str) or type(amount) is not int:
            raise ValueError(f"a payment is [payer, payee, amount], not {[payer, payee, amount]}")
        out.append((payer, payee, amount))
    return tuple(out)


_TRANSFERS = Codec(rows(3).encode, _transfers)


@wire_value
class Combined(WireValue):
    """The standings added up across the sessions of a chain of rematches (`session_end`'s
    `combined`): how many sessions, the totals most ahead first, and their settling up."""

    sessions: int
    standings: tuple[tuple[str, int], ...] = field(codec=rows(2))
    settle_up: tuple[Transfer, ...] = field(codec=_TRANSFERS)


@_message(p.SESSION_END)
class SessionEnd(ServerMessage):
    table: int = field(p.TABLE_RANGE)
    hands: int = field(p.integer(0, p.MAX_ID))
    standings: tuple[tuple[str, int], ...] = field(
        p.LIST, shows="list of [name: str, balance: int]", codec=rows(2)
    )  # most ahead first
    reason: SessionEndReason = field(p.string(64), codec=Codec(None, SessionEndReason))
    # The fewest payments that square this session (always sent).
    settle_up: tuple[Transfer, ...] = field(
        p.LIST,
        shows="list of [payer: str, payee: str, amount: int]",
        default=(),
        required=True,
        codec=_TRANSFERS,
    )
    # Across a chain of rematches (None: the first session).
    combined: Combined | None = field(
        p.Field("map", nullable=True),
        default=None,
        omit=False,
        codec=nullable(Codec(Combined.to_wire, Combined.from_wire)),
    )
    # Seconds a rematch offer waits (None: none offered).
    rematch: float | None = field(p.number(0, math.inf, nullable=True), default=None, omit=False)


#: A rematch's seats: (name, answer) each, the answer read as text.
_SEAT_ANSWERS = Codec(
    rows(2).encode, lambda data: tuple((str(name), str(answer)) for name, answer in data)
)


@_message(p.REMATCH_STATUS)
class RematchStatus(ServerMessage):
    """Where a rematch offer stands: each seat of the finished session with its answer
    (`yes`, `no`, `awaited`, `left`, `late`, `bot`), the outcome (`waiting`, `started`,
    `off`), the seconds still waited, and the new table once started."""

    table: int = field(p.TABLE_RANGE)
    seats: tuple[tuple[str, str], ...] = field(
        p.LIST, shows="list of [name: str, answer: str]", codec=_SEAT_ANSWERS
    )
    outcome: str = field(p.string(16))
    seconds: float | None = field(p.number(0, math.inf, nullable=True), default=None, omit=False)
    next: int | None = field(p.integer(1, p.MAX_ID, nullable=True), default=None, omit=False)
    reply_to: int | None = field(p.ID_RANGE, default=None)


#: The ledger's hands: (number, each player's net) each.
_NETS = Codec(
    lambda hands: [[number, list(nets)] for number, nets in hands],
    lambda data: tuple((number, tuple(nets)) for number, nets in data),
)


@_message(p.LEDGER)
class LedgerMessage(ServerMessage):
    """The ledger's newest settled hands (each its number and every player's net, in the
    order of `names`) and the balances now."""

    table: int = field(p.TABLE_RANGE)
    names: tuple[str, ...] = field(p.LIST, shows="list of str", codec=TUPLE)
    hands: tuple[tuple[int, tuple[int, ...]], ...] = field(
        p.LIST, shows="list of [hand: int, nets: list of int]", codec=_NETS
    )
    balances: Mapping[str, int] = field(p.MAP, shows="map str → int", codec=MAPPING)


@_message(p.HISTORY)
class HistoryPage(ServerMessage):
    """A page of a table's history (newest hand first), `total` settled hands in all, `more`
    older ones beyond this page; and the session's ledger now: each name's balance in the
    table's `unit`, and the fewest payments that would settle it up."""

    table: int = field(p.TABLE_RANGE)
    hands: tuple[HandSummary, ...] = field(
        p.LIST,
        shows="list of history hand",
        codec=tuple_of(Codec(HandSummary.to_wire, HandSummary.from_wire)),
    )
    total: int = field(p.integer(0, p.MAX_ID))
    more: bool = field(p.BOOL)
    unit: str = field(p.string(p.MAX_UNIT_LEN))
    balances: Mapping[str, int] = field(p.MAP, shows="map str → int", codec=MAPPING)
    settle_up: tuple[tuple[str, str, int], ...] = field(
        p.LIST, shows="list of [payer: str, payee: str, amount: int]", codec=rows(3)
    )  # payer, payee, amount
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.HISTORY_HAND)
class HistoryHandSteps(ServerMessage):
    """One settled hand's steps from the `start`-th (of `total`): the deal, then each action,
    as `seat` saw them (None: as a spectator did; a step of a seat that changed hands, seen
    from the seat only while the asker held it); `names` in seat order as the hand ended, the
    table's `rules`, which each step's view leaves out, and every occupant of a seat that
    changed hands during it (`Occupants.to_wire`'s rows)."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    seat: int | None = field(p.integer(0, 4, nullable=True))
    names: tuple[str, ...] = field(p.LIST, shows="list of str", codec=TUPLE)
    rules: HouseRules = field(p.MAP, codec=Codec(HouseRules.to_wire, HouseRules.from_dict))
    # Each step is read with the rules read above: see from_wire.
    steps: tuple[HistoryStep, ...] = field(
        p.LIST, shows="list of step", codec=tuple_of(Codec(HistoryStep.to_wire, None))
    )
    start: int = field(p.integer(0, p.MAX_ID), key="from")
    total: int = field(p.integer(1, p.MAX_ID))
    occupants: tuple[tuple[int, int, str], ...] = field(
        p.LIST, shows="list of [seat: int, from: int, name: str]", default=(), codec=rows(3)
    )
    reply_to: int | None = field(p.ID_RANGE, default=None)

    @property
    def seating(self) -> Occupants:
        """Who held each seat at each step."""
        return Occupants.from_wire(self.names, self.occupants)

    @classmethod
    def from_wire(cls, data: Wire) -> HistoryHandSteps:
        # Written out: each step is read with the hand's rules, another field of the message,
        # and a field's codec reads its own value alone.
        rules = HouseRules.from_dict(data["rules"])
        return cls(
            data["table"],
            data["hand"],
            data["seat"],
            tuple(data["names"]),
            rules,
            tuple(HistoryStep.from_wire(step, rules) for step in data["steps"]),
            data["from"],
            data["total"],
            tuple((seat, step, name) for seat, step, name in data.get("occupants", ())),
            data.get("reply_to"),
        )


@_message(p.CHAT)
class ChatLine(ServerMessage):
    """A chat line; `seat` None: a spectator's."""

    table: int = field(p.TABLE_RANGE)
    name: str = field(p.string(p.MAX_NAME_LEN))
    seat: int | None = field(p.integer(0, 4, nullable=True), required=False)
    text: str = field(p.string(p.MAX_CHAT_LEN))
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.PING)
class ServerPing(ServerMessage):
    n: int | None = field(p.integer(0, 2**53), default=None)


@_message(p.PONG)
class ServerPong(ServerMessage):
    n: int | None = field(p.integer(0, 2**53), default=None)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.GOODBYE)
class Goodbye(ServerMessage):
    """The server is stopping: `reason` a code (server_shutting_down), `message` words."""

    reason: str = field(p.string(64))
    message: str = field(p.string(4096))


@_message(p.AWAY_SUMMARY)
class AwaySummary(ServerMessage):
    """What happened while a player was away (sent to them alone, as they come back): the
    turns played for them, the hands that ended meanwhile (number, winner's name or None),
    their net since, and the events of hand `hand` (the one in play) that were moves made for
    them."""

    table: int = field(p.TABLE_RANGE)
    turns: int = field(p.integer(0, p.MAX_ID))
    hands: tuple[tuple[int, str | None], ...] = field(
        p.LIST, shows="list of [int, str | nil]", codec=rows(2)
    )
    net: int = field(p.integer(-(2**53), 2**53))
    hand: int = field(p.integer(0, p.MAX_ID))
    played_for: tuple[int, ...] = field(p.LIST, shows="list of int", codec=TUPLE)


def _unit_net_to_wire(net: UnitNet) -> Wire:
    # Written out: on the wire a night's date and its net go together (`best`, `worst`).
    return {
        "unit": net.unit,
        "net": net.net,
        "best": {"night": net.best_night, "net": net.best},
        "worst": {"night": net.worst_night, "net": net.worst},
    }


def _unit_net_from_wire(data: Wire) -> UnitNet:
    best, worst = data["best"], data["worst"]
    return UnitNet(
        data["unit"], data["net"], best["night"], best["net"], worst["night"], worst["net"]
    )


#: A standing's row: the core's record as the map of its fields, its nets each as above.
_STANDINGS = tuple_of(
    record_map(Standing, nets=tuple_of(Codec(_unit_net_to_wire, _unit_net_from_wire)))
)


@_message(p.STANDINGS)
class Standings(ServerMessage):
    """The standings across nights for a period: `tonight` and `since` are ISO dates of
    nights (`since` None: all time), `zone` the server's time zone, `unit` the one most hands
    were played for (None: no hands); people and bots apart, each ranked."""

    period: str = field(p.string(16))
    tonight: str = field(p.string(10))
    since: str | None = field(p.string(10, nullable=True))
    zone: str = field(p.string(64))
    unit: str | None = field(p.string(p.MAX_UNIT_LEN, nullable=True))
    people: tuple[Standing, ...] = field(p.LIST, shows="list of standing", codec=_STANDINGS)
    bots: tuple[Standing, ...] = field(p.LIST, shows="list of standing", codec=_STANDINGS)
    more: bool = field(p.BOOL)
    reply_to: int | None = field(p.ID_RANGE, default=None)


@_message(p.COACH)
class CoachAdvice(ServerMessage):
    """The coach's answer: the expert's view of the decision at step `step` of hand `hand`
    (None: the decision to make now, in the hand in play)."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    step: int | None = field(p.integer(0, p.MAX_ID, nullable=True))
    advice: Advice = field(p.MAP, shows="advice", codec=Codec(Advice.to_wire, Advice.from_wire))
    reply_to: int | None = field(p.ID_RANGE, default=None)


def _seat_values(data: list[list[object]]) -> tuple[tuple[int, str], ...]:
    out: list[tuple[int, str]] = []
    for row in data:
        seat, value = row
        if type(seat) is not int or not 0 <= seat <= 4 or not isinstance(value, str):
            raise ValueError(f"a value used is [seat, 64 hex digits], not {row}")
        out.append((seat, value))
    return tuple(out)


@_message(p.DEAL_COMMIT)
class DealCommit(ServerMessage):
    """Before hand `hand` is dealt: the server's commitment (SHA-256 of its secret, hex), and
    how long it waits for the players' values at most (seconds); `dev` a test deck (a seed or
    a deck order given to a --dev server), which has no commitment and cannot be checked."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    commitment: str | None = field(p.string(64, nullable=True))
    wait: float = field(p.number(0, 60))
    dev: bool = field(p.BOOL)


@_message(p.DEAL_REVEAL)
class DealReveal(ServerMessage):
    """After hand `hand` is over (just before its `hand_end`): the secret committed to, and
    the players' values the deal was drawn from, by seat."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID))
    secret: str = field(p.string(64))
    values: tuple[tuple[int, str], ...] = field(
        p.LIST, shows="list of [seat: int, value: str]", codec=Codec(rows(2).encode, _seat_values)
    )


#: Every message the server sends, by type (the registry: wire.declared).
SERVER_TYPES: dict[str, type[ServerMessage]] = declared(ServerMessage, __name__)
#: Each one's top-level fields with their ranges, from its class (nested maps are described in
#: PROTOCOL.md; the tests check every frame the server sends against this).
SERVER_MESSAGES: dict[str, Mapping[str, p.Field]] = {
    kind: cls._schema for kind, cls in SERVER_TYPES.items()
}


def validate_server(data: Mapping[str, Any]) -> None:
    """protocol.validate of a map the server sent, against SERVER_MESSAGES."""
    p.validate(data, SERVER_MESSAGES)


#: Reads a view's rules: a client that knows a table's rules already gives its reading (the
#: rules are the same in every view of a table), so they are read once, not once per update.
RulesReader: TypeAlias = Callable[[Mapping[str, RuleValue]], HouseRules]


def read_server(data: Wire, read_rules: RulesReader | None = None) -> ServerMessage:
    """The message of a decoded server map: ProtocolError if it is not one, whether its own
    fields or a map inside it (a table, a view, an event) are wrong. `read_rules` reads an
    update's view's rules (default: HouseRules.from_dict)."""
    validate_server(data)
    kind = data["type"]
    try:
        if kind == p.UPDATE:
            return Update.from_wire(data, read_rules)
        return SERVER_TYPES[kind].from_wire(data)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        # (ValueError covers a card or a rule the core will not read: CardError, RulesError.)
        problem = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise p.ProtocolError(p.BAD_MESSAGE, f"{kind}: {problem}"[:200]) from None


def read_known(data: Wire, read_rules: RulesReader | None = None) -> ServerMessage | None:
    """The message of a decoded server map as a client reads it (PROTOCOL.md, "Versions"):
    None for a message type it does not know, and a field it does not know left out; else as
    `read_server`."""
    try:
        return read_server(data, read_rules)
    except p.ProtocolError as exc:
        kind = data.get("type")
        fields = SERVER_MESSAGES.get(kind) if isinstance(kind, str) else None
        if exc.code == p.UNKNOWN_TYPE:
            return None
        if fields is None or all(name == "type" or name in fields for name in data):
            raise
    return read_server({k: v for k, v in data.items() if k == "type" or k in fields}, read_rules)
