"""A table the client asks the server to create: the `create_table` message, and the bots to
seat at it once we sit (the practice table's, or the lobby form's)."""

from __future__ import annotations

from tonk.shared.records import record
from tonk.shared.wire import messages as m


@record
class TableRequest:
    """The create_table message, and the bots to seat once we sit: `bots` bots playing
    `strategy`, or, when `strategies` is given, one bot for each strategy named there."""

    message: m.CreateTable
    bots: int = 0
    strategy: str = "easy"
    strategies: tuple[str, ...] = ()

    def bot_strategies(self) -> tuple[str, ...]:
        """Each bot's strategy, in the order they are seated."""
        return self.strategies or (self.strategy,) * self.bots
