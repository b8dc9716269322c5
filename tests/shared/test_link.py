"""The handshake, heartbeats, resume and resync as plain state machines (tonk.shared.wire.link),
without sockets or asyncio: a client's end and a server's end driven against each other, every
message going through its frame (encoded, decoded, read back) as it would on the wire."""

from __future__ import annotations

import random

from tonk.shared.bots.bots import make_bot
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire import link as ln
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

LIMITS = {"max_frame": p.MAX_CLIENT_FRAME, "heartbeat": 15.0}
TAKEN = {"Croaker"}  # a name the server refuses (as one claimed at the SSH door)


def check_name(name: str) -> str | None:
    if not p.is_printable_text(name) or len(name) > 24:
        return "a name is printable text of 1 to 24 characters"
    return "that name is taken" if name in TAKEN else None


def server_link() -> ln.ServerLink:
    return ln.ServerLink(
        server="tonk-server 0.1.0", limits=LIMITS, dev=False, check_name=check_name
    )


def over_the_wire_to_server(message: m.Message) -> m.ClientMessage:
    frame = m.encode(message, p.MAX_CLIENT_FRAME)
    return m.read_client(p.decode_payload(frame[p.HEADER_SIZE :]))


def over_the_wire_to_client(message: m.Message) -> m.ServerMessage:
    return m.read_server(p.decode_payload(m.encode(message)[p.HEADER_SIZE :]))


class Pair:
    """A client's link and a server's link, each message carried over as bytes."""

    def __init__(self, name: str = "Ada") -> None:
        self.client = ln.ClientLink(name, "tonk-client test")
        self.server = server_link()
        self.requests: list[ln.Request] = []  # what the server's program is asked
        self.delivered: list[m.ServerMessage] = []  # what the client's program is given
        self.client_events: list[ln.ClientOutput] = []
        self.server_events: list[ln.ServerOutput] = []

    def connect(self) -> None:
        self.server = server_link()  # a new connection: a new server end
        self.to_server(self.client.hello())

    def to_server(self, message: m.Message) -> None:
        for out in self.server.receive(over_the_wire_to_server(message)):
            self.server_events.append(out)
            if isinstance(out, ln.Send):
                self.to_client(out.message)
            elif isinstance(out, ln.Request):
                self.requests.append(out)

    def to_client(self, message: m.Message) -> None:
        for out in self.client.receive(over_the_wire_to_client(message)):
            self.client_events.append(out)
            if isinstance(out, ln.Send):
                self.to_server(out.message)
            elif isinstance(out, ln.Deliver):
                self.delivered.append(out.message)


def updates_of_a_hand(table: int, seat: int) -> list[m.Update]:
    """The updates seat `seat` is sent through one hand: one per action, each from where the
    last ended."""
    rules = PRESETS["classic"]
    hand = Hand(rules, 3, 0, (1, 1, 1), rng=random.Random(11))
    bots = [make_bot("easy", random.Random(n)) for n in range(3)]
    out = [m.Update(table, 1, 0, tuple(hand.events_for(seat, 0)), hand.view(seat), None)]
    while not hand.ended:
        start = len(hand.events)
        hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
        for n, bot in enumerate(bots):
            bot.observe(hand.events_for(n, start))
        out.append(
            m.Update(table, 1, start, tuple(hand.events_for(seat, start)), hand.view(seat), None)
        )
    return out


# -- the handshake ------------------------------------------------------------------------------


def test_hello_is_welcomed_with_the_name_as_the_server_accepted_it() -> None:
    pair = Pair("  Ada  ")
    pair.connect()
    assert pair.server.open and pair.server.name == "Ada"
    assert pair.client.state is ln.LinkState.OPEN and pair.client.name == "Ada"
    (welcomed,) = [e for e in pair.client_events if isinstance(e, ln.Welcomed)]
    assert welcomed.welcome is not None
    assert welcomed.welcome.limits == LIMITS
    assert welcomed.welcome.version == p.PROTOCOL_VERSION
    assert any(isinstance(e, ln.Welcomed) and e.name == "Ada" for e in pair.server_events)


def test_a_hello_with_an_id_is_answered_with_its_reply_to() -> None:
    server = server_link()
    out = server.receive(m.Hello(p.PROTOCOL_VERSION, "Ada", id=41))
    (sent,) = [o for o in out if isinstance(o, ln.Send)]
    assert isinstance(sent.message, m.Welcome) and sent.message.reply_to == 41


def test_anything_before_hello_is_hello_first_and_closes() -> None:
    server = server_link()
    (sent,) = server.receive(m.Ping(3))
    assert isinstance(sent, ln.Send) and isinstance(sent.message, m.Error)
    assert (sent.message.code, sent.message.fatal) == (p.HELLO_FIRST, True)
    assert sent.message.message == "send hello first"
    assert server.state is ln.LinkState.CLOSED
    assert server.receive(m.Hello(p.PROTOCOL_VERSION, "Ada")) == []  # nothing after that


def test_a_client_of_another_version_is_told_which_it_speaks_and_refused() -> None:
    pair = Pair()
    pair.client.state = ln.LinkState.HANDSHAKE
    pair.to_server(m.Hello(1, "Ada"))
    (refused,) = pair.client_events
    assert isinstance(refused, ln.Refused)
    assert refused.error.code == p.VERSION_MISMATCH and refused.error.fatal
    assert refused.error.version == p.PROTOCOL_VERSION
    assert "an older one" in refused.error.message
    assert pair.client.state is ln.LinkState.CLOSED and not pair.server.open


def test_a_name_the_server_refuses_ends_the_handshake_with_bad_name() -> None:
    for name in ["Croaker", "a\nb", "x" * 25]:
        pair = Pair(name)
        pair.connect()
        (refused,) = pair.client_events
        assert isinstance(refused, ln.Refused)
        assert refused.error.code == p.BAD_NAME and refused.error.fatal
        assert not pair.server.open


def test_a_second_hello_is_hello_first() -> None:
    pair = Pair()
    pair.connect()
    out = pair.server.receive(m.Hello(p.PROTOCOL_VERSION, "Ada", id=2))
    (sent,) = out
    assert isinstance(sent, ln.Send) and isinstance(sent.message, m.Error)
    assert sent.message.message == "hello was already said"
    assert sent.message.reply_to is None  # fatal: it answers the connection
    assert pair.server.state is ln.LinkState.CLOSED


def test_out_of_range_in_hello_is_fatal_and_another_version_is_said_first() -> None:
    def refused(data: dict[str, object], open_first: bool = False) -> m.Error:
        server = server_link()
        if open_first:
            server.receive(m.Hello(p.PROTOCOL_VERSION, "Ada"))
        try:
            m.read_client(data)
        except m.OutOfRangeMessage as exc:
            (sent,) = server.refuse(exc)
        else:
            raise AssertionError("in range")
        assert isinstance(sent, ln.Send) and isinstance(sent.message, m.Error)
        return sent.message

    long_name = {"type": "hello", "version": p.PROTOCOL_VERSION, "name": "x" * 65}
    error = refused(long_name)
    assert (error.code, error.fatal, error.detail) == (p.BAD_NAME, True, "name")
    error = refused({**long_name, "version": 1})
    assert error.code == p.VERSION_MISMATCH
    error = refused({"type": "hello", "version": p.PROTOCOL_VERSION, "name": "Ada", "id": -1})
    assert (error.code, error.fatal, error.detail) == (p.BAD_VALUE, True, "id")
    # After the welcome, out of range is not fatal, and answers the request by its id.
    error = refused({"type": "list_tables", "limit": 0, "id": 5}, open_first=True)
    assert (error.code, error.fatal, error.detail, error.reply_to) == (
        p.BAD_VALUE,
        False,
        "limit",
        5,
    )
    error = refused(long_name, open_first=True)
    assert (error.code, error.fatal) == (p.HELLO_FIRST, True)


# -- after the welcome: requests, heartbeats, bye -----------------------------------------------


def test_requests_go_to_the_program_with_their_id_as_reply_to() -> None:
    pair = Pair()
    pair.connect()
    pair.to_server(m.Sit(7, id=3))
    pair.to_server(m.DiscardRequest("10s"))
    assert [(r.message, r.reply_to) for r in pair.requests] == [
        (m.Sit(7, id=3), 3),
        (m.DiscardRequest("10s"), None),
    ]


def test_the_servers_ping_is_answered_with_the_same_n_and_the_clients_with_pong() -> None:
    pair = Pair()
    assert pair.server.ping() is None  # never before the welcome
    pair.connect()
    ping = pair.server.ping()
    assert ping == m.ServerPing(1)
    out = pair.client.receive(over_the_wire_to_client(ping))
    assert out == [ln.Send(m.Pong(1))]
    assert pair.server.receive(m.Pong(1)) == []  # a pong asks nothing more
    assert pair.server.ping() == m.ServerPing(2)
    (pong,) = pair.server.receive(m.Ping(9, id=4))
    assert pong == ln.Send(m.ServerPong(9, reply_to=4))


def test_bye_closes_and_goodbye_is_delivered_then_closes() -> None:
    pair = Pair()
    pair.connect()
    assert pair.server.receive(m.Bye()) == [ln.Closed()]
    assert pair.server.state is ln.LinkState.CLOSED
    goodbye = m.Goodbye(p.SERVER_SHUTTING_DOWN, "back soon")
    assert pair.client.receive(goodbye) == [ln.Deliver(goodbye), ln.Closed()]
    assert pair.client.state is ln.LinkState.CLOSED


def test_a_server_that_answers_hello_with_something_else_is_refused() -> None:
    client = ln.ClientLink("Ada")
    client.hello()
    (out,) = client.receive(m.Left(3))
    assert isinstance(out, ln.Refused) and out.error.code == p.BAD_MESSAGE


# -- the client's place: resume after a reconnect, resync after a gap ---------------------------


def sit_at(pair: Pair, table: int, seat: int, token: str) -> None:
    pair.to_client(m.Seated(table, seat, token, reply_to=1))


def test_after_a_reconnect_the_client_resumes_its_seat_by_token() -> None:
    pair = Pair()
    pair.connect()
    sit_at(pair, 7, 1, "tok")
    assert pair.client.place == ln.Place(7, 1, "tok")
    pair.client.connection_lost()
    pair.requests.clear()
    pair.connect()
    assert [r.message for r in pair.requests] == [m.Resume(7, "tok", id=1)]


def test_after_a_reconnect_a_spectator_watches_again_and_a_lobby_client_asks_nothing() -> None:
    pair = Pair()
    pair.connect()
    pair.to_client(m.Watching(9))
    pair.connect()
    assert [r.message for r in pair.requests] == [m.Watch(9, id=1)]
    pair.to_client(m.Left(9))
    pair.requests.clear()
    pair.connect()
    assert pair.requests == []


def test_updates_in_order_are_delivered_and_a_gap_asks_for_the_whole_hand() -> None:
    pair = Pair()
    pair.connect()
    sit_at(pair, 7, 0, "tok")
    updates = updates_of_a_hand(7, 0)
    assert len(updates) > 4
    for update in updates[:3]:
        pair.to_client(update)
    assert pair.delivered[-3:] == updates[:3]
    assert pair.client.events == updates[2].view.event_count
    pair.requests.clear()
    pair.to_client(updates[4])  # updates[3] was lost
    assert [r.message for r in pair.requests] == [m.Resume(7, "tok", id=1)]
    assert pair.delivered[-1] == updates[2]  # the one after the gap is not delivered
    pair.to_client(updates[5])  # still on its way: dropped
    assert pair.delivered[-1] == updates[2]
    whole = m.Update(  # the whole hand, as after the resume
        7, 1, 0, tuple(e for u in updates[:6] for e in u.events), updates[5].view, None
    )
    pair.to_client(whole)
    assert pair.delivered[-1] == whole
    assert not pair.client.resyncing
    pair.to_client(updates[6])
    assert pair.delivered[-1] == updates[6]


def test_a_spectator_that_misses_an_update_watches_again() -> None:
    pair = Pair()
    pair.connect()
    pair.to_client(m.Watching(7))
    updates = updates_of_a_hand(7, 1)
    pair.to_client(updates[0])
    pair.requests.clear()
    pair.to_client(updates[2])
    assert [r.message for r in pair.requests] == [m.Watch(7, id=1)]


def test_a_new_hand_starts_from_zero_and_overlapping_updates_are_delivered() -> None:
    pair = Pair()
    pair.connect()
    sit_at(pair, 7, 0, "tok")
    updates = updates_of_a_hand(7, 0)
    for update in updates[:3]:
        pair.to_client(update)
    pair.to_client(updates[1])  # overlaps what it holds: not a gap
    assert pair.delivered[-1] == updates[1]
    pair.requests.clear()
    next_hand = m.Update(7, 2, 0, updates[0].events, updates[0].view, None)
    pair.to_client(next_hand)
    assert pair.delivered[-1] == next_hand and pair.requests == []
    late = m.Update(7, 3, 4, updates[2].events, updates[2].view, None)  # hand 3 from 4
    pair.to_client(late)
    assert [r.message for r in pair.requests] == [m.Resume(7, "tok", id=1)]


def test_a_seat_taken_back_elsewhere_leaves_the_client_in_the_lobby() -> None:
    pair = Pair()
    pair.connect()
    sit_at(pair, 7, 0, "tok")
    pair.to_client(m.Error.of(p.SEAT_RESUMED_ELSEWHERE, "your seat was resumed elsewhere"))
    assert pair.client.place is None
    assert pair.client.resync() == []


def test_requests_are_numbered_in_one_series_with_the_links_own() -> None:
    pair = Pair()
    pair.connect()
    assert pair.client.number(m.Sit(7)) == m.Sit(7, id=1)
    assert pair.client.number(m.Chat("hi", id=40)) == m.Chat("hi", id=40)  # has one: kept
    sit_at(pair, 7, 0, "tok")
    pair.requests.clear()
    pair.connect()
    assert [r.message for r in pair.requests] == [m.Resume(7, "tok", id=2)]
    assert pair.client.number(m.Leave()) == m.Leave(id=3)


def test_a_refused_resume_after_a_reconnect_leaves_nothing_to_take_back() -> None:
    pair = Pair()
    pair.connect()
    sit_at(pair, 7, 0, "tok")
    pair.client.connection_lost()
    pair.connect()
    (resume,) = [r.message for r in pair.requests if isinstance(r.message, m.Resume)]
    # Another request's refusal does not touch the place; the resume's does.
    other = m.Error.of(p.ILLEGAL_ACTION, "not your turn", reply_to=(resume.id or 0) + 1)
    assert pair.client.receive(other) == [ln.Deliver(other)]
    assert pair.client.place == ln.Place(7, 0, "tok")
    refused = m.Error.of(p.BAD_TOKEN, "not a seat here", reply_to=resume.id)
    assert pair.client.receive(refused) == [ln.Deliver(refused)]
    assert pair.client.place is None and not pair.client.resyncing
    pair.requests.clear()
    pair.connect()
    assert pair.requests == []


def test_a_place_the_program_forgets_is_not_taken_back() -> None:
    pair = Pair()
    pair.connect()
    pair.to_client(m.Watching(9))
    pair.client.forget()
    assert pair.client.place is None and pair.client.resync() == []
    pair.requests.clear()
    pair.connect()
    assert pair.requests == []
