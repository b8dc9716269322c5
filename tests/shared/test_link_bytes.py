"""Each end's sans-I/O connection (tonk.shared.wire.link) driven with bytes and times alone:
no socket, no event loop, no clock. The server's: frames whole or trickled, faults of framing
and shape, the rate limit and the time a message arrived after a stall, the stream's bytes
handled; the client's: the bytes it sends, the server's frames however they are cut, an SSH
server's banner."""

from __future__ import annotations

import msgpack
import pytest
from tonk.shared.wire import link as ln
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.link import Broken, ClientProtocol, NotTonk, ServerProtocol

LIMITS = {"max_frame": p.MAX_CLIENT_FRAME, "heartbeat": 15.0}


def server_end(*, rate: float = 10.0, burst: float = 20.0, max_frame: int = 1024) -> ServerProtocol:
    link = ln.ServerLink(
        server="tonk-server test", limits=LIMITS, dev=False, check_name=lambda name: None
    )
    return ServerProtocol(link, max_frame=max_frame, rate=rate, burst=burst, now=0.0)


def frame(message: m.Message) -> bytes:
    return m.encode(message, p.MAX_CLIENT_FRAME)


def raw_frame(obj: object) -> bytes:
    payload = msgpack.packb(obj, use_bin_type=True)
    return len(payload).to_bytes(4, "big") + payload


HELLO = frame(m.Hello(p.PROTOCOL_VERSION, "Ada", id=1))


def welcomed(end: ServerProtocol) -> ServerProtocol:
    end.receive_data(HELLO)
    end.next_events(0.0)
    end.message_done()
    assert end.link.open
    return end


def all_events(end: ServerProtocol, now: float) -> list[ln.ServerOutput | Broken]:
    events: list[ln.ServerOutput | Broken] = []
    while end.ready():
        events.extend(end.next_events(now))
        end.message_done()
    return events


def only_error(events: object) -> m.Error:
    assert isinstance(events, list | tuple) and len(events) == 1, events
    (event,) = events
    error = event.error if isinstance(event, Broken) else event.message
    assert isinstance(error, m.Error), event
    return error


# -- the server's end ---------------------------------------------------------------------------


def test_hello_in_bytes_gives_the_welcome_then_requests_with_their_ids() -> None:
    end = server_end()
    end.receive_data(HELLO)
    assert end.ready()
    welcomed_event, send = end.next_events(0.0)
    assert welcomed_event == ln.Welcomed("Ada", send.message) if isinstance(send, ln.Send) else 0
    assert isinstance(send, ln.Send) and isinstance(send.message, m.Welcome)
    assert send.message.reply_to == 1 and send.message.name == "Ada"
    assert not end.ready()
    end.receive_data(frame(m.Sit(7, id=2)))
    assert end.next_events(0.1) == [ln.Request(m.Sit(7, id=2), 2)]
    # What the link answers itself stays the link's: a ping is answered, a bye closes.
    end.receive_data(frame(m.Ping(5, id=3)) + frame(m.Bye()))
    assert all_events(end, 0.2) == [ln.Send(m.ServerPong(5, 3)), ln.Closed()]


def test_a_frame_trickled_a_byte_at_a_time_is_one_message_once_whole() -> None:
    end = server_end()
    for byte in HELLO[:-1]:
        end.receive_data(bytes([byte]))
        assert not end.ready()
        assert end.next_events(0.0) == []  # (nothing whole: nothing to do)
    end.receive_data(HELLO[-1:])
    assert end.ready()
    assert any(isinstance(e, ln.Welcomed) for e in end.next_events(0.0))


def test_frames_cut_anywhere_give_the_same_messages_in_order() -> None:
    stream = HELLO + b"".join(frame(m.Chat(f"line {n}", id=10 + n)) for n in range(5))
    for cut in (1, 3, 4, 5, 17, len(stream) - 1):
        end = server_end()
        end.receive_data(stream[:cut])
        events = all_events(end, 0.0)
        end.receive_data(stream[cut:])
        events += all_events(end, 0.0)
        requests = [e.message for e in events if isinstance(e, ln.Request)]
        assert requests == [m.Chat(f"line {n}", id=10 + n) for n in range(5)], cut


def test_a_length_over_the_limit_is_refused_from_its_prefix_alone() -> None:
    end = server_end(max_frame=100)
    end.receive_data((101).to_bytes(4, "big"))  # not one byte of the payload yet
    assert end.ready()
    error = only_error(end.next_events(0.0))
    assert (error.code, error.fatal) == (p.FRAME_TOO_LARGE, True)
    assert error.message == "a frame of 101 bytes is over the limit of 100"
    assert not end.ready() and end.next_events(0.0) == []  # broken: nothing more is read
    assert end.receive_eof() == []


@pytest.mark.parametrize(
    ("data", "code", "words"),
    [
        ((0).to_bytes(4, "big"), p.BAD_FRAME, "an empty frame"),
        (b"\x00\x00\x00\x01\xc1", p.BAD_MSGPACK, "the frame is not one msgpack value"),
        (raw_frame([1, 2]), p.BAD_MESSAGE, "a message must be a msgpack map"),
        (raw_frame({"type": "weather"}), p.UNKNOWN_TYPE, "unknown message type 'weather'"),
        (raw_frame({"type": "sit", "table": "7"}), p.BAD_MESSAGE, "sit: field 'table'"),
    ],
)
def test_a_broken_frame_or_message_is_a_fatal_error_saying_what(
    data: bytes, code: str, words: str
) -> None:
    end = welcomed(server_end())
    end.receive_data(data)
    (broken,) = end.next_events(1.0)
    assert isinstance(broken, Broken)
    assert (broken.error.code, broken.error.fatal) == (code, True)
    assert words in broken.error.message
    end.receive_data(frame(m.Sit(7)))
    assert not end.ready()


def test_a_value_out_of_range_is_refused_without_closing() -> None:
    end = welcomed(server_end())
    end.receive_data(frame(m.Chat("x" * (p.MAX_CHAT_LEN + 1), id=9)))
    error = only_error(end.next_events(1.0))
    assert (error.fatal, error.reply_to, error.detail) == (False, 9, "text")
    end.receive_data(frame(m.Sit(7, id=10)))
    assert end.next_events(1.0) == [ln.Request(m.Sit(7, id=10), 10)]


def test_the_connection_ending_inside_a_frame_is_bad_frame() -> None:
    end = welcomed(server_end())
    assert end.receive_eof() == []  # between frames: a clean end
    end.receive_data(frame(m.Sit(7))[:5])
    error = only_error(end.receive_eof())
    assert (error.code, error.fatal) == (p.BAD_FRAME, True)
    assert error.message == "the connection ended in the middle of a frame"


def test_every_whole_message_counts_against_the_rate_limit_hello_included() -> None:
    end = server_end(rate=1.0, burst=3.0)
    end.receive_data(HELLO + frame(m.Sit(1)) + frame(m.Sit(2)) + frame(m.Sit(3)))
    events = all_events(end, 0.0)
    error = only_error(events[-1:])
    assert error == m.Error.of(p.RATE_LIMITED, "too many messages: the limit is 1 a second")
    assert error.fatal and len([e for e in events if isinstance(e, ln.Request)]) == 2
    assert not end.ready()


def test_the_bucket_refills_with_the_time_given() -> None:
    end = server_end(rate=2.0, burst=1.0)
    end.receive_data(HELLO)
    end.next_events(0.0)
    end.receive_data(frame(m.Sit(1)))
    assert isinstance(end.next_events(0.5)[0], ln.Request)  # half a second: one token back
    end.receive_data(frame(m.Sit(2)))
    assert only_error(end.next_events(0.5)).code == p.RATE_LIMITED


def test_after_a_stall_messages_are_judged_by_when_they_arrived() -> None:
    # One token a second, none saved: two messages read at once would be one too many, but
    # they arrived across a stall of 4 s (their bytes were waiting when the server came back).
    stream = frame(m.Sit(1)) + frame(m.Sit(2))
    for stall in (False, True):
        end = server_end(rate=1.0, burst=1.0)
        end.receive_data(HELLO)
        end.next_events(0.0)
        end.message_done()
        if stall:
            end.stalled(since=1.0, lost=4.0, waiting=len(stream))
        end.receive_data(stream)
        events = all_events(end, 5.0)
        if stall:
            assert [type(e) for e in events] == [ln.Request, ln.Request]
        else:
            assert only_error(events[1:]).code == p.RATE_LIMITED


def test_the_bytes_fed_and_handled_follow_the_stream() -> None:
    end = server_end()
    end.receive_data(HELLO + frame(m.Sit(1))[:3])
    assert end.unhandled == len(HELLO) + 3
    end.next_events(0.0)
    assert end.unhandled == len(HELLO) + 3  # read, not yet handled
    end.message_done()
    assert end.unhandled == 3  # the start of the next frame waits


# -- the client's end ---------------------------------------------------------------------------


def server_frame(message: m.ServerMessage) -> bytes:
    return m.encode(message)


def test_the_client_sends_each_message_as_its_frame() -> None:
    ours = ClientProtocol()
    hello = m.Hello(p.PROTOCOL_VERSION, "Ada", "tonk-client test")
    data = ours.send(hello)
    assert data == m.encode(hello, p.MAX_CLIENT_FRAME)
    end = server_end()
    end.receive_data(data)
    assert any(isinstance(e, ln.Welcomed) for e in end.next_events(0.0))
    with pytest.raises(p.ProtocolError) as raised:
        ours.send(m.Chat("x" * (p.MAX_CLIENT_FRAME + 1)))
    assert raised.value.code == p.FRAME_TOO_LARGE


def test_the_client_reads_the_servers_frames_however_they_are_cut() -> None:
    welcome = m.Welcome(p.PROTOCOL_VERSION, "tonk-server test", "Ada", LIMITS, False, 1)
    stream = server_frame(welcome) + server_frame(m.ServerPing(1)) + server_frame(m.Left(7))
    for cut in range(1, len(stream)):
        ours = ClientProtocol()
        ours.receive_data(stream[:cut])
        got = list(ours.messages())
        ours.receive_data(stream[cut:])
        got += list(ours.messages())
        assert [m.read_server(data) for data in got] == [welcome, m.ServerPing(1), m.Left(7)]


def test_an_ssh_servers_banner_is_not_a_tonk_server() -> None:
    ours = ClientProtocol()
    with pytest.raises(NotTonk):
        ours.receive_data(b"SSH-2.0-OpenSSH_9.2\r\n")
    # Only the first bytes are looked at: later, those bytes are a frame's like any others.
    ours = ClientProtocol()
    ours.receive_data(b"\x00\x00")
    ours.receive_data(b"SSH-")  # a length of 0x5353 bytes: a frame still coming
    assert ours.next_message() is None
    ours.receive_data(b"\x00" * (0x5353 - 2))
    with pytest.raises(p.ProtocolError) as raised:
        ours.next_message()
    assert raised.value.code == p.BAD_MSGPACK  # ("H-" and zeros: not one msgpack value)


def test_a_server_frame_over_the_clients_limit_is_refused() -> None:
    ours = ClientProtocol()
    ours.receive_data((p.MAX_SERVER_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(p.ProtocolError) as raised:
        ours.next_message()
    assert raised.value.code == p.FRAME_TOO_LARGE
