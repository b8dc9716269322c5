"""Helpers for the rules tests: stacked hands, whole-state snapshots, settlement tables."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from tonk.shared.game.actions import Action, Discard, DrawStock, Drop, TakeDiscard
from tonk.shared.game.cards import Card, parse_card, parse_cards, stacked_deck
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.view import Phase


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text)


def card(text: str) -> Card:
    return parse_card(text)


def rules_of(preset: str = "classic", **overrides: Any) -> HouseRules:
    return PRESETS[preset].with_options(overrides)


def deal(
    rules: HouseRules | str,
    hands: Sequence[str],
    *,
    up: str,
    stock: str = "",
    dealer: int | None = None,
    stakes: Sequence[int] = (1,),
    multiplier: int = 1,
) -> Hand:
    """A hand dealt from a stacked deck: `hands[seat]` as card text, the up card, then the top
    of the stock in draw order. The dealer defaults to the last seat, so seat 0 acts first."""
    if isinstance(rules, str):
        rules = PRESETS[rules]
    players = len(hands)
    dealer = players - 1 if dealer is None else dealer
    deck = stacked_deck([cards(h) for h in hands], dealer, card(up), cards(stock))
    return Hand(rules, players, dealer, tuple(stakes), deck=deck, multiplier=multiplier)


def play(hand: Hand, actions: Iterable[Action]) -> None:
    for action in actions:
        hand.apply(action)


# How a hand was started, not its state: `deck_order` holds the deal whichever was given.
_INPUTS = {"deck", "rng"}


def snapshot(hand: Hand) -> dict[str, Any]:
    """Every field of the hand's state, deep-copied: equal snapshots mean the same state."""
    return {
        f.name: copy.deepcopy(getattr(hand, f.name)) for f in fields(hand) if f.name not in _INPUTS
    }


def payment_table(settlement: Settlement | None) -> set[tuple[int, int, int]]:
    """The payments as a set of (payer, payee, amount)."""
    assert settlement is not None
    return {(p.payer, p.payee, p.amount) for p in settlement.payments}


def assert_zero_sum(settlement: Settlement | None, seats: int) -> None:
    assert settlement is not None
    assert sum(settlement.net(seats)) == 0
    assert all(p.amount > 0 and p.payer != p.payee for p in settlement.payments)


def random_action(hand: Hand, rng: random.Random) -> Action:
    """A random legal action for the seat to act. With the stock empty it mostly draws (which
    ends the hand), so random play always ends."""
    seat = hand.turn
    legal = hand.legal_actions(seat)
    if hand.phase is Phase.START:
        if not hand.stock and rng.random() < 0.7:
            return DrawStock(seat)
        if legal.drop and rng.random() < 0.02:
            return Drop(seat)
        if legal.take_discard and rng.random() < 0.3:
            return TakeDiscard(seat)
        return DrawStock(seat)
    options = legal.actions(seat)
    plays = [a for a in options if not isinstance(a, Discard)]
    if plays and rng.random() < 0.9:
        return rng.choice(plays)
    discards = [a for a in options if isinstance(a, Discard)]
    return rng.choice(discards or plays)


def play_randomly(hand: Hand, rng: random.Random, max_steps: int = 2000) -> int:
    """Play random legal actions to the end of the hand; return how many were applied."""
    steps = 0
    while not hand.ended:
        assert steps < max_steps, "the hand did not end"
        hand.apply(random_action(hand, rng))
        steps += 1
    return steps
