"""Choosing the spread to hit a card onto."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from tonk.shared.game.cards import Card
from tonk.shared.game.spreads import Spread

from ..keys import ScreenKeys
from ..text.render import CardStyle, cards_text, spread_line
from ..widgets import TooSmall
from .taps import tapped_outside, way_out


class HitChooser(ModalScreen[int | None]):
    """Choose the spread to hit a card onto: its number, or up/down and enter."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="the spread's number, or arrows and enter, hits; escape cancels"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose(-1)", "Cancel"),
        Binding("up,left", "move(-1)", "Up", show=False),
        Binding("down,right", "move(1)", "Down", show=False),
        Binding("enter,space", "pick", "Hit"),
        *(Binding(str(n), f"choose({n - 1})", show=False) for n in range(1, 10)),
    ]

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
            yield Static(self._body(), id="hit-list")
            yield way_out(
                self.app,
                "1-9 or arrows and enter: hit    escape: cancel",
                (("Cancel", "choose(-1)"),),
                "choose(-1)",
            )

    def _body(self) -> Group:
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

    def on_click(self, event: events.Click) -> None:
        """A tap on a spread hits onto it, as its number's key does; a tap outside the
        window cancels."""
        if tapped_outside(self, event):
            self.action_choose(-1)
            return
        spreads = self.query_one("#hit-list", Static)
        offset = event.get_content_offset(spreads)
        if event.widget is spreads and offset is not None:
            self.action_choose(offset.y)

    def action_move(self, step: int) -> None:
        if self.spreads:
            self.index = (self.index + step) % len(self.spreads)
            self.query_one("#hit-list", Static).update(self._body())

    def action_pick(self) -> None:
        self.action_choose(self.index)

    def action_choose(self, index: int) -> None:
        if 0 <= index < len(self.spreads):
            self.dismiss(self.spreads[index].id)
        elif index < 0:
            self.dismiss(None)
        else:
            spreads = len(self.spreads)
            self.notify(
                f"There is no spread {index + 1}: the table has {spreads} "
                f"spread{'s' if spreads != 1 else ''}."
            )
