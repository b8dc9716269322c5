"""The messages a client sends, as typed values (PROTOCOL.md, "Client to server"), each
declared once, its fields with their ranges; the type table and the schemas made from them;
and `read_client`, which validates and reads one from a decoded map."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from ..game import actions
from ..game.cards import CardError, format_cards, parse_card, parse_cards
from . import protocol as p
from .wire import UNSET, ClientMessage, RuleValue, Unset, Wire, declared, field
from .wire import message_type as _message

# -- client to server ---------------------------------------------------------------------------


@_message(p.HELLO)
class Hello(ClientMessage):
    version: int = field(p.integer(0, p.MAX_ID, code=p.VERSION_MISMATCH))
    name: str = field(p.string(p.MAX_NAME_LEN, code=p.BAD_NAME))
    client: str | None = field(p.string(64, code=p.BAD_MESSAGE), default=None)


@_message(p.LIST_TABLES)
class ListTables(ClientMessage):
    after: int | None = field(p.integer(0, p.MAX_ID), default=None)
    limit: int | None = field(p.integer(1, p.PAGE_SIZE), default=None)


@_message(p.CREATE_TABLE)
class CreateTable(ClientMessage):
    name: str = field(p.string(p.MAX_TABLE_NAME_LEN, code=p.BAD_TABLE))
    rules: Mapping[str, RuleValue] | None = field(
        p.Field("options", max_len=p.MAX_RULE_OPTIONS, code=p.BAD_RULES), default=None
    )
    stake: int | None = field(p.integer(1, p.MAX_STAKE, code=p.BAD_TABLE), default=None)
    unit: str | None = field(p.string(p.MAX_UNIT_LEN, code=p.BAD_TABLE), default=None)
    seats: int | None = field(p.integer(2, 5, code=p.BAD_TABLE), default=None)
    turn_timer: float | Unset | None = field(
        p.number(0, 3600, nullable=True, code=p.BAD_TABLE), default=UNSET
    )
    hands: int | Unset | None = field(
        p.integer(1, 100_000, nullable=True, code=p.BAD_TABLE), default=UNSET
    )
    minutes: float | Unset | None = field(
        p.number(0, 100_000, nullable=True, code=p.BAD_TABLE), default=UNSET
    )
    bot_pause: float | None = field(p.number(0, 10, code=p.BAD_TABLE), default=None)
    sit: bool | None = field(p.BOOL, default=None)
    seed: int | None = field(p.integer(0, 2**63 - 1, code=p.BAD_TABLE), default=None)
    deck: str | None = field(p.string(p.MAX_DECK_LEN, code=p.BAD_TABLE), default=None)
    dealer: int | None = field(p.integer(0, 4, code=p.BAD_TABLE), default=None)
    open_bot_seats: bool | None = field(p.BOOL, default=None)


@_message(p.SIT)
class Sit(ClientMessage):
    table: int = field(p.TABLE_RANGE)
    seat: int | Unset | None = field(p.SEAT_RANGE, default=UNSET)
    stake: int | None = field(p.STAKE_RANGE, default=None)


@_message(p.RESUME)
class Resume(ClientMessage):
    table: int = field(p.TABLE_RANGE)
    token: str = field(p.string(p.MAX_TOKEN_LEN, code=p.BAD_TOKEN))


@_message(p.WATCH)
class Watch(ClientMessage):
    table: int = field(p.TABLE_RANGE)


@_message(p.LEAVE)
class Leave(ClientMessage):
    """Back to the lobby from the sender's table."""


@_message(p.ADD_BOT)
class AddBot(ClientMessage):
    strategy: str | None = field(p.string(16, code=p.BAD_BOT), default=None)
    seat: int | Unset | None = field(p.SEAT_RANGE, default=UNSET)
    stake: int | None = field(p.STAKE_RANGE, default=None)


@_message(p.REMOVE_BOT)
class RemoveBot(ClientMessage):
    seat: int = field(p.integer(0, 4, code=p.NO_SUCH_SEAT))


@_message(p.START)
class Start(ClientMessage):
    """Start the session at the sender's table (its creator, two seats taken or more)."""


@_message(p.CHAT)
class Chat(ClientMessage):
    text: str = field(p.string(p.MAX_CHAT_LEN, code=p.BAD_CHAT))


@_message(p.BACK)
class Back(ClientMessage):
    """An `away` player is back: its seat is no longer played for it."""


@_message(p.HISTORY)
class History(ClientMessage):
    """A page of the history of the table the sender is at: its settled hands numbered
    below `before` (none: the newest), newest first, at most `limit`."""

    table: int = field(p.integer(1, p.MAX_ID, code=p.NOT_AT_TABLE))
    before: int | None = field(p.integer(1, p.MAX_ID, code=p.NO_SUCH_HAND), default=None)
    limit: int | None = field(p.integer(1, p.HISTORY_PAGE), default=None)


@_message(p.HISTORY_HAND)
class HistoryHand(ClientMessage):
    """One settled hand of that table, step by step from step `start`, as the sender saw it."""

    table: int = field(p.integer(1, p.MAX_ID, code=p.NOT_AT_TABLE))
    hand: int = field(p.integer(1, p.MAX_ID, code=p.NO_SUCH_HAND))
    start: int | None = field(p.integer(0, p.MAX_ID), key="from", default=None)


@_message(p.REMATCH)
class Rematch(ClientMessage):
    """Yes or no to playing the same table again, once its session is over."""

    answer: bool = field(p.BOOL)


@_message(p.DROP)
class DropRequest(ClientMessage):
    """Drop: the sender lays its hand down, claiming the lowest count."""


@_message(p.DRAW_STOCK)
class DrawStockRequest(ClientMessage):
    """Draw the stock's top card."""


@_message(p.TAKE_DISCARD)
class TakeDiscardRequest(ClientMessage):
    """Take the discard pile's top card."""


@_message(p.SPREAD)
class SpreadRequest(ClientMessage):
    cards: str = field(p.Field("cards", max_len=p.MAX_SPREAD_CARDS))


@_message(p.HIT)
class HitRequest(ClientMessage):
    card: str = field(p.CARD_RANGE)
    spread: int = field(p.integer(0, p.MAX_ID))


@_message(p.DISCARD)
class DiscardRequest(ClientMessage):
    card: str = field(p.CARD_RANGE)


@_message(p.PING)
class Ping(ClientMessage):
    n: int | None = field(p.integer(0, 2**53), default=None)


@_message(p.PONG)
class Pong(ClientMessage):
    n: int | None = field(p.integer(0, 2**53), default=None)


@_message(p.BYE)
class Bye(ClientMessage):
    """The client is leaving; the server closes the connection."""


@_message(p.PLAY_FOR_NOW)
class PlayForNow(ClientMessage):
    seat: int = field(p.integer(0, 4, code=p.NO_SUCH_SEAT))


@_message(p.TAKE_BOT_SEAT)
class TakeBotSeat(ClientMessage):
    table: int = field(p.TABLE_RANGE)
    seat: int = field(p.integer(0, 4, code=p.NO_SUCH_SEAT))


@_message(p.SEAT_TO_BOT)
class SeatToBot(ClientMessage):
    seat: int = field(p.integer(0, 4, code=p.NO_SUCH_SEAT))


@_message(p.STANDINGS)
class StandingsRequest(ClientMessage):
    """The standings across nights for a period (`tonight`, `week`, `month`, `all`; default
    `tonight`)."""

    period: str | None = field(p.string(16), default=None)


@_message(p.COACH)
class CoachRequest(ClientMessage):
    """The expert's view of one decision of the sender's: at step `step` of settled hand
    `hand` (the step's view is the one the decision was made from), or, with no step, of
    the decision the sender has to make now in the hand in play (a hint, at a practice table
    only)."""

    table: int = field(p.integer(1, p.MAX_ID, code=p.NOT_AT_TABLE))
    hand: int = field(p.integer(1, p.MAX_ID, code=p.NO_SUCH_HAND))
    step: int | None = field(p.integer(0, p.MAX_ID), default=None)


@_message(p.DEAL_VALUE)
class DealValue(ClientMessage):
    """The sender's value for the deal of hand `hand` (PROTOCOL.md, "A deal anyone can
    check"): 64 lowercase hex digits, sent once the server's commitment has come."""

    table: int = field(p.TABLE_RANGE)
    hand: int = field(p.integer(1, p.MAX_ID, code=p.NO_HAND))
    value: str = field(p.string(64, min_len=64))


#: The client messages that ask for a core action (played for the sender's seat).
ActionRequest: TypeAlias = (
    DropRequest
    | DrawStockRequest
    | TakeDiscardRequest
    | SpreadRequest
    | HitRequest
    | DiscardRequest
)


# -- a move across the wire: the core's action and the request for it, both ways, here only --


def action_request(action: actions.Action) -> ActionRequest:
    """The request for the core's `action`: no seat (the server plays it for the sender's),
    its cards written as text."""
    match action:
        case actions.Discard(card=card):
            return DiscardRequest(str(card))
        case actions.DrawStock():
            return DrawStockRequest()
        case actions.TakeDiscard():
            return TakeDiscardRequest()
        case actions.Drop():
            return DropRequest()
        case actions.LaySpread(cards=cards):
            return SpreadRequest(format_cards(cards))
        case actions.Hit(card=card, spread=spread):
            return HitRequest(str(card), spread)


def action_of(request: ActionRequest, seat: int) -> actions.Action:
    """The core's action a request asks for, played in `seat`; IllegalAction (code
    bad_action) if a card in it is not a card."""
    try:
        match request:
            case DiscardRequest(card=card):
                return actions.Discard(seat, parse_card(card))
            case DrawStockRequest():
                return actions.DrawStock(seat)
            case TakeDiscardRequest():
                return actions.TakeDiscard(seat)
            case SpreadRequest(cards=cards):
                return actions.LaySpread(seat, parse_cards(cards))
            case HitRequest(card=card, spread=spread):
                return actions.Hit(seat, parse_card(card), spread)
            case DropRequest():
                return actions.Drop(seat)
    except CardError as exc:
        raise actions.IllegalAction(f"malformed action: {exc}", "bad_action") from None


#: Every message a client may send, by type (the registry: wire.declared).
CLIENT_TYPES: dict[str, type[ClientMessage]] = declared(ClientMessage, __name__)
#: Each one's fields with their ranges (besides "type" and the optional "id"), from its class.
CLIENT_MESSAGES: dict[str, Mapping[str, p.Field]] = {
    kind: cls._schema for kind, cls in CLIENT_TYPES.items()
}


def validate_client(data: Mapping[str, Any]) -> None:
    """protocol.validate of a map a client sent, against CLIENT_MESSAGES."""
    p.validate(data, CLIENT_MESSAGES, p.ID_RANGE)


def ranges_table() -> str:
    """Every client field with a range, as the Markdown table in PROTOCOL.md ("Ranges"):
    message, field, range, and the error a value out of it gets."""
    lines = ["| message | field | range | out of range |", "|---|---|---|---|"]
    rows = [("(any)", "id", p.ID_RANGE)]
    rows += [
        (kind, name, spec)
        for kind, fields in CLIENT_MESSAGES.items()
        for name, spec in fields.items()
        if spec.kind not in ("bool", "map", "list")
    ]
    for kind, name, spec in rows:
        code = f"`{spec.code}`" + (" (fatal)" if kind == p.HELLO else "")
        lines.append(f"| `{kind}` | `{name}` | {spec.allowed()} | {code} |")
    return "\n".join(lines) + "\n"


#: Each type's class, whose `_read` reads it (its `from_wire`, without the call through the
#: classmethod on every message; the reader is written when first used: records.py).
_READERS: dict[str, type[ClientMessage]] = dict(CLIENT_TYPES)


class OutOfRangeMessage(p.OutOfRange):
    """A client message whose only fault is a value out of its range (protocol.OutOfRange),
    with what its refusal needs: the message's type, its `id` (if valid) and, in a `hello`,
    the version the client speaks."""

    def __init__(self, exc: p.OutOfRange, data: Wire) -> None:
        super().__init__(exc.code, exc.message, exc.field)
        self.kind: str = data["type"]
        self.request_id = p.valid_id(data)
        version = data.get("version")
        self.version: int | None = version if type(version) is int else None


def read_client(data: Wire) -> ClientMessage:
    """The message of a decoded client map: ProtocolError if it is not one (fatal), and
    OutOfRangeMessage if its only fault is a value out of its range (protocol.validate)."""
    try:
        validate_client(data)
    except p.OutOfRange as exc:
        raise OutOfRangeMessage(exc, data) from None
    message: ClientMessage = _READERS[data["type"]]._read(data)
    return message
