"""The end of a session: the final standings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Label, Static
from tonk.shared.words import amount_text

from ..widgets import TooSmall


class StandingsScreen(Screen[None]):
    """The end of a session: the final standings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape", "close", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(
        self, table_name: str, standings: Sequence[tuple[str, int]], hands: int, unit: str
    ) -> None:
        super().__init__()
        self.table_name = table_name
        self.standings = list(standings)
        self.hands = hands
        self.unit = unit

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 3))
        table.add_column(justify="right")
        table.add_column()
        table.add_column(justify="right")
        for place, (name, balance) in enumerate(self.standings, start=1):
            table.add_row(
                f"{place}.",
                Text(name, style="bold" if place == 1 else ""),
                Text(
                    amount_text(balance, self.unit)
                    if balance <= 0
                    else "+" + amount_text(balance, self.unit),
                    style="green" if balance > 0 else "red" if balance < 0 else "",
                ),
            )
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog standings"):
            yield Label(f"{self.table_name}: the session is over", classes="title")
            yield Static(
                f"{self.hands} hand{'s' if self.hands != 1 else ''} played. Final standings:"
            )
            yield Static(table, id="standings")
            yield Label("enter: back    q: quit", classes="hint")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
