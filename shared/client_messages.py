"""The messages a client sends, as typed values (PROTOCOL.md, "Client to server"), and
`read_client`, which reads one from a decoded map."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypeGuard, get_args

from . import actions
from . import protocol as p
from .cards import format_cards
from .wire import UNSET, ClientMessage, RuleValue, Unset, Wire
from .wire import message_type as _message

# -- client to server ---------------------------------------------------------------------------


@_message(p.HELLO)
class Hello(ClientMessage):
    version: int
    name: str
    client: str | None = None
    id: int | None = None
    _omitted = frozenset({"client"})


@_message(p.LIST_TABLES)
class ListTables(ClientMessage):
    after: int | None = None
    limit: int | None = None
    id: int | None = None
    _omitted = frozenset({"after", "limit"})


@_message(p.STANDINGS)
class StandingsRequest(ClientMessage):
    """The standings across nights for a period (`tonight`, `week`, `month`, `all`; default
    `tonight`)."""

    period: str | None = None
    id: int | None = None
    _omitted = frozenset({"period"})


@_message(p.CREATE_TABLE)
class CreateTable(ClientMessage):
    name: str
    rules: Mapping[str, RuleValue] | None = None
    stake: int | None = None
    unit: str | None = None
    seats: int | None = None
    turn_timer: float | Unset | None = UNSET
    hands: int | Unset | None = UNSET
    minutes: float | Unset | None = UNSET
    bot_pause: float | None = None
    sit: bool | None = None
    seed: int | None = None
    deck: str | None = None
    dealer: int | None = None
    id: int | None = None
    _omitted = frozenset(
        {"rules", "stake", "unit", "seats", "bot_pause", "sit", "seed", "deck", "dealer"}
    )


@_message(p.SIT)
class Sit(ClientMessage):
    table: int
    seat: int | Unset | None = UNSET
    stake: int | None = None
    id: int | None = None
    _omitted = frozenset({"stake"})


@_message(p.RESUME)
class Resume(ClientMessage):
    table: int
    token: str
    id: int | None = None


@_message(p.WATCH)
class Watch(ClientMessage):
    table: int
    id: int | None = None


@_message(p.LEAVE)
class Leave(ClientMessage):
    id: int | None = None


@_message(p.ADD_BOT)
class AddBot(ClientMessage):
    strategy: str | None = None
    seat: int | Unset | None = UNSET
    stake: int | None = None
    id: int | None = None
    _omitted = frozenset({"strategy", "stake"})


@_message(p.REMOVE_BOT)
class RemoveBot(ClientMessage):
    seat: int
    id: int | None = None


@_message(p.START)
class Start(ClientMessage):
    id: int | None = None


@_message(p.CHAT)
class Chat(ClientMessage):
    text: str
    id: int | None = None


@_message(p.BACK)
class Back(ClientMessage):
    id: int | None = None


@_message(p.HISTORY)
class History(ClientMessage):
    """A page of the history of the table the sender is at: its settled hands numbered
    below `before` (none: the newest), newest first, at most `limit`."""

    table: int
    before: int | None = None
    limit: int | None = None
    id: int | None = None
    _omitted = frozenset({"before", "limit"})


@_message(p.HISTORY_HAND)
class HistoryHand(ClientMessage):
    """One settled hand of that table, step by step from step `start`, as the sender saw it."""

    table: int
    hand: int
    start: int | None = None
    id: int | None = None
    _wire_names = {"start": "from"}  # noqa: RUF012
    _omitted = frozenset({"start"})


@_message(p.COACH)
class CoachRequest(ClientMessage):
    """The expert's view of one decision of the sender's: at step `step` of settled hand
    `hand` (the step's view is the one the decision was made from), or, with no step, of
    the decision the sender has to make now in the hand in play (a hint, at a practice table
    only)."""

    table: int
    hand: int
    step: int | None = None
    id: int | None = None
    _omitted = frozenset({"step"})


@_message(p.REMATCH)
class Rematch(ClientMessage):
    """Yes or no to playing the same table again, once its session is over."""

    answer: bool
    id: int | None = None


@_message(p.DROP)
class Drop(ClientMessage):
    id: int | None = None


@_message(p.DRAW_STOCK)
class DrawStock(ClientMessage):
    id: int | None = None


@_message(p.TAKE_DISCARD)
class TakeDiscard(ClientMessage):
    id: int | None = None


@_message(p.SPREAD)
class Spread(ClientMessage):
    cards: str
    id: int | None = None


@_message(p.HIT)
class Hit(ClientMessage):
    card: str
    spread: int
    id: int | None = None


@_message(p.DISCARD)
class Discard(ClientMessage):
    card: str
    id: int | None = None


@_message(p.PING)
class Ping(ClientMessage):
    n: int | None = None
    id: int | None = None
    _omitted = frozenset({"n"})


@_message(p.PONG)
class Pong(ClientMessage):
    n: int | None = None
    id: int | None = None
    _omitted = frozenset({"n"})


@_message(p.BYE)
class Bye(ClientMessage):
    id: int | None = None


@_message(p.PLAY_FOR_NOW)
class PlayForNow(ClientMessage):
    seat: int
    id: int | None = None


@_message(p.TAKE_BOT_SEAT)
class TakeBotSeat(ClientMessage):
    table: int
    seat: int
    id: int | None = None


@_message(p.SEAT_TO_BOT)
class SeatToBot(ClientMessage):
    seat: int
    id: int | None = None


#: The client messages that are a core action (played for the sender's seat).
Action: TypeAlias = Drop | DrawStock | TakeDiscard | Spread | Hit | Discard


_ACTIONS: frozenset[type[ClientMessage]] = frozenset(get_args(Action))


def is_action(message: ClientMessage) -> TypeGuard[Action]:
    """Whether `message` asks for a core action (a set lookup: quicker than isinstance with
    the union, on every action a server reads)."""
    return type(message) in _ACTIONS


def action_request(action: actions.Action) -> Action:
    """The message that asks for the core's `action`: no seat (the server plays it for the
    sender's), its cards written as text here, once."""
    match action:
        case actions.Discard(card=card):
            return Discard(str(card))
        case actions.DrawStock():
            return DrawStock()
        case actions.TakeDiscard():
            return TakeDiscard()
        case actions.Drop():
            return Drop()
        case actions.LaySpread(cards=cards):
            return Spread(format_cards(cards))
        case actions.Hit(card=card, spread=spread):
            return Hit(str(card), spread)


CLIENT_TYPES: dict[str, type[ClientMessage]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        ListTables,
        CreateTable,
        Sit,
        Resume,
        Watch,
        Leave,
        AddBot,
        RemoveBot,
        Start,
        Chat,
        Back,
        History,
        HistoryHand,
        Rematch,
        Drop,
        DrawStock,
        TakeDiscard,
        Spread,
        Hit,
        Discard,
        Ping,
        Pong,
        Bye,
        PlayForNow,
        TakeBotSeat,
        SeatToBot,
        StandingsRequest,
        CoachRequest,
    )
}


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
        p.validate_client(data)
    except p.OutOfRange as exc:
        raise OutOfRangeMessage(exc, data) from None
    message: ClientMessage = _READERS[data["type"]]._read(data)
    return message
