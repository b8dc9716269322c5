"""The machinery of the typed messages (messages.py): a message class declares its fields
once, in wire order, and is built (`to_wire`) and read (`from_wire`) from that declaration; and
the words of the wire that are states, as str enums whose members are the wire's strings (a map
built with them packs to the same bytes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from enum import Enum, StrEnum
from typing import Any, ClassVar, Self, TypeAlias, TypeVar

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
    """A message. A subclass is a frozen dataclass whose fields are the message's, in wire
    order; `_wire_names` renames a field on the wire (`start` is `from`), `_omitted` names the
    fields left out when None (an optional field); UNSET is always left out. `reply_to` (server
    to client) and `id` (client to server) go last."""

    __slots__ = ()
    TYPE: ClassVar[str]
    _wire_names: ClassVar[Mapping[str, str]] = {}
    _omitted: ClassVar[frozenset[str]] = frozenset()
    # (attribute, wire key, left out when None), in wire order: set by @_message.
    _fields: ClassVar[tuple[tuple[str, str, bool], ...]] = ()
    # The class's reader of a validated map (see `_reader`): set by @_message.
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


_T = TypeVar("_T", bound="Message")


def message_type(kind: str) -> Callable[[type[_T]], type[_T]]:
    """Declare a message class (a dataclass): its type, and its wire fields from its own."""

    def declare(cls: type[_T]) -> type[_T]:
        cls.TYPE = kind
        last = ("reply_to", "id")
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        names = [n for n in names if n not in last] + [n for n in last if n in names]
        cls._fields = tuple(
            (n, cls._wire_names.get(n, n), n in cls._omitted or n in last) for n in names
        )
        cls._read = _reader(cls)
        return cls

    return declare


def _reader(cls: type[_T]) -> Callable[[Wire], _T]:
    """The reader of `cls`'s messages, written out from its declaration as a function of its
    own (as dataclasses writes `__init__`): `cls(data["card"], data.get("id", None))`, each
    field read by its wire name, left out ones given their default. Four times quicker than
    reading the fields in a loop, and every message a server reads goes through one."""
    defaults: dict[str, object] = {"cls": cls}
    args = []
    for n, f in enumerate(dataclasses.fields(cls)):  # type: ignore[arg-type]
        key = cls._wire_names.get(f.name, f.name)
        if f.default_factory is not dataclasses.MISSING:
            defaults[f"f{n}"] = f.default_factory
            args.append(f"data[{key!r}] if {key!r} in data else f{n}()")
        elif f.default is dataclasses.MISSING:
            args.append(f"data[{key!r}]")
        else:
            defaults[f"d{n}"] = f.default
            args.append(f"data.get({key!r}, d{n})")
    source = f"def read(data):\n    return cls({', '.join(args)})\n"
    exec(source, defaults)  # (made of the class's field names and wire keys only)
    read: Callable[[Wire], _T] = defaults["read"]  # type: ignore[assignment]
    return read


_REPLY = frozenset({"reply_to"})


class ServerMessage(Message):
    """A message the server sends."""

    __slots__ = ()

    def answering(self, reply_to: int | None) -> Self:
        """This message as the answer to a request with `id` `reply_to` (None: as it is)."""
        if reply_to is None or "reply_to" not in self.__dataclass_fields__:  # type: ignore[attr-defined]
            return self
        return dataclasses.replace(self, reply_to=reply_to)  # type: ignore[type-var]


class ClientMessage(Message):
    """A message a client sends; `id` is optional on every one."""

    __slots__ = ()
    id: int | None
