"""A window where one of a few numbered lines is chosen: the line's number, or the arrows and
enter, or a tap on it; escape cancels. The spread to hit onto and whose seat goes to a bot are
chosen so."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from rich.console import RenderableType
from textual import events
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from .taps import tapped_outside

Chosen = TypeVar("Chosen")


def chooser_bindings(choose: str) -> list[BindingType]:
    """The keys of a chooser whose enter key is shown as `choose`."""
    return [
        Binding("escape", "choose(-1)", "Cancel"),
        Binding("up,left", "move(-1)", "Up", show=False),
        Binding("down,right", "move(1)", "Down", show=False),
        Binding("enter,space", "pick", choose),
        *(Binding(str(n), f"choose({n - 1})", show=False) for n in range(1, 10)),
    ]


class Chooser(ModalScreen[Chosen | None]):
    """The lines are drawn by `lines()` into the Static `#choices` (the subclass composes it),
    `index` the line under the cursor; `chosen(n)` is what choosing line n gives."""

    BINDINGS: ClassVar[list[BindingType]] = chooser_bindings("Choose")

    index = 0

    def count(self) -> int:
        raise NotImplementedError

    def lines(self) -> RenderableType:
        raise NotImplementedError

    def chosen(self, index: int) -> Chosen:
        raise NotImplementedError

    def missing(self, index: int) -> None:
        """Line `index` (past the last) was asked for."""

    def on_click(self, event: events.Click) -> None:
        """A tap on a line chooses it, as its number's key does; a tap outside the window
        cancels."""
        if tapped_outside(self, event):
            self.action_choose(-1)
            return
        choices = self.query_one("#choices", Static)
        offset = event.get_content_offset(choices)
        if event.widget is choices and offset is not None:
            self.action_choose(offset.y)

    def action_move(self, step: int) -> None:
        if self.count():
            self.index = (self.index + step) % self.count()
            self.query_one("#choices", Static).update(self.lines())

    def action_pick(self) -> None:
        self.action_choose(self.index)

    def action_choose(self, index: int) -> None:
        if 0 <= index < self.count():
            self.dismiss(self.chosen(index))
        elif index < 0:
            self.dismiss(None)
        else:
            self.missing(index)
