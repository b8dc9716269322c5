"""Settling up: the fewest payments that square a session's ledger."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tonk.shared.game.ledger import net
from tonk.shared.game.settle_up import settle_up, settle_up_text


def _fewest(balances: dict[str, int]) -> int:
    """The fewest payments, by brute force: players with a balance less the most zero-sum
    groups they split into."""
    names = [n for n, b in balances.items() if b]

    def most_groups(rest: tuple[str, ...]) -> int:
        if not rest:
            return 0
        first, others = rest[0], rest[1:]
        best = 0
        for size in range(len(others) + 1):
            for more in combinations(others, size):
                if balances[first] + sum(balances[n] for n in more) == 0:
                    left = tuple(n for n in others if n not in more)
                    best = max(best, 1 + most_groups(left))
        return best

    return len(names) - most_groups(tuple(names))


def test_two_losers_pay_the_one_winner() -> None:
    assert settle_up({"Ann": 4, "Bob": -3, "Cy": -1}) == [("Bob", "Ann", 3), ("Cy", "Ann", 1)]


def test_a_square_ledger_needs_no_payment() -> None:
    assert settle_up({"Ann": 0, "Bob": 0}) == []
    assert settle_up_text([], "chips") == "All square: nobody owes anybody."


def test_pairs_that_square_each_other_pay_directly() -> None:
    # Greedy largest-to-largest would make Dee pay Ann 5 and then need three more payments.
    balances = {"Ann": 5, "Bob": 3, "Cy": -3, "Dee": -5}
    assert settle_up(balances) == [("Dee", "Ann", 5), ("Cy", "Bob", 3)]


def test_the_sentence_names_payer_payee_and_amount() -> None:
    transfers = settle_up({"Ann": 4, "Bob": -3, "Cy": -1})
    assert settle_up_text(transfers, "chips") == "Bob pays Ann 3 chips, Cy pays Ann 1 chip."
    assert settle_up_text([("Bob", "Ann", 1)], "pennies") == "Bob pays Ann 1 penny."


def test_balances_that_do_not_sum_to_zero_are_refused() -> None:
    with pytest.raises(ValueError, match="sum to zero"):
        settle_up({"Ann": 2, "Bob": -1})


@st.composite
def _ledgers(draw: st.DrawFn) -> dict[str, int]:
    names = draw(st.lists(st.sampled_from("ABCDEFGH"), min_size=1, max_size=7, unique=True))
    amounts = [draw(st.integers(-12, 12)) for _ in names[:-1]]
    return dict(zip(names, [*amounts, -sum(amounts)], strict=True))


@given(_ledgers())
def test_the_payments_square_the_ledger_in_the_fewest_possible(balances: dict[str, int]) -> None:
    transfers = settle_up(balances)
    assert all(amount > 0 and payer != payee for payer, payee, amount in transfers)
    after = net(tuple(transfers))
    # Ann, 4 ahead, receives 4: what each receives (or pays) is what the ledger says they won.
    assert all(balances[n] == after.get(n, 0) for n in balances)
    assert len(transfers) == _fewest(balances)
