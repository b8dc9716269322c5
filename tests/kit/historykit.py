"""Hands that end each way under each preset, for the history's tests: a deck order, a dealer
and every action, found by playing seeded random hands through the core (the deal tonks from
stacked decks), to be played again move by move on a real server by three scripted players."""

from __future__ import annotations

import functools
import itertools
import random
from dataclasses import dataclass
from typing import Any

from netclient import NetClient
from rulekit import random_action
from tonk.shared.game.actions import Action
from tonk.shared.game.cards import (
    format_cards,
    parse_card,
    parse_cards,
    shuffled_deck,
    stacked_deck,
)
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request

PLAYERS = 3
DEALER = 2  # seat 0 plays first
#: The endings every preset is tried with: "several_deal_tonks" is the void of most presets,
#: and a deal tonk with several winners where they all collect (speno).
ENDINGS = (
    "deal_tonk",
    "several_deal_tonks",
    "tonk_out",
    "out_on_discard",
    "drop_won",
    "drop_caught",
    "stock_out",
)


@dataclass(frozen=True)
class Scripted:
    """A hand to play: its deck order (as a create_table `deck`), and its actions."""

    deck: str
    actions: tuple[Action, ...]
    ending: Ending


def _stacked(hands: list[str]) -> str:
    deck = stacked_deck([parse_cards(h) for h in hands], DEALER, parse_card("2c"))
    return format_cards(deck)


@functools.cache
def scripted(preset: str, ending: str) -> Scripted:
    """A hand of `preset` at three seats that ends the way `ending` says."""
    rules = PRESETS[preset]
    if ending == "deal_tonk":
        deck = _stacked(["Ks Kh Kd Kc Qs", "2s 3s 4s 9h 9d", "5h 6h 7h 8d 9c"])
    elif ending == "several_deal_tonks":
        deck = _stacked(["Ks Kh Kd Kc Qs", "Js Jh Jd Jc Qh", "5h 6h 7h 8d 9c"])
    else:
        deck = ""
    if deck:
        hand = Hand(rules, PLAYERS, DEALER, (1,) * PLAYERS, deck=parse_cards(deck))
        assert hand.settlement is not None, (preset, ending)
        return Scripted(deck, (), hand.settlement.ending)
    wanted = Ending(ending)
    for seed in range(20_000):
        rng = random.Random(seed)
        cards = shuffled_deck(rng)
        hand = Hand(rules, PLAYERS, DEALER, (1,) * PLAYERS, deck=cards)
        if hand.ended:
            continue
        while not hand.ended:
            hand.apply(random_action(hand, rng))
        assert hand.settlement is not None
        if hand.settlement.ending is wanted and len(hand.actions) >= 4:
            return Scripted(format_cards(cards), tuple(hand.actions), wanted)
    raise AssertionError(f"no {ending} hand found for {preset}")


_ids = itertools.count(1)


async def ask(client: NetClient, message: dict[str, Any]) -> dict[str, Any]:
    """Send `message` with a fresh id; the message answering it."""
    rid = next(_ids)
    await client.send({**message, "id": rid})
    while True:
        got = await client.recv()
        if got.get("reply_to") == rid:
            return got


async def answer(client: NetClient, message: dict[str, Any]) -> dict[str, Any]:
    """`ask`, where an error fails the test."""
    got = await ask(client, message)
    assert got["type"] != p.ERROR, got
    return got


async def seat_three(
    server: Any, preset: str, hand: Scripted, name: str
) -> tuple[int, tuple[NetClient, NetClient, NetClient], NetClient]:
    """The hand's table on a real server, `name`, dealt `hand`'s deck: Spec watching from
    before the deal, Ann, Ben and Cy in seats 0, 1 and 2; the table and those four."""
    ann = await NetClient.connect(server.port, "Ann")
    table = await ann.create_table(
        name=name, rules={"preset": preset}, seats=3, deck=hand.deck, dealer=DEALER
    )
    spec = await NetClient.connect(server.port, "Spec")
    await spec.request({"type": p.WATCH, "table": table}, p.WATCHING)
    ben = await NetClient.connect(server.port, "Ben")
    await ben.request({"type": p.SIT, "table": table, "seat": 1}, p.SEATED)
    cy = await NetClient.connect(server.port, "Cy")
    await cy.request({"type": p.SIT, "table": table, "seat": 2}, p.SEATED)
    return table, (ann, ben, cy), spec


async def play_hand(
    server: Any, preset: str, hand: Scripted
) -> tuple[int, tuple[NetClient, NetClient, NetClient], NetClient]:
    """The hand played on a real server: Ann, Ben and Cy make its moves, Spec watches from
    before the deal; the table, the three players and the spectator, each having read up to
    the hand's end."""
    table, players, spec = await seat_three(server, preset, hand, "Looking back")
    for client in players:
        await client.expect(p.UPDATE)  # the deal
    for action in hand.actions:
        await answer(players[action.seat], action_request(action).to_wire())
    for client in (*players, spec):
        ended = await client.expect(p.HAND_END, lambda m: m["hand"] == 1)
        assert ended["settlement"]["ending"] == hand.ending.value
    return table, players, spec
