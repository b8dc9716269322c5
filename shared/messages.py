"""Every message of the protocol as a typed value, each built (`to_wire`) and read
(`from_wire`) in one place; PROTOCOL.md describes each. This module gathers them:

- wire.py: the machinery, and the state words as str enums (`TableState`,
  `SeatKind`, `SeatStatus`, `SessionEndReason`);
- client_messages.py: what a client sends (`Hello`, `Sit`, ..., `Discard`), `read_client`;
- server_messages.py: what the server sends (`Welcome`, `Error`, `TableMessage`, `Update`,
  ...), the table map (`TableSummary`, `PlayerSummary`), `read_server`.

`DEFAULT_PORT` is protocol.py's, with the framing. A program that reads frames:
`read_server(decoder.next_message())` (or `read_client`) gives the message's value, after
protocol.validate has checked its types and ranges.
"""

from __future__ import annotations

from . import protocol as p
from .client_messages import (
    CLIENT_TYPES,
    Action,
    AddBot,
    Back,
    Bye,
    Chat,
    CreateTable,
    Discard,
    DrawStock,
    Drop,
    Hello,
    Hit,
    Leave,
    ListTables,
    OutOfRangeMessage,
    Ping,
    Pong,
    RemoveBot,
    Resume,
    Sit,
    Spread,
    Start,
    TakeDiscard,
    Watch,
    read_client,
)
from .protocol import DEFAULT_PORT
from .server_messages import (
    SERVER_TYPES,
    ChatLine,
    Cut,
    Error,
    Goodbye,
    HandEnd,
    LedgerMessage,
    Left,
    LobbyChanges,
    PlayerSummary,
    Seated,
    ServerPing,
    ServerPong,
    SessionEnd,
    TableMessage,
    Tables,
    TableSummary,
    Update,
    Watching,
    Welcome,
    read_server,
)
from .wire import (
    SEAT_KINDS,
    SEAT_STATUSES,
    TABLE_STATES,
    UNSET,
    ClientMessage,
    Message,
    RuleValue,
    SeatKind,
    SeatStatus,
    ServerMessage,
    SessionEndReason,
    TableState,
    Unset,
    Wire,
)

__all__ = [
    "CLIENT_TYPES",
    "DEFAULT_PORT",
    "SEAT_KINDS",
    "SEAT_STATUSES",
    "SERVER_TYPES",
    "TABLE_STATES",
    "UNSET",
    "Action",
    "AddBot",
    "Back",
    "Bye",
    "Chat",
    "ChatLine",
    "ClientMessage",
    "CreateTable",
    "Cut",
    "Discard",
    "DrawStock",
    "Drop",
    "Error",
    "Goodbye",
    "HandEnd",
    "Hello",
    "Hit",
    "Leave",
    "LedgerMessage",
    "Left",
    "ListTables",
    "LobbyChanges",
    "Message",
    "OutOfRangeMessage",
    "Ping",
    "PlayerSummary",
    "Pong",
    "RemoveBot",
    "Resume",
    "RuleValue",
    "SeatKind",
    "SeatStatus",
    "Seated",
    "ServerMessage",
    "ServerPing",
    "ServerPong",
    "SessionEnd",
    "SessionEndReason",
    "Sit",
    "Spread",
    "Start",
    "TableMessage",
    "TableState",
    "TableSummary",
    "Tables",
    "TakeDiscard",
    "Unset",
    "Update",
    "Watch",
    "Watching",
    "Welcome",
    "Wire",
    "encode",
    "read_client",
    "read_server",
]


def encode(message: Message, max_frame: int = p.MAX_SERVER_FRAME) -> bytes:
    """One frame of `message` (protocol.encode of its map)."""
    return p.encode(message.to_wire(), max_frame)
