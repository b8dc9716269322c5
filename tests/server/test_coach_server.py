"""The coach through a real server: a settled hand's decision answered for the player who made
it (the same answer as the core gives from that seat's view), a hint before the move only
where no other person sits, the host's limit, and every refusal answered without closing the
connection."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from historykit import DEALER, ask, play_hand, scripted
from netclient import NetClient, start_server
from tonk.shared.bots.coach import advise_record
from tonk.shared.game.cards import parse_cards
from tonk.shared.game.hand import HandRecord
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire import protocol as p
from tonk.shared.wire.advice import Advice
from tonk.shared.wire.messages import validate_server


async def refused(client: NetClient, message: dict[str, Any], code: str) -> str:
    got = await ask(client, message)
    assert got["type"] == p.ERROR and got["code"] == code and got["fatal"] is False, got
    return str(got["message"])


async def test_a_settled_hand_is_coached_for_the_player_who_made_each_decision(tmp_path):
    hand = scripted("classic", "drop_won")
    async with start_server(tmp_path) as server:
        table, (ann, ben, _cy), spec = await play_hand(server, "classic", hand)
        step = next(i for i, action in enumerate(hand.actions) if action.seat == 1)
        asked = {"type": p.COACH, "table": table, "hand": 1, "step": step}
        got = await ask(ben, asked)
        assert got["type"] == p.COACH and validate_server(got) is None, got
        assert (got["table"], got["hand"], got["step"]) == (table, 1, step)
        # Another player's decision, a spectator, a hand not played: refused, nothing closed.
        message = await refused(ann, asked, p.BAD_VALUE)
        assert message == f"step {step} was not your decision"
        await refused(spec, asked, p.NO_COACH)
        await refused(ben, {**asked, "hand": 9}, p.NO_SUCH_HAND)
        again = await ask(ben, asked)
    advice = Advice.from_wire(got["advice"])
    assert advice.played == hand.actions[step] and advice.deals > 0
    record = HandRecord(
        PRESETS["classic"], 3, DEALER, (1, 1, 1), 1, tuple(parse_cards(hand.deck)), hand.actions
    )
    seed = f"coach {table} 1 {step}"
    assert advice == advise_record(record, 1, step, random.Random(seed))
    assert again["advice"] == got["advice"]  # the same question, the same answer


async def test_no_hint_in_play_at_a_table_with_other_people(tmp_path):
    hand = scripted("classic", "drop_won")
    async with start_server(tmp_path) as server:
        table, players, _spec = await play_hand(server, "classic", hand)
        dealt = await players[0].expect(p.UPDATE, lambda m: m["hand"] == 2)
        turn = dealt["view"]["turn"]
        hint = {"type": p.COACH, "table": table, "hand": 2}
        message = await refused(players[turn], hint, p.NO_COACH)
        assert message == "at a table with other people the coach looks only at hands that are over"


async def test_a_hint_before_the_move_where_the_others_are_bots(tmp_path):
    async with start_server(tmp_path) as server:
        ann = await NetClient.connect(server.port, "Ann")
        # A stacked deal with no tonk on it: a shuffled one ends at the deal now and then
        # (a dealt total of 49 or more), and there is no hand in play to ask about.
        deck = scripted("classic", "drop_won").deck
        table = await ann.create_table(
            "easy",
            "sharp",
            name="Practice",
            seats=3,
            rules={"preset": "classic"},
            deck=deck,
            dealer=DEALER,
            turn_timer=None,
        )
        dealt = await ann.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        got = await ask(ann, {"type": p.COACH, "table": table, "hand": dealt["hand"]})
        assert got["type"] == p.COACH and got["step"] is None, got
        advice = Advice.from_wire(got["advice"])
        assert advice.played is None and advice.best.seat == 0 and advice.deals > 0
        assert (advice.gain, advice.low, advice.high) == (0.0, 0.0, 0.0)
        # A hand that is not the one in play.
        await refused(ann, {"type": p.COACH, "table": table, "hand": 5}, p.NO_HAND)


async def test_the_hosts_limit_turns_the_coach_off(tmp_path):
    hand = scripted("classic", "drop_won")
    async with start_server(tmp_path, coach=0) as server:
        table, (_ann, ben, _cy), _spec = await play_hand(server, "classic", hand)
        step = next(i for i, action in enumerate(hand.actions) if action.seat == 1)
        asked = {"type": p.COACH, "table": table, "hand": 1, "step": step}
        message = await refused(ben, asked, p.COACH_BUSY)
        assert message == "this server's host has turned the coach off"
        assert (await ask(ben, {"type": p.HISTORY, "table": table}))["type"] == p.HISTORY


async def test_a_question_past_the_hosts_limit_is_refused_while_one_is_worked_on(tmp_path):
    hand = scripted("classic", "drop_won")
    async with start_server(tmp_path, coach=1) as server:
        table, players, _spec = await play_hand(server, "classic", hand)
        steps = {}
        for i, action in enumerate(hand.actions):
            steps.setdefault(action.seat, i)
        asking = [
            ask(players[seat], {"type": p.COACH, "table": table, "hand": 1, "step": step})
            for seat, step in sorted(steps.items())[:2]
        ]
        got = await asyncio.gather(*asking)
        kinds = sorted((g["type"], g.get("code")) for g in got)
        assert kinds == [(p.COACH, None), (p.ERROR, p.COACH_BUSY)], got
