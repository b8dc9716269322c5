"""What a window offers to a finger: its answers drawn as buttons a tap presses (on a touch
screen, in place of the line of keys a terminal shows), and the way out by a tap."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widgets import Label

from ..touch import by_touch

#: A button's label and the action its screen runs for a tap on it.
Part = tuple[str, str]


class TapButtons(Label):
    """A row of buttons, each three rows tall (a finger's size at a phone's font), that run
    their screen's actions when tapped."""

    GAP = 2

    def __init__(self, *parts: Part, id: str | None = None) -> None:
        self.parts = parts
        rows = [Text(), Text(), Text()]
        for index, (label, _) in enumerate(parts):
            for row, text in enumerate(rows):
                if index:
                    text.append(" " * self.GAP)
                face = f" {label} " if row == 1 else " " * (len(label) + 2)
                text.append(face, style="bold reverse" if row == 1 else "reverse")
        super().__init__(Text("\n").join(rows), id=id, classes="hint tap-buttons")

    def part_at(self, x: int) -> Part | None:
        """The button at column `x`, if any."""
        start = 0
        for part in self.parts:
            end = start + len(part[0]) + 2
            if start <= x < end:
                return part
            start = end + self.GAP
        return None

    async def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        part = self.part_at(offset.x) if offset is not None else None
        if part is not None:
            event.stop()
            await self.app.run_action(part[1], self.screen)


class KeysHint(Label):
    """A window's line of keys (`shown`) whose way out is a tap on it too (`action`, the
    screen's)."""

    def __init__(self, shown: str, action: str) -> None:
        super().__init__(shown, classes="hint")
        self.action = action

    async def on_click(self, event: events.Click) -> None:
        event.stop()
        await self.app.run_action(self.action, self.screen)


def way_out(app: App[Any], keys: str, buttons: tuple[Part, ...], action: str = "close") -> Label:
    """A window's last line: on a touch screen its `buttons`; in a terminal its `keys`, a
    tap on which runs `action` (the way out)."""
    if by_touch(app):
        return TapButtons(*buttons)
    return KeysHint(keys, action)


def tapped_outside(screen: Screen[Any], event: events.Click) -> bool:
    """Whether a tap fell outside the window (on the screen behind it, dimmed)."""
    return event.widget is screen
