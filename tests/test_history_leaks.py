"""The history shows nothing live play did not: every ending under every preset, played move by
move on a real server by three players with a spectator watching, then looked back at by each
player who sat in the hand, by a player seated later who did not, and by the spectator. Every
step of every answer is held to the live frames that same connection (or, for one who did not
sit in the hand, a spectator) was sent by that step: the same events, the same view, no card
beyond those frames, and none beyond what the rules let that seat know (tests/test_server_leaks
.py's `Truth.known`): never the stock, a discard under the top card, or a hand kept hidden."""

from __future__ import annotations

import copy
import json
import sqlite3
from dataclasses import replace as replaced
from pathlib import Path
from typing import Any

import pytest
from historykit import ENDINGS, Scripted, answer, play_hand, scripted
from netclient import NetClient, cards_in, start_server
from test_server_leaks import Truth
from tonk.server.store import history
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.history import HistoryStep
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire import protocol as p


async def play_scripted(tmp_path: Path, preset: str, hand: Scripted) -> dict[str, Any]:
    """The hand played on a real server (historykit.play_hand), then looked back at by every
    client; afterwards Zed takes Cy's seat with its token (a player at the table who did not
    sit in that hand). Every client's history answers, and its live frames."""
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        table, players, spec = await play_hand(server, preset, hand)
        asked: dict[str, Any] = {}
        for client in (*players, spec):
            asked[client.name] = (
                await answer(client, {"type": p.HISTORY_HAND, "table": table, "hand": 1}),
                await answer(client, {"type": p.HISTORY, "table": table}),
            )
        zed = await NetClient.connect(server.port, "Zed")
        await zed.request({"type": p.RESUME, "table": table, "token": players[2].token}, p.SEATED)
        asked["Zed"] = (
            await answer(zed, {"type": p.HISTORY_HAND, "table": table, "hand": 1}),
            await answer(zed, {"type": p.HISTORY, "table": table}),
        )
    with sqlite3.connect(tmp_path / "tonk.db") as conn:
        (text,) = conn.execute(
            "SELECT record FROM hands WHERE table_id = ? AND number = 1", (table,)
        ).fetchone()
    return {
        "record": HandRecord.from_dict(json.loads(text)),
        "asked": asked,
        "live": {c.name: c.received for c in (*players, spec)},
    }


def states(record: HandRecord) -> dict[int, Hand]:
    """The true hand after each step, by its count of events."""
    hand = record.deal()
    out = {len(hand.events): copy.deepcopy(hand)}
    for action in record.actions:
        hand.apply(action)
        out[len(hand.events)] = copy.deepcopy(hand)
    return out


def problems(
    history: dict[str, Any], live: list[dict[str, Any]], seat: int | None, truth: dict[int, Hand]
) -> list[str]:
    """Everything in a `history_hand` answer that the live frames `live` (of the same seat)
    did not show by that step, or that the seat may not know."""
    out: list[str] = []
    updates = [m for m in live if m["type"] == p.UPDATE and m["hand"] == 1]
    ended = next(m for m in live if m["type"] == p.HAND_END and m["hand"] == 1)
    by_count = {u["view"]["event_count"]: u for u in updates}
    live_events = [e for u in sorted(updates, key=lambda u: u["from"]) for e in u["events"]]
    steps = history["steps"]
    if history["seat"] != seat:
        out.append(f"the answer is seat {history['seat']}'s, not seat {seat}'s")
    if [e for step in steps for e in step["events"]] != live_events:
        out.append("the steps' events are not the events the live frames told")
    for number, step in enumerate(steps):
        count = step["view"]["event_count"]
        frame = by_count.get(count)
        if frame is None:
            out.append(f"step {number}: no live frame showed the hand at {count} events")
            continue
        view = {k: v for k, v in frame["view"].items() if k != "rules"}
        if step["view"] != view:
            out.append(f"step {number}: the view is not the live view")
        shown: set[str] = set()
        for update in updates:
            if update["view"]["event_count"] <= count:
                shown |= cards_in(update)
        if number == len(steps) - 1:
            shown |= cards_in(ended)
        beyond = cards_in(step) - shown
        if beyond:
            out.append(f"step {number}: {sorted(beyond)} beyond the live frames")
        unknown = cards_in(step) - Truth.known(truth[count], seat)
        if unknown:
            out.append(f"step {number}: {sorted(unknown)} not the seat's to know")
    return out


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_the_history_shows_each_seat_only_what_it_saw_live(tmp_path, preset, ending):
    hand = scripted(preset, ending)
    got = await play_scripted(tmp_path, preset, hand)
    record: HandRecord = got["record"]
    assert record.actions == hand.actions
    truth = states(record)
    final = record.replay()
    assert final.settlement is not None
    found: list[str] = []
    askers = [("Ann", 0, "Ann"), ("Ben", 1, "Ben"), ("Cy", 2, "Cy")]
    askers += [("Spec", None, "Spec"), ("Zed", None, "Spec")]  # Zed: as a spectator saw it
    for name, seat, seen_as in askers:
        history, page = got["asked"][name]
        assert history["total"] == len(history["steps"]) == len(record.actions) + 1
        found += [f"{name}: {x}" for x in problems(history, got["live"][seen_as], seat, truth)]
        # The list shows what every seat was told at the hand's end, and no more.
        ended = next(m for m in got["live"][seen_as] if m["type"] == p.HAND_END)
        beyond = cards_in(page) - cards_in(ended)
        if beyond:
            found.append(f"{name}: the list shows {sorted(beyond)}")
        if seat is not None:  # their own cards were there at every step
            assert all(step["view"]["hand"] for step in history["steps"][:1])
    assert found == []
    # What the leak test's checker reckons hidden is really sent nowhere in the history: the
    # stock left, the discards under the top card, the hands the settlement keeps hidden.
    hidden = {str(c) for c in final.stock} | {str(c) for c in final.discards[:-1]}
    for seat, cards in enumerate(final.settlement.revealed):
        if cards is None:
            hidden |= {str(c) for c in final.hands[seat]}
    spectator, _ = got["asked"]["Spec"]
    assert not (cards_in(spectator) & (hidden - Truth.known(final, None)))


def _unfiltered(record: HandRecord, seat: int | None, seats: Any = None) -> list[HistoryStep]:
    """Every event as it happened: the draws of every seat shown to all."""
    hand = record.deal()
    steps = [HistoryStep(tuple(hand.events), hand.view(seat))]
    for action in record.actions:
        start = len(hand.events)
        hand.apply(action)
        steps.append(HistoryStep(tuple(hand.events[start:]), hand.view(seat)))
    return steps


def _stock_shown(record: HandRecord, seat: int | None, seats: Any = None) -> list[HistoryStep]:
    """The next card off the stock put in a spectator's hand."""
    hand = record.deal()
    steps = []
    for action in (None, *record.actions):
        start = len(hand.events)
        if action is not None:
            hand.apply(action)
        view = hand.view(seat)
        if seat is None and hand.stock:
            view = replaced(view, hand=(hand.stock[-1],))
        steps.append(HistoryStep(tuple(hand.events_for(seat, start)), view))
    return steps


@pytest.mark.parametrize("plant", [_unfiltered, _stock_shown])
async def test_the_check_finds_a_leak_planted_in_the_history(tmp_path, monkeypatch, plant):
    monkeypatch.setattr(history, "hand_steps", plant)
    hand = scripted("classic", "stock_out")
    got = await play_scripted(tmp_path, "classic", hand)
    truth = states(got["record"])
    history_answer, _ = got["asked"]["Spec"]
    found = problems(history_answer, got["live"]["Spec"], None, truth)
    assert any("not the seat's to know" in problem for problem in found), found
    assert any("beyond the live frames" in problem for problem in found), found
