"""The typed messages (tonk.shared.wire.messages) pack to the very bytes the maps they replaced did:
for every message kind of both directions, each map below is written as the server and the
client wrote it before the typed vocabulary (the old way), and packed beside the new."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tonk.server.app import Limits
from tonk.server.tables.table import Table, TableConfig, ledger_message
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.actions import Discard, Drop, Event
from tonk.shared.game.cards import parse_card
from tonk.shared.game.hand import Hand
from tonk.shared.game.history import HandSummary, HistoryStep
from tonk.shared.game.ledger import Ledger
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending, Payment, Settlement
from tonk.shared.game.standings import Standing, UnitNet
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.advice import Advice, Weighed
from tonk.shared.wire.wire import Message

# -- the old way: the maps as they were built, copied from the code they replaced ---------------


def old_error(
    code: str,
    message: str,
    *,
    reply_to: int | None = None,
    detail: str | None = None,
    fatal: bool | None = None,
    **extra: Any,
) -> dict[str, Any]:
    is_fatal = code in p.FATAL_CODES if fatal is None else fatal
    out: dict[str, Any] = {"type": p.ERROR, "code": code, "message": message, "fatal": is_fatal}
    if detail is not None:
        out["detail"] = detail
    if reply_to is not None and not is_fatal:
        out["reply_to"] = reply_to
    out.update(extra)
    return out


def old_reply(message: dict[str, Any], request_id: int | None) -> dict[str, Any]:
    if request_id is not None:
        message["reply_to"] = request_id
    return message


def old_summary(table: Table) -> dict[str, Any]:
    config = table.config
    balances = table.session.ledger.balances
    taken = sum(seat.kind != "empty" for seat in table.seats)

    def status(seat: Any) -> str:
        if seat.kind != "human":
            return str(seat.kind)
        if seat.away:
            return "away"
        return "connected" if seat.conn is not None else "disconnected"

    return {
        "id": table.id,
        "name": table.name,
        "rules": table.rules.to_wire(),
        "rules_name": table.rules.name,
        "stake": config.stake,
        "unit": config.unit,
        "seats": len(table.seats),
        "taken": taken,
        "free": len(table.seats) - taken,
        "state": str(table.state),
        "spectators": len(table.seats.spectators),
        "turn_timer": config.turn_timer,
        "hands": config.hands,
        "minutes": config.minutes,
        "bot_pause": config.bot_pause,
        "hands_played": table.session.hands_played,
        "creator": table.seats.creator,
        "dealer": table.play.session.dealer,
        "paused": table.store.paused,
        "players": [
            {
                "seat": number,
                "name": seat.name,
                "kind": str(seat.kind),
                "strategy": seat.strategy,
                "status": "empty" if seat.kind == "empty" else status(seat),
                "stake": seat.stake,
                "balance": balances.get(seat.name, 0) if seat.name else 0,
            }
            for number, seat in enumerate(table.seats)
        ],
        "changes": table.rules.overrides(),
        "open_bot_seats": table.config.open_bot_seats,
    }


def old_update(
    table: Table, seat: int | None, start: int, reply_to: int | None = None
) -> dict[str, Any]:
    hand = table.play.hand
    assert hand is not None
    message = {
        "type": p.UPDATE,
        "table": table.id,
        "hand": table.session.hand_number,
        "from": start,
        "events": [event.to_dict() for event in hand.events_for(seat, start)],
        "view": hand.view(seat).to_dict(),
        "deadline": table.play.deadline(),
    }
    if reply_to is not None:
        message["reply_to"] = reply_to
    return message


def old_ledger(table_id: int, ledger: Ledger, limit: int = p.LEDGER_HANDS) -> dict[str, Any]:
    entries = ledger.history[-limit:] if limit > 0 else []
    nets = [entry.net() for entry in entries]
    names = list(dict.fromkeys([*ledger.balances, *(name for net in nets for name in net)]))
    return {
        "type": p.LEDGER,
        "table": table_id,
        "names": names,
        "hands": [
            [entry.hand_number, [net.get(name, 0) for name in names]]
            for entry, net in zip(entries, nets, strict=True)
        ],
        "balances": {name: ledger.balances.get(name, 0) for name in names},
    }


def old_limits(limits: Limits, grace: float, idle_turn: float) -> dict[str, Any]:
    return {
        "max_frame": limits.max_frame,
        "max_server_frame": p.MAX_SERVER_FRAME,
        "max_name": limits.max_name,
        "max_chat": limits.max_chat,
        "max_table_name": limits.max_table_name,
        "messages_per_second": limits.messages_per_second,
        "burst": limits.burst,
        "pages_per_second": limits.pages_per_second,
        "page_burst": limits.page_burst,
        "heartbeat": limits.heartbeat,
        "idle_timeout": limits.idle_timeout,
        "grace": grace,
        "idle_turn": idle_turn,
    }


# -- the same, both ways ------------------------------------------------------------------------

SETTLEMENT = Settlement(
    Ending.DROP_CAUGHT,
    (1,),
    (Payment(0, 1, 4), Payment(2, 1, 2)),
    (9, 3, None),
    (None, (), None),
    dropper=0,
    next_multiplier=2,
)
WELCOME_LIMITS = Limits().to_wire(120.0, 300.0)

# (the old map, the new message): every server message kind, with and without its options.
#: A drop won, and a hand just dealt, for the history's messages (new since the old way: their
#: maps are written as PROTOCOL.md gives them).
_DROP_WON = Settlement(Ending.DROP_WON, (0,), (Payment(1, 0, 2),), (3, 20), (None, None), 0)
_DEALT = Hand(PRESETS["pagat"], 2, 1, (1, 1), rng=random.Random(4))

SERVER_CASES: list[tuple[dict[str, Any], m.ServerMessage]] = [
    (
        old_reply(
            {
                "type": p.WELCOME,
                "version": p.PROTOCOL_VERSION,
                "server": "tonk-server 0.1.0",
                "name": "Ada",
                "limits": old_limits(Limits(), 120.0, 300.0),
                "dev": False,
            },
            None,
        ),
        m.Welcome(p.PROTOCOL_VERSION, "tonk-server 0.1.0", "Ada", WELCOME_LIMITS, False),
    ),
    (
        old_reply(
            {
                "type": p.WELCOME,
                "version": 2,
                "server": "s",
                "name": "Bo",
                "limits": old_limits(Limits(heartbeat=2.5), 3, 0),
                "dev": True,
            },
            7,
        ),
        m.Welcome(2, "s", "Bo", Limits(heartbeat=2.5).to_wire(3, 0), True, reply_to=7),
    ),
    (old_error(p.BAD_FRAME, "x", reply_to=3), m.Error.of(p.BAD_FRAME, "x", reply_to=3)),
    (
        old_error(p.ILLEGAL_ACTION, "no", reply_to=3, detail="not_your_turn"),
        m.Error.of(p.ILLEGAL_ACTION, "no", reply_to=3, detail="not_your_turn"),
    ),
    (old_error(p.BAD_TABLE, "t", detail="seats"), m.Error.of(p.BAD_TABLE, "t", detail="seats")),
    (
        old_error(p.BAD_NAME, "n", reply_to=4, fatal=True),
        m.Error.of(p.BAD_NAME, "n", reply_to=4, fatal=True),
    ),
    (
        old_error(p.VERSION_MISMATCH, "v", version=2),
        m.Error.of(p.VERSION_MISMATCH, "v", version=2),
    ),
    (
        old_error(p.BAD_VALUE, "id", detail="id", fatal=True),
        m.Error.of(p.BAD_VALUE, "id", detail="id", fatal=True),
    ),
    (
        old_reply({"type": p.SEATED, "table": 7, "seat": 0, "token": "tok"}, 1),
        m.Seated(7, 0, "tok").answering(1),
    ),
    (
        old_reply({"type": p.SEATED, "table": 7, "seat": 3, "token": "tok"}, None),
        m.Seated(7, 3, "tok").answering(None),
    ),
    (old_reply({"type": p.WATCHING, "table": 9}, 5), m.Watching(9).answering(5)),
    (old_reply({"type": p.WATCHING, "table": 9}, None), m.Watching(9)),
    (old_reply({"type": p.LEFT, "table": 2}, 0), m.Left(2).answering(0)),
    ({"type": p.LEFT, "table": 2}, m.Left(2)),
    (
        {
            "type": p.CUT,
            "table": 7,
            "rounds": [["4c", "Jd", None], ["9s", "9h", None]],
            "dealer": 1,
        },
        m.Cut(7, (("4c", "Jd", None), ("9s", "9h", None)), 1),
    ),
    (
        {
            "type": p.HAND_END,
            "table": 7,
            "hand": 3,
            "settlement": SETTLEMENT.to_dict(),
            "names": ["A", "B", "C"],
            "payments": [list(x) for x in [("A", "B", 4), ("C", "B", 2)]],
            "balances": dict({"A": -4, "B": 6, "C": -2}),
        },
        m.HandEnd(
            7,
            3,
            SETTLEMENT,
            ("A", "B", "C"),
            (("A", "B", 4), ("C", "B", 2)),
            {"A": -4, "B": 6, "C": -2},
        ),
    ),
    *[
        (
            {
                "type": p.SESSION_END,
                "table": 7,
                "hands": 12,
                "standings": [list(x) for x in [("B", 6), ("C", -2), ("A", -4)]],
                "reason": reason,
                "settle_up": [["A", "B", 4], ["C", "B", 2]],
                "combined": None,
                "rematch": wait,
            },
            m.SessionEnd(
                7,
                12,
                (("B", 6), ("C", -2), ("A", -4)),
                m.SessionEndReason(reason),
                (("A", "B", 4), ("C", "B", 2)),
                None,
                wait,
            ),
        )
        for reason, wait in (("hands", 120.0), ("minutes", 0.5), ("abandoned", None))
    ],
    (
        {
            "type": p.SESSION_END,
            "table": 9,
            "hands": 1,
            "standings": [["A", 2], ["B", -2]],
            "reason": "hands",
            "settle_up": [["B", "A", 2]],
            "combined": {
                "sessions": 2,
                "standings": [["A", 5], ["B", -5]],
                "settle_up": [["B", "A", 5]],
            },
            "rematch": 120.0,
        },
        m.SessionEnd(
            9,
            1,
            (("A", 2), ("B", -2)),
            m.SessionEndReason.HANDS,
            (("B", "A", 2),),
            m.Combined(2, (("A", 5), ("B", -5)), (("B", "A", 5),)),
            120.0,
        ),
    ),
    (
        {
            "type": p.REMATCH_STATUS,
            "table": 7,
            "seats": [["A", "yes"], ["Ada (bot)", "bot"], ["B", "awaited"]],
            "outcome": "waiting",
            "seconds": 88.5,
            "next": None,
        },
        m.RematchStatus(
            7, (("A", "yes"), ("Ada (bot)", "bot"), ("B", "awaited")), "waiting", 88.5, None
        ),
    ),
    (
        old_reply(
            {
                "type": p.REMATCH_STATUS,
                "table": 7,
                "seats": [["A", "yes"], ["B", "yes"]],
                "outcome": "started",
                "seconds": None,
                "next": 8,
            },
            3,
        ),
        m.RematchStatus(7, (("A", "yes"), ("B", "yes")), "started", None, 8).answering(3),
    ),
    (
        old_reply({"type": p.CHAT, "table": 1, "name": "Ada", "seat": 2, "text": "hi"}, 8),
        m.ChatLine(1, "Ada", 2, "hi").answering(8),
    ),
    (
        {"type": p.CHAT, "table": 1, "name": "", "seat": None, "text": "hi"},
        m.ChatLine(1, "", None, "hi"),
    ),
    (
        old_reply(
            {
                "type": p.HISTORY,
                "table": 1,
                "hands": [
                    {
                        "number": 4,
                        "names": ["Ada", "Bo"],
                        "dealer": 1,
                        "multiplier": 2,
                        "settlement": _DROP_WON.to_dict(),
                        "occupants": [],
                    }
                ],
                "total": 4,
                "more": True,
                "unit": "chips",
                "balances": {"Ada": 2, "Bo": -2},
                "settle_up": [["Bo", "Ada", 2]],
            },
            6,
        ),
        m.HistoryPage(
            1,
            (HandSummary(4, ("Ada", "Bo"), 1, 2, _DROP_WON),),
            4,
            True,
            "chips",
            {"Ada": 2, "Bo": -2},
            (("Bo", "Ada", 2),),
            6,
        ),
    ),
    (
        {
            "type": p.HISTORY_HAND,
            "table": 1,
            "hand": 4,
            "seat": None,
            "names": ["Ada", "Bo"],
            "rules": PRESETS["pagat"].to_wire(),
            "steps": [
                {
                    "events": [e.to_dict() for e in _DEALT.events_for(None)],
                    "view": {k: v for k, v in _DEALT.view(None).to_dict().items() if k != "rules"},
                }
            ],
            "from": 0,
            "total": 9,
            "occupants": [],
        },
        m.HistoryHandSteps(
            1,
            4,
            None,
            ("Ada", "Bo"),
            PRESETS["pagat"],
            (HistoryStep(tuple(_DEALT.events_for(None)), _DEALT.view(None)),),
            0,
            9,
        ),
    ),
    ({"type": p.PING, "n": 3}, m.ServerPing(3)),
    (
        old_reply({"type": p.PONG, **({"n": 5})}, 9),
        m.ServerPong(5).answering(9),
    ),
    (old_reply({"type": p.PONG, **({})}, None), m.ServerPong()),
    (
        {"type": p.GOODBYE, "reason": p.SERVER_SHUTTING_DOWN, "message": "bye now"},
        m.Goodbye(p.SERVER_SHUTTING_DOWN, "bye now"),
    ),
    ({"type": p.LOBBY, "tables": [], "removed": [3, 4]}, m.LobbyChanges((), (3, 4))),
    (
        {"type": p.DEAL_COMMIT, "table": 2, "hand": 1, "commitment": "ab" * 32, "wait": 1.5}
        | {"dev": False},
        m.DealCommit(2, 1, "ab" * 32, 1.5, False),
    ),
    (
        {"type": p.DEAL_COMMIT, "table": 2, "hand": 4, "commitment": None, "wait": 0.0}
        | {"dev": True},
        m.DealCommit(2, 4, None, 0.0, True),
    ),
    (
        {"type": p.DEAL_REVEAL, "table": 2, "hand": 1, "secret": "cd" * 32}
        | {"values": [[0, "01" * 32], [2, "02" * 32]]},
        m.DealReveal(2, 1, "cd" * 32, ((0, "01" * 32), (2, "02" * 32))),
    ),
    (
        {
            "type": p.AWAY_SUMMARY,
            "table": 1,
            "turns": 3,
            "hands": [[7, "Ann"], [8, None]],
            "net": -2,
            "hand": 9,
            "played_for": [4, 5],
        },
        m.AwaySummary(1, 3, ((7, "Ann"), (8, None)), -2, 9, (4, 5)),
    ),
    (
        {"type": p.TABLES, "after": 0, "more": False, "total": 0, "tables": []},
        m.Tables((), 0, False, 0),
    ),
    (
        {"type": p.TABLES, "after": 5, "more": True, "total": 9, "tables": [], "reply_to": 1},
        m.Tables((), 5, True, 9, reply_to=1),
    ),
    (
        {
            "type": p.STANDINGS,
            "period": "week",
            "tonight": "2026-11-27",
            "since": "2026-11-21",
            "zone": "CET",
            "unit": "chips",
            "people": [
                {
                    "name": "Ada",
                    "hands": 9,
                    "won": 4,
                    "drops_won": 1,
                    "drops_caught": 2,
                    "tonk_outs": 1,
                    "deal_tonks": 0,
                    "nets": [
                        {
                            "unit": "chips",
                            "net": 7,
                            "best": {"night": "2026-11-27", "net": 9},
                            "worst": {"night": "2026-11-21", "net": -2},
                        }
                    ],
                }
            ],
            "bots": [],
            "more": False,
            "reply_to": 4,
        },
        m.Standings(
            "week",
            "2026-11-27",
            "2026-11-21",
            "CET",
            "chips",
            (
                Standing(
                    "Ada",
                    9,
                    4,
                    1,
                    2,
                    1,
                    0,
                    (UnitNet("chips", 7, "2026-11-27", 9, "2026-11-21", -2),),
                ),
            ),
            (),
            False,
            reply_to=4,
        ),
    ),
    (
        {
            "type": p.STANDINGS,
            "period": "all",
            "tonight": "2026-11-27",
            "since": None,
            "zone": "UTC",
            "unit": None,
            "people": [],
            "bots": [],
            "more": False,
        },
        m.Standings("all", "2026-11-27", None, "UTC", None, (), (), False),
    ),
    (
        {
            "type": p.COACH,
            "table": 3,
            "hand": 2,
            "step": 4,
            "advice": {
                "best": {"type": "drop", "seat": 1},
                "played": {"type": "discard", "seat": 1, "card": "Qh"},
                "gain": 0.5,
                "low": 0.25,
                "high": 0.75,
                "deals": 400,
                "weighed": [
                    {"action": {"type": "drop", "seat": 1}, "mean": 1.0},
                    {"action": {"type": "discard", "seat": 1, "card": "Qh"}, "mean": 0.5},
                ],
                "stake": 2,
            },
            "reply_to": 9,
        },
        m.CoachAdvice(
            3,
            2,
            4,
            Advice(
                Drop(1),
                Discard(1, parse_card("Qh")),
                0.5,
                0.25,
                0.75,
                400,
                (Weighed(Drop(1), 1.0), Weighed(Discard(1, parse_card("Qh")), 0.5)),
                2,
            ),
            reply_to=9,
        ),
    ),
]

# Every client message kind, as the client builds it (type first, its fields, `id` last).
CLIENT_CASES: list[tuple[dict[str, Any], m.ClientMessage]] = [
    (
        {"type": p.HELLO, "version": 2, "name": "Ada", "client": "tonk-client 0.1.0"},
        m.Hello(2, "Ada", "tonk-client 0.1.0"),
    ),
    ({"type": p.HELLO, "version": 1, "name": "Ada", "id": 4}, m.Hello(1, "Ada", id=4)),
    ({"type": p.LIST_TABLES, "after": 12, "id": 3}, m.ListTables(after=12, id=3)),
    ({"type": p.LIST_TABLES, "after": 0, "limit": 5}, m.ListTables(0, 5)),
    ({"type": p.CREATE_TABLE, "name": "Kitchen", "id": 1}, m.CreateTable("Kitchen", id=1)),
    (
        {
            "type": p.CREATE_TABLE,
            "name": "Friday",
            "rules": {"preset": "speno", "hit_lock": 1},
            "stake": 5,
            "unit": "cents",
            "seats": 3,
            "turn_timer": None,
            "hands": 10,
            "minutes": None,
            "bot_pause": 0.5,
            "sit": False,
            "seed": 42,
            "deck": "As 2s",
            "dealer": 1,
            "id": 2,
        },
        m.CreateTable(
            "Friday",
            {"preset": "speno", "hit_lock": 1},
            5,
            "cents",
            3,
            None,
            10,
            None,
            0.5,
            False,
            42,
            "As 2s",
            1,
            id=2,
        ),
    ),
    ({"type": p.SIT, "table": 7}, m.Sit(7)),
    ({"type": p.SIT, "table": 7, "seat": None, "stake": 3, "id": 4}, m.Sit(7, None, 3, id=4)),
    ({"type": p.RESUME, "table": 7, "token": "tok"}, m.Resume(7, "tok")),
    ({"type": p.WATCH, "table": 7, "id": 0}, m.Watch(7, id=0)),
    ({"type": p.LEAVE}, m.Leave()),
    ({"type": p.ADD_BOT, "strategy": "sharp"}, m.AddBot("sharp")),
    ({"type": p.ADD_BOT, "seat": 2, "stake": 9, "id": 1}, m.AddBot(seat=2, stake=9, id=1)),
    ({"type": p.REMOVE_BOT, "seat": 1}, m.RemoveBot(1)),
    ({"type": p.START, "id": 5}, m.Start(id=5)),
    ({"type": p.CHAT, "text": "hi"}, m.Chat("hi")),
    ({"type": p.BACK}, m.Back()),
    ({"type": p.HISTORY, "table": 3}, m.History(3)),
    (
        {"type": p.HISTORY, "table": 3, "before": 9, "limit": 20, "id": 2},
        m.History(3, 9, 20, id=2),
    ),
    ({"type": p.HISTORY_HAND, "table": 3, "hand": 2}, m.HistoryHand(3, 2)),
    ({"type": p.HISTORY_HAND, "table": 3, "hand": 2, "from": 5}, m.HistoryHand(3, 2, 5)),
    ({"type": p.REMATCH, "answer": True}, m.Rematch(True)),
    ({"type": p.REMATCH, "answer": False, "id": 4}, m.Rematch(False, id=4)),
    ({"type": p.DROP}, m.DropRequest()),
    ({"type": p.DRAW_STOCK, "id": 3}, m.DrawStockRequest(id=3)),
    ({"type": p.TAKE_DISCARD}, m.TakeDiscardRequest()),
    ({"type": p.SPREAD, "cards": "10s Js Qs"}, m.SpreadRequest("10s Js Qs")),
    ({"type": p.HIT, "card": "Ks", "spread": 2}, m.HitRequest("Ks", 2)),
    ({"type": p.DISCARD, "card": "10s", "id": 9}, m.DiscardRequest("10s", id=9)),
    ({"type": p.PING, "n": 1}, m.Ping(1)),
    ({"type": p.PONG}, m.Pong()),
    ({"type": p.PONG, "n": 4}, m.Pong(4)),
    ({"type": p.BYE}, m.Bye()),
    ({"type": p.PLAY_FOR_NOW, "seat": 1}, m.PlayForNow(1)),
    ({"type": p.TAKE_BOT_SEAT, "table": 7, "seat": 2, "id": 3}, m.TakeBotSeat(7, 2, id=3)),
    ({"type": p.SEAT_TO_BOT, "seat": 0}, m.SeatToBot(0)),
    ({"type": p.STANDINGS}, m.StandingsRequest()),
    ({"type": p.STANDINGS, "period": "month", "id": 8}, m.StandingsRequest("month", id=8)),
    ({"type": p.COACH, "table": 3, "hand": 2}, m.CoachRequest(3, 2)),
    (
        {"type": p.DEAL_VALUE, "table": 3, "hand": 2, "value": "ef" * 32},
        m.DealValue(3, 2, "ef" * 32),
    ),
    ({"type": p.COACH, "table": 3, "hand": 2, "step": 0, "id": 5}, m.CoachRequest(3, 2, 0, id=5)),
]


def test_every_message_kind_has_a_case_both_ways() -> None:
    # table, update and ledger: from a table, below.
    kinds = {old["type"] for old, _ in SERVER_CASES} | {p.TABLE, p.UPDATE, p.LEDGER}
    assert kinds == set(m.SERVER_MESSAGES)
    assert {old["type"] for old, _ in CLIENT_CASES} == set(m.CLIENT_MESSAGES)


@pytest.mark.parametrize(("old", "new"), SERVER_CASES + CLIENT_CASES)
def test_a_typed_message_packs_to_the_old_maps_bytes(old: dict[str, Any], new: m.Message) -> None:
    assert m.encode(new) == p.encode(old)


@pytest.mark.parametrize(
    ("old", "new"),
    [case for case in SERVER_CASES + CLIENT_CASES if not isinstance(case[1], m.Tables)],
)
def test_a_message_writes_what_the_loop_over_its_declared_fields_writes(
    old: dict[str, Any], new: m.Message
) -> None:
    """A message's to_wire is Message.to_wire, a loop over its declared fields (tables write
    their own: their wire order is not their fields'), and it writes what the server wrote."""
    assert p.encode(Message.to_wire(new)) == p.encode(new.to_wire()) == p.encode(old)


@pytest.mark.parametrize(("old", "new"), SERVER_CASES)
def test_a_server_message_reads_back_as_itself(old: dict[str, Any], new: m.Message) -> None:
    frame = p.encode(old)
    assert m.read_server(p.decode_payload(frame[p.HEADER_SIZE :])) == new


@pytest.mark.parametrize(("old", "new"), CLIENT_CASES)
def test_a_client_message_reads_back_as_itself(old: dict[str, Any], new: m.Message) -> None:
    frame = p.encode(old)
    assert m.read_client(p.decode_payload(frame[p.HEADER_SIZE :])) == new


def table_for(preset: str, players: int, turn_timer: float | None) -> Table:
    table = Table(
        server=None,  # type: ignore[arg-type]  # the builders ask nothing of the server
        id=7,
        name="Kitchen",
        config=TableConfig(rules=PRESETS[preset], seats=players + 1, turn_timer=turn_timer),
        created=0.0,
    )
    for number, seat in enumerate(table.seats[:players]):
        seat.name, seat.kind = f"p{number}", "human" if number else "bot"
        seat.strategy = None if number else "easy"
    table.seats[-1].away = True  # an empty seat, whatever else it says
    return table


@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_table_update_and_ledger_messages_pack_as_before(preset: str) -> None:
    rng = random.Random(preset)
    for number in range(1, 5):
        players = 2 + number % (PRESETS[preset].players - 1)
        table = table_for(preset, players, 30.0 if number % 2 else None)
        table.seats.creator = 0
        table.play.session.dealer, table.play.session.hands_played = 1, number
        table.seats[1].away = number % 2 == 0
        table.store.paused = "the disk is full" if number == 3 else None
        hand = Hand(PRESETS[preset], players, number % players, (number,) * players, rng=rng)
        table.play.hand, table.play.session.hand_number = hand, number
        bots = [make_bot("easy", random.Random(rng.getrandbits(32))) for _ in range(players)]
        while not hand.ended:
            start = len(hand.events)
            hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
            for seat in [None, *range(players)]:
                assert m.encode(table.play.update_message(seat, start)) == p.encode(
                    old_update(table, seat, start)
                )
                assert m.encode(table.play.update_message(seat, 0, 5)) == p.encode(
                    old_update(table, seat, 0, 5)
                )
        assert hand.settlement is not None
        table.session.ledger.record(hand.settlement, table.seats.names()[:players])
        assert m.encode(m.TableMessage(table.summary())) == p.encode(
            {"type": p.TABLE, "table": old_summary(table)}
        )
        assert m.encode(m.TableMessage(table.summary()).answering(3)) == p.encode(
            old_reply({"type": p.TABLE, "table": old_summary(table)}, 3)
        )
        for limit in (0, 1, 200):
            assert m.encode(ledger_message(7, table.session.ledger, limit)) == p.encode(
                old_ledger(7, table.session.ledger, limit)
            )
        tables = m.Tables((table.summary(),) * 2, 0, False, 2)
        assert m.read_server(tables.to_wire()) == tables


async def test_an_update_reads_back_to_its_events_and_view() -> None:
    table = table_for("classic", 3, None)
    hand = Hand(PRESETS["classic"], 3, 0, (1, 1, 1), rng=random.Random(3))
    table.play.hand, table.play.session.hand_number = hand, 1
    update = m.read_server(p.decode_payload(m.encode(table.play.update_message(1, 0))[4:]))
    assert isinstance(update, m.Update)
    assert update.view == hand.view(1)
    assert update.events == tuple(Event.from_dict(e.to_dict()) for e in hand.events_for(1, 0))


def old_player(player: m.PlayerSummary) -> dict[str, Any]:
    """A seat of the table map as `PlayerSummary.to_wire` wrote it, by hand, before the table
    map was written from its declaration."""
    out: dict[str, Any] = {
        "seat": player.seat,
        "name": player.name,
        "kind": player.kind,
        "strategy": player.strategy,
        "status": player.status,
        "stake": player.stake,
        "balance": player.balance,
    }
    if player.played_for_in is not None:
        out["played_for_in"] = player.played_for_in
    if player.votes:
        out["votes"] = list(player.votes)
    return out


@pytest.mark.parametrize(
    ("played_for_in", "votes"), [(None, ()), (12.5, ()), (0.0, (2,)), (None, (0, 2))]
)
async def test_a_seat_waited_for_packs_as_before_and_reads_back_as_itself(
    played_for_in: float | None, votes: tuple[int, ...]
) -> None:
    """The table map's seat leaves out its countdown when there is none and its votes when
    there are none, as it did when it was written by hand."""
    player = m.PlayerSummary(
        1, "Kim", m.SeatKind.HUMAN, None, m.SeatStatus.DISCONNECTED, 5, -3, played_for_in, votes
    )
    table = table_for("classic", 3, None).summary()
    table = table.replaced(players=(table.players[0], player))
    old = old_player(player)
    assert p.encode(player.to_wire()) == p.encode(old)
    message = m.TableMessage(table)
    assert m.encode(message) == p.encode(
        {
            "type": p.TABLE,
            "table": {**table.to_wire(), "players": [old_player(table.players[0]), old]},
        }
    )
    assert m.read_server(p.decode_payload(m.encode(message)[p.HEADER_SIZE :])) == message


async def test_a_table_map_without_its_changes_is_refused_as_it_was() -> None:
    """`changes` has a default (a table map built without it) but is read as sent always."""
    table = m.TableMessage(table_for("classic", 2, None).summary()).to_wire()
    del table["table"]["changes"]
    with pytest.raises(p.ProtocolError, match="changes"):
        m.read_server(table)
