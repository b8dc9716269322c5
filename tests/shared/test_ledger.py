"""The ledger: balances per player across hands, always zero-sum, with each hand's payments."""

from __future__ import annotations

import json
import random
from itertools import accumulate

from rulekit import play_randomly
from tonk.shared.game.hand import Hand
from tonk.shared.game.ledger import Ledger, LedgerEntry, balances_before, running_balances
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.settlement import Ending, Payment, Settlement


def settlement(ending: Ending, *payments: tuple[int, int, int]) -> Settlement:
    seats = 1 + max((max(p[0], p[1]) for p in payments), default=0)
    return Settlement(
        ending,
        (),
        tuple(Payment(*p) for p in payments),
        (None,) * seats,
        (None,) * seats,
    )


def series(ledger: Ledger, player: str) -> list[int]:
    """The player's balance after each hand in the ledger's history, from 0."""
    return [0, *accumulate(entry.net().get(player, 0) for entry in ledger.history)]


def test_a_settlement_moves_stakes_between_the_players_in_those_seats() -> None:
    ledger = Ledger()
    entry = ledger.record(settlement(Ending.DROP_WON, (1, 0, 1), (2, 0, 1)), ["ann", "bo", "cy"])
    assert ledger.balances == {"ann": 2, "bo": -1, "cy": -1}
    assert entry == LedgerEntry(1, "drop_won", (("bo", "ann", 1), ("cy", "ann", 1)))
    assert entry.net() == {"ann": 2, "bo": -1, "cy": -1}


def test_balances_accumulate_and_history_keeps_every_hand() -> None:
    ledger = Ledger()
    ledger.record(settlement(Ending.DROP_WON, (1, 0, 1), (2, 0, 1)), ["ann", "bo", "cy"])
    ledger.record(settlement(Ending.DROP_CAUGHT, (0, 1, 2), (2, 1, 1)), ["ann", "bo", "cy"])
    ledger.record(settlement(Ending.VOID), ["ann", "bo", "cy"])
    assert ledger.balances == {"ann": 0, "bo": 2, "cy": -2}
    assert [e.hand_number for e in ledger.history] == [1, 2, 3]
    assert [e.ending for e in ledger.history] == ["drop_won", "drop_caught", "void"]
    assert ledger.history[2].payments == ()
    assert series(ledger, "bo") == [0, -1, 2, 2]
    assert series(ledger, "ann") == [0, 2, 0, 0]
    assert ledger.standings() == [("bo", 2), ("ann", 0), ("cy", -2)]


def test_players_may_come_and_go_between_hands() -> None:
    ledger = Ledger()
    ledger.join("dee")
    assert ledger.balances == {"dee": 0}
    ledger.record(settlement(Ending.TONK_OUT, (1, 0, 2)), ["ann", "bo"])
    ledger.record(settlement(Ending.TONK_OUT, (1, 0, 2)), ["bo", "dee"])  # seats change
    assert ledger.balances == {"dee": -2, "ann": 2, "bo": 0}
    assert series(ledger, "dee") == [0, 0, -2]
    assert sum(ledger.balances.values()) == 0


def test_standings_break_ties_by_name() -> None:
    ledger = Ledger()
    for name in ("cy", "ann", "bo"):
        ledger.join(name)
    assert [name for name, _ in ledger.standings()] == ["ann", "bo", "cy"]


def test_the_ledger_stays_zero_sum_over_many_real_hands() -> None:
    rng = random.Random(3)
    ledger = Ledger()
    names = ["ann", "bo", "cy", "dee", "ed"]
    multiplier = 1
    rules = PRESETS["speno"].with_options({"several_deal_tonks": "void_double"})
    for number in range(60):
        players = rng.randint(2, 5)
        seated = rng.sample(names, players)
        hand = Hand(
            rules,
            players,
            number % players,
            tuple(rng.randint(1, 3) for _ in range(players)),
            rng=rng,
            multiplier=multiplier,
        )
        play_randomly(hand, rng)
        assert hand.settlement is not None
        ledger.record(hand.settlement, seated)
        multiplier = hand.settlement.next_multiplier
        assert sum(ledger.balances.values()) == 0
    assert len(ledger.history) == 60
    for name in ledger.balances:
        assert series(ledger, name)[-1] == ledger.balances[name]


def test_the_ledger_round_trips_through_plain_data() -> None:
    ledger = Ledger()
    ledger.record(settlement(Ending.DROP_WON, (1, 0, 1), (2, 0, 1)), ["ann", "bo", "cy"])
    ledger.record(settlement(Ending.STOCK_OUT, (0, 2, 3)), ["ann", "bo", "cy"])
    again = Ledger.from_dict(json.loads(json.dumps(ledger.to_dict())))
    assert again.balances == ledger.balances
    assert again.history == ledger.history


def test_keeping_the_newest_hands_forgets_old_entries_but_no_stake() -> None:
    ledger = Ledger()
    for _ in range(5):
        ledger.record(settlement(Ending.TONK_OUT, (1, 0, 2)), ["ann", "bo"])
    ledger.keep_newest(2)
    assert [e.hand_number for e in ledger.history] == [4, 5]
    assert ledger.balances == {"ann": 10, "bo": -10}
    entry = ledger.record(settlement(Ending.TONK_OUT, (0, 1, 1)), ["ann", "bo"])
    assert entry.hand_number == 6
    assert ledger.balances == {"ann": 9, "bo": -9}
    ledger.keep_newest(0)  # nonsense: keeps what it has
    assert [e.hand_number for e in ledger.history] == [4, 5, 6]


def test_a_ledgers_newest_hands_are_each_balance_before_them_and_after_each() -> None:
    hands = [{"Ann": 3, "Bob": -3}, {"Ann": -1, "Cy": 1}, {"Bob": 2, "Cy": -2}]
    before = balances_before({"Ann": 5, "Bob": -4, "Cy": -1}, hands)
    assert before == {"Ann": 3, "Bob": -3, "Cy": 0}
    assert running_balances(before, hands) == {
        "Ann": [3, 6, 5, 5],
        "Bob": [-3, -6, -6, -4],
        "Cy": [0, 0, 1, -1],
    }


def test_with_no_hands_a_balance_is_its_own_history() -> None:
    assert balances_before({"Ann": 4}, []) == {"Ann": 4}
    assert running_balances({"Ann": 4}, []) == {"Ann": [4]}


def test_running_balances_end_at_the_ledgers_balances() -> None:
    ledger = Ledger()
    for payer, payee, amount in ((0, 1, 2), (1, 0, 5), (0, 1, 1)):
        ledger.record(settlement(Ending.DROP_WON, (payer, payee, amount)), ["Ann", "Bob"])
    hands = [entry.net() for entry in ledger.history[1:]]
    before = balances_before(ledger.balances, hands)
    trend = running_balances(before, hands)
    assert trend == {"Ann": [-2, 3, 2], "Bob": [2, -3, -2]}
    assert {name: series[-1] for name, series in trend.items()} == ledger.balances
