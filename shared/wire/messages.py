"""Every message of the protocol as a typed value, each built (`to_wire`) and read
(`from_wire`) in one place; PROTOCOL.md describes each. This module gathers them:

- wire.py: the machinery (a message's fields declared once, with their ranges: `field`; the
  registry: `declared`), and the state words as str enums (`TableState`, `SeatKind`,
  `SeatStatus`, `SessionEndReason`);
- client_messages.py: what a client sends (`Hello`, `Sit`, ..., `Discard`), the type table
  and the schemas made from them, `read_client`;
- server_messages.py: what the server sends (`Welcome`, `Error`, `TableMessage`, `Update`,
  ...), the table map (`TableSummary`, `PlayerSummary`), `read_server`.

A message declared in one of those two modules is one of this module's without another word
(and in its `__all__`, made from the registry). `DEFAULT_PORT` is protocol.py's, with the
framing. A program that reads frames: `read_server(decoder.next_message())` (or
`read_client`) gives the message's value, after validating its types and ranges.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import client_messages as _client
from . import protocol as p
from . import server_messages as _server
from .client_messages import *  # noqa: F403 (the messages: see __all__)
from .protocol import DEFAULT_PORT as DEFAULT_PORT
from .server_messages import *  # noqa: F403
from .wire import *  # noqa: F403 (the machinery and the state words)
from .wire import Message

#: Every message class by its registry (client_messages.CLIENT_TYPES, server_messages.
#: SERVER_TYPES), then the rest by hand: the values messages carry, the machinery, the readers.
__all__ = sorted(
    [
        *(cls.__name__ for cls in _client.CLIENT_TYPES.values()),
        *(cls.__name__ for cls in _server.SERVER_TYPES.values()),
        "CLIENT_MESSAGES",
        "CLIENT_TYPES",
        "DEFAULT_PORT",
        "SERVER_MESSAGES",
        "SERVER_TYPES",
        "UNSET",
        "ActionRequest",
        "ClientMessage",
        "Combined",
        "Message",
        "OutOfRangeMessage",
        "PlayerSummary",
        "RuleValue",
        "SeatKind",
        "SeatStatus",
        "ServerMessage",
        "SessionEndReason",
        "TableState",
        "TableSummary",
        "Unset",
        "Wire",
        "action_of",
        "action_request",
        "encode",
        "fields_table",
        "ranges_table",
        "read_client",
        "read_known",
        "read_server",
        "validate_client",
        "validate_server",
    ]
)


def encode(message: Message, max_frame: int = p.MAX_SERVER_FRAME) -> bytes:
    """One frame of `message` (protocol.encode of its map)."""
    return p.encode(message.to_wire(), max_frame)


#: How PROTOCOL.md writes each kind of field (protocol.Field's `kind`).
_KIND_WORDS = {"cards": "str", "options": "map"}


def fields_table(types: Mapping[str, type[Message]]) -> str:
    """The messages of `types` (CLIENT_TYPES or SERVER_TYPES) with their fields, as the
    Markdown tables of PROTOCOL.md ("Client to server", "Server to client") give them, from
    each class's declaration: `name: kind` (or its `shows`: `list of table`), `name?` for a
    field its sender may leave out, `| nil` for one that may be nil. (A client message's `id`
    is every one's: the document says so once.)"""
    lines = ["| type | fields |", "|---|---|"]
    for kind, cls in types.items():
        fields = []
        left_out = cls.left_out()
        for name, spec in cls._schema.items():
            word = cls._shown.get(name) or _KIND_WORDS.get(spec.kind, spec.kind)
            word += " | nil" if spec.nullable else ""
            optional = "?" if name in left_out else ""
            word = word.replace("|", "\\|")  # (a bar inside a table's cell)
            fields.append(f"`{name}{optional}: {word}`")
        lines.append(f"| `{kind}` | {', '.join(fields)} |")
    return "\n".join(lines) + "\n"
