"""The ledger as one client has seen it: each player's balance, the balance over the hands seen
(for the trend line), and the last hand's net. The arithmetic of payments is the core's
(`LedgerEntry.net`, `running_balances`); the server's balances are taken as they come."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tonk.shared.game.ledger import LedgerEntry, balances_before, running_balances
from tonk.shared.wire.messages import PlayerSummary, SeatKind


@dataclass
class Balances:
    """Balances by player name, with the series of each over the hands seen: one point
    before them and one after each, for every player alike (one who came later is at their
    balance all along until then), so that the same player's trend is drawn the same on
    every client, whenever it came to the table."""

    balances: dict[str, int] = field(default_factory=dict)
    series: dict[str, list[int]] = field(default_factory=dict)
    last_net: dict[str, int] = field(default_factory=dict)
    hands_seen: int = 0

    def seated(self, players: Sequence[PlayerSummary]) -> None:
        """The balances in a table map (each seat's player, as the server counts it)."""
        for player in players:
            name = player.name
            if name is None or player.kind is SeatKind.EMPTY:
                continue
            balance = player.balance
            self.balances[name] = balance
            # (Only a hand adds a point: a balance said between hands is the last point's.)
            self._series(name, balance)[-1] = balance

    def ledger(
        self,
        names: Sequence[str],
        hands: Sequence[Sequence[int]],
        balances: Mapping[str, int],
    ) -> None:
        """The ledger's newest hands (each player's net in `names` order) and the balances
        now: each balance over them, drawn back from the balance now, replaces what was
        seen."""
        self.balances.update(balances)
        nets = [dict(zip(names, map(int, row), strict=True)) for row in hands]
        now = {name: balances.get(name, 0) for name in names}
        self.series.update(running_balances(balances_before(now, nets), nets))
        self.last_net = nets[-1] if nets else {}
        self.hands_seen = len(hands)

    def settled(self, entry: LedgerEntry, balances: Mapping[str, int]) -> None:
        """A hand settled: its payments (`entry`) and everyone's balance after it."""
        net = entry.net()
        self.last_net = net
        before = balances_before(balances, [net])
        for name, balance in balances.items():
            self.balances[name] = balance
            self._series(name, before[name]).append(balance)
        self.hands_seen += 1

    def _series(self, name: str, balance: int) -> list[int]:
        """`name`'s series; for a player not seen before, at `balance` over every hand seen."""
        return self.series.setdefault(name, [balance] * (self.hands_seen + 1))
