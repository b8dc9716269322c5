"""The wire protocol, sans-I/O: frames, message names, error codes, the ranges of fields and the
validator (each message declares its fields with their ranges on its class: messages.py).

A frame is a 4-byte big-endian length N, then N bytes: one msgpack map with a "type" key.
PROTOCOL.md is the full description; messages.py holds each message as a typed value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import msgpack

from ..records import record
from ..terms import *  # noqa: F403 (every error code, read with the protocol: p.BAD_VALUE)
from ..terms import (
    BAD_FRAME,
    BAD_MESSAGE,
    BAD_MSGPACK,
    BAD_VALUE,
    FRAME_TOO_LARGE,
    NO_SUCH_SEAT,
    NO_SUCH_TABLE,
    UNKNOWN_TYPE,
)

#: Version 2 (from 1): a spread's `cards` is one string like every other list of cards; every
#: value of the right type but out of its range is a non-fatal error naming the field; `rules`
#: in a view or a table carries every option; `goodbye` has a `reason` code and a `message`;
#: more answers carry `reply_to`; the lobby is live (`tables` in pages, `lobby` changes).
#: Version 3 (from 2): messages and fields a version 2 client cannot read (history, rematch,
#: standings, waiting for a friend, a table's `changes`); from 3 on, a client skips a message
#: type or a field it does not know (see PROTOCOL.md, "Versions").
PROTOCOL_VERSION = 3
#: The port a server listens on, and a client connects to, unless told another.
DEFAULT_PORT = 7777

#: The largest frame a client may send (the length prefix not included).
MAX_CLIENT_FRAME = 16 * 1024
#: The largest frame the server sends; a client must accept frames up to this size.
MAX_SERVER_FRAME = 1024 * 1024
HEADER_SIZE = 4

# Hard caps checked by the validator; the server's configured limits may be lower.
MAX_NAME_LEN = 64
MAX_CHAT_LEN = 1000
MAX_TABLE_NAME_LEN = 64
MAX_UNIT_LEN = 16
MAX_TOKEN_LEN = 64
MAX_CARD_LEN = 3
MAX_SPREAD_CARDS = 13
MAX_RULE_OPTIONS = 20
MAX_DECK_LEN = 52 * 4
MAX_ID = 2**31 - 1
MAX_STAKE = 1_000_000
#: The `ledger` message carries at most this many settled hands (the newest).
LEDGER_HANDS = 200
#: A `tables` page holds at most this many tables (and this many unless `limit` says fewer).
PAGE_SIZE = 100
#: A `history` page holds at most this many hands (and this many unless `limit` says fewer).
HISTORY_PAGE = 50
#: A `history_hand` answer holds at most this many of the hand's steps (the rest: `from`).
HISTORY_STEPS = 200
#: A `standings` answer lists at most this many people, and as many bots (the first by rank).
STANDINGS_ROWS = 500

# -- message types, client to server ---------------------------------------------------------
HELLO = "hello"
LIST_TABLES = "list_tables"
CREATE_TABLE = "create_table"
SIT = "sit"
RESUME = "resume"
WATCH = "watch"
LEAVE = "leave"
ADD_BOT = "add_bot"
REMOVE_BOT = "remove_bot"
START = "start"
CHAT = "chat"
BACK = "back"
HISTORY = "history"
HISTORY_HAND = "history_hand"
REMATCH = "rematch"
DROP = "drop"
DRAW_STOCK = "draw_stock"
TAKE_DISCARD = "take_discard"
SPREAD = "spread"
HIT = "hit"
DISCARD = "discard"
PING = "ping"
PONG = "pong"
BYE = "bye"
PLAY_FOR_NOW = "play_for_now"
TAKE_BOT_SEAT = "take_bot_seat"
SEAT_TO_BOT = "seat_to_bot"
STANDINGS = "standings"  # both ways: the request and its answer
COACH = "coach"  # both ways: the question and the coach's answer
DEAL_VALUE = "deal_value"

# -- message types, server to client ---------------------------------------------------------
WELCOME = "welcome"
ERROR = "error"
TABLES = "tables"
TABLE = "table"
SEATED = "seated"
WATCHING = "watching"
LEFT = "left"
CUT = "cut"
UPDATE = "update"
HAND_END = "hand_end"
SESSION_END = "session_end"
REMATCH_STATUS = "rematch_status"
LEDGER = "ledger"
LOBBY = "lobby"
# CHAT, PING and PONG go both ways, and HISTORY and HISTORY_HAND are answered in kind.
GOODBYE = "goodbye"
AWAY_SUMMARY = "away_summary"
DEAL_COMMIT = "deal_commit"
DEAL_REVEAL = "deal_reveal"


class ProtocolError(Exception):
    """A frame or message the protocol does not allow; `code` is one of the error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class OutOfRange(ProtocolError):
    """A message of the right shape and types with a value out of its range (PROTOCOL.md,
    "Ranges"): refused without closing the connection. `field` is the field's name."""

    def __init__(self, code: str, message: str, field: str) -> None:
        super().__init__(code, message)
        self.field = field


# -- framing ---------------------------------------------------------------------------------


def encode(message: Mapping[str, Any], max_frame: int = MAX_SERVER_FRAME) -> bytes:
    """One frame: the length prefix and the msgpack map. Raises ProtocolError if over
    `max_frame` (a bug in the sender: the receiver would refuse it)."""
    payload = msgpack.packb(message, use_bin_type=True)
    if len(payload) > max_frame:
        raise ProtocolError(
            FRAME_TOO_LARGE, f"a {message.get('type')} frame of {len(payload)} bytes is too large"
        )
    return len(payload).to_bytes(HEADER_SIZE, "big") + payload


def decode_payload(payload: bytes) -> dict[str, Any]:
    """The message in one frame's payload: a msgpack map with a string "type"."""
    try:
        # unpackb caps every inner length by len(payload); strict_map_key refuses
        # non-string keys; extension types are refused by _no_ext.
        obj = msgpack.unpackb(
            payload, raw=False, strict_map_key=True, use_list=True, ext_hook=_no_ext, timestamp=0
        )
    except Exception as exc:  # msgpack raises many kinds; any of them means not msgpack
        raise ProtocolError(BAD_MSGPACK, f"the frame is not one msgpack value: {exc}") from None
    if b"\xff" in payload and _holds_timestamp(obj):
        raise ProtocolError(BAD_MSGPACK, "extension types (the timestamp too) are not allowed")
    if not isinstance(obj, dict):
        raise ProtocolError(BAD_MESSAGE, "a message must be a msgpack map")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, 'a message must have a string "type"')
    return obj


def _no_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"extension type {code} is not allowed")


def _holds_timestamp(obj: Any) -> bool:
    """Whether a timestamp is anywhere in `obj`: msgpack decodes its timestamp extension
    itself, never through `ext_hook`. (Its type byte is -1, 0xff: a payload without that byte
    holds none, and is not searched.)"""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, msgpack.Timestamp):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class FrameDecoder:
    """Incremental decoder: `feed` it bytes as they arrive, then iterate `messages()`.

    Never holds more than one frame's worth of bytes past what it has yielded: a length over
    `max_frame` is refused as soon as its 4-byte prefix arrives. After a ProtocolError the
    decoder is poisoned: every later call raises the same error.
    """

    def __init__(self, max_frame: int = MAX_CLIENT_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._buffer += data

    def messages(self) -> Iterator[dict[str, Any]]:
        """Every complete message fed so far, in order; stops at an incomplete frame."""
        while True:
            message = self.next_message()
            if message is None:
                return
            yield message

    def ready(self) -> bool:
        """Whether `next_message` has something to give: a whole frame, or a fault (a length
        over the limit, an empty frame, an earlier error)."""
        buffer = self._buffer
        if self._error is not None:
            return True
        if len(buffer) < HEADER_SIZE:
            return False
        size = int.from_bytes(buffer[:HEADER_SIZE], "big")
        return size > self.max_frame or size == 0 or len(buffer) >= HEADER_SIZE + size

    def next_message(self) -> dict[str, Any] | None:
        if self._error is not None:
            raise self._error
        buffer = self._buffer
        if len(buffer) < HEADER_SIZE:
            return None
        size = int.from_bytes(buffer[:HEADER_SIZE], "big")
        try:
            if size > self.max_frame:
                raise ProtocolError(
                    FRAME_TOO_LARGE,
                    f"a frame of {size} bytes is over the limit of {self.max_frame}",
                )
            if size == 0:
                raise ProtocolError(BAD_FRAME, "an empty frame")
            if len(buffer) < HEADER_SIZE + size:
                return None
            payload = bytes(buffer[HEADER_SIZE : HEADER_SIZE + size])
            del buffer[: HEADER_SIZE + size]
            return decode_payload(payload)
        except ProtocolError as exc:
            self._error = exc
            self._buffer = bytearray()
            raise


# -- validation ------------------------------------------------------------------------------


@record
class Field:
    """One field of a message: its wire type and its range. `kind` is one of str, int,
    number, bool, cards (one string of card texts), options (map of rule options), map, list.
    A value of the wrong type is a fatal `bad_message`; one of the right type out of its range
    is the non-fatal error `code` (OutOfRange)."""

    kind: str
    required: bool = False
    nullable: bool = False
    max_len: int = 0
    min_len: int = 0
    low: float = -math.inf
    high: float = math.inf
    code: str = BAD_VALUE

    def allowed(self) -> str:
        """The range in words, as PROTOCOL.md ("Ranges") writes it."""
        kind = self.kind
        if kind == "str":
            text = f"{self.min_len} to {self.max_len} characters"
        elif kind in ("int", "number"):
            text = f"{_number(self.low)} to {_number(self.high)}"
        elif kind == "cards":
            text = f"up to {self.max_len} cards, each 2 or 3 characters"
        elif kind == "options":
            text = (
                f"up to {self.max_len} options; a name up to {MAX_OPTION_LEN} characters; a "
                f"value true/false, nil, an integer from -2,147,483,648 to 2,147,483,647 or a "
                f"string up to {MAX_OPTION_LEN} characters"
            )
        else:
            text = "any"
        return f"{text}, or nil" if self.nullable else text


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def string(max_len: int, min_len: int = 0, nullable: bool = False, code: str = BAD_VALUE) -> Field:
    """A string's range: `min_len` to `max_len` characters."""
    return Field("str", nullable=nullable, max_len=max_len, min_len=min_len, code=code)


def integer(low: int, high: int, nullable: bool = False, code: str = BAD_VALUE) -> Field:
    """A whole number's range: `low` to `high`."""
    return Field("int", nullable=nullable, low=low, high=high, code=code)


def number(low: float, high: float, nullable: bool = False, code: str = BAD_VALUE) -> Field:
    """A number's range (whole or not): `low` to `high`."""
    return Field("number", nullable=nullable, low=low, high=high, code=code)


MAX_OPTION_LEN = 32
# The ranges several messages share, and the kinds that have none. (A message declares its
# fields with their ranges on its class: client_messages.py, server_messages.py.)
ID_RANGE = integer(0, MAX_ID)
TABLE_RANGE = integer(1, MAX_ID, code=NO_SUCH_TABLE)
CARD_RANGE = string(MAX_CARD_LEN, min_len=2)
SEAT_RANGE = integer(0, 4, nullable=True, code=NO_SUCH_SEAT)
STAKE_RANGE = integer(1, MAX_STAKE)
BOOL = Field("bool")
MAP = Field("map")
LIST = Field("list")


def validate(
    message: Mapping[str, Any],
    schema: Mapping[str, Mapping[str, Field]],
    ids: Field | None = None,
) -> None:
    """Raise ProtocolError unless `message` is a known message of `schema` with exactly its
    fields (unknown field names are refused; `ids`: the range of an `id` every message may
    carry), every field of the right type, and every value in its range. A message whose
    only fault is a value out of range raises OutOfRange (its code is the field's, not
    fatal) for the first such field."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, 'a message must have a string "type"')
    fields = schema.get(kind)
    if fields is None:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}")
    out_of_range: OutOfRange | None = None
    for name, value in message.items():
        if name == "type":
            continue
        spec = fields.get(name)
        if spec is None and name == "id":
            spec = ids
        if spec is None:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: unknown field {name[:40]!r}")
        problem = _type_problem(spec, value)
        if problem:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: field {name!r} {problem}")
        if out_of_range is None and value is not None and not _in_range(spec, value):
            out_of_range = OutOfRange(
                spec.code,
                f"{kind}: {name} must be {spec.allowed()}, not {_out_of_range(spec, value)}",
                name,
            )
    for name, spec in fields.items():
        if spec.required and name not in message:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: missing field {name!r}")
    if out_of_range is not None:
        raise out_of_range


def valid_id(message: Mapping[str, Any]) -> int | None:
    """The message's `id` if it is one that may be copied as `reply_to`, else None."""
    value = message.get("id")
    if type(value) is int and 0 <= value <= MAX_ID:
        return value
    return None


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f"{len(value)} characters" if len(value) > 40 else repr(value)
    return repr(value)[:40]


def _out_of_range(spec: Field, value: Any) -> str:
    """What is out of the field's range in `value`, in the words of `Field.allowed` (the part
    at fault: too many cards or one card too long, an option's name or value, not the whole)."""
    if spec.kind == "cards":
        words = value.split()
        if len(words) > spec.max_len:
            return f"{len(words)} cards"
        for word in words:
            if not 2 <= len(word) <= MAX_CARD_LEN:
                return f"the card {_shown(word)}"
        return f"{len(value)} characters"
    if spec.kind == "options":
        if len(value) > spec.max_len:
            return f"{len(value)} options"
        for key, option in value.items():
            if len(key) > MAX_OPTION_LEN:
                return f"a name of {len(key)} characters"
            if isinstance(option, str) and len(option) > MAX_OPTION_LEN:
                return f"a value of {len(option)} characters for {_shown(key)}"
            if type(option) is int and not -(2**31) <= option < 2**31:
                return f"{option:,} for {_shown(key)}"
    return _shown(value)


def _type_problem(spec: Field, value: Any) -> str | None:
    """Why `value` is not of the field's wire type (None: it is)."""
    if value is None:
        return None if spec.nullable else "may not be nil"
    kind = spec.kind
    if kind in ("str", "cards"):
        return None if isinstance(value, str) else "must be a string"
    if kind in ("int", "number"):
        if type(value) is bool or not isinstance(value, int | float):
            return "must be a number"
        if kind == "int" and type(value) is not int:
            return "must be a whole number"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be finite"
        return None
    if kind == "bool":
        return None if type(value) is bool else "must be true or false"
    if kind == "options":
        if not isinstance(value, dict):
            return "must be a map of options"
        for key, option in value.items():
            if option is not None and not isinstance(option, bool | int | str):
                return f"option {key[:32]!r} must be a string, an integer, true/false or nil"
        return None
    if kind == "map":
        return None if isinstance(value, dict) else "must be a map"
    if kind == "list":
        return None if isinstance(value, list) else "must be a list"
    raise AssertionError(kind)


def _in_range(spec: Field, value: Any) -> bool:
    """Whether a value of the field's type is within its range."""
    kind = spec.kind
    if kind == "str":
        return spec.min_len <= len(value) <= spec.max_len
    if kind in ("int", "number"):
        return bool(spec.low <= value <= spec.high)
    if kind == "cards":
        if len(value) > spec.max_len * (MAX_CARD_LEN + 1):
            return False
        words = value.split()
        return len(words) <= spec.max_len and all(2 <= len(w) <= MAX_CARD_LEN for w in words)
    if kind == "options":
        if len(value) > spec.max_len:
            return False
        for key, option in value.items():
            if len(key) > MAX_OPTION_LEN:
                return False
            if isinstance(option, str) and len(option) > MAX_OPTION_LEN:
                return False
            if type(option) is int and not -(2**31) <= option < 2**31:
                return False
        return True
    return True


def is_printable_text(text: str) -> bool:
    """Printable text only: no control or format characters (newlines included), not blank."""
    return bool(text.strip()) and text.isprintable()
