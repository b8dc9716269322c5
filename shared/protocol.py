"""The wire protocol, sans-I/O: frames, message names, error codes and a validator per message.

A frame is a 4-byte big-endian length N, then N bytes: one msgpack map with a "type" key.
PROTOCOL.md at the top of the repository is the full description; this module is its code.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

PROTOCOL_VERSION = 2

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
DROP = "drop"
DRAW_STOCK = "draw_stock"
TAKE_DISCARD = "take_discard"
SPREAD = "spread"
HIT = "hit"
DISCARD = "discard"
PING = "ping"
PONG = "pong"
BYE = "bye"

#: The messages that are a core action, played for the sender's seat.
ACTION_TYPES = frozenset({DROP, DRAW_STOCK, TAKE_DISCARD, SPREAD, HIT, DISCARD})

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
LEDGER = "ledger"
LOBBY = "lobby"
# CHAT, PING and PONG go both ways.
GOODBYE = "goodbye"

# -- error codes -----------------------------------------------------------------------------
# Framing and shape: always fatal (the connection is closed after the error).
BAD_FRAME = "bad_frame"
FRAME_TOO_LARGE = "frame_too_large"
BAD_MSGPACK = "bad_msgpack"
BAD_MESSAGE = "bad_message"
UNKNOWN_TYPE = "unknown_type"
# Session: fatal.
VERSION_MISMATCH = "version_mismatch"
HELLO_FIRST = "hello_first"
HANDSHAKE_TIMEOUT = "handshake_timeout"
IDLE_TIMEOUT = "idle_timeout"
RATE_LIMITED = "rate_limited"
TOO_MANY_CONNECTIONS = "too_many_connections"
SERVER_SHUTTING_DOWN = "server_shutting_down"
# Requests: not fatal, nothing changed.
BAD_NAME = "bad_name"
BAD_CHAT = "bad_chat"
BAD_RULES = "bad_rules"
BAD_TABLE = "bad_table"
DEV_ONLY = "dev_only"
TOO_MANY_TABLES = "too_many_tables"
NO_SUCH_TABLE = "no_such_table"
TABLE_FULL = "table_full"
SEAT_TAKEN = "seat_taken"
NAME_TAKEN = "name_taken"
NO_SUCH_SEAT = "no_such_seat"
ALREADY_AT_TABLE = "already_at_table"
NOT_AT_TABLE = "not_at_table"
NOT_SEATED = "not_seated"
NOT_CREATOR = "not_creator"
ALREADY_STARTED = "already_started"
NOT_ENOUGH_PLAYERS = "not_enough_players"
BAD_TOKEN = "bad_token"
BAD_BOT = "bad_bot"
NO_HAND = "no_hand"
ILLEGAL_ACTION = "illegal_action"
STORAGE_ERROR = "storage_error"
INTERNAL_ERROR = "internal_error"
# Sent when another connection resumed this one's seat with its token: not fatal.
SEAT_RESUMED_ELSEWHERE = "seat_resumed_elsewhere"

FATAL_CODES = frozenset(
    {
        BAD_FRAME,
        FRAME_TOO_LARGE,
        BAD_MSGPACK,
        BAD_MESSAGE,
        UNKNOWN_TYPE,
        VERSION_MISMATCH,
        HELLO_FIRST,
        HANDSHAKE_TIMEOUT,
        IDLE_TIMEOUT,
        RATE_LIMITED,
        TOO_MANY_CONNECTIONS,
        SERVER_SHUTTING_DOWN,
    }
)


class ProtocolError(Exception):
    """A frame or message the protocol does not allow; `code` is one of the error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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
    if not isinstance(obj, dict):
        raise ProtocolError(BAD_MESSAGE, "a message must be a msgpack map")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, 'a message must have a string "type"')
    return obj


def _no_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"extension type {code} is not allowed")


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


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message: its wire type and caps. `kind` is one of str, int, number,
    bool, cards (list of card strings), options (map of rule options), map, list."""

    kind: str
    required: bool = False
    nullable: bool = False
    max_len: int = 0
    min_len: int = 0
    low: float = -math.inf
    high: float = math.inf


def _s(max_len: int, required: bool = False, min_len: int = 0) -> Field:
    return Field("str", required, max_len=max_len, min_len=min_len)


def _i(low: int, high: int, required: bool = False, nullable: bool = False) -> Field:
    return Field("int", required, nullable, low=low, high=high)


def _n(low: float, high: float, nullable: bool = False) -> Field:
    return Field("number", False, nullable, low=low, high=high)


_ID = _i(0, MAX_ID)
_TABLE_ID = _i(1, MAX_ID, required=True)
_CARD = _s(MAX_CARD_LEN, required=True, min_len=2)

#: Every message a client may send, with its fields (besides "type" and the optional "id").
CLIENT_MESSAGES: dict[str, dict[str, Field]] = {
    HELLO: {
        "version": _i(0, MAX_ID, required=True),
        "name": _s(MAX_NAME_LEN, required=True),
        "client": _s(64),
    },
    LIST_TABLES: {"after": _i(0, MAX_ID), "limit": _i(1, PAGE_SIZE)},
    CREATE_TABLE: {
        "name": _s(MAX_TABLE_NAME_LEN, required=True),
        "rules": Field("options", max_len=MAX_RULE_OPTIONS),
        "stake": _i(1, MAX_STAKE),
        "unit": _s(MAX_UNIT_LEN),
        "seats": _i(2, 5),
        "turn_timer": _n(0, 3600, nullable=True),
        "hands": _i(1, 100_000, nullable=True),
        "minutes": _n(0, 100_000, nullable=True),
        "bot_pause": _n(0, 10),
        "sit": Field("bool"),
        "seed": _i(0, 2**63 - 1),
        "deck": _s(MAX_DECK_LEN),
        "dealer": _i(0, 4),
    },
    SIT: {"table": _TABLE_ID, "seat": _i(0, 4, nullable=True), "stake": _i(1, MAX_STAKE)},
    RESUME: {"table": _TABLE_ID, "token": _s(MAX_TOKEN_LEN, required=True)},
    WATCH: {"table": _TABLE_ID},
    LEAVE: {},
    ADD_BOT: {"strategy": _s(16), "seat": _i(0, 4, nullable=True), "stake": _i(1, MAX_STAKE)},
    REMOVE_BOT: {"seat": _i(0, 4, required=True)},
    START: {},
    CHAT: {"text": _s(MAX_CHAT_LEN, required=True)},
    BACK: {},
    DROP: {},
    DRAW_STOCK: {},
    TAKE_DISCARD: {},
    SPREAD: {"cards": Field("cards", True, max_len=MAX_SPREAD_CARDS)},
    HIT: {"card": _CARD, "spread": _i(0, MAX_ID, required=True)},
    DISCARD: {"card": _CARD},
    PING: {"n": _i(0, 2**53)},
    PONG: {"n": _i(0, 2**53)},
    BYE: {},
}

#: The top-level fields of every message the server sends (nested maps are described in
#: PROTOCOL.md; the tests check every frame the server sends against this).
SERVER_MESSAGES: dict[str, dict[str, Field]] = {
    WELCOME: {
        "version": _i(0, MAX_ID, required=True),
        "server": _s(64, required=True),
        "name": _s(MAX_NAME_LEN, required=True),
        "limits": Field("map", True),
        "dev": Field("bool", True),
    },
    ERROR: {
        "code": _s(64, required=True),
        "message": _s(4096, required=True),
        "fatal": Field("bool", True),
        "detail": _s(64),
        "reply_to": _ID,
        "version": _i(0, MAX_ID),
    },
    TABLES: {
        "tables": Field("list", True),
        "after": _i(0, MAX_ID, required=True),
        "more": Field("bool", True),
        "total": _i(0, MAX_ID, required=True),
        "reply_to": _ID,
    },
    LOBBY: {"tables": Field("list", True), "removed": Field("list", True)},
    TABLE: {"table": Field("map", True)},
    SEATED: {
        "table": _TABLE_ID,
        "seat": _i(0, 4, required=True),
        "token": _s(MAX_TOKEN_LEN, required=True),
        "reply_to": _ID,
    },
    WATCHING: {"table": _TABLE_ID, "reply_to": _ID},
    LEFT: {"table": _TABLE_ID, "reply_to": _ID},
    CUT: {
        "table": _TABLE_ID,
        "rounds": Field("list", True),
        "dealer": _i(0, 4, required=True),
    },
    UPDATE: {
        "table": _TABLE_ID,
        "hand": _i(1, MAX_ID, required=True),
        "from": _i(0, MAX_ID, required=True),
        "events": Field("list", True),
        "view": Field("map", True),
        "deadline": _n(0, math.inf, nullable=True),
    },
    HAND_END: {
        "table": _TABLE_ID,
        "hand": _i(1, MAX_ID, required=True),
        "settlement": Field("map", True),
        "names": Field("list", True),
        "payments": Field("list", True),
        "balances": Field("map", True),
    },
    SESSION_END: {
        "table": _TABLE_ID,
        "hands": _i(0, MAX_ID, required=True),
        "standings": Field("list", True),
        "reason": _s(64, required=True),
    },
    LEDGER: {
        "table": _TABLE_ID,
        "names": Field("list", True),
        "hands": Field("list", True),
        "balances": Field("map", True),
    },
    CHAT: {
        "table": _TABLE_ID,
        "name": _s(MAX_NAME_LEN, required=True),
        "seat": _i(0, 4, nullable=True),
        "text": _s(MAX_CHAT_LEN, required=True),
    },
    PING: {"n": _i(0, 2**53)},
    PONG: {"n": _i(0, 2**53)},
    GOODBYE: {"reason": _s(256, required=True)},
}


def validate(message: Mapping[str, Any], schema: Mapping[str, dict[str, Field]]) -> None:
    """Raise ProtocolError unless `message` is a known message of `schema` with exactly its
    fields (unknown field names are refused) and every field of the right type and size."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_MESSAGE, 'a message must have a string "type"')
    fields = schema.get(kind)
    if fields is None:
        raise ProtocolError(UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}")
    for name, value in message.items():
        if name == "type":
            continue
        spec = _ID if name == "id" and schema is CLIENT_MESSAGES else fields.get(name)
        if spec is None:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: unknown field {name[:40]!r}")
        problem = _check(spec, value)
        if problem:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: field {name!r} {problem}")
    for name, spec in fields.items():
        if spec.required and name not in message:
            raise ProtocolError(BAD_MESSAGE, f"{kind}: missing field {name!r}")


def validate_client(message: Mapping[str, Any]) -> None:
    validate(message, CLIENT_MESSAGES)


def validate_server(message: Mapping[str, Any]) -> None:
    validate(message, SERVER_MESSAGES)


def _check(spec: Field, value: Any) -> str | None:
    if value is None:
        return None if spec.nullable else "may not be nil"
    kind = spec.kind
    if kind == "str":
        if not isinstance(value, str):
            return "must be a string"
        if not spec.min_len <= len(value) <= spec.max_len:
            return f"must be {spec.min_len} to {spec.max_len} characters long"
        return None
    if kind in ("int", "number"):
        if type(value) is bool or not isinstance(value, int | float):
            return "must be a number"
        if kind == "int" and type(value) is not int:
            return "must be a whole number"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be finite"
        if not spec.low <= value <= spec.high:
            return f"must be between {spec.low:g} and {spec.high:g}"
        return None
    if kind == "bool":
        return None if type(value) is bool else "must be true or false"
    if kind == "cards":
        if not isinstance(value, list) or len(value) > spec.max_len:
            return f"must be a list of at most {spec.max_len} cards"
        if not all(isinstance(c, str) and 2 <= len(c) <= MAX_CARD_LEN for c in value):
            return "must hold card strings like 10s or Qh"
        return None
    if kind == "options":
        if not isinstance(value, dict) or len(value) > spec.max_len:
            return f"must be a map of at most {spec.max_len} options"
        for key, option in value.items():
            if len(key) > 32:
                return "has an option name that is too long"
            if option is not None and not isinstance(option, bool | int | str):
                return f"option {key[:32]!r} must be a string, a number, true/false or nil"
            if isinstance(option, str) and len(option) > 32:
                return f"option {key[:32]!r} is too long"
            if type(option) is int and not -(2**31) <= option < 2**31:
                return f"option {key[:32]!r} is out of range"
        return None
    if kind == "map":
        return None if isinstance(value, dict) else "must be a map"
    if kind == "list":
        return None if isinstance(value, list) else "must be a list"
    raise AssertionError(kind)


def error_message(
    code: str,
    message: str,
    *,
    reply_to: int | None = None,
    detail: str | None = None,
    fatal: bool | None = None,
) -> dict[str, Any]:
    """An error message; fatal by default for the codes that close the connection."""
    out: dict[str, Any] = {
        "type": ERROR,
        "code": code,
        "message": message,
        "fatal": code in FATAL_CODES if fatal is None else fatal,
    }
    if detail is not None:
        out["detail"] = detail
    if reply_to is not None:
        out["reply_to"] = reply_to
    return out


def is_printable_text(text: str) -> bool:
    """Printable text only: no control or format characters (newlines included), not blank."""
    return bool(text.strip()) and text.isprintable()
