"""Fuzzing the frame decoder and the message validator (tests/shared/test_protocol.py has the plain
cases and a first fuzz of each): streams of valid frames cut anywhere, arbitrary bytes and
arbitrary msgpack values never raise anything but the documented ProtocolError and never make
the decoder hold more than one frame; every valid message round-trips; a valid message with
one field broken is refused; memory spent on one frame is bounded; and a live server answers
any valid-shaped message without an internal error."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import socket
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
from checkout import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from netclient import test_config as make_config
from tonk.server.app import TonkServer
from tonk.shared.game.cards import DECK, CardError, parse_card
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    CLIENT_MESSAGES,
    SERVER_MESSAGES,
    validate_client,
    validate_server,
)

CARDS = [str(card) for card in DECK]


def _documented_codes() -> set[str]:
    """Every error code in PROTOCOL.md's tables of error codes."""
    text = (ROOT / "PROTOCOL.md").read_text()
    section = text.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))


#: Every error code the protocol documents.
DOCUMENTED = _documented_codes()


def test_the_documented_codes_include_every_fatal_one_and_the_storage_error():
    assert len(DOCUMENTED) > 30  # the tables were read
    assert p.FATAL_CODES | {p.STORAGE_ERROR, p.SEAT_RESUMED_ELSEWHERE} <= DOCUMENTED


#: What a frame or a message may be refused with before any request is carried out.
DECODER_CODES = {p.BAD_FRAME, p.FRAME_TOO_LARGE, p.BAD_MSGPACK, p.BAD_MESSAGE}
VALIDATOR_CODES = {p.BAD_MESSAGE, p.UNKNOWN_TYPE}


# -- strategies: valid messages, built from the schemas themselves ----------------------------

_json = hs.recursive(
    hs.none()
    | hs.booleans()
    | hs.integers(-(2**63), 2**64 - 1)
    | hs.floats(allow_nan=False)
    | hs.text(max_size=20),
    lambda inner: hs.lists(inner, max_size=4) | hs.dictionaries(hs.text(max_size=8), inner),
    max_leaves=12,
)


def value_for(spec: p.Field) -> hs.SearchStrategy[Any]:
    """Any value `spec` allows."""
    kind = spec.kind
    out: hs.SearchStrategy[Any]
    if kind == "str":
        out = hs.text(min_size=spec.min_len, max_size=min(spec.max_len, 80))
        if spec.max_len > 80:
            out = out | hs.text(min_size=spec.max_len, max_size=spec.max_len)  # at the cap
    elif kind in ("int", "number"):
        low = max(int(spec.low) if spec.low > -(2**63) else -(2**63), -(2**63))
        high = min(int(spec.high) if spec.high < 2**64 else 2**64 - 1, 2**64 - 1)
        out = hs.integers(low, high)
        if kind == "number":
            out = out | hs.floats(
                spec.low, min(spec.high, 1e300), allow_nan=False, allow_infinity=False
            )
    elif kind == "bool":
        out = hs.booleans()
    elif kind == "cards":
        card = hs.sampled_from(CARDS) | hs.from_regex(r"\A[A-Za-z0-9]{2,3}\Z")
        out = hs.lists(card, max_size=spec.max_len).map(" ".join)
    elif kind == "options":
        option = (
            hs.none()
            | hs.booleans()
            | hs.integers(-(2**31), 2**31 - 1)
            | hs.text(max_size=32)
            | hs.sampled_from(["classic", "speno", "pagat", "black-tonk", "none", "pay_each"])
        )
        name = hs.sampled_from(["preset", "players", "hit_lock", "deal_tonk_low", "x"]) | hs.text(
            max_size=32
        )
        out = hs.dictionaries(name, option, max_size=spec.max_len)
    elif kind == "map":
        out = hs.dictionaries(hs.text(max_size=10), _json, max_size=5)
    elif kind == "list":
        out = hs.lists(_json, max_size=5)
    else:  # pragma: no cover
        raise AssertionError(kind)
    return out | hs.none() if spec.nullable else out


def messages(schema: dict[str, dict[str, p.Field]], client: bool) -> hs.SearchStrategy[Any]:
    """Any valid message of `schema`: its required fields, some of its optional ones."""
    options = []
    for kind in sorted(schema):
        fields = schema[kind]
        required = {name: value_for(spec) for name, spec in fields.items() if spec.required}
        optional = {name: value_for(spec) for name, spec in fields.items() if not spec.required}
        if client:
            optional["id"] = hs.integers(0, p.MAX_ID)
        options.append(
            hs.fixed_dictionaries({"type": hs.just(kind), **required}, optional=optional)
        )
    return hs.one_of(options)


CLIENT = messages(CLIENT_MESSAGES, client=True)
SERVER = messages(SERVER_MESSAGES, client=False)


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(CLIENT)
def test_every_valid_client_message_validates_and_round_trips(message):
    validate_client(message)
    data = p.encode(message, p.MAX_CLIENT_FRAME)
    decoder = p.FrameDecoder(p.MAX_CLIENT_FRAME)
    decoder.feed(data)
    assert list(decoder.messages()) == [message]
    assert decoder.buffered == 0


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(SERVER)
def test_every_valid_server_message_validates_and_round_trips(message):
    validate_server(message)
    assert p.decode_payload(p.encode(message)[p.HEADER_SIZE :]) == message


_WRONG = {
    "str": hs.integers() | hs.booleans() | hs.binary(max_size=4) | hs.lists(hs.text(), max_size=2),
    "int": hs.text(max_size=4) | hs.booleans() | hs.floats(allow_nan=False) | hs.lists(hs.none()),
    "number": hs.text(max_size=4) | hs.booleans() | hs.lists(hs.integers(), max_size=2),
    "bool": hs.integers() | hs.text(max_size=4) | hs.none().map(lambda _: 0),
    "cards": hs.lists(hs.text(max_size=3), max_size=3)
    | hs.integers()
    | hs.dictionaries(hs.text(), hs.text()),
    "options": hs.lists(hs.integers(), max_size=2) | hs.text() | hs.integers(),
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CLIENT, hs.data())
def test_a_valid_message_with_one_field_broken_is_refused(message, data):
    kind = message["type"]
    fields = CLIENT_MESSAGES[kind]
    breakable = [n for n, spec in fields.items() if spec.kind in _WRONG]
    how = data.draw(hs.sampled_from(["unknown field", "missing", "wrong type"]))
    broken = dict(message)
    if how == "unknown field":
        name = data.draw(hs.text(max_size=12).filter(lambda n: n not in fields and n != "id"))
        broken[name] = data.draw(_json)
    elif how == "missing" and any(spec.required for spec in fields.values()):
        required = [n for n, spec in fields.items() if spec.required]
        del broken[data.draw(hs.sampled_from(required))]
    elif how == "wrong type" and breakable:
        name = data.draw(hs.sampled_from(breakable))
        wrong = data.draw(_WRONG[fields[name].kind])
        if wrong is None and fields[name].nullable:
            return
        broken[name] = wrong
    else:
        broken["type"] = data.draw(hs.text(max_size=20).filter(lambda t: t not in fields))
        if broken["type"] in CLIENT_MESSAGES:
            return
    with pytest.raises(p.ProtocolError) as caught:
        validate_client(broken)
    assert caught.value.code in VALIDATOR_CODES


@settings(max_examples=500, deadline=None)
@given(hs.text(max_size=4) | hs.sampled_from(["¹0s", "²s", "٣s", "①s", "１０s", "10ｓ", "Ⅹs"]))
def test_a_card_text_is_a_card_or_refused_as_not_a_card(text):
    """What an action's card field may hold reaches the card parser: it reads a card or says
    it is not one (the fuzz found superscript digits raising a bare ValueError, an internal
    error on the server)."""
    try:
        card = parse_card(text)
    except CardError:
        return
    assert str(card) in CARDS and text.strip()[-1].lower() in "shdc♠♥♦♣"


def frames_cut(stream: bytes, cuts: list[int]) -> Iterator[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(points):
        yield stream[a:b]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(hs.lists(CLIENT, min_size=1, max_size=6), hs.lists(hs.integers(0, 10**6), max_size=12))
def test_a_stream_of_valid_frames_cut_anywhere_gives_back_every_message(batch, cuts):
    stream = b"".join(p.encode(m, p.MAX_CLIENT_FRAME) for m in batch)
    decoder = p.FrameDecoder(p.MAX_CLIENT_FRAME)
    got = []
    for piece in frames_cut(stream, cuts):
        decoder.feed(piece)
        got.extend(decoder.messages())
        assert decoder.buffered < p.HEADER_SIZE + p.MAX_CLIENT_FRAME
    assert got == batch and decoder.buffered == 0


_anything = hs.recursive(
    hs.none()
    | hs.booleans()
    | hs.integers(-(2**63), 2**64 - 1)
    | hs.floats()
    | hs.text(max_size=30)
    | hs.binary(max_size=30)
    | hs.builds(msgpack.ExtType, hs.integers(0, 127), hs.binary(max_size=8)),
    lambda inner: (
        hs.lists(inner, max_size=5)
        | hs.dictionaries(
            hs.text(max_size=8) | hs.binary(max_size=4) | hs.integers(-5, 5), inner, max_size=5
        )
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    hs.one_of(
        _anything,
        hs.fixed_dictionaries({"type": hs.sampled_from(sorted(CLIENT_MESSAGES))}).flatmap(
            lambda head: hs.dictionaries(hs.text(max_size=10), _anything, max_size=4).map(
                lambda rest: {**rest, **head}
            )
        ),
    )
)
def test_any_msgpack_value_is_refused_only_with_a_documented_error(value):
    payload = msgpack.packb(value, use_bin_type=True, strict_types=False)
    decoder = p.FrameDecoder(p.MAX_CLIENT_FRAME)
    decoder.feed(len(payload).to_bytes(4, "big") + payload)
    try:
        decoded = list(decoder.messages())
    except p.ProtocolError as exc:
        assert exc.code in DECODER_CODES
        with pytest.raises(p.ProtocolError):  # poisoned after its first refusal
            list(decoder.messages())
        return
    # Whatever decodes is the map that was sent (NaN is not equal to itself: by its text then).
    assert decoded == [value] or repr(decoded) == repr([value])
    try:
        validate_client(value)
    except p.OutOfRange as exc:
        assert exc.code in DOCUMENTED and exc.field in value
    except p.ProtocolError as exc:
        assert exc.code in VALIDATOR_CODES


@settings(max_examples=300, deadline=None)
@given(hs.lists(hs.binary(min_size=1, max_size=2000), min_size=1, max_size=8))
def test_arbitrary_chunks_are_refused_only_with_a_documented_error_and_bounded(chunks):
    decoder = p.FrameDecoder(max_frame=1024)
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            for message in decoder.messages():
                validate_client(message)
            # What it keeps is at most one unfinished frame: never more than the limit.
            assert decoder.buffered < p.HEADER_SIZE + 1024
    except p.OutOfRange as exc:
        assert exc.code in DOCUMENTED
    except p.ProtocolError as exc:
        assert exc.code in DECODER_CODES | VALIDATOR_CODES
        assert decoder.buffered == 0


# The most memory one frame of at most 16 KB can cost to decode: every byte a new object
# (an empty list or map inside one array), about 64 bytes each, well under this.
FRAME_MEMORY_BOUND = 2 * 1024 * 1024


def peak_decoding(payload: bytes) -> int:
    decoder = p.FrameDecoder(p.MAX_CLIENT_FRAME)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with contextlib.suppress(p.ProtocolError):
            decoder.feed(len(payload).to_bytes(4, "big") + payload)
            for message in decoder.messages():
                validate_client(message)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_worst_frames_for_memory_stay_bounded():
    n = p.MAX_CLIENT_FRAME - 8
    worst = [
        b"\xdd" + n.to_bytes(4, "big") + b"\x90" * n,  # an array of empty arrays
        b"\xdd" + n.to_bytes(4, "big") + b"\x80" * n,  # an array of empty maps
        b"\xdd" + n.to_bytes(4, "big") + b"\xcb" + b"\x00" * 8 * (n // 9),  # floats
        b"\xdf"
        + (n // 2).to_bytes(4, "big")
        + b"".join(  # a map of many keys
            bytes([0xA2]) + i.to_bytes(2, "big") + b"\xc0" for i in range(n // 4)
        ),
        b"\xdd\xff\xff\xff\xff\x90",  # claims four billion items
        b"\xdb\xff\xff\xff\xff",  # claims a 4 GB string
        b"\x91" * n,  # as deep as it goes
    ]
    for payload in worst:
        assert peak_decoding(payload[: p.MAX_CLIENT_FRAME]) < FRAME_MEMORY_BOUND


@settings(max_examples=60, deadline=None)
@given(hs.binary(min_size=1, max_size=p.MAX_CLIENT_FRAME))
def test_any_frame_costs_bounded_memory_to_decode(payload):
    assert peak_decoding(payload) < FRAME_MEMORY_BOUND


# -- a live server: any valid-shaped message gets a documented answer -------------------------


class ThreadServer:
    """A TonkServer running on its own event loop in a thread, for synchronous tests."""

    def __init__(self, tmp_path: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        # every example may open a table from 127.0.0.1: lift the per-address table limit
        limits = {"max_tables_per_address": 1000}
        self.server = TonkServer(make_config(tmp_path, limit_changes=limits))
        self.run(self.server.start())

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def close(self) -> None:
        self.run(self.server.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    server = ThreadServer(tmp_path_factory.mktemp("fuzz"))
    yield server
    server.close()


class Blocking:
    """A plain blocking client."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.sock.sendall(p.encode(message, p.MAX_CLIENT_FRAME))
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True  # the server closed it already; read what it said

    def until(self, kind: str) -> list[dict[str, Any]]:
        """Every message up to one of `kind` (or the server's close)."""
        out: list[dict[str, Any]] = []
        while True:
            for message in self.decoder.messages():
                out.append(message)
                if message["type"] == kind:
                    return out
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                self.closed = True
                return out
            self.decoder.feed(data)

    def close(self) -> None:
        self.sock.close()


_names = iter(range(10**9))


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sit_first=hs.booleans(), batch=hs.lists(CLIENT, min_size=1, max_size=4))
def test_a_live_server_answers_any_valid_message_with_a_documented_answer(live, sit_first, batch):
    client = Blocking(live.server.port)
    try:
        client.send({"type": "hello", "version": p.PROTOCOL_VERSION, "name": f"F{next(_names)}"})
        assert client.until(p.WELCOME)[-1]["type"] == p.WELCOME
        if sit_first:  # at a playing table, so that actions reach the game
            client.send({"type": "create_table", "name": "fz", "seats": 2, "seed": 1})
            client.until(p.SEATED)
            client.send({"type": "add_bot"})
            client.until(p.UPDATE)
        for message in batch:
            client.send(message)
        client.send({"type": "list_tables", "id": 7})  # the last answer, if still open
        answers = client.until(p.TABLES)
        errors = [m for m in answers if m["type"] == p.ERROR]
        for error in errors:
            validate_server(error)
            assert error["code"] in DOCUMENTED and error["code"] != p.INTERNAL_ERROR, error
        if client.closed:  # closed only after a fatal error (a second hello), or a bye
            fatal = [e for e in errors if e["fatal"]]
            assert all(e["code"] == p.HELLO_FIRST for e in fatal), fatal
            assert any(m["type"] in (p.BYE, p.HELLO) for m in batch), answers
    finally:
        client.close()
