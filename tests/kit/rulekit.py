"""Helpers for the rules tests: stacked hands, whole-state snapshots, settlement tables."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
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


def state(hand: Hand) -> dict[str, Any]:
    """Every field of the hand's state as it is, not copied: to compare two hands there and
    then (`state(a) == state(b)`), where copying first would change nothing."""
    return {f.name: getattr(hand, f.name) for f in fields(hand) if f.name not in _INPUTS}


def snapshot(hand: Hand) -> dict[str, Any]:
    """Every field of the hand's state, deep-copied: equal snapshots mean the same state.
    (A frozen value in it is kept as it is, see `_copier`: nothing can change it.)"""
    return {name: _copied(value) for name, value in state(hand).items()}


def copy_hand(hand: Hand) -> Hand:
    """A copy of `hand` that its later actions leave as it is (as `copy.deepcopy` would make
    it, without copying its frozen values)."""
    return next(trial_copies(hand))


def trial_copies(hand: Hand) -> Iterator[Hand]:
    """Copies of `hand` to apply actions to, as many as asked for, each leaving `hand` and the
    other copies as they were (as `copy.deepcopy` would make them, without copying their
    frozen values). The hand is looked through once, however many copies are made."""
    makers: list[tuple[str, Any, Callable[[], Any] | None]] = []
    for f in fields(hand):
        value = getattr(hand, f.name)
        makers.append((f.name, value, _copier(value)))
    while True:
        trial: Hand = object.__new__(Hand)
        for name, value, make in makers:
            setattr(trial, name, value if make is None else make())
        yield trial


def _copied(value: Any) -> Any:
    """`value` copied as `_copier` copies it."""
    make = _copier(value)
    return value if make is None else make()


def _copier(value: Any) -> Callable[[], Any] | None:
    """What makes copies of `value` as it is now: deep copies, but for its frozen values, kept
    as they are (None: `value` is one). A hand changes its lists in place (each copied, its
    items by this rule) and holds, besides, values hashed by what they hold (cards, events,
    actions, spreads, settlements, rules, tuples of them: frozen, so nothing can change
    them). A random source is copied as `copy.copy` does, its state being a tuple of numbers;
    anything else, an unhashable value or one hashed by its identity, is deep-copied."""
    if type(value) is list:
        items = list(value)
        makers = [_copier(item) for item in items]
        if not any(makers):
            return items.copy
        return lambda: [
            item if make is None else make() for item, make in zip(items, makers, strict=True)
        ]
    if type(value) is random.Random:
        source = copy.copy(value)
        return lambda: copy.copy(source)
    if getattr(type(value), "__hash__", None) is not object.__hash__:
        try:
            hash(value)
        except TypeError:
            pass
        else:
            return None
    original = copy.deepcopy(value)
    return lambda: copy.deepcopy(original)


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
