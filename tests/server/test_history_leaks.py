"""The history shows nothing live play did not: every ending under every preset, played move by
move on a real server by three players with a spectator watching, then looked back at by each
player who sat in the hand, by a player seated later who did not, and by the spectator. Every
step of every answer is held to the live frames that same connection (or, for one who did not
sit in the hand, a spectator) was sent by that step: the same events, the same view, no card
beyond those frames, and none beyond what the rules let that seat know (tests/test_server_leaks
.py's `Truth.known`): never the stock, a discard under the top card, or a hand kept hidden.

The same again with two seats changing hands during the hand (each player loses the link and
the creator gives the seat to a bot, at different steps) and taken back after it: each step is
held to the frames its asker was sent from the seat while they held it, and to a spectator's
after."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from dataclasses import replace as replaced
from pathlib import Path
from typing import Any

import pytest
from historykit import (
    DEALER,
    ENDINGS,
    PLAYERS,
    Scripted,
    answer,
    play_hand,
    scripted,
    seat_three,
)
from netclient import NetClient, cards_in, start_server
from test_server_leaks import Truth
from tonk.server.store import history
from tonk.server.tables import table_play
from tonk.shared.game.actions import Action
from tonk.shared.game.cards import parse_cards
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.history import HistoryStep
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.view import SeatView
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request


def stored_hand(folder: Path, table: int) -> HandRecord:
    """Hand 1 of `table` as the server's database (`folder`/tonk.db) keeps it."""
    with sqlite3.connect(folder / "tonk.db") as conn:
        (text,) = conn.execute(
            "SELECT record FROM hands WHERE table_id = ? AND number = 1", (table,)
        ).fetchone()
    return HandRecord.from_dict(json.loads(text))


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
    return {
        "record": stored_hand(tmp_path, table),
        "asked": asked,
        "live": {c.name: c.received for c in (*players, spec)},
    }


@dataclass
class Told:
    """What one connection's live frames told of hand 1, worked out once for all the steps."""

    events: dict[int, dict[str, Any]]  # by index in the hand
    frames: dict[int, dict[str, Any]]  # the first update at each count of events
    cards: list[tuple[int, set[str]]]  # each update's count of events, and the cards it names
    ended: set[str]  # the cards hand_end names

    @classmethod
    def of(cls, frames: list[dict[str, Any]]) -> Told:
        updates = [m for m in frames if m["type"] == p.UPDATE and m["hand"] == 1]
        # (none for a connection that left during the hand)
        ended = next((m for m in frames if m["type"] == p.HAND_END and m["hand"] == 1), {})
        first: dict[int, dict[str, Any]] = {}
        for update in updates:
            first.setdefault(update["view"]["event_count"], update)
        return cls(
            events={u["from"] + i: e for u in updates for i, e in enumerate(u["events"])},
            frames=first,
            cards=[(u["view"]["event_count"], cards_in(u)) for u in updates],
            ended=cards_in(ended),
        )


def problems(
    history: dict[str, Any],
    live: list[dict[str, Any]] | dict[int | None, list[dict[str, Any]]],
    seat: int | None,
    truth: Truth,
    seats: list[int | None] | None = None,
) -> list[str]:
    """Everything in a `history_hand` answer that the live frames `live` (of the same seat)
    did not show by that step, or that the seat may not know (`truth`: hand 1 replayed). For
    one who held a seat for only part of the hand: `seats`, the seat each step must be seen
    from (None: as a spectator), and `live` by seat, the frames the asker was sent from it (a
    spectator's: what a spectator was sent)."""
    out: list[str] = []
    steps = history["steps"]
    at = [seat] * len(steps) if seats is None else seats
    by_seat = {seat: live} if isinstance(live, list) else live
    if history["seat"] != seat:
        out.append(f"the answer is seat {history['seat']}'s, not seat {seat}'s")
    told = {held: Told.of(frames) for held, frames in by_seat.items()}
    counted = 0
    for number, step in enumerate(steps):
        held = at[number]
        if step["view"]["seat"] != held:
            out.append(f"step {number}: seen from seat {step['view']['seat']}, not {held}")
        sent = told[held]
        count = step["view"]["event_count"]
        if step["events"] != [sent.events.get(i) for i in range(counted, count)]:
            out.append(f"step {number}: the events are not the events the live frames told")
        counted = count
        frame = sent.frames.get(count)
        if frame is None:
            out.append(f"step {number}: no live frame showed the hand at {count} events")
            continue
        view = {k: v for k, v in frame["view"].items() if k != "rules"}
        if step["view"] != view:
            out.append(f"step {number}: the view is not the live view")
        shown = set().union(*(cards for at_count, cards in sent.cards if at_count <= count))
        if number == len(steps) - 1:
            shown |= sent.ended
        named = cards_in(step)
        beyond = named - shown
        if beyond:
            out.append(f"step {number}: {sorted(beyond)} beyond the live frames")
        unknown = named - truth.known_at(1, truth.states[1, count], held)
        if unknown:
            out.append(f"step {number}: {sorted(unknown)} not the seat's to know")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_the_history_shows_each_seat_only_what_it_saw_live(tmp_path, preset, ending):
    hand = scripted(preset, ending)
    got = await play_scripted(tmp_path, preset, hand)
    record: HandRecord = got["record"]
    assert record.actions == hand.actions
    truth = Truth({1: record})
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
    truth = Truth({1: got["record"]})
    history_answer, _ = got["asked"]["Spec"]
    found = problems(history_answer, got["live"]["Spec"], None, truth)
    assert any("not the seat's to know" in problem for problem in found), found
    assert any("beyond the live frames" in problem for problem in found), found


# -- seats that change hands during the hand --------------------------------------------------


class ScriptedBot:
    """The bot that takes a seat given to a bot: it makes the scripted hand's move wherever it
    is asked (by the hand's count of events), so that every ending is reached with seats
    changing hands on the way. Only its choice is scripted: the server runs it as any bot."""

    strategy = "scripted"
    slow = False

    def __init__(self, moves: dict[int, Action]) -> None:
        self.moves = moves

    def observe(self, events: Any) -> None:
        pass

    def choose(self, view: SeatView) -> Action:
        return self.moves[view.event_count]


def counts_before(preset: str, hand: Scripted) -> list[int]:
    """The hand's count of events before each of its actions."""
    live = Hand(PRESETS[preset], PLAYERS, DEALER, (1,) * PLAYERS, deck=parse_cards(hand.deck))
    out = []
    for action in hand.actions:
        out.append(len(live.events))
        live.apply(action)
    return out


async def reached(client: NetClient, count: int) -> None:
    """Read until `client` has been sent hand 1 at `count` events or more."""
    looked = 0  # the messages already looked at, and not there
    while not any(
        m["type"] == p.UPDATE and m["hand"] == 1 and m["view"]["event_count"] >= count
        for m in client.received[looked:]
    ):
        looked = len(client.received)
        await client.recv()


#: Before which of the hand's actions (by its share of them) each seat goes to a bot: Ben's a
#: third of the way in, Cy's two thirds: two seats change hands in one hand.
GIVEN = ((1, 3), (2, 3 / 2))


async def play_with_seat_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preset: str, hand: Scripted
) -> dict[str, Any]:
    """The hand played on a real server by Ann, Ben and Cy with Spec watching, but Ben and then
    Cy lose the link during it and Ann, the creator, gives each seat to a bot (`seat_to_bot`),
    which plays on. Once it is over Ben takes his seat back from the lobby, and Cy his after
    watching (`take_bot_seat`). Every client's history answers, the live frames, and who held
    each seat from which step (as `history_hand` said it)."""
    counts = counts_before(preset, hand)
    moves = dict(zip(counts, hand.actions, strict=True))
    monkeypatch.setattr(table_play, "make_bot", lambda strategy, rng: ScriptedBot(moves))
    given: dict[int, int] = {}
    for seat, share in GIVEN:
        # Before a move a person is to make (the seat given away, or Ann): the hand waits
        # there for them, and the seat changes hands before that move and after the one before.
        index = max(seat, int(len(hand.actions) / share))
        while hand.actions[index].seat not in (0, seat):
            index += 1
        given[index] = seat
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        table, players, spec = await seat_three(server, preset, hand, "Changing")
        ann, ben, cy = players
        bots: set[int] = set()
        for index, action in enumerate(hand.actions):
            await reached(spec, counts[index])
            if index in given:
                seat = given[index]
                await reached(players[seat], counts[index])  # (all it was sent, read)
                await players[seat].close()
                await ann.expect(
                    p.TABLE, lambda m, s=seat: m["table"]["players"][s]["status"] == "disconnected"
                )
                await ann.request({"type": p.SEAT_TO_BOT, "seat": seat}, p.TABLE)
                bots.add(seat)
            if action.seat not in bots:
                await answer(players[action.seat], action_request(action).to_wire())
        for client in (ann, spec):
            ended = await client.expect(p.HAND_END, lambda m: m["hand"] == 1)
            assert ended["settlement"]["ending"] == hand.ending.value
        ben_back = await NetClient.connect(server.port, "Ben")
        await ben_back.request({"type": p.TAKE_BOT_SEAT, "table": table, "seat": 1}, p.SEATED)
        cy_back = await NetClient.connect(server.port, "Cy")
        await cy_back.request({"type": p.WATCH, "table": table}, p.WATCHING)
        await cy_back.request({"type": p.TAKE_BOT_SEAT, "table": table, "seat": 2}, p.SEATED)
        asked: dict[str, Any] = {}
        for client in (ann, ben_back, cy_back, spec):
            asked[client.name or ""] = (
                await answer(client, {"type": p.HISTORY_HAND, "table": table, "hand": 1}),
                await answer(client, {"type": p.HISTORY, "table": table}),
            )
    return {
        "record": stored_hand(tmp_path, table),
        "asked": asked,
        "live": {c.name: c.received for c in (ann, ben, cy, spec)},
        "given": {seat: index + 1 for index, seat in given.items()},
        "ended": ended,
    }


#: The endings with moves in them (at a deal tonk nobody moves: no seat changes hands).
MOVED = tuple(ending for ending in ENDINGS if "deal_tonk" not in ending)


@pytest.mark.slow
@pytest.mark.parametrize("ending", MOVED)
@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_a_seat_that_changed_hands_shows_each_holder_only_what_they_saw_live(
    tmp_path, monkeypatch, preset, ending
):
    hand = scripted(preset, ending)
    got = await play_with_seat_changes(tmp_path, monkeypatch, preset, hand)
    record: HandRecord = got["record"]
    assert record.actions == hand.actions
    truth = Truth({1: record})
    given = got["given"]  # seat -> the step from which a bot held it
    assert sorted(given) == [1, 2] and given[1] < given[2]
    total = len(record.actions) + 1
    live = got["live"]
    found: list[str] = []
    for name, seat in (("Ann", 0), ("Ben", 1), ("Cy", 2), ("Spec", None)):
        history, page = got["asked"][name]
        assert history["total"] == len(history["steps"]) == total
        # The names as hand_end said them; every holder of a seat that changed hands.
        assert history["names"] == got["ended"]["names"] == page["hands"][0]["names"]
        assert history["occupants"] == page["hands"][0]["occupants"]
        bots = {s: history["names"][s] for s in given}
        assert history["occupants"] == [
            [1, 0, "Ben"],
            [1, given[1], bots[1]],
            [2, 0, "Cy"],
            [2, given[2], bots[2]],
        ]
        # From their seat while they held it, then as a spectator saw it.
        seats = [
            seat if seat is not None and number < given.get(seat, total) else None
            for number in range(total)
        ]
        frames = {seat: live[name], None: live["Spec"]}
        found += [f"{name}: {x}" for x in problems(history, frames, seat, truth, seats)]
        ended = got["ended"]
        beyond = cards_in(page) - cards_in(ended)
        if beyond:
            found.append(f"{name}: the list shows {sorted(beyond)}")
    assert found == []


async def test_the_check_finds_the_seat_shown_past_its_change_of_hands(tmp_path, monkeypatch):
    # The history as it was read before each step had its occupant: the whole hand from the
    # seat the asker held at some time, the bot's draws and its hidden hand included.
    whole = history.hand_steps
    monkeypatch.setattr(history, "hand_steps", lambda record, seat, seats=None: whole(record, seat))
    hand = scripted("classic", "tonk_out")
    got = await play_with_seat_changes(tmp_path, monkeypatch, "classic", hand)
    truth = Truth({1: got["record"]})
    steps, _ = got["asked"]["Cy"]
    seats = [2 if number < got["given"][2] else None for number in range(len(steps["steps"]))]
    found = problems(steps, {2: got["live"]["Cy"], None: got["live"]["Spec"]}, 2, truth, seats)
    assert any("not the seat's to know" in problem for problem in found), found
    assert any("beyond the live frames" in problem for problem in found), found
