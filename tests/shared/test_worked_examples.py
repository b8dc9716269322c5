"""The two worked examples of the rules (John P. Speno's, also garbled in the Black Company
text), replayed move by move from stacked decks, checking every position the source lists; under
every preset, for the same stake at every seat and for unequal seat stakes, so that a payment sized
by the wrong seat's stake, or not by the stake, fails."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from rulekit import card, cards, deal
from tonk.shared.game.actions import Action, Discard, DrawStock, Drop, Hit, LaySpread, TakeDiscard
from tonk.shared.game.cards import count
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.rules import PRESETS, HouseRules, StakeMode
from tonk.shared.game.settlement import Ending

CROAKER, GOBLIN, ELMO = 0, 1, 2  # Elmo deals, so Croaker acts first
PRESET_NAMES = ["speno", "classic", "black-tonk", "pagat"]
#: Each seat's stake (Croaker, Goblin, Elmo): the sources' one half-crown for everybody as 1 or 3,
#: and unequal seat stakes, played under stake_mode = seat.
STAKES = [(1, 1, 1), (3, 3, 3), (1, 2, 5), (5, 1, 2)]
CASES = [(preset, stakes) for preset in PRESET_NAMES for stakes in STAKES]


def table(preset: str, stakes: tuple[int, ...]) -> HouseRules:
    """The preset, under stake_mode = seat when the seats' stakes differ."""
    rules = PRESETS[preset]
    if len(set(stakes)) > 1 and rules.stake_mode is not StakeMode.SEAT:
        rules = rules.with_options({"stake_mode": "seat"})
    return rules


def elmo_deals(preset: str, stakes: tuple[int, ...], hands: list[str], up: str, stock: str) -> Hand:
    """The hand Elmo deals under `preset` at these seat stakes (one stake for the table
    unless the seats' stakes differ), from a deck stacked to these hands, up card and stock."""
    rules = table(preset, stakes)
    seats = stakes if rules.stake_mode is StakeMode.SEAT else stakes[:1]
    return deal(rules, hands, up=up, stock=stock, dealer=ELMO, stakes=seats)


def position(hand: Hand) -> tuple[list[str], list[int], str]:
    """Each seat's hand (sorted text, as its own view shows it), counts, and the pile's top."""
    views = [hand.view(seat) for seat in range(3)]
    held = [" ".join(sorted(str(c) for c in v.hand)) for v in views]
    top = views[0].discard_top
    assert top is not None
    return held, [count(v.hand) for v in views], str(top)


def sorted_text(text: str) -> str:
    return " ".join(sorted(text.split()))


def example_one(preset: str, stakes: tuple[int, ...] = (1, 1, 1)) -> Hand:
    return elmo_deals(
        preset,
        stakes,
        ["10s 8d 8h 5s 4c", "Kc 10c 3c 2s Ah", "Qh 8c 6d 2d 2c"],
        up="5c",
        stock="6s Ac 7s 8s 3s 7h",
    )


@pytest.mark.parametrize(("preset", "stakes"), CASES)
def test_example_one_croaker_drops_with_nine_and_wins_a_stake_from_each(
    preset: str, stakes: tuple[int, ...]
) -> None:
    hand = example_one(preset, stakes)
    assert not hand.ended, "nobody has a tonk"
    assert hand.turn == CROAKER
    assert [count(h) for h in hand.hands] == [35, 26, 28]
    assert position(hand)[2] == "5c"

    # Croaker does not want the 5c; he draws 6s and discards 10s. Goblin draws Ac and discards
    # Kc. Elmo draws 7s and discards Qh.
    for seat, drawn, thrown in [
        (CROAKER, "6s", "10s"),
        (GOBLIN, "Ac", "Kc"),
        (ELMO, "7s", "Qh"),
    ]:
        assert hand.apply(DrawStock(seat))[0].cards == (card(drawn),)
        hand.apply(Discard(seat, card(thrown)))
    held, counts, top = position(hand)
    assert held == [
        sorted_text("8d 8h 6s 5s 4c"),
        sorted_text("10c 3c 2s Ah Ac"),
        sorted_text("8c 7s 6d 2d 2c"),
    ]
    assert counts == [31, 17, 25]
    assert top == "Qh"

    # Croaker draws 8s, lays the eights, discards 6s. Goblin draws 3s, discards 10c. Elmo draws
    # 7h, discards 8c.
    hand.apply(DrawStock(CROAKER))
    hand.apply(LaySpread(CROAKER, cards("8d 8h 8s")))
    hand.apply(Discard(CROAKER, card("6s")))
    hand.apply(DrawStock(GOBLIN))
    hand.apply(Discard(GOBLIN, card("10c")))
    hand.apply(DrawStock(ELMO))
    hand.apply(Discard(ELMO, card("8c")))
    held, counts, top = position(hand)
    assert held == [
        sorted_text("5s 4c"),
        sorted_text("3s 3c 2s Ah Ac"),
        sorted_text("7s 7h 6d 2d 2c"),
    ]
    assert counts == [9, 10, 24]
    assert top == "8c"
    (spread,) = hand.view(GOBLIN).spreads
    assert spread.owner == CROAKER
    assert set(spread.cards) == set(cards("8d 8h 8s"))

    # Croaker opens with 9 and wins: both pay him his stake (a drop is sized by the receiver's).
    assert hand.legal_actions(CROAKER).drop
    events = hand.apply(Drop(CROAKER))
    assert events[0].count == 9
    s = hand.settlement
    assert s is not None
    assert s.ending is Ending.DROP_WON
    assert s.winners == (CROAKER,)
    assert s.counts == (9, 10, 24)
    won = stakes[CROAKER]
    assert {(p.payer, p.payee, p.amount) for p in s.payments} == {
        (GOBLIN, CROAKER, won),
        (ELMO, CROAKER, won),
    }
    assert s.net(3) == [2 * won, -won, -won]


def example_two(preset: str, stakes: tuple[int, ...] = (1, 1, 1)) -> Hand:
    # A position from the middle of a hand (000: "after a few rounds have gone by"; 003's
    # translation: "a few hands later"): dealt as listed, with Elmo dealing, so that Croaker
    # acts first as in the source. The turns before it are unknown.
    return elmo_deals(
        preset,
        stakes,
        ["Qc 10s 9s 6h 5h", "Jc 10c 4s 4c As", "8s 7h 5d 2d Ad"],
        up="Qd",
        stock="Js 10h 9h",
    )


@pytest.mark.parametrize(("preset", "stakes"), CASES)
def test_example_two_goblin_drops_with_five_and_wins_a_stake_from_each(
    preset: str, stakes: tuple[int, ...]
) -> None:
    hand = example_two(preset, stakes)
    assert not hand.ended
    assert [count(h) for h in hand.hands] == [40, 29, 23]
    assert position(hand)[2] == "Qd"

    # Croaker draws Js, lays Js 10s 9s, discards Qc.
    hand.apply(DrawStock(CROAKER))
    assert cards("9s 10s Js") in hand.legal_actions(CROAKER).spreads
    hand.apply(LaySpread(CROAKER, cards("Js 10s 9s")))
    hand.apply(Discard(CROAKER, card("Qc")))
    # Goblin takes Croaker's Qc from the pile, lays Qc Jc 10c, discards 4s.
    assert hand.apply(TakeDiscard(GOBLIN))[0].cards == (card("Qc"),)
    assert position(hand)[2] == "Qd", "under the Qc lay the Qd"
    hand.apply(LaySpread(GOBLIN, cards("Qc Jc 10c")))
    hand.apply(Discard(GOBLIN, card("4s")))
    # Elmo draws 10h, hits 8s onto Croaker's run, discards 10h.
    hand.apply(DrawStock(ELMO))
    croakers_run = hand.spreads[0].id
    hand.apply(Hit(ELMO, card("8s"), croakers_run))
    hand.apply(Discard(ELMO, card("10h")))

    held, counts, top = position(hand)
    assert held == [sorted_text("6h 5h"), sorted_text("4c As"), sorted_text("7h 5d 2d Ad")]
    assert counts == [11, 5, 15]
    assert top == "10h"
    run, goblins = hand.view(None).spreads
    assert (run.owner, run.cards) == (CROAKER, cards("8s 9s 10s Js"))
    assert run.hit_by(card("8s")) == ELMO
    assert (goblins.owner, goblins.cards) == (GOBLIN, cards("10c Jc Qc"))

    # Croaker draws 9h, no use to him, and discards it. Goblin opens and wins.
    hand.apply(DrawStock(CROAKER))
    hand.apply(Discard(CROAKER, card("9h")))
    events = hand.apply(Drop(GOBLIN))
    assert events[0].count == 5
    s = hand.settlement
    assert s is not None
    assert s.ending is Ending.DROP_WON
    assert s.winners == (GOBLIN,)
    assert s.counts == (11, 5, 15)
    won = stakes[GOBLIN]
    assert {(p.payer, p.payee, p.amount) for p in s.payments} == {
        (CROAKER, GOBLIN, won),
        (ELMO, GOBLIN, won),
    }
    assert s.net(3) == [-won, 2 * won, -won]


EXAMPLE_ONE_MOVES = [
    DrawStock(0), Discard(0, card("10s")), DrawStock(1), Discard(1, card("Kc")),
    DrawStock(2), Discard(2, card("Qh")), DrawStock(0), LaySpread(0, cards("8d 8h 8s")),
    Discard(0, card("6s")), DrawStock(1), Discard(1, card("10c")), DrawStock(2),
    Discard(2, card("8c")), Drop(0),
]  # fmt: skip
EXAMPLE_TWO_MOVES = [
    DrawStock(0), LaySpread(0, cards("Js 10s 9s")), Discard(0, card("Qc")),
    TakeDiscard(1), LaySpread(1, cards("Qc Jc 10c")), Discard(1, card("4s")),
    DrawStock(2), Hit(2, card("8s"), 1), Discard(2, card("10h")), DrawStock(0),
    Discard(0, card("9h")), Drop(1),
]  # fmt: skip


@pytest.mark.parametrize(
    ("build", "moves", "winner"),
    [(example_one, EXAMPLE_ONE_MOVES, CROAKER), (example_two, EXAMPLE_TWO_MOVES, GOBLIN)],
)
def test_the_worked_examples_replay_from_their_records(
    build: Callable[[str], Hand], moves: list[Action], winner: int
) -> None:
    hand = build("speno")
    for move in moves:
        hand.apply(move)
    assert hand.settlement is not None
    assert hand.settlement.winners == (winner,)
    record = HandRecord.from_dict(json.loads(json.dumps(hand.record().to_dict())))
    assert record.actions == tuple(moves)
    replayed = record.replay()
    assert replayed.settlement == hand.settlement
    assert replayed.hands == hand.hands
    assert replayed.spreads == hand.spreads
    assert replayed.events == hand.events
