"""The stake ledger across hands: each player's balance, zero-sum, with every hand's payments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .settlement import Settlement


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One settled hand: its number, how it ended, and who paid whom (by player name)."""

    hand_number: int
    ending: str
    payments: tuple[tuple[str, str, int], ...]

    def net(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for payer, payee, amount in self.payments:
            totals[payer] = totals.get(payer, 0) - amount
            totals[payee] = totals.get(payee, 0) + amount
        return totals


@dataclass(slots=True)
class Ledger:
    """Balances per player name; every change comes from a settlement, so they sum to zero."""

    balances: dict[str, int] = field(default_factory=dict)
    history: list[LedgerEntry] = field(default_factory=list)

    def join(self, player: str) -> None:
        self.balances.setdefault(player, 0)

    def record(self, settlement: Settlement, names: Sequence[str]) -> LedgerEntry:
        """Apply a hand's settlement; `names[seat]` is who sat in each seat."""
        for name in names:
            self.join(name)
        payments = tuple((names[p.payer], names[p.payee], p.amount) for p in settlement.payments)
        for payer, payee, amount in payments:
            self.balances[payer] -= amount
            self.balances[payee] += amount
        number = self.history[-1].hand_number + 1 if self.history else 1
        entry = LedgerEntry(number, settlement.ending.value, payments)
        self.history.append(entry)
        return entry

    def keep_newest(self, hands: int) -> None:
        """Forget all but the newest `hands` entries; the balances stay whole (a server keeps
        a table's recent hands only, since a session may go on for weeks)."""
        if hands >= 1 and len(self.history) > hands:
            del self.history[:-hands]

    def series(self, player: str) -> list[int]:
        """The player's balance after each hand, from 0: for a sparkline."""
        balance = 0
        out = [0]
        for entry in self.history:
            balance += entry.net().get(player, 0)
            out.append(balance)
        return out

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
