"""The client's model of the table, without a socket, a loop or a screen: server messages in,
what to show and what to send back out."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from rulekit import deal
from tonk.client.messages import Reported, message_class, wrapped
from tonk.client.model import model as model_module
from tonk.client.model.model import ClientModel, Fatal, LinkDown, TableRequest
from tonk.client.model.reports import (
    Connected,
    HandEnded,
    JoinNotice,
    LeftTable,
    LobbyChanged,
    ServerRefused,
    TableChanged,
)
from tonk.client.model.state import TableState
from tonk.shared.game.actions import Discard, DrawStock, Drop
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.settlement import Settlement
from tonk.shared.records import replaced
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.handlers import Handlers

WELCOME = m.Welcome(p.PROTOCOL_VERSION, "tonk-server test", "Kim", {"heartbeat": 4}, False)


def wire(message: m.Message) -> m.Wire:
    """`message` as the client's decoder gives it: encoded to a frame and decoded back."""
    return p.decode_payload(m.encode(message)[p.HEADER_SIZE :])


def give(model: ClientModel, message: m.Message) -> None:
    """The model receives `message` as it comes off the wire."""
    model.receive(wire(message))


def sent(model: ClientModel) -> list[m.Wire]:
    """What the model has for the server since the last call, as the maps sent on the wire."""
    return [wire(message) for message in model.take_outgoing()]


def connected(create: TableRequest | None = None, clock: float = 100.0) -> ClientModel:
    model = ClientModel("Kim", "host:1", clock=lambda: clock, create=create)
    model.hello()
    model.welcome(wire(WELCOME), reconnect=False)
    return model


def table_map(hand: Hand, **extra: Any) -> m.TableSummary:
    players = (
        m.PlayerSummary(0, "Kim", m.SeatKind.HUMAN, None, m.SeatStatus.CONNECTED, 1, 0),
        m.PlayerSummary(1, "Ada", m.SeatKind.BOT, "easy", m.SeatStatus.BOT, 1, 0),
    )
    summary = m.TableSummary(
        id=7,
        name="Kitchen",
        rules=hand.rules.to_wire(),
        rules_name="classic",
        stake=1,
        unit="",
        seats=2,
        taken=2,
        free=0,
        state=m.TableState.PLAYING,
        spectators=0,
        turn_timer=None,
        hands=None,
        minutes=None,
        bot_pause=1.0,
        hands_played=0,
        creator=0,
        dealer=None,
        paused=None,
        players=players,
    )
    return replaced(summary, **extra)


def update(hand: Hand, start: int, number: int = 1, seat: int = 0) -> m.Update:
    events = tuple(hand.events_for(seat, start))
    return m.Update(7, number, start, events, hand.view(seat), 30.0)


def a_hand() -> Hand:
    return deal("classic", ["5s 6s 7s 9h 9d", "2c 3c 4d Kh Qs"], up="Jd", stock="8s 8h 8c")


def seated_at_a_table(hand: Hand) -> ClientModel:
    model = connected()
    give(model, m.Seated(7, 0, "t7"))
    give(model, m.TableMessage(table_map(hand)))
    return model


def last_state(model: ClientModel) -> TableState:
    states = [m.state for m in model.take_reports() if isinstance(m, TableChanged)]
    assert states
    return states[-1]


def test_the_model_imports_nothing_of_textual() -> None:
    """The model is plain Python over the core: what it reports are its own values, which the
    connection wraps for the App."""
    probe = (
        "import sys, tonk.client.model.model, tonk.client.model.reports\n"
        "print(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert found == "[]"


def test_the_welcome_connects_and_asks_for_the_table_to_create() -> None:
    request = TableRequest(m.CreateTable("Practice", seats=2), bots=1)
    model = connected(create=request)
    assert model.connected and model.heartbeat == 4.0
    posted = model.take_reports()
    assert [type(m) for m in posted] == [Connected]
    assert sent(model) == [{"type": "create_table", "name": "Practice", "seats": 2, "id": 1}]
    # Once seated, the bots asked for sit down.
    give(model, m.Seated(3, 0, "tok", reply_to=1))
    assert sent(model) == [{"type": "add_bot", "strategy": "easy", "id": 2}]


def test_a_server_of_another_version_is_fatal_and_a_shutdown_is_worth_retrying() -> None:
    model = ClientModel("Kim", "host:1", clock=lambda: 0.0)
    model.hello()
    with pytest.raises(Fatal, match="speaks tonk protocol version 3"):
        model.welcome(
            wire(m.Error.of(p.VERSION_MISMATCH, "no", fatal=True, version=3)), reconnect=False
        )
    model.hello()
    with pytest.raises(LinkDown, match="going down"):
        model.welcome(
            wire(m.Error.of(p.SERVER_SHUTTING_DOWN, "going down", fatal=True)), reconnect=False
        )
    assert not model.connected


@pytest.mark.e2e
def test_a_server_that_answers_hello_with_something_else_is_not_a_tonk_server() -> None:
    for answer in (wire(m.Left(3)), {"type": "welcome", "version": p.PROTOCOL_VERSION}):
        model = ClientModel("Kim", "host:1", clock=lambda: 0.0)
        model.hello()
        with pytest.raises(Fatal, match="host:1 did not answer like a tonk-server"):
            model.welcome(answer, reconnect=False)
        assert not model.connected


def test_nothing_is_sent_while_the_link_is_down() -> None:
    model = connected()
    model.take_outgoing()
    model.link_lost()
    assert not model.send(m.DrawStockRequest())
    assert model.take_outgoing() == []


def test_a_ping_is_answered_with_its_number() -> None:
    model = connected()
    model.take_outgoing()
    give(model, m.ServerPing(41))
    assert sent(model) == [{"type": "pong", "n": 41}]


def test_a_message_the_client_cannot_read_is_fatal() -> None:
    model = connected()
    with pytest.raises(Fatal, match="cannot read"):
        model.receive({"type": "update", "table": 7})
    # A map inside the message that is not what it should be is as unreadable.
    hand = a_hand()
    broken = wire(update(hand, 0))
    broken["view"]["hand"] = "5s Zz"
    with pytest.raises(Fatal, match="cannot read"):
        model.receive(broken)
    no_kind = wire(m.TableMessage(table_map(hand)))
    no_kind["table"]["players"][0]["kind"] = "person"
    with pytest.raises(Fatal, match="cannot read"):
        model.receive(no_kind)


def test_a_message_type_or_a_field_the_client_does_not_know_is_skipped() -> None:
    """PROTOCOL.md, "Versions": a later server may add messages and fields a client skips;
    the rest is read as usual, and the connection goes on."""
    model = connected()
    model.take_outgoing()
    model.receive({"type": "weather", "sky": "clear"})
    give(model, m.ServerPing(5))
    assert sent(model) == [{"type": "pong", "n": 5}]
    hand = a_hand()
    page = wire(m.Tables((table_map(hand, id=4, name="T4"),), after=0, more=False, total=1))
    page["colour"] = "green"
    page["tables"][0]["lamp"] = "on"
    model.receive(page)
    assert [t.name for t in model.tables] == ["T4"]
    assert model.connected


def test_the_goodbye_drops_the_link_in_the_servers_words() -> None:
    model = connected()
    with pytest.raises(LinkDown, match="the server said goodbye: closing for the night"):
        give(model, m.Goodbye(p.SERVER_SHUTTING_DOWN, "closing for the night"))


def test_a_long_lobby_is_asked_for_page_by_page() -> None:
    model = connected()
    model.take_outgoing()
    hand = a_hand()
    page = tuple(
        table_map(hand, id=n, name=f"T{n}", seats=4, taken=1, state=m.TableState.WAITING)
        for n in (1, 2)
    )
    give(model, m.Tables(page, after=0, more=True, total=3))
    assert sent(model) == [{"type": "list_tables", "after": 2, "id": 1}]
    lobby = [m for m in model.take_reports() if isinstance(m, LobbyChanged)]
    assert [t.name for t in lobby[-1].tables] == ["T1", "T2"] and lobby[-1].show
    assert [t.state for t in lobby[-1].tables] == [m.TableState.WAITING] * 2
    give(model, m.LobbyChanges((), (1,)))
    assert [t.name for t in model.tables] == ["T2"]


def test_an_update_shows_the_hand_and_logs_the_deal_once() -> None:
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    state = last_state(model)
    assert state.view is not None and state.view.my_turn
    assert state.turn_deadline == 130.0  # the model's clock, plus the deadline
    log = [line.text.plain for line in state.log]
    assert log.count("Hand 1: Ada deals.") == 1
    give(model, update(hand, 0))  # the whole hand again: nothing logged twice
    assert [line.text.plain for line in last_state(model).log] == log


def test_a_missed_update_asks_for_the_whole_hand_again() -> None:
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    model.take_outgoing()
    seen = hand.view(0).event_count
    hand.apply(DrawStock(0))
    drawn = hand.view(0).event_count
    hand.apply(Discard(0, hand.view(0).legal().discards[0]))
    give(model, update(hand, drawn))  # the draw's update was lost
    assert drawn > seen
    assert sent(model) == [{"type": "resume", "table": 7, "token": "t7", "id": 1}]
    give(model, update(hand, drawn))  # more of the hand before the resync's answer: ignored
    assert model.take_outgoing() == []
    give(model, update(hand, 0))
    state = last_state(model)
    assert state.view is not None and state.view.event_count == hand.view(0).event_count


def test_our_move_made_by_the_server_is_said_as_played_for_us() -> None:
    for asked, said in ((False, "Played for you: drew 8♠"), (True, "You drew 8♠")):
        hand = a_hand()
        model = seated_at_a_table(hand)
        give(model, update(hand, 0))
        start = hand.view(0).event_count
        if asked:
            assert model.send(m.DrawStockRequest())
        hand.apply(DrawStock(0))  # when not asked for: the turn timer ran out
        give(model, update(hand, start))
        assert last_state(model).log[-1].text.plain == said


def test_the_table_and_its_views_share_one_reading_of_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[object] = []
    real = HouseRules.from_dict.__func__  # type: ignore[attr-defined]

    def counted(cls: type[HouseRules], data: Any) -> HouseRules:
        reads.append(data)
        return real(cls, data)  # type: ignore[no-any-return]

    monkeypatch.setattr(HouseRules, "from_dict", classmethod(counted))
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    start = hand.view(0).event_count
    hand.apply(DrawStock(0))
    give(model, update(hand, start))
    state = last_state(model)
    assert state.view is not None and state.rules is state.view.rules
    assert len(reads) == 1


def test_a_settled_hand_moves_the_balances_by_its_payments() -> None:
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, FIRST_HAND_END)
    posted = model.take_reports()
    state = [m.state for m in posted if isinstance(m, TableChanged)][-1]
    assert state.balances == {"Kim": -2, "Ada": 2}
    assert state.series == {"Kim": (0, -2), "Ada": (0, 2)}
    assert state.last_net == {"Kim": -2, "Ada": 2}
    ended = [m for m in posted if isinstance(m, HandEnded)]
    # The window names everybody as the table does, and knows which seat is ours.
    assert ended and list(ended[0].names) == ["Kim", "Ada"] and ended[0].seat == 0
    assert list(ended[0].balances) == [-2, 2]


def hand_settlement() -> Settlement:
    """A real settlement (Kim drops on the first turn)."""
    hand = a_hand()
    hand.apply(Drop(0))
    assert hand.settlement is not None
    return hand.settlement


#: Hand 1 at table 7 settled: Kim pays Ada 2.
FIRST_HAND_END = m.HandEnd(
    7, 1, hand_settlement(), ("Kim", "Ada"), (("Kim", "Ada", 2),), {"Kim": -2, "Ada": 2}
)


def test_a_refused_resume_forgets_the_table_and_goes_back_to_the_lobby() -> None:
    hand = a_hand()
    model = seated_at_a_table(hand)
    model.take_reports()
    model.link_lost()
    model.hello()
    model.welcome(wire(WELCOME), reconnect=True)
    resume = sent(model)
    assert resume == [{"type": "resume", "table": 7, "token": "t7", "id": 1}]
    give(model, m.Error.of(p.BAD_TOKEN, "no such seat", reply_to=1, detail="token"))
    posted = model.take_reports()
    assert model.table is None and model.state() is None
    assert [type(m) for m in posted] == [Connected, LeftTable, LobbyChanged]
    assert posted[-1].show  # type: ignore[attr-defined]
    # The seat is gone: the next reconnect does not ask for it again.
    model.link_lost()
    model.hello()
    model.welcome(wire(WELCOME), reconnect=True)
    assert sent(model) == [] and model.table is None


def test_a_refused_move_is_logged_and_said() -> None:
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    model.take_reports()
    model.send(m.DiscardRequest("Ks"))
    give(model, m.Error.of(p.ILLEGAL_ACTION, "you must draw first", reply_to=1))
    posted = model.take_reports()
    assert isinstance(posted[-1], ServerRefused) and posted[-1].message == "you must draw first"
    state = [m.state for m in posted if isinstance(m, TableChanged)][-1]
    assert state.log[-1].text.plain == "Not allowed: you must draw first"


def test_a_table_asked_for_by_name_waits_for_the_whole_list_and_watches_if_its_seat_went() -> None:
    model = ClientModel("Kim", "host:1", clock=lambda: 100.0, join="friday")
    model.hello()
    model.welcome(wire(WELCOME), reconnect=False)
    model.take_outgoing()
    hand = a_hand()
    waiting = {"seats": 4, "taken": 1, "free": 3, "state": m.TableState.WAITING}
    give(model, m.Tables((table_map(hand, id=1, name="Kitchen", **waiting),), 0, True, 2))
    # Not on the first page: the next is asked for, and the lobby is not shown meanwhile.
    assert sent(model) == [{"type": "list_tables", "after": 1, "id": 1}]
    assert not [r for r in model.take_reports() if isinstance(r, LobbyChanged) and r.show]
    give(model, m.Tables((table_map(hand, id=9, name="Friday", **waiting),), 1, False, 2))
    assert sent(model) == [{"type": "sit", "table": 9, "id": 2}]
    # Taken meanwhile: refused, so the table is watched instead, and the line says so.
    give(model, m.Error.of(p.ALREADY_STARTED, "the session has started", reply_to=2))
    assert sent(model) == [{"type": "watch", "table": 9, "id": 3}]
    assert not [r for r in model.take_reports() if isinstance(r, ServerRefused)]
    give(model, m.Watching(9, reply_to=3))
    give(model, m.TableMessage(table_map(hand, id=9, name="Friday")))
    notices = [r for r in model.take_reports() if isinstance(r, JoinNotice)]
    assert [n.message for n in notices] == [
        "Friday is full: you are watching (its game has started)."
    ]
    state = model.state()
    assert state is not None and state.log[-1].text.plain.startswith("Friday is full")


@pytest.mark.parametrize(
    ("touch", "watches"), [(False, "w watches it"), (True, "the Watch button watches it")]
)
def test_a_seat_refused_at_a_started_game_says_how_to_watch_in_the_sessions_words(
    touch: bool, watches: str
) -> None:
    """In a terminal the refusal names the key; on a touch screen (the web door's page on a
    phone), the Watch button, and no key."""
    model = ClientModel("Kim", "host:1", clock=lambda: 100.0, touch=touch)
    model.hello()
    model.welcome(wire(WELCOME), reconnect=False)
    model.take_outgoing()
    model.sit(9)
    (asked,) = sent(model)
    give(model, m.Error.of(p.ALREADY_STARTED, "the session has started", reply_to=asked["id"]))
    (refused,) = [r for r in model.take_reports() if isinstance(r, ServerRefused)]
    assert refused.message.startswith(f"That table's game has started: {watches}. You, Kim,")
    assert ("w watches" in refused.message) is not touch


def test_a_table_name_nobody_gave_is_said_and_the_lobby_shown() -> None:
    model = ClientModel("Kim", "host:1", clock=lambda: 100.0, join="Nowhere")
    model.hello()
    model.welcome(wire(WELCOME), reconnect=False)
    model.take_outgoing()
    give(model, m.Tables((table_map(a_hand(), id=1),), 0, False, 1))
    assert sent(model) == []
    reports = model.take_reports()
    notice = next(r for r in reports if isinstance(r, JoinNotice))
    assert not notice.found and "There is no table named Nowhere" in notice.message
    assert isinstance(reports[-1], LobbyChanged) and reports[-1].show


def test_the_standings_are_reported_and_a_refusal_of_them_says_it_was_theirs() -> None:
    model = connected()
    model.take_reports()
    model.send(m.StandingsRequest("week"))
    (asked,) = [message for message in sent(model) if message["type"] == p.STANDINGS]
    answer = m.Standings("week", "2026-11-27", "2026-11-21", "UTC", None, (), (), False)
    give(model, answer.answering(asked["id"]))
    (arrived,) = [r for r in model.take_reports() if isinstance(r, m.Standings)]
    assert arrived == answer.answering(asked["id"])
    # The App's message for it is derived from the wire class, named after it, made once.
    message = wrapped(arrived)
    assert isinstance(message, Reported) and message.report is arrived
    assert message.handler_name == "on_standings"
    assert type(wrapped(arrived)) is type(message) is message_class(m.Standings)
    assert message_class(m.CoachAdvice).handler_name == "on_coach_advice"
    model.send(m.StandingsRequest("all"))
    (again,) = [message for message in sent(model) if message["type"] == p.STANDINGS]
    give(model, m.Error.of(p.STORAGE_ERROR, "try again", reply_to=again["id"]))
    (refused,) = [r for r in model.take_reports() if isinstance(r, ServerRefused)]
    assert (refused.request, refused.message) == (p.STANDINGS, "try again")


def test_every_server_message_has_one_receiver_or_is_ignored_and_a_missing_one_is_caught() -> None:
    receivers = model_module.RECEIVERS
    ignored = {m.Welcome, m.ServerPong, m.ServerPing}
    assert receivers.taken | ignored == set(m.SERVER_TYPES.values())
    assert not receivers.taken & ignored
    assert receivers.get(m.Standings) is receivers.get(m.CoachAdvice)
    without_cut = Handlers[m.ServerMessage, object]("receivers")
    for kind in receivers.taken - {m.Cut}:
        without_cut.add([kind], receivers.get(kind))
    without_cut.ignores(*ignored)
    with pytest.raises(TypeError, match="none for \\['Cut'\\]"):
        without_cut.check(m.SERVER_TYPES.values())
    with pytest.raises(TypeError, match="Update has two receivers"):
        model_module.receives(m.Update)(ClientModel._on_update)
    with pytest.raises(TypeError, match="Welcome has two receivers"):
        without_cut.add([m.Welcome], None)


def test_a_players_trend_is_the_same_on_a_client_there_all_along_and_one_come_later() -> None:
    """Cy takes the bot's seat after hand 1, and pays in hand 2. Kim, at the table all
    along, and Lee, who comes to watch after hand 2 (and is sent the ledger), draw the same
    points for everybody: one before the hands and one after each."""
    hand = a_hand()
    kim = seated_at_a_table(hand)
    give(kim, FIRST_HAND_END)
    cy = m.PlayerSummary(1, "Cy", m.SeatKind.HUMAN, None, m.SeatStatus.CONNECTED, 1, 0)
    kim_after = replaced(table_map(hand).players[0], balance=-2)
    with_cy = table_map(hand, players=(kim_after, cy))
    give(kim, m.TableMessage(with_cy))
    balances = {"Kim": -3, "Ada": 2, "Cy": 1}
    give(kim, m.HandEnd(7, 2, hand_settlement(), ("Kim", "Cy"), (("Kim", "Cy", 1),), balances))
    lee = connected()
    give(lee, m.Watching(7))
    give(lee, m.TableMessage(with_cy))
    give(
        lee, m.LedgerMessage(7, ("Kim", "Ada", "Cy"), ((1, (-2, 2, 0)), (2, (-1, 0, 1))), balances)
    )
    seen = [last_state(model).series for model in (kim, lee)]
    assert seen[0] == seen[1] == {"Kim": (0, -2, -3), "Ada": (0, 2, 2), "Cy": (0, 0, 1)}


def test_the_pile_names_who_threw_each_card_even_once_their_seat_changes_hands() -> None:
    """A discard is labelled with who threw it, not with whoever holds that seat later: Ada's
    seat goes to Bix mid-hand, and the card Ada threw is still Ada's on the pile."""
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    for seat in (0, 1):
        start = hand.view(0).event_count
        hand.apply(DrawStock(seat))
        hand.apply(Discard(seat, hand.view(seat).legal().discards[0]))
        give(model, update(hand, start))
    thrown = [name for _, name in last_state(model).pile]
    assert thrown == [None, "You", "Ada"], thrown
    summary = table_map(hand)
    bix = replaced(summary.players[1], name="Bix")
    give(model, m.TableMessage(replaced(summary, players=(summary.players[0], bix))))
    state = last_state(model)
    assert [p.name for p in state.players] == ["Kim", "Bix"]
    assert [name for _, name in state.pile] == thrown


def test_a_hand_sent_whole_names_each_move_by_who_held_the_seat_then() -> None:
    """Cy played seat 1 and the seat went to Ada (bot) mid-hand: the hand sent from its first
    event with its `holders` says Cy's moves as Cy's, on the log and on the pile."""
    hand = a_hand()
    for seat in (0, 1):
        hand.apply(DrawStock(seat))
        hand.apply(Discard(seat, hand.view(seat).legal().discards[0]))
    changed = len(hand.events)
    for seat in (0, 1):
        hand.apply(DrawStock(seat))
        hand.apply(Discard(seat, hand.view(seat).legal().discards[0]))
    model = seated_at_a_table(hand)
    whole = replaced(update(hand, 0), holders=((1, 0, "Cy"), (1, changed, "Ada")))
    give(model, whole)
    state = last_state(model)
    moves = [line.text.plain for line in state.log if "discarded" in line.text.plain]
    assert [line.split()[0] for line in moves] == ["You", "Cy", "You", "Ada"], moves
    assert [name for _, name in state.pile] == [None, "You", "Cy", "You", "Ada"]


def test_a_seats_last_move_beside_it_says_who_made_it_once_the_seat_changes_hands() -> None:
    """Beside each seat (a large terminal) its last move of the hand: Ada's seat goes to Bix
    before its turn comes round, and Ada's move beside it is said as Ada's; once Bix has played,
    his own; the seat back to Ada, Bix's move is said as his."""
    hand = a_hand()
    model = seated_at_a_table(hand)
    give(model, update(hand, 0))
    summary = table_map(hand)

    def seat_one_goes_to(name: str) -> None:
        held = replaced(summary.players[1], name=name)
        give(model, m.TableMessage(replaced(summary, players=(summary.players[0], held))))

    def turn(seat: int) -> None:
        start = hand.view(0).event_count
        hand.apply(DrawStock(seat))
        hand.apply(Discard(seat, hand.view(seat).legal().discards[0]))
        give(model, update(hand, start))

    def beside_seat_one() -> str:
        return last_state(model).last_moves[1].plain.split(",")[0]

    turn(0)
    turn(1)
    assert beside_seat_one() == "drew"  # (by its present holder)
    seat_one_goes_to("Bix")
    assert beside_seat_one() == "Ada drew"
    turn(0)
    turn(1)
    assert beside_seat_one() == "drew"
    seat_one_goes_to("Ada")
    assert beside_seat_one() == "Bix drew"
