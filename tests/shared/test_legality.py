"""One source of legality: the hand refuses an action exactly when `why_not`, asked from the
acting seat's view, gives a reason, in the same words, and the legal actions are exactly the
actions it lets through. Played out over random hands under random house rules."""

from __future__ import annotations

import random

import pytest
from rulekit import random_action
from tonk.shared.game.actions import (
    Action,
    Discard,
    DrawStock,
    Drop,
    Hit,
    IllegalAction,
    LaySpread,
    TakeDiscard,
)
from tonk.shared.game.cards import DECK
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.view import why_not

NAMES = ["Kim", "Ada", "Bix", "Cy"]


def probes(hand: Hand, seat: int, rng: random.Random) -> list[Action]:
    """Actions worth asking about for `seat`, legal or not: every kind, every held card, a
    card it does not hold, every spread on the table and one that is not there."""
    held = list(hand.hands[seat])
    stranger = rng.choice([c for c in DECK if c not in held])
    out: list[Action] = [Drop(seat), DrawStock(seat), TakeDiscard(seat)]
    for card in [*held, stranger]:
        out.append(Discard(seat, card))
        out.extend(Hit(seat, card, spread.id) for spread in hand.spreads)
        out.append(Hit(seat, card, 99))
    for _ in range(4):
        out.append(LaySpread(seat, tuple(rng.sample([*held, stranger], min(3, len(held) + 1)))))
    out.extend(hand.legal_actions(seat).actions(seat))
    return out


def key(action: Action) -> object:
    if isinstance(action, LaySpread):
        return ("spread", action.seat, frozenset(action.cards))
    return action


@pytest.mark.parametrize("seed", range(12))
def test_why_not_says_what_the_hand_says_and_lets_through_exactly_the_legal_actions(
    seed: int,
) -> None:
    rng = random.Random(seed)
    rules = PRESETS[rng.choice(sorted(PRESETS))].with_options(
        {
            "hit_lock": rng.choice([0, 1, 2]),
            "discard_must_use": rng.random() < 0.5,
            "no_rediscard": rng.random() < 0.5,
            "ace_high_runs": rng.random() < 0.5,
            "hit_books": rng.random() < 0.5,
        }
    )
    players = rng.choice([2, 3, 4])
    asked = refused = 0
    for _ in range(6):
        hand = Hand(rules, players, rng.randrange(players), (1,) * players, rng=rng)
        while not hand.ended:
            for seat in range(players):
                view = hand.view(seat)
                legal = {key(a) for a in hand.legal_actions(seat).actions(seat)}
                for action in probes(hand, seat, rng):
                    reason = why_not(view, action, NAMES)
                    asked += 1
                    if reason is None:
                        assert key(action) in legal, action
                        continue
                    refused += 1
                    assert key(action) not in legal, (action, reason)
                    with pytest.raises(IllegalAction) as caught:
                        hand.apply(action)
                    assert caught.value.text(NAMES, seat) == reason
            hand.apply(random_action(hand, rng))
    assert refused and asked > refused


def test_why_not_names_a_spreads_owner_as_the_seat_sees_it() -> None:
    rng = random.Random(4)
    for _ in range(200):
        hand = Hand(PRESETS["classic"], 3, 2, (1,), rng=rng)
        while not hand.ended:
            seat = hand.turn
            theirs = [s for s in hand.spreads if s.owner != seat]
            if hand.phase.value == "play" and theirs:
                spread = theirs[0]
                first = spread.cards[0]
                card = next(
                    (
                        c
                        for c in hand.hands[seat]
                        if c.suit is not first.suit and c.rank != first.rank
                    ),
                    None,
                )
                if card is not None:
                    hit = Hit(seat, card, spread.id)
                    reason = why_not(hand.view(seat), hit, NAMES)
                    assert reason is not None
                    assert f"onto {NAMES[spread.owner]}'s " in reason
                    assert why_not(hand.view(seat), hit) == reason.replace(
                        f"{NAMES[spread.owner]}'s", f"seat {spread.owner + 1}'s"
                    )
                    return
            hand.apply(random_action(hand, rng))
    raise AssertionError("no position with another seat's spread came up")


def test_why_not_is_asked_for_the_views_own_seat() -> None:
    rng = random.Random(1)
    hand = Hand(PRESETS["classic"], 3, 2, (1,), rng=rng)
    while hand.ended:  # (a tonk on the deal)
        hand = Hand(PRESETS["classic"], 3, 2, (1,), rng=rng)
    with pytest.raises(ValueError, match="spectator"):
        why_not(hand.view(None), DrawStock(0))
    with pytest.raises(ValueError, match="seat 1's view"):
        why_not(hand.view(1), DrawStock(0))
    assert why_not(hand.view(1), DrawStock(1)) == "it is not your turn"
    assert why_not(hand.view(0), DrawStock(0)) is None
