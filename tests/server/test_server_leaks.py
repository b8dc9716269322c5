"""Hidden cards stay hidden: every frame sent to every connection over many bot hands (two
seated players played for by the server, two bots, a spectator, a player who reconnects) is
checked against the hands replayed from the server's own records."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

import pytest
from netclient import NetClient, cards_in, start_server
from rulekit import copy_hand
from tonk.shared.game.actions import Event
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.wire import protocol as p

HANDS = 60
PRIVATE_KINDS = ("deal", "draw_stock")  # the cards of these are known only to their seat


def visible(event: Event, seat: int | None) -> dict[str, Any]:
    """What `seat` may be told of `event`, decided here independently of the core's filter."""
    data = event.to_dict()
    if event.kind in PRIVATE_KINDS and event.seat != seat:
        data.pop("cards", None)
    return data


def told(events: Iterable[Event], seat: int | None) -> set[str]:
    """Every card `events` tell `seat` (as `visible` has them)."""
    cards: set[str] = set()
    for event in events:
        cards |= cards_in(visible(event, seat))
    return cards


class Truth:
    """Each hand replayed from the database, action by action: the true state after each."""

    def __init__(self, records: dict[int, HandRecord]) -> None:
        self.states: dict[tuple[int, int], Hand] = {}
        self.final: dict[int, Hand] = {}
        # by hand and seat: the events `known_at` counted last, and the cards they tell the seat
        self.counted: dict[tuple[int, int | None], tuple[list[Event], set[str]]] = {}
        for number, record in records.items():
            hand = record.deal()
            self.states[number, len(hand.events)] = copy_hand(hand)
            for action in record.actions:
                hand.apply(action)
                self.states[number, len(hand.events)] = copy_hand(hand)
            self.final[number] = hand

    @staticmethod
    def known(hand: Hand, seat: int | None, events_told: set[str] | None = None) -> set[str]:
        """Every card `seat` may know of at this point of the hand. (`events_told`: what its
        events tell the seat, `told(hand.events, seat)`, where already counted.)"""
        cards = told(hand.events, seat) if events_told is None else set(events_told)
        if seat is not None:
            cards |= {str(c) for c in hand.hands[seat]}
        if hand.settlement is not None:
            cards |= cards_in(hand.settlement.to_dict())
        return cards

    def known_at(self, number: int, hand: Hand, seat: int | None) -> set[str]:
        """`known(hand, seat)` for a state of hand `number`. A connection's frames go forward
        through a hand: the events are counted on from those counted for the seat's state
        asked about last, where those are this state's first ones, not each time from the deal
        (from the deal again where they are not)."""
        counted, cards = self.counted.get((number, seat), ([], set()))
        if hand.events[: len(counted)] != counted:
            counted, cards = [], set()
        cards |= told(hand.events[len(counted) :], seat)
        self.counted[number, seat] = (list(hand.events), cards)
        return self.known(hand, seat, cards)

    def problems(self, message: dict[str, Any], seat: int | None) -> list[str]:
        kind = message["type"]
        if kind == p.UPDATE:
            number, start = message["hand"], message["from"]
            count = message["view"]["event_count"]
            hand = self.states.get((number, count))
            if hand is None:
                return [f"hand {number} never had {count} events"]
            out = []
            if message["view"] != hand.view(seat).to_dict():
                out.append(f"hand {number}: view differs from seat {seat}'s true view")
            expected = [visible(e, seat) for e in hand.events[start:count]]
            if message["events"] != expected:
                out.append(f"hand {number}: events differ from what seat {seat} may see")
            leaked = cards_in(message) - self.known_at(number, hand, seat)
            if leaked:
                out.append(f"hand {number}: seat {seat} was sent {sorted(leaked)}")
            return out
        if kind == p.HAND_END:
            number = message["hand"]
            leaked = cards_in(message) - self.known_at(number, self.final[number], seat)
            return [f"hand_end leaks {sorted(leaked)}"] if leaked else []
        if kind == p.CUT:
            return []  # the cut is made face up, from its own deck
        found = cards_in(message)
        return [f"a {kind} message names cards {sorted(found)}"] if found else []


def check(client: NetClient, seat: int | None, truth: Truth) -> int:
    checked = 0
    for message in client.received:
        assert truth.problems(message, seat) == [], message
        checked += message["type"] == p.UPDATE
    return checked


@pytest.mark.slow
async def test_no_frame_ever_carries_a_card_its_connection_may_not_see(tmp_path):
    # Ann and Ben read what they were sent only once the session is over: the server must not
    # drop them meanwhile as clients that do not read, nor for the frames that wait for them
    # (test_server_errors tests that it does both).
    unread = {"unread_timeout": 600.0, "queue": 100_000, "queue_bytes": 256 * 1024 * 1024}
    async with start_server(tmp_path, limit_changes=unread) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(
            name="leaks", seats=4, hands=HANDS, turn_timer=0.01, seed=12345
        )
        spectator = await NetClient.connect(server.port, "Spec")
        await spectator.request({"type": "watch", "table": table}, p.WATCHING)
        ben = await NetClient.connect(server.port, "Ben")
        await ben.request({"type": "sit", "table": table, "seat": 1}, p.SEATED)
        await ann.send({"type": "add_bot", "strategy": "sharp"})
        await ann.send({"type": "add_bot", "strategy": "easy"})
        # Ann and Ben never act: the turn timer makes them away and the server plays for them.
        await spectator.expect(p.HAND_END, lambda m: m["hand"] == HANDS // 2, timeout=60)
        ben_again = await NetClient.connect(server.port, "Ben")
        await ben_again.request({"type": "resume", "table": table, "token": ben.token}, p.SEATED)
        await ben.expect_error(p.SEAT_RESUMED_ELSEWHERE)
        end = await spectator.expect(p.SESSION_END, timeout=60)
        assert end["hands"] == HANDS
        for client in (ann, ben_again):
            await client.expect(p.SESSION_END, timeout=10)
    with sqlite3.connect(tmp_path / "tonk.db") as conn:
        rows = conn.execute("SELECT number, record FROM hands WHERE table_id = ?", (table,))
        records = {n: HandRecord.from_dict(json.loads(r)) for n, r in rows}
    assert sorted(records) == list(range(1, HANDS + 1))
    truth = Truth(records)

    updates = {
        "spectator": check(spectator, None, truth),
        "ann": check(ann, 0, truth),
        "ben": check(ben, 1, truth),
        "ben again": check(ben_again, 1, truth),
    }
    assert updates["spectator"] > HANDS * 10 and updates["ann"] == updates["spectator"]
    assert updates["ben"] + updates["ben again"] > updates["ann"] // 2
    # Some hands were revealed at the end, and Ann saw her own cards: the check had cards to see.
    assert any(cards_in(m) for m in spectator.received if m["type"] == p.HAND_END)

    # A typical view frame is well under 1 KB (since protocol 2 a view's rules carry every
    # option, about 250 bytes); even a full resend of a hand stays small.
    sizes = sorted(len(p.encode(m)) for m in ann.received if m["type"] == p.UPDATE)
    assert sizes[len(sizes) // 2] < 768 and sizes[-1] < 4096, (sizes[len(sizes) // 2], sizes[-1])
    incremental = [len(p.encode(m)) for m in ann.received if m["type"] == p.UPDATE and m["from"]]
    assert max(incremental) < 1024

    # The check can fail: plant leaks in copies of real frames.
    sample = next(
        m
        for m in spectator.received
        if m["type"] == p.UPDATE and m["view"]["stock_size"] > 0 and m["view"]["phase"] != "ended"
    )
    hand = truth.states[sample["hand"], sample["view"]["event_count"]]
    stock_card = str(hand.stock[-1])
    others_card = str(hand.hands[0][0])
    under_top = str(hand.discards[0]) if len(hand.discards) > 1 else None
    planted = []
    for plant in (stock_card, others_card, under_top):
        if plant is None:
            continue
        leak = copy.deepcopy(sample)
        leak["view"]["hand"] = plant
        planted.append(leak)
        leak = copy.deepcopy(sample)
        leak["events"].append({"kind": "draw_stock", "seat": 0, "cards": plant, "private": True})
        planted.append(leak)
    leak = copy.deepcopy(sample)
    leak["view"]["discard_pile"] = [str(c) for c in hand.discards]
    planted.append(leak)
    for leak in planted:
        assert truth.problems(leak, None), leak
