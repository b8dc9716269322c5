"""The words the game and the wire share, so that both import them and neither the other: the
error codes a refusal carries, and the states of a table and a seat as str enums whose members
are the wire's strings (a map built with them packs to the same bytes). Imports nothing of tonk.
"""

from __future__ import annotations

from enum import StrEnum

#: Every word here (what `from tonk.shared.terms import *` gives protocol.py and wire.py).
__all__ = [
    "ALREADY_AT_TABLE",
    "ALREADY_STARTED",
    "BAD_BOT",
    "BAD_CHAT",
    "BAD_FRAME",
    "BAD_MESSAGE",
    "BAD_MSGPACK",
    "BAD_NAME",
    "BAD_RULES",
    "BAD_TABLE",
    "BAD_TOKEN",
    "BAD_VALUE",
    "COACH_BUSY",
    "DEV_ONLY",
    "FATAL_CODES",
    "FRAME_TOO_LARGE",
    "HANDSHAKE_TIMEOUT",
    "HELLO_FIRST",
    "IDLE_TIMEOUT",
    "ILLEGAL_ACTION",
    "INTERNAL_ERROR",
    "NAME_TAKEN",
    "NOT_AT_TABLE",
    "NOT_CREATOR",
    "NOT_ENOUGH_PLAYERS",
    "NOT_SEATED",
    "NO_COACH",
    "NO_HAND",
    "NO_REMATCH",
    "NO_SUCH_HAND",
    "NO_SUCH_SEAT",
    "NO_SUCH_TABLE",
    "RATE_LIMITED",
    "SEAT_RESUMED_ELSEWHERE",
    "SEAT_TAKEN",
    "SERVER_SHUTTING_DOWN",
    "STORAGE_ERROR",
    "TABLE_FULL",
    "TOO_MANY_CONNECTIONS",
    "TOO_MANY_TABLES",
    "UNKNOWN_TYPE",
    "VERSION_MISMATCH",
    "SeatKind",
    "SeatStatus",
    "SessionEndReason",
    "TableState",
]

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
