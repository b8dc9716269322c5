"""The stake ledger across hands: each player's balance, zero-sum, with every hand's payments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from ..records import record
from .settlement import Settlement

#: Who paid whom how much in one hand, by player name.
Payments = tuple[tuple[str, str, int], ...]


def net(payments: Payments) -> dict[str, int]:
    """Each player's gain (positive) or loss from these payments: the one place payments
    become balances."""
    totals: dict[str, int] = {}
    for payer, payee, amount in payments:
        totals[payer] = totals.get(payer, 0) - amount
        totals[payee] = totals.get(payee, 0) + amount
    return totals


def balances_before(after: Mapping[str, int], hands: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Each player's balance before `hands` (each hand's nets by player name), from the
    balances `after` them."""
    return {
        name: balance - sum(nets.get(name, 0) for nets in hands) for name, balance in after.items()
    }


def running_balances(
    before: Mapping[str, int], hands: Sequence[Mapping[str, int]]
) -> dict[str, list[int]]:
    """Each player's balance before `hands` (each hand's nets by player name, oldest first)
    and after each of them: a ledger's newest hands as each balance's trend."""
    return {
        name: list(accumulate((nets.get(name, 0) for nets in hands), initial=balance))
        for name, balance in before.items()
    }


@record
class LedgerEntry:
    """One settled hand: its number, how it ended, and who paid whom (by player name)."""

    hand_number: int
    ending: str
    payments: Payments

    def net(self) -> dict[str, int]:
        return net(self.payments)


@dataclass(slots=True)
class Ledger:
    """Balances per player name; every change comes from a settlement, so they sum to zero."""

    balances: dict[str, int] = field(default_factory=dict)
    history: list[LedgerEntry] = field(default_factory=list)

    def join(self, player: str) -> None:
        self.balances.setdefault(player, 0)

    @staticmethod
    def payments(settlement: Settlement, names: Sequence[str]) -> Payments:
        """A hand's payments by player name; `names[seat]` is who sat in each seat."""
        return tuple((names[p.payer], names[p.payee], p.amount) for p in settlement.payments)

    def balances_after(self, payments: Payments, names: Sequence[str] = ()) -> dict[str, int]:
        """The balances once `payments` are made (every one of `names` in them), leaving these
        as they are."""
        balances = dict(self.balances)
        _pay(balances, payments, names)
        return balances

    def record(self, settlement: Settlement, names: Sequence[str]) -> LedgerEntry:
        """Apply a hand's settlement; `names[seat]` is who sat in each seat."""
        payments = self.payments(settlement, names)
        _pay(self.balances, payments, names)
        number = self.history[-1].hand_number + 1 if self.history else 1
        entry = LedgerEntry(number, settlement.ending.value, payments)
        self.history.append(entry)
        return entry

    def keep_newest(self, hands: int) -> None:
        """Forget all but the newest `hands` entries; the balances stay whole (a server keeps
        a table's recent hands only, since a session may go on for weeks)."""
        if hands >= 1 and len(self.history) > hands:
            del self.history[:-hands]

    def standings(self) -> list[tuple[str, int]]:
        """Players from most ahead to most behind."""
        return sorted(self.balances.items(), key=lambda item: (-item[1], item[0]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "balances": dict(self.balances),
            "history": [
                {
                    "hand": e.hand_number,
                    "ending": e.ending,
                    "payments": [list(p) for p in e.payments],
                }
                for e in self.history
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ledger:
        return cls(
            balances=dict(data["balances"]),
            history=[
                LedgerEntry(h["hand"], h["ending"], tuple((a, b, c) for a, b, c in h["payments"]))
                for h in data["history"]
            ],
        )


def _pay(balances: dict[str, int], payments: Payments, names: Sequence[str]) -> None:
    """Make `payments` in `balances` (every one of `names` in them, from 0 if new)."""
    for name in names:
        balances.setdefault(name, 0)
    for name, amount in net(payments).items():
        balances[name] = balances.get(name, 0) + amount
