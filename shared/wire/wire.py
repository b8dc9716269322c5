"""The machinery of the typed messages (messages.py): a message class declares its fields
once, in wire order, each with its range (`field`), and is built (`to_wire`), read
(`from_wire`) and validated (its `_schema`) from that declaration, as are the values a message
carries (`wire_value`: the table map, a seat in it); the registry of the classes declared
(`declared`); and the words of the wire that are states, as str enums whose members are the
wire's strings (a map built with them packs to the same bytes).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, ClassVar, Self, TypeAlias, TypeVar, dataclass_transform, overload

from .. import records
from ..terms import *  # noqa: F403 (the state words, the shared words: read with the messages)
from .protocol import ID_RANGE, Field

#: A value of a decoded msgpack map (what `protocol.decode_payload` gives).
Wire: TypeAlias = dict[str, Any]
#: A rule option's value on the wire.
RuleValue: TypeAlias = bool | int | str | None


class Unset(Enum):
    """The type of UNSET."""

    UNSET = "unset"


#: A field that may be nil on the wire and may also be left out (create_table's `hands`,
#: sit's `seat`): left out when UNSET.
UNSET = Unset.UNSET


# -- the machinery: one declaration of each message's fields ----------------------------------


class WireValue:
    """A map on the wire written and read from its class's declaration: a subclass declared
    with `@wire_value` (a value a message carries) or `@message_type` (a message) is a frozen
    value whose fields are its annotated attributes, in wire order, each declared with
    `field` where it needs more than its name (a message's: its range); a field whose default
    is None is left out when None (`omit=True`: when it is its default, whatever that is), and
    UNSET is always left out.

    It is a record (records.py: a frozen slots value made without `dataclasses`, for a
    client's start-up), its reader written in the same `exec` as its `__init__`; its `to_wire`
    is `WireValue.to_wire`, a loop over the declared fields."""

    __slots__ = ()
    # What follows is set by @wire_value or @message_type, from the fields declared.
    # What a map of the class starts with: a message's type.
    _head: ClassVar[Mapping[str, str]] = {}
    # A field's name on the wire where it is not the attribute's (`start` is `from`).
    _wire_names: ClassVar[Mapping[str, str]] = {}
    # Each field's codec, where it has one.
    _codecs: ClassVar[Mapping[str, Codec]] = {}
    # The fields read as they must be there though they have a default (`required=True`).
    _required: ClassVar[frozenset[str]] = frozenset()
    # The field names in declaration order.
    _names: ClassVar[tuple[str, ...]] = ()
    # (attribute, wire key, the value it is left out as or _SENT, its encoder or None), in
    # wire order.
    _fields: ClassVar[tuple[tuple[str, str, object, Callable[[Any], Any] | None], ...]] = ()
    # The class's reader of a map (see `_reader_source`).
    _read: ClassVar[Callable[[Wire], Any]]

    def to_wire(self) -> Wire:
        out: Wire = dict(self._head)
        for attr, key, skip, encode in self._fields:
            value = getattr(self, attr)
            if value is UNSET or value is skip or (skip is not _SENT and value == skip):
                continue
            out[key] = value if encode is None else encode(value)
        return out

    @classmethod
    def from_wire(cls, data: Wire) -> Self:
        """The value of a map (a message's: one `protocol.validate` has passed)."""
        return cls._read(data)  # type: ignore[no-any-return]

    def replaced(self, **changes: Any) -> Self:
        """This value with some fields changed (as `dataclasses.replace`)."""
        return records.replaced(self, **changes)

    @classmethod
    def left_out(cls) -> frozenset[str]:
        """The wire names of the fields a map of this class may leave out (its sender leaves
        them out at their default, or when UNSET): PROTOCOL.md's `name?`."""
        defaults = records.record_defaults(cls)
        return frozenset(
            key
            for attr, key, skip, _ in cls._fields
            if skip is not _SENT or defaults.get(attr) is UNSET
        )


class _Sent(Enum):
    """The type of _SENT."""

    SENT = "sent"


#: A field never left out (in `WireValue._fields`).
_SENT = _Sent.SENT


class Message(WireValue):
    """A message: a WireValue declared with `@message_type`, each field with its range, whose
    map starts with its `type`. A server message's `reply_to` is declared last (but for
    `error`'s `version`); a client message's `id` is declared once, on ClientMessage, and
    goes last."""

    __slots__ = ()
    TYPE: ClassVar[str]
    # Each field's range by its wire name, in declaration order: what protocol.validate
    # checks a map of this type against (set by @message_type).
    _schema: ClassVar[Mapping[str, Field]] = {}
    # Each field's type in words by its wire name, where `field` gives one (`shows`).
    _shown: ClassVar[Mapping[str, str]] = {}
    # The fields every message of a side has, declared on the side's class (`message_base`).
    _inherited: ClassVar[Mapping[str, _Declared]] = {}


_T = TypeVar("_T", bound="Message")
_W = TypeVar("_W", bound="WireValue")
_V = TypeVar("_V")


class _Required(Enum):
    REQUIRED = "required"


class Codec:
    """How a field's value goes on the wire and back, where it is not as it is: a tuple (a
    list on the wire), a value with its own map (a settlement, a view). None: that way as it
    is."""

    __slots__ = ("decode", "encode")

    def __init__(
        self, encode: Callable[[Any], Any] | None, decode: Callable[[Any], Any] | None
    ) -> None:
        self.encode = encode
        self.decode = decode


def _same(value: Any) -> Any:
    return value


def _listed(value: Any) -> list[Any]:
    return list(value)


#: A tuple of plain values (a list on the wire).
TUPLE = Codec(_listed, tuple)
#: A mapping (a plain dict on the wire, a dict read).
MAPPING = Codec(dict, dict)


def tuple_of(item: Codec) -> Codec:
    """A tuple of values, each through `item`."""
    encode, decode = item.encode or _same, item.decode or _same
    return Codec(
        lambda values: [encode(value) for value in values],
        lambda data: tuple([decode(value) for value in data]),
    )


def rows(width: int) -> Codec:
    """A tuple of tuples of `width` plain values each (lists on the wire); ValueError for a
    row of another width."""

    def decode(data: Any) -> tuple[tuple[Any, ...], ...]:
        out = tuple([tuple(row) for row in data])
        for row in out:
            if len(row) != width:
                raise ValueError(f"a row of {width} values, not {list(row)}")
        return out

    return Codec(lambda values: [list(row) for row in values], decode)


def record_map(cls: type[Any], **codecs: Codec) -> Codec:
    """A record of the core (records.py) as the map of its fields, in the order declared,
    each through its codec in `codecs` if it has one: for a core value whose map on the wire
    is its fields (a standing's row); KeyError for a map without one of them."""
    names = records.record_fields(cls)
    encoders = [(name, codecs[name].encode if name in codecs else None) for name in names]
    decoders = [(name, codecs[name].decode if name in codecs else None) for name in names]

    def encode(value: Any) -> Wire:
        return {
            name: getattr(value, name) if code is None else code(getattr(value, name))
            for name, code in encoders
        }

    def decode(data: Wire) -> Any:
        return cls(*[data[name] if code is None else code(data[name]) for name, code in decoders])

    return Codec(encode, decode)


def nullable(codec: Codec) -> Codec:
    """`codec`'s values, or None."""
    encode, decode = codec.encode or _same, codec.decode or _same
    return Codec(
        lambda value: None if value is None else encode(value),
        lambda data: None if data is None else decode(data),
    )


class _Declared:
    """A field's declaration (what `field` gives), read by @message_type and @wire_value."""

    __slots__ = ("codec", "default", "key", "kw_only", "omit", "range", "required", "shows")

    def __init__(
        self,
        range: Field | None,
        default: object,
        key: str | None,
        required: bool | None,
        codec: Codec | None,
        omit: bool | None,
        kw_only: bool,
        shows: str | None,
    ) -> None:
        self.shows = shows
        self.range = range
        self.default = default
        self.key = key
        self.required = required
        self.codec = codec
        self.omit = omit
        self.kw_only = kw_only


@overload
def field(
    range: Field | None = None,
    *,
    key: str | None = None,
    required: bool | None = None,
    codec: Codec | None = None,
    omit: bool | None = None,
    kw_only: bool = False,
    shows: str | None = None,
) -> Any: ...


@overload
def field(
    range: Field | None = None,
    *,
    default: _V,
    key: str | None = None,
    required: bool | None = None,
    codec: Codec | None = None,
    omit: bool | None = None,
    kw_only: bool = False,
    shows: str | None = None,
) -> _V: ...


def field(
    range: Field | None = None,
    *,
    default: object = _Required.REQUIRED,
    key: str | None = None,
    required: bool | None = None,
    codec: Codec | None = None,
    omit: bool | None = None,
    kw_only: bool = False,
    shows: str | None = None,
) -> Any:
    """A message's field (or a carried value's): its range (protocol.Field: `p.integer(0, 4)`;
    a message's field must have one), its `default` if it has one, its `key` on the wire if
    not its name, its `codec` if its value is not on the wire as it is (a tuple, a nested
    value). A field without a default must be in every map of its type; `required` says
    otherwise where the wire does (a field the server always sends, read as optional; a field
    with a default that must be there all the same). A field whose default is None is left
    out when None; `omit=False` sends it as nil all the same, `omit=True` leaves it out when
    it is its default whatever that is (an empty tuple). `kw_only`: given by name only (a
    field every message of a side has, declared on the side's class, which comes after a
    message's own). `shows`: its type as PROTOCOL.md's tables write it, where its range's
    kind says less (`list of table`; messages.fields_table)."""
    return _Declared(range, default, key, required, codec, omit, kw_only, shows)


#: Every message class declared, in the order declared (see `declared`).
_DECLARED: list[type[Message]] = []


def declared(side: type[_T], module: str) -> dict[str, type[_T]]:
    """The message classes declared in `module` that derive from `side` (ClientMessage or
    ServerMessage), by type, in the order declared: the registry the type tables, the schemas
    and the handlers are made from. TypeError if two have the same type."""
    found: dict[str, type[_T]] = {}
    for cls in _DECLARED:
        if cls.__module__ == module and issubclass(cls, side):
            if cls.TYPE in found:
                raise TypeError(f"{cls.__name__} and {found[cls.TYPE].__name__}: {cls.TYPE!r}")
            found[cls.TYPE] = cls
    return found


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def message_type(kind: str) -> Callable[[type[_T]], type[_T]]:
    """Declare a message class: its type, and its fields (its annotated attributes, each with
    its range and default: `field`) in the order written; see `Message`."""

    def declare(cls: type[_T]) -> type[_T]:
        return _declare(cls, kind)

    return declare


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def wire_value(cls: type[_W]) -> type[_W]:
    """Declare a value a message carries as a map (the table map, a seat in it): its fields
    (its annotated attributes, in wire order; `field` where one needs a codec, a default left
    out or a key) in the order written; see `WireValue`. Its ranges are PROTOCOL.md's to say:
    the validator checks a message's own fields, not the maps inside them."""
    made, _ = _declare_fields(cls, {}, {})
    return made


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def message_base(cls: type[_T]) -> type[_T]:
    """Declare the fields every message of a side has (ClientMessage's `id`), on the side's
    class: each message class declared gets them after its own, in wire order too. They are
    left out of each type's `_schema`: protocol.validate checks them on every map, of a type
    it knows or not."""
    cls._inherited = {n: f for n, f in vars(cls).items() if isinstance(f, _Declared)}
    for name in cls._inherited:
        delattr(cls, name)
    return cls


def _declare(cls: type[_T], kind: str) -> type[_T]:
    own = inspect.get_annotations(cls)
    inherited = {n: f for n, f in cls._inherited.items() if n not in own}
    if inherited:  # (after the class's own fields, as the class's own)
        written = {n: a for c in cls.__mro__[:0:-1] for n, a in inspect.get_annotations(c).items()}
        cls.__annotations__ = {**own, **{n: written[n] for n in inherited}}
        for name, declared_field in inherited.items():
            setattr(cls, name, declared_field)
    made, fields = _declare_fields(cls, cls._inherited, {"TYPE": kind, "_head": {"type": kind}})
    defaults = records.record_defaults(made)
    unranged = [n for n in made._names if n not in fields or fields[n].range is None]
    if unranged:
        raise TypeError(f"{cls.__name__}: no range declared for {', '.join(unranged)}")
    made._schema = {
        made._wire_names.get(n, n): records.replaced(
            f.range, required=n not in defaults if f.required is None else f.required
        )
        for n, f in fields.items()
        if n not in cls._inherited and f.range is not None
    }
    made._shown = {made._wire_names.get(n, n): f.shows for n, f in fields.items() if f.shows}
    _DECLARED.append(made)
    return made


def _declare_fields(
    cls: type[_W], inherited: Mapping[str, _Declared], attributes: dict[str, object]
) -> tuple[type[_W], dict[str, _Declared]]:
    """The record made of `cls` (with `attributes` set on it), written and read by its
    fields' declarations (`field`, and `inherited`'s for those the class does not declare
    again), and those declarations by field name."""
    fields: dict[str, _Declared] = {}
    for name, value in list(vars(cls).items()):
        if isinstance(value, _Declared):
            fields[name] = value
            if value.default is _Required.REQUIRED:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
    for name, base_field in inherited.items():
        fields.setdefault(name, base_field)  # (declared again on the class: its default kept)
    made = records.build(cls, _reader_source, ("_read",), **attributes)
    names = made._names
    defaults = records.record_defaults(made)
    made._wire_names = {n: f.key for n, f in fields.items() if f.key is not None}
    made._codecs = {n: f.codec for n, f in fields.items() if f.codec is not None}
    made._required = frozenset(n for n, f in fields.items() if f.required and n in defaults)
    made._fields = tuple(
        (
            n,
            made._wire_names.get(n, n),
            _left_out_as(fields.get(n), n, defaults),
            _encoder(fields, n),
        )
        for n in names
    )
    return made, fields


def _left_out_as(declared: _Declared | None, name: str, defaults: Mapping[str, Any]) -> object:
    """The value field `name` is left out of the map as (`_SENT`: none): its default, if that
    is None and it is not declared `omit=False`, or if it is declared `omit=True`."""
    omit = None if declared is None else declared.omit
    if name not in defaults or omit is False or (omit is None and defaults[name] is not None):
        return _SENT
    return defaults[name]


def _encoder(fields: Mapping[str, _Declared], name: str) -> Callable[[Any], Any] | None:
    codec = fields[name].codec if name in fields else None
    return None if codec is None else codec.encode


def _reader_source(
    cls: type[WireValue], names: tuple[str, ...], defaults: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The reader of `cls`'s maps, written out from its declaration as a function of its
    own (as dataclasses writes `__init__`): `cls(data["card"], data.get("id", d1))`, each field
    read by its wire name, a left out one given its default (`d1`, as `__init__` names it)
    unless it is declared `required`, through its codec's decoder if it has one
    (`c1(data["rounds"])`). Four times quicker than reading the fields in a loop, and every
    message a server reads goes through one."""
    args = []
    decoders: dict[str, Any] = {}
    for n, name in enumerate(names):
        key = cls._wire_names.get(name, name)
        optional = name in defaults and name not in cls._required
        read = f"data.get({key!r}, d{n})" if optional else f"data[{key!r}]"
        codec = cls._codecs.get(name)
        if codec is not None and codec.decode is not None:
            decoders[f"c{n}"] = codec.decode
            read = f"c{n}({read})"
        args.append(read)
    return f"def _read(data):\n    return cls({', '.join(args)})\n", decoders


class ServerMessage(Message):
    """A message the server sends."""

    __slots__ = ()

    def answering(self, reply_to: int | None) -> Self:
        """This message as the answer to a request with `id` `reply_to` (None: as it is)."""
        if reply_to is None or "reply_to" not in self._names:
            return self
        return self.replaced(reply_to=reply_to)


@message_base
class ClientMessage(Message):
    """A message a client sends; `id` is optional on every one (its range, ID_RANGE, is
    protocol.validate's to check on any map)."""

    __slots__ = ()
    id: int | None = field(ID_RANGE, default=None, kw_only=True)
