"""The machinery of the typed messages (messages.py): a message class declares its fields
once, in wire order, and is built (`to_wire`) and read (`from_wire`) from that declaration; and
the words of the wire that are states, as str enums whose members are the wire's strings (a map
built with them packs to the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum, StrEnum
from typing import Any, ClassVar, Self, TypeAlias, TypeVar, dataclass_transform

from . import records

#: A value of a decoded msgpack map (what `protocol.decode_payload` gives).
Wire: TypeAlias = dict[str, Any]
#: A rule option's value on the wire.
RuleValue: TypeAlias = bool | int | str | None


class TableState(StrEnum):
    """A table's `state` (`closed` never goes out: a closed table has left the lobby)."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


class SeatKind(StrEnum):
    """Who sits in a seat: a player's `kind` in the table map."""

    HUMAN = "human"
    BOT = "bot"
    EMPTY = "empty"


class SeatStatus(StrEnum):
    """A player's `status` in the table map."""

    EMPTY = "empty"
    BOT = "bot"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    AWAY = "away"


class SessionEndReason(StrEnum):
    """Why a session ended (`session_end`'s `reason`)."""

    HANDS = "hands"
    MINUTES = "minutes"
    ABANDONED = "abandoned"


#: Each word by its text (a lookup is cheaper than calling the enum, on the server's paths).
TABLE_STATES = {str(state): state for state in TableState}
SEAT_KINDS = {str(kind): kind for kind in SeatKind}
SEAT_STATUSES = {str(status): status for status in SeatStatus}


class Unset(Enum):
    """The type of UNSET."""

    UNSET = "unset"


#: A field that may be nil on the wire and may also be left out (create_table's `hands`,
#: sit's `seat`): left out when UNSET.
UNSET = Unset.UNSET


# -- the machinery: one declaration of each message's fields ----------------------------------


class Message:
    """A message. A subclass declared with `@message_type` is a frozen value whose fields are
    its annotated attributes, in wire order; `_wire_names` renames a field on the wire (`start`
    is `from`), `_omitted` names the fields left out when None (an optional field); UNSET is
    always left out. `reply_to` (server to client) and `id` (client to server) go last.

    A message class is a record (records.py: a frozen slots value made without `dataclasses`,
    for a client's start-up), its reader written in the same `exec` as its `__init__`."""

    __slots__ = ()
    TYPE: ClassVar[str]
    _wire_names: ClassVar[Mapping[str, str]] = {}
    _omitted: ClassVar[frozenset[str]] = frozenset()
    # The field names in declaration order: set by @message_type.
    _names: ClassVar[tuple[str, ...]] = ()
    # (attribute, wire key, left out when None), in wire order: set by @message_type.
    _fields: ClassVar[tuple[tuple[str, str, bool], ...]] = ()
    # The class's reader of a validated map (see `_reader_source`): set by @message_type.
    _read: ClassVar[Callable[[Wire], Any]]

    def to_wire(self) -> Wire:
        out: Wire = {"type": self.TYPE}
        for attr, key, omitted in self._fields:
            value = getattr(self, attr)
            if value is UNSET or (omitted and value is None):
                continue
            out[key] = value
        return out

    @classmethod
    def from_wire(cls, data: Wire) -> Self:
        """The message of a map `protocol.validate` has passed."""
        return cls._read(data)  # type: ignore[no-any-return]

    def replaced(self, **changes: Any) -> Self:
        """This message with some fields changed (as `dataclasses.replace`)."""
        return records.replaced(self, **changes)


_T = TypeVar("_T", bound="Message")


@dataclass_transform(frozen_default=True)
def message_type(kind: str) -> Callable[[type[_T]], type[_T]]:
    """Declare a message class: its type, and its fields (its annotated attributes, with their
    defaults) in the order written; see `Message`."""

    def declare(cls: type[_T]) -> type[_T]:
        return _declare(cls, kind)

    return declare


def _declare(cls: type[_T], kind: str) -> type[_T]:
    made = records.build(cls, _reader_source, ("_read",), TYPE=kind)
    last = ("reply_to", "id")
    names = made._names
    ordered = [n for n in names if n not in last] + [n for n in last if n in names]
    made._fields = tuple(
        (n, made._wire_names.get(n, n), n in made._omitted or n in last) for n in ordered
    )
    return made


def _reader_source(
    cls: type[Message], names: tuple[str, ...], defaults: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The reader of `cls`'s messages, written out from its declaration as a function of its
    own (as dataclasses writes `__init__`): `cls(data["card"], data.get("id", d1))`, each field
    read by its wire name, a left out one given its default (`d1`, as `__init__` names it).
    Four times quicker than reading the fields in a loop, and every message a server reads
    goes through one."""
    args = []
    for n, name in enumerate(names):
        key = cls._wire_names.get(name, name)
        args.append(f"data.get({key!r}, d{n})" if name in defaults else f"data[{key!r}]")
    return f"def _read(data):\n    return cls({', '.join(args)})\n", {}


_REPLY = frozenset({"reply_to"})


class ServerMessage(Message):
    """A message the server sends."""

    __slots__ = ()

    def answering(self, reply_to: int | None) -> Self:
        """This message as the answer to a request with `id` `reply_to` (None: as it is)."""
        if reply_to is None or "reply_to" not in self._names:
            return self
        return self.replaced(reply_to=reply_to)


class ClientMessage(Message):
    """A message a client sends; `id` is optional on every one."""

    __slots__ = ()
    id: int | None
