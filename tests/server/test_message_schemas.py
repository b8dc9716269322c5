"""Every message's fields and ranges, as the validator reads them, against a copy of them made
by hand: a change to what a message may carry is a change of this file too, made on purpose
(and of PROTOCOL.md), never one that slips in with the code that declares the messages."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest
from tonk.server import requests
from tonk.shared.records import replaced
from tonk.shared.wire import link
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.handlers import Handlers
from tonk.shared.wire.wire import ClientMessage, declared, field, message_type

INF = math.inf
#: (field, kind, required, nullable, max_len, min_len, low, high, code), in the order declared.
Row = tuple[str, str, bool, bool, int, int, float, float, str]

CLIENT: dict[str, list[Row]] = {
    "hello": [
        ("version", "int", True, False, 0, 0, 0, 2147483647, "version_mismatch"),
        ("name", "str", True, False, 64, 0, -INF, INF, "bad_name"),
        ("client", "str", False, False, 64, 0, -INF, INF, "bad_message"),
    ],
    "list_tables": [
        ("after", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
        ("limit", "int", False, False, 0, 0, 1, 100, "bad_value"),
    ],
    "create_table": [
        ("name", "str", True, False, 64, 0, -INF, INF, "bad_table"),
        ("rules", "options", False, False, 20, 0, -INF, INF, "bad_rules"),
        ("stake", "int", False, False, 0, 0, 1, 1000000, "bad_table"),
        ("unit", "str", False, False, 16, 0, -INF, INF, "bad_table"),
        ("seats", "int", False, False, 0, 0, 2, 5, "bad_table"),
        ("turn_timer", "number", False, True, 0, 0, 0, 3600, "bad_table"),
        ("hands", "int", False, True, 0, 0, 1, 100000, "bad_table"),
        ("minutes", "number", False, True, 0, 0, 0, 100000, "bad_table"),
        ("bot_pause", "number", False, False, 0, 0, 0, 10, "bad_table"),
        ("sit", "bool", False, False, 0, 0, -INF, INF, "bad_value"),
        ("seed", "int", False, False, 0, 0, 0, 9223372036854775807, "bad_table"),
        ("deck", "str", False, False, 208, 0, -INF, INF, "bad_table"),
        ("dealer", "int", False, False, 0, 0, 0, 4, "bad_table"),
        ("open_bot_seats", "bool", False, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "sit": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("seat", "int", False, True, 0, 0, 0, 4, "no_such_seat"),
        ("stake", "int", False, False, 0, 0, 1, 1000000, "bad_value"),
    ],
    "resume": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("token", "str", True, False, 64, 0, -INF, INF, "bad_token"),
    ],
    "watch": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
    ],
    "leave": [],
    "add_bot": [
        ("strategy", "str", False, False, 16, 0, -INF, INF, "bad_bot"),
        ("seat", "int", False, True, 0, 0, 0, 4, "no_such_seat"),
        ("stake", "int", False, False, 0, 0, 1, 1000000, "bad_value"),
    ],
    "remove_bot": [
        ("seat", "int", True, False, 0, 0, 0, 4, "no_such_seat"),
    ],
    "start": [],
    "chat": [
        ("text", "str", True, False, 1000, 0, -INF, INF, "bad_chat"),
    ],
    "back": [],
    "history": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "not_at_table"),
        ("before", "int", False, False, 0, 0, 1, 2147483647, "no_such_hand"),
        ("limit", "int", False, False, 0, 0, 1, 50, "bad_value"),
    ],
    "history_hand": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "not_at_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "no_such_hand"),
        ("from", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "rematch": [
        ("answer", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "drop": [],
    "draw_stock": [],
    "take_discard": [],
    "spread": [
        ("cards", "cards", True, False, 13, 0, -INF, INF, "bad_value"),
    ],
    "hit": [
        ("card", "str", True, False, 3, 2, -INF, INF, "bad_value"),
        ("spread", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "discard": [
        ("card", "str", True, False, 3, 2, -INF, INF, "bad_value"),
    ],
    "ping": [
        ("n", "int", False, False, 0, 0, 0, 9007199254740992, "bad_value"),
    ],
    "pong": [
        ("n", "int", False, False, 0, 0, 0, 9007199254740992, "bad_value"),
    ],
    "bye": [],
    "play_for_now": [
        ("seat", "int", True, False, 0, 0, 0, 4, "no_such_seat"),
    ],
    "take_bot_seat": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("seat", "int", True, False, 0, 0, 0, 4, "no_such_seat"),
    ],
    "seat_to_bot": [
        ("seat", "int", True, False, 0, 0, 0, 4, "no_such_seat"),
    ],
    "standings": [
        ("period", "str", False, False, 16, 0, -INF, INF, "bad_value"),
    ],
    "coach": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "not_at_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "no_such_hand"),
        ("step", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "deal_value": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "no_hand"),
        ("value", "str", True, False, 64, 64, -INF, INF, "bad_value"),
    ],
}
SERVER: dict[str, list[Row]] = {
    "welcome": [
        ("version", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("server", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("name", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("limits", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("dev", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "error": [
        ("code", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("message", "str", True, False, 4096, 0, -INF, INF, "bad_value"),
        ("fatal", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
        ("detail", "str", False, False, 64, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
        ("version", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "tables": [
        ("tables", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("after", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("more", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
        ("total", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "lobby": [
        ("tables", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("removed", "list", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "table": [
        ("table", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "seated": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("seat", "int", True, False, 0, 0, 0, 4, "bad_value"),
        ("token", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "watching": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "left": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "cut": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("rounds", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("dealer", "int", True, False, 0, 0, 0, 4, "bad_value"),
    ],
    "update": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("from", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("events", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("view", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("deadline", "number", False, True, 0, 0, 0, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
        ("holders", "list", False, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "hand_end": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("settlement", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("names", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("payments", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("balances", "map", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "session_end": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hands", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("standings", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reason", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("settle_up", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("combined", "map", False, True, 0, 0, -INF, INF, "bad_value"),
        ("rematch", "number", False, True, 0, 0, 0, INF, "bad_value"),
    ],
    "rematch_status": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("seats", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("outcome", "str", True, False, 16, 0, -INF, INF, "bad_value"),
        ("seconds", "number", False, True, 0, 0, 0, INF, "bad_value"),
        ("next", "int", False, True, 0, 0, 1, 2147483647, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "ledger": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("names", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("hands", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("balances", "map", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "history": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hands", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("total", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("more", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
        ("unit", "str", True, False, 16, 0, -INF, INF, "bad_value"),
        ("balances", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("settle_up", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "history_hand": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("seat", "int", True, True, 0, 0, 0, 4, "bad_value"),
        ("names", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("rules", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("steps", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("from", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("total", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("occupants", "list", False, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "chat": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("name", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("seat", "int", False, True, 0, 0, 0, 4, "bad_value"),
        ("text", "str", True, False, 1000, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "ping": [
        ("n", "int", False, False, 0, 0, 0, 9007199254740992, "bad_value"),
    ],
    "pong": [
        ("n", "int", False, False, 0, 0, 0, 9007199254740992, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "goodbye": [
        ("reason", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("message", "str", True, False, 4096, 0, -INF, INF, "bad_value"),
    ],
    "away_summary": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("turns", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("hands", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("net", "int", True, False, 0, 0, -9007199254740992, 9007199254740992, "bad_value"),
        ("hand", "int", True, False, 0, 0, 0, 2147483647, "bad_value"),
        ("played_for", "list", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "standings": [
        ("period", "str", True, False, 16, 0, -INF, INF, "bad_value"),
        ("tonight", "str", True, False, 10, 0, -INF, INF, "bad_value"),
        ("since", "str", True, True, 10, 0, -INF, INF, "bad_value"),
        ("zone", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("unit", "str", True, True, 16, 0, -INF, INF, "bad_value"),
        ("people", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("bots", "list", True, False, 0, 0, -INF, INF, "bad_value"),
        ("more", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "coach": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("step", "int", True, True, 0, 0, 0, 2147483647, "bad_value"),
        ("advice", "map", True, False, 0, 0, -INF, INF, "bad_value"),
        ("reply_to", "int", False, False, 0, 0, 0, 2147483647, "bad_value"),
    ],
    "deal_commit": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("commitment", "str", True, True, 64, 0, -INF, INF, "bad_value"),
        ("wait", "number", True, False, 0, 0, 0, 60, "bad_value"),
        ("dev", "bool", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
    "deal_reveal": [
        ("table", "int", True, False, 0, 0, 1, 2147483647, "no_such_table"),
        ("hand", "int", True, False, 0, 0, 1, 2147483647, "bad_value"),
        ("secret", "str", True, False, 64, 0, -INF, INF, "bad_value"),
        ("values", "list", True, False, 0, 0, -INF, INF, "bad_value"),
    ],
}


def rows(schema: Mapping[str, Mapping[str, p.Field]]) -> dict[str, list[Row]]:
    return {
        kind: [
            (name, f.kind, f.required, f.nullable, f.max_len, f.min_len, f.low, f.high, f.code)
            for name, f in fields.items()
        ]
        for kind, fields in schema.items()
    }


def test_every_client_message_carries_the_fields_and_ranges_written_down() -> None:
    assert rows(m.CLIENT_MESSAGES) == CLIENT
    assert list(m.CLIENT_MESSAGES) == list(CLIENT)


def test_every_server_message_carries_the_fields_and_ranges_written_down() -> None:
    assert rows(m.SERVER_MESSAGES) == SERVER
    assert list(m.SERVER_MESSAGES) == list(SERVER)


def test_every_client_message_has_one_handler_and_a_missing_one_is_caught() -> None:
    handlers = requests.HANDLERS
    assert handlers.taken | link.LINK_MESSAGES == set(m.CLIENT_TYPES.values())
    assert handlers.get(m.DiscardRequest) is handlers.get(m.HitRequest) is requests.Requests._action
    without_chat = Handlers[m.ClientMessage, object]("handlers")
    for kind in handlers.taken - {m.Chat}:
        without_chat.add([kind], handlers.get(kind))
    with pytest.raises(TypeError, match="none for \\['Chat'\\]"):
        without_chat.check(m.CLIENT_TYPES.values(), elsewhere=link.LINK_MESSAGES)
    with pytest.raises(TypeError, match="DiscardRequest has two handlers"):
        requests.handles(m.DiscardRequest)(requests.Requests._action)
    with pytest.raises(TypeError, match="two for \\['Hello'\\]"):
        without_chat.add([m.Hello], None)
        without_chat.check(m.CLIENT_TYPES.values(), elsewhere=link.LINK_MESSAGES)


def test_a_message_without_a_range_for_a_field_is_refused_where_it_is_declared() -> None:
    with pytest.raises(TypeError, match="no range declared for card"):

        @message_type("unranged")
        class Unranged(ClientMessage):
            card: str
            id: int | None = None


def test_a_message_declared_is_in_its_module_s_registry_with_its_schema() -> None:
    @message_type("nudge")
    class Nudge(ClientMessage):
        seat: int = field(p.SEAT_RANGE)
        note: str | None = field(p.string(9), default=None)
        id: int | None = None

    assert declared(ClientMessage, __name__) == {"nudge": Nudge}
    assert Nudge._schema == {
        "seat": replaced(p.SEAT_RANGE, required=True),
        "note": replaced(p.string(9), required=False),
    }
    assert Nudge(2).to_wire() == {"type": "nudge", "seat": 2}  # (note None: left out)

    @message_type("nudge")
    class Again(ClientMessage):
        id: int | None = None

    with pytest.raises(TypeError, match="Again and Nudge: 'nudge'"):
        declared(ClientMessage, __name__)
