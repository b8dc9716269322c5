"""The wire protocol, sans-I/O: frames in and out, the decoder's refusals, the validators."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import Error
from tonk.shared.wire.wire import UNSET, ClientMessage, Unset, field, message_type


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def test_a_frame_is_a_big_endian_length_then_a_msgpack_map():
    data = p.encode({"type": "ping", "n": 3})
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    assert msgpack.unpackb(data[4:]) == {"type": "ping", "n": 3}


def test_decoder_yields_messages_split_anywhere_across_reads():
    stream = b"".join(p.encode({"type": "ping", "n": n}) for n in range(5))
    decoder = p.FrameDecoder()
    got = []
    for i in range(len(stream)):
        decoder.feed(stream[i : i + 1])
        got.extend(decoder.messages())
    assert [m["n"] for m in got] == [0, 1, 2, 3, 4]
    assert decoder.buffered == 0


def test_decoder_refuses_an_oversized_length_before_its_payload_arrives():
    decoder = p.FrameDecoder(max_frame=100)
    decoder.feed((101).to_bytes(4, "big"))
    with pytest.raises(p.ProtocolError) as caught:
        list(decoder.messages())
    assert caught.value.code == p.FRAME_TOO_LARGE


def test_decoder_is_poisoned_after_an_error():
    decoder = p.FrameDecoder()
    decoder.feed(frame(b"\xc1"))
    with pytest.raises(p.ProtocolError) as caught:
        list(decoder.messages())
    assert caught.value.code == p.BAD_MSGPACK
    with pytest.raises(p.ProtocolError):
        decoder.feed(p.encode({"type": "ping"}))


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"", p.BAD_FRAME),
        (b"\xc1", p.BAD_MSGPACK),
        (msgpack.packb({"type": "ping"}) + b"\x00", p.BAD_MSGPACK),
        (b"\x91" * 5000, p.BAD_MSGPACK),  # nested deeper than msgpack allows
        (msgpack.packb([1, 2]), p.BAD_MESSAGE),
        (msgpack.packb({"type": 5}), p.BAD_MESSAGE),
        (msgpack.packb({1: "ping"}), p.BAD_MSGPACK),  # strict_map_key
        (msgpack.packb({"type": msgpack.ExtType(5, b"x")}), p.BAD_MSGPACK),
    ],
)
def test_decoder_refusals(payload, code):
    decoder = p.FrameDecoder()
    decoder.feed(frame(payload))
    with pytest.raises(p.ProtocolError) as caught:
        list(decoder.messages())
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"type": "nope"}, p.UNKNOWN_TYPE),
        ({"type": "hello", "version": p.PROTOCOL_VERSION}, p.BAD_MESSAGE),  # missing name
        ({"type": "hello", "version": "1", "name": "a"}, p.BAD_MESSAGE),
        ({"type": "hello", "version": True, "name": "a"}, p.BAD_MESSAGE),
        ({"type": "hello", "version": p.PROTOCOL_VERSION, "name": "a", "extra": 1}, p.BAD_MESSAGE),
        ({"type": "spread", "cards": ["As"] * 14}, p.BAD_MESSAGE),
        ({"type": "spread", "cards": ["As", "2s", "3s"]}, p.BAD_MESSAGE),  # one string now
        ({"type": "create_table", "name": "t", "rules": {"players": [1]}}, p.BAD_MESSAGE),
        ({"type": "create_table", "name": "t", "turn_timer": float("nan")}, p.BAD_MESSAGE),
        # Out of range and of the wrong type: the wrong type wins (fatal).
        ({"type": "create_table", "name": "t", "seats": 1, "stake": "5"}, p.BAD_MESSAGE),
    ],
)
def test_validator_refusals(message, code):
    with pytest.raises(p.ProtocolError) as caught:
        m.validate_client(message)
    assert caught.value.code == code
    assert not isinstance(caught.value, p.OutOfRange)


@pytest.mark.parametrize(
    ("message", "code", "field"),
    [
        ({"type": "hello", "version": p.PROTOCOL_VERSION, "name": "a" * 65}, p.BAD_NAME, "name"),
        ({"type": "hello", "version": -1, "name": "a"}, p.VERSION_MISMATCH, "version"),
        ({"type": "chat", "text": "x" * 1001}, p.BAD_CHAT, "text"),
        ({"type": "spread", "cards": " ".join(["As"] * 14)}, p.BAD_VALUE, "cards"),
        ({"type": "spread", "cards": "As 2s 3sss"}, p.BAD_VALUE, "cards"),
        ({"type": "hit", "card": "As", "spread": -1}, p.BAD_VALUE, "spread"),
        ({"type": "discard", "card": "Ace of spades"}, p.BAD_VALUE, "card"),
        ({"type": "sit", "table": 1, "id": -3}, p.BAD_VALUE, "id"),
        ({"type": "sit", "table": 1, "seat": 5}, p.NO_SUCH_SEAT, "seat"),
        ({"type": "sit", "table": 0}, p.NO_SUCH_TABLE, "table"),
        ({"type": "remove_bot", "seat": 9}, p.NO_SUCH_SEAT, "seat"),
        ({"type": "create_table", "name": "t", "seats": 1}, p.BAD_TABLE, "seats"),
        ({"type": "create_table", "name": "t", "unit": "u" * 17}, p.BAD_TABLE, "unit"),
        ({"type": "create_table", "name": "t", "rules": {"x" * 33: 1}}, p.BAD_RULES, "rules"),
        ({"type": "resume", "table": 1, "token": "t" * 65}, p.BAD_TOKEN, "token"),
        ({"type": "add_bot", "strategy": "s" * 17}, p.BAD_BOT, "strategy"),
        ({"type": "ping", "n": -1}, p.BAD_VALUE, "n"),
    ],
)
def test_a_value_of_the_right_type_out_of_range_is_not_fatal_and_names_its_field(
    message, code, field
):
    with pytest.raises(p.OutOfRange) as caught:
        m.validate_client(message)
    assert (caught.value.code, caught.value.field) == (code, field)
    assert field in caught.value.message


def test_validator_accepts_every_documented_shape():
    for message in [
        {"type": "hello", "version": p.PROTOCOL_VERSION, "name": "Croaker", "client": "x"},
        {
            "type": "create_table",
            "name": "t",
            "rules": {"preset": "speno", "hit_lock": 2},
            "stake": 5,
            "unit": "cents",
            "seats": 3,
            "turn_timer": None,
            "hands": 10,
            "minutes": 1.5,
            "bot_pause": 0,
            "sit": False,
            "id": 9,
        },
        {"type": "sit", "table": 1, "seat": None},
        {"type": "spread", "cards": "10s Js Qs"},
        {"type": "hit", "card": "8s", "spread": 1},
        {"type": "ping"},
    ]:
        m.validate_client(message)


def test_every_server_message_type_has_a_schema_and_errors_are_flagged_fatal_by_code():
    assert Error.of(p.BAD_FRAME, "x").to_wire()["fatal"] is True
    assert Error.of(p.ILLEGAL_ACTION, "x").to_wire()["fatal"] is False
    m.validate_server(Error.of(p.ILLEGAL_ACTION, "x", detail="not_your_turn").to_wire())


def test_printable_text():
    assert p.is_printable_text("Croaker ♠")
    assert not p.is_printable_text("a\nb")
    assert not p.is_printable_text("zero\u200bwidth")
    assert not p.is_printable_text("   ")


@settings(max_examples=200, deadline=None)
@given(hs.binary(max_size=300))
def test_decoder_never_fails_but_with_a_protocol_error(data):
    decoder = p.FrameDecoder(max_frame=256)
    try:
        decoder.feed(data)
        for message in decoder.messages():
            m.validate_client(message)
    except p.ProtocolError as exc:
        assert exc.code in p.FATAL_CODES


_values = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.floats() | hs.text(max_size=20),
    lambda inner: hs.lists(inner, max_size=4) | hs.dictionaries(hs.text(max_size=8), inner),
    max_leaves=10,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(hs.sampled_from(sorted(m.CLIENT_MESSAGES)), hs.dictionaries(hs.text(max_size=10), _values))
def test_validator_never_fails_but_with_a_protocol_error(kind, fields):
    try:
        m.validate_client({**fields, "type": kind})
    except p.ProtocolError as exc:
        assert exc.code in (p.BAD_MESSAGE, p.UNKNOWN_TYPE)


@pytest.mark.parametrize(
    "stamp",
    [msgpack.Timestamp(1), msgpack.Timestamp(1, 5), msgpack.Timestamp(2**34, 5)],  # 4, 8, 12 B
)
def test_a_msgpack_timestamp_anywhere_is_not_msgpack_we_take(stamp):
    for message in ({"type": "chat", "text": stamp}, {"type": "ping", "x": [{"y": stamp}]}):
        decoder = p.FrameDecoder()
        decoder.feed(frame(msgpack.packb(message)))
        with pytest.raises(p.ProtocolError) as caught:
            list(decoder.messages())
        assert caught.value.code == p.BAD_MSGPACK


def test_an_integer_that_looks_like_a_timestamp_header_is_still_an_integer():
    message = {"type": "ping", "n": 0xD6FF0000}
    assert p.decode_payload(msgpack.packb(message)) == message


def test_a_fatal_error_never_carries_reply_to():
    assert "reply_to" not in Error.of(p.BAD_MESSAGE, "x", reply_to=4).to_wire()
    assert "reply_to" not in Error.of(p.BAD_NAME, "x", reply_to=4, fatal=True).to_wire()
    assert Error.of(p.BAD_TABLE, "x", reply_to=4).to_wire()["reply_to"] == 4


def test_rules_on_the_wire_carry_every_option_and_read_back_equal():
    from tonk.shared.game.rules import PRESETS, HouseRules

    for rules in [*PRESETS.values(), PRESETS["speno"].with_options({"hit_lock": 2})]:
        wire = rules.to_wire()
        assert set(wire) == {"preset", *rules.options()}
        assert HouseRules.from_dict(wire) == rules
        assert HouseRules.from_dict(wire).name == rules.name


def test_an_action_message_has_no_seat_and_its_cards_as_one_string():
    from tonk.shared.game.actions import LaySpread
    from tonk.shared.game.cards import parse_cards

    spread = LaySpread(2, parse_cards("10s Js Qs"))
    message = m.action_request(spread).to_wire()
    assert message == {"type": "spread", "cards": "10s Js Qs"}
    m.validate_client(message)
    assert m.action_of(m.read_client(message), 2) == spread


def test_a_move_crosses_the_wire_as_its_map_and_back_as_the_same_action():
    from tonk.shared.game import actions
    from tonk.shared.game.cards import parse_card, parse_cards

    moves = [
        (actions.Drop(1), {"type": "drop"}),
        (actions.DrawStock(1), {"type": "draw_stock"}),
        (actions.TakeDiscard(1), {"type": "take_discard"}),
        (actions.LaySpread(1, parse_cards("10s Js Qs")), {"type": "spread", "cards": "10s Js Qs"}),
        (actions.Hit(1, parse_card("9h"), 3), {"type": "hit", "card": "9h", "spread": 3}),
        (actions.Discard(1, parse_card("Kd")), {"type": "discard", "card": "Kd"}),
    ]
    for move, wire in moves:
        request = m.action_request(move)
        assert request.to_wire() == wire
        assert m.encode(request, p.MAX_CLIENT_FRAME) == p.encode(wire, p.MAX_CLIENT_FRAME)
        assert m.action_of(m.read_client(wire), 1) == move
        # (a stored action's reader reads the wire's form too)
        assert actions.action_from_dict({**wire, "seat": 1}) == move


def test_a_server_message_with_a_broken_map_inside_is_a_protocol_error():
    from tonk.shared.game.hand import Hand
    from tonk.shared.game.rules import PRESETS, HouseRules
    from tonk.shared.wire import messages as m

    hand = Hand(PRESETS["classic"], 2, 0, (1, 1))
    update = m.Update(7, 1, 0, tuple(hand.events_for(0, 0)), hand.view(0), None).to_wire()
    assert isinstance(m.read_server(update), m.Update)
    for key, broken in (("hand", "5s Zz"), ("phase", "nap"), ("seat", None)):
        bad = {**update, "view": {**update["view"], key: broken}}
        if broken is None:
            del bad["view"][key]
        with pytest.raises(p.ProtocolError) as caught:
            m.read_server(bad)
        assert caught.value.code == p.BAD_MESSAGE and caught.value.message.startswith("update:")
    # A reader of the view's rules given: the view carries its reading, not another.
    read: list[object] = []
    classic = PRESETS["classic"]

    def known(data: object) -> HouseRules:
        read.append(data)
        return classic

    got = m.read_server(update, known)
    assert isinstance(got, m.Update) and got.view.rules is classic
    assert read == [update["view"]["rules"]]


@message_type("probe")
class _Probe(ClientMessage):
    start: int = field(p.integer(0, 9), key="from")
    note: str | None = field(p.string(9), default=None)  # (None: left out)
    seat: int | Unset | None = field(p.SEAT_RANGE, default=UNSET)
    tags: tuple[str, ...] = field(p.LIST, default=())
    id: int | None = None


def test_a_message_is_read_from_its_map_by_wire_name_and_a_left_out_field_is_its_default() -> None:
    assert _Probe.from_wire({"type": "probe", "from": 3}) == _Probe(3)
    assert _Probe.from_wire({"type": "probe", "from": 3, "seat": None}).seat is None
    whole = _Probe(3, "x", 2, ("a",), 9)
    assert whole.to_wire() == {
        "type": "probe",
        "from": 3,
        "note": "x",
        "seat": 2,
        "tags": ("a",),
        "id": 9,
    }
    assert _Probe.from_wire(whole.to_wire()) == whole
    with pytest.raises(KeyError):
        _Probe.from_wire({"type": "probe"})  # (validation comes first: a required field)


def test_a_message_is_a_frozen_record_with_its_type_and_its_reader() -> None:
    """(What a record is, frozen, compared, copied: test_records.py.)"""
    probe = _Probe(3, tags=("a",))
    assert probe == _Probe(start=3, note=None, seat=UNSET, tags=("a",), id=None)
    assert probe.replaced(id=7) == _Probe(3, tags=("a",), id=7) and probe.id is None
    assert _Probe.TYPE == "probe" and not hasattr(probe, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        probe.start = 4  # type: ignore[misc]
    reply = m.Seated(1, 2, "t")
    assert reply.answering(9) == m.Seated(1, 2, "t", reply_to=9) and reply.reply_to is None
    assert reply.answering(None) is reply


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        ({"type": "spread", "cards": " ".join(["As"] * 14)}, "not 14 cards"),
        ({"type": "spread", "cards": "As 2s 3sss"}, "not the card '3sss'"),
        (
            {"type": "create_table", "name": "t", "rules": {"x" * 33: 1}},
            "not a name of 33 characters",
        ),
        (
            {"type": "create_table", "name": "t", "rules": {"stock": "y" * 40}},
            "not a value of 40 characters for 'stock'",
        ),
        ({"type": "create_table", "name": "t", "rules": {"stock": 2**40}}, "for 'stock'"),
        (
            {"type": "create_table", "name": "t", "rules": {f"o{n}": 1 for n in range(21)}},
            "not 21 options",
        ),
        ({"type": "chat", "text": "x" * 1001}, "not 1001 characters"),
    ],
)
def test_a_refusal_out_of_range_says_what_was_wrong(message, wrong):
    with pytest.raises(p.OutOfRange) as caught:
        m.validate_client(message)
    assert caught.value.message.endswith(wrong), caught.value.message
