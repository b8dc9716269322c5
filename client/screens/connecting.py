"""Shown while the first connection is made."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from ..keys import ScreenKeys
from ..widgets import TooSmall
from ..widgets.screenkeys import screen_keys


class ConnectingScreen(Screen[None]):
    """Shown while the first connection is made (and the practice server started)."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(hint="q quits")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.quit", "Quit")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield Static(self.text, id="connecting")
        yield screen_keys(self.app)
