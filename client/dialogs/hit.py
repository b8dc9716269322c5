"""Choosing the spread to hit a card onto."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import Label, Static
from tonk.shared.game.cards import Card
from tonk.shared.game.spreads import Spread

from ..keys import ScreenKeys
from ..text.render import CardStyle, cards_text, spread_line
from ..widgets import TooSmall
from .chooser import Chooser, chooser_bindings
from .taps import way_out


class HitChooser(Chooser[int]):
    """Choose the spread to hit a card onto: its number, or up/down and enter."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="the spread's number, or arrows and enter, hits; escape cancels"
    )
    BINDINGS: ClassVar[list[BindingType]] = chooser_bindings("Hit")

    def __init__(
        self,
        card: Card,
        spreads: Sequence[Spread],
        legal: frozenset[int],
        names: Sequence[str],
        style: CardStyle,
    ) -> None:
        super().__init__()
        self.card = card
        self.spreads = tuple(spreads)
        self.legal = legal
        self.names = list(names)
        self.card_style = style
        first = next((i for i, s in enumerate(self.spreads) if s.id in legal), 0)
        self.index = first

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog hit"):
            title = Text("Hit ")
            title.append_text(cards_text((self.card,), self.card_style))
            title.append(" onto which spread?")
            yield Label(title, classes="title")
            yield Static(self.lines(), id="choices")
            yield way_out(
                self.app,
                "1-9 or arrows and enter: hit    escape: cancel",
                (("Cancel", "choose(-1)"),),
                "choose(-1)",
            )

    def count(self) -> int:
        return len(self.spreads)

    def lines(self) -> Group:
        lines = []
        for i, spread in enumerate(self.spreads):
            line = Text("> " if i == self.index else "  ", style="bold")
            line.append_text(spread_line(i + 1, spread, self.names, self.card_style))
            if spread.id not in self.legal:
                line.stylize("dim")
            if i == self.index:
                line.stylize("reverse")
            lines.append(line)
        return Group(*lines)

    def chosen(self, index: int) -> int:
        return self.spreads[index].id

    def missing(self, index: int) -> None:
        spreads = len(self.spreads)
        self.notify(
            f"There is no spread {index + 1}: the table has {spreads} "
            f"spread{'s' if spreads != 1 else ''}."
        )
