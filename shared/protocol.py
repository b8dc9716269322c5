"""The wire protocol, sans-I/O: frames, message names, error codes and a validator per message.

A frame is a 4-byte big-endian length N, then N bytes: one msgpack map with a "type" key.
PROTOCOL.md is the full description; messages.py holds each message as a typed value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import msgpack

from .records import record

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
REMATCH_STATUS = "rematch_status"
LEDGER = "ledger"
LOBBY = "lobby"
# CHAT, PING and PONG go both ways, and HISTORY and HISTORY_HAND are answered in kind.
GOODBYE = "goodbye"
AWAY_SUMMARY = "away_summary"

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
NO_SUCH_HAND = "no_such_hand"
NO_REMATCH = "no_rematch"
NO_COACH = "no_coach"
COACH_BUSY = "coach_busy"
ILLEGAL_ACTION = "illegal_action"
STORAGE_ERROR = "storage_error"
INTERNAL_ERROR = "internal_error"
# Sent when another connection resumed this one's seat with its token: not fatal.
SEAT_RESUMED_ELSEWHERE = "seat_resumed_elsewhere"
# A field of the right type whose value is out of its range, where no other code says more:
# not fatal; `detail` names the field.
BAD_VALUE = "bad_value"

#: The codes that close the connection: framing and shape, and the session's.
FATAL_CODES = frozenset({BAD_FRAME, FRAME_TOO_LARGE, BAD_MSGPACK, BAD_MESSAGE, UNKNOWN_TYPE}) | {
    VERSION_MISMATCH,
    HELLO_FIRST,
    HANDSHAKE_TIMEOUT,
    IDLE_TIMEOUT,
    RATE_LIMITED,
    TOO_MANY_CONNECTIONS,
    SERVER_SHUTTING_DOWN,
}


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


def _s(max_len: int, required: bool = False, min_len: int = 0, code: str = BAD_VALUE) -> Field:
    return Field("str", required, max_len=max_len, min_len=min_len, code=code)


def _i(
    low: int, high: int, required: bool = False, nullable: bool = False, code: str = BAD_VALUE
) -> Field:
    return Field("int", required, nullable, low=low, high=high, code=code)


def _n(low: float, high: float, nullable: bool = False, code: str = BAD_VALUE) -> Field:
    return Field("number", False, nullable, low=low, high=high, code=code)


MAX_OPTION_LEN = 32
_ID = _i(0, MAX_ID)
_TABLE_ID = _i(1, MAX_ID, required=True, code=NO_SUCH_TABLE)
_CARD = _s(MAX_CARD_LEN, required=True, min_len=2)
_SEAT = _i(0, 4, nullable=True, code=NO_SUCH_SEAT)
_SEAT_STAKE = _i(1, MAX_STAKE)

#: Every message a client may send, with its fields (besides "type" and the optional "id").
CLIENT_MESSAGES: dict[str, dict[str, Field]] = {
    HELLO: {
        "version": _i(0, MAX_ID, required=True, code=VERSION_MISMATCH),
        "name": _s(MAX_NAME_LEN, required=True, code=BAD_NAME),
        "client": _s(64, code=BAD_MESSAGE),
    },
    LIST_TABLES: {"after": _i(0, MAX_ID), "limit": _i(1, PAGE_SIZE)},
    CREATE_TABLE: {
        "name": _s(MAX_TABLE_NAME_LEN, required=True, code=BAD_TABLE),
        "rules": Field("options", max_len=MAX_RULE_OPTIONS, code=BAD_RULES),
        "stake": _i(1, MAX_STAKE, code=BAD_TABLE),
        "unit": _s(MAX_UNIT_LEN, code=BAD_TABLE),
        "seats": _i(2, 5, code=BAD_TABLE),
        "turn_timer": _n(0, 3600, nullable=True, code=BAD_TABLE),
        "hands": _i(1, 100_000, nullable=True, code=BAD_TABLE),
        "minutes": _n(0, 100_000, nullable=True, code=BAD_TABLE),
        "bot_pause": _n(0, 10, code=BAD_TABLE),
        "sit": Field("bool"),
        "seed": _i(0, 2**63 - 1, code=BAD_TABLE),
        "deck": _s(MAX_DECK_LEN, code=BAD_TABLE),
        "dealer": _i(0, 4, code=BAD_TABLE),
    },
    SIT: {"table": _TABLE_ID, "seat": _SEAT, "stake": _SEAT_STAKE},
    RESUME: {"table": _TABLE_ID, "token": _s(MAX_TOKEN_LEN, required=True, code=BAD_TOKEN)},
    WATCH: {"table": _TABLE_ID},
    LEAVE: {},
    ADD_BOT: {"strategy": _s(16, code=BAD_BOT), "seat": _SEAT, "stake": _SEAT_STAKE},
    REMOVE_BOT: {"seat": _i(0, 4, required=True, code=NO_SUCH_SEAT)},
    START: {},
    CHAT: {"text": _s(MAX_CHAT_LEN, required=True, code=BAD_CHAT)},
    BACK: {},
    HISTORY: {
        "table": _i(1, MAX_ID, required=True, code=NOT_AT_TABLE),
        "before": _i(1, MAX_ID, code=NO_SUCH_HAND),
        "limit": _i(1, HISTORY_PAGE),
    },
    HISTORY_HAND: {
        "table": _i(1, MAX_ID, required=True, code=NOT_AT_TABLE),
        "hand": _i(1, MAX_ID, required=True, code=NO_SUCH_HAND),
        "from": _i(0, MAX_ID),
    },
    REMATCH: {"answer": Field("bool", True)},
    DROP: {},
    DRAW_STOCK: {},
    TAKE_DISCARD: {},
    SPREAD: {"cards": Field("cards", True, max_len=MAX_SPREAD_CARDS)},
    HIT: {"card": _CARD, "spread": _i(0, MAX_ID, required=True)},
    DISCARD: {"card": _CARD},
    PING: {"n": _i(0, 2**53)},
    PONG: {"n": _i(0, 2**53)},
    BYE: {},
    PLAY_FOR_NOW: {"seat": _i(0, 4, required=True, code=NO_SUCH_SEAT)},
    TAKE_BOT_SEAT: {"table": _TABLE_ID, "seat": _i(0, 4, required=True, code=NO_SUCH_SEAT)},
    SEAT_TO_BOT: {"seat": _i(0, 4, required=True, code=NO_SUCH_SEAT)},
    STANDINGS: {"period": _s(16)},
    COACH: {
        "table": _i(1, MAX_ID, required=True, code=NOT_AT_TABLE),
        "hand": _i(1, MAX_ID, required=True, code=NO_SUCH_HAND),
        "step": _i(0, MAX_ID),
    },
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
        "reply_to": _ID,
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
    TABLE: {"table": Field("map", True), "reply_to": _ID},
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
        "reply_to": _ID,
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
        "settle_up": Field("list", True),
        "combined": Field("map", False, nullable=True),
        "rematch": _n(0, math.inf, nullable=True),
    },
    REMATCH_STATUS: {
        "table": _TABLE_ID,
        "seats": Field("list", True),
        "outcome": _s(16, required=True),
        "seconds": _n(0, math.inf, nullable=True),
        "next": _i(1, MAX_ID, nullable=True),
        "reply_to": _ID,
    },
    LEDGER: {
        "table": _TABLE_ID,
        "names": Field("list", True),
        "hands": Field("list", True),
        "balances": Field("map", True),
    },
    HISTORY: {
        "table": _TABLE_ID,
        "hands": Field("list", True),
        "total": _i(0, MAX_ID, required=True),
        "more": Field("bool", True),
        "unit": _s(MAX_UNIT_LEN, required=True),
        "balances": Field("map", True),
        "settle_up": Field("list", True),
        "reply_to": _ID,
    },
    HISTORY_HAND: {
        "table": _TABLE_ID,
        "hand": _i(1, MAX_ID, required=True),
        "seat": _i(0, 4, required=True, nullable=True),
        "names": Field("list", True),
        "rules": Field("map", True),
        "steps": Field("list", True),
        "from": _i(0, MAX_ID, required=True),
        "total": _i(1, MAX_ID, required=True),
        "reply_to": _ID,
    },
    CHAT: {
        "table": _TABLE_ID,
        "name": _s(MAX_NAME_LEN, required=True),
        "seat": _i(0, 4, nullable=True),
        "text": _s(MAX_CHAT_LEN, required=True),
        "reply_to": _ID,
    },
    PING: {"n": _i(0, 2**53)},
    PONG: {"n": _i(0, 2**53), "reply_to": _ID},
    GOODBYE: {"reason": _s(64, required=True), "message": _s(4096, required=True)},
    AWAY_SUMMARY: {
        "table": _TABLE_ID,
        "turns": _i(0, MAX_ID, required=True),
        "hands": Field("list", True),
        "net": _i(-(2**53), 2**53, required=True),
        "hand": _i(0, MAX_ID, required=True),
        "played_for": Field("list", True),
    },
    STANDINGS: {
        "period": _s(16, required=True),
        "tonight": _s(10, required=True),
        "since": Field("str", True, True, max_len=10),
        "zone": _s(64, required=True),
        "unit": Field("str", True, True, max_len=MAX_UNIT_LEN),
        "people": Field("list", True),
        "bots": Field("list", True),
        "more": Field("bool", True),
        "reply_to": _ID,
    },
    COACH: {
        "table": _TABLE_ID,
        "hand": _i(1, MAX_ID, required=True),
        "step": _i(0, MAX_ID, required=True, nullable=True),
        "advice": Field("map", True),
        "reply_to": _ID,
    },
}


def validate(message: Mapping[str, Any], schema: Mapping[str, dict[str, Field]]) -> None:
    """Raise ProtocolError unless `message` is a known message of `schema` with exactly its
    fields (unknown field names are refused), every field of the right type, and every value
    in its range. A message whose only fault is a value out of range raises OutOfRange (its
    code is the field's, not fatal) for the first such field."""
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
        spec = _ID if name == "id" and schema is CLIENT_MESSAGES else fields.get(name)
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


def validate_client(message: Mapping[str, Any]) -> None:
    validate(message, CLIENT_MESSAGES)


def validate_server(message: Mapping[str, Any]) -> None:
    validate(message, SERVER_MESSAGES)


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


def ranges_table() -> str:
    """Every client field with a range, as the Markdown table in PROTOCOL.md ("Ranges"):
    message, field, range, and the error a value out of it gets."""
    lines = ["| message | field | range | out of range |", "|---|---|---|---|"]
    rows = [("(any)", "id", _ID)]
    rows += [
        (kind, name, spec)
        for kind, fields in CLIENT_MESSAGES.items()
        for name, spec in fields.items()
        if spec.kind not in ("bool", "map", "list")
    ]
    for kind, name, spec in rows:
        code = f"`{spec.code}`" + (" (fatal)" if kind == HELLO else "")
        lines.append(f"| `{kind}` | `{name}` | {spec.allowed()} | {code} |")
    return "\n".join(lines) + "\n"


def is_printable_text(text: str) -> bool:
    """Printable text only: no control or format characters (newlines included), not blank."""
    return bool(text.strip()) and text.isprintable()
