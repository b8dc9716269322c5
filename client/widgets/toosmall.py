"""Covers a screen when the terminal is smaller than the table needs."""

from __future__ import annotations

from textual.widgets import Static

from ..touch import by_touch

#: Under this many columns the table is laid out upright (a phone held upright, a narrow
#: pane): its panels stacked, each screen marked `-portrait` (the App's breakpoints), the
#: end-of-hand window's table narrower.
PORTRAIT = 80


class TooSmall(Static):
    """Covers a screen when the terminal is smaller than the table needs."""

    #: Narrower than PORTRAIT columns the table is laid out upright, down to this.
    MIN_WIDTH = 40
    MIN_HEIGHT = 24

    def __init__(self) -> None:
        super().__init__("", id="too-small")

    def on_resize(self) -> None:
        self.update_text()

    def on_mount(self) -> None:
        self.update_text()

    def update_text(self) -> None:
        width, height = self.app.size
        # (On a touch screen there is no key to press, and nothing to tap till it fits.)
        way = (
            "Turn the phone, or make the window larger."
            if by_touch(self.app)
            else "Make the window larger, or press q to leave."
        )
        self.update(
            f"Terminal too small: {width}x{height}.\n\n"
            f"tonk needs at least {self.MIN_WIDTH}x{self.MIN_HEIGHT}.\n{way}"
        )
