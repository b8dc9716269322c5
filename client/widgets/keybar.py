"""The key bar at the foot of the table: every key, greyed out when it is not open now."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import var
from tonk.shared.records import record

from .lines import LineWidget


@record
class KeyEntry:
    """A key in the key bar: the key as Textual names it, how it is shown, what it does, and
    whether it is open now (greyed out if not). Lower `keep` goes first when space is short."""

    key: str
    shown: str
    description: str
    enabled: bool = True
    keep: int = 1


class KeyBar(LineWidget):
    """The table's keys on one line, those not open now greyed out. Unlike Textual's footer
    (a widget per key, all repainted when any changes) it is one row of text, repainted as
    far as it changed. A click on a key presses it."""

    class Pressed(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    #: The keys to show, in order (set by the screen; drawn as far as they changed).
    entries: var[tuple[KeyEntry, ...]] = var((), init=False)

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, str]] = []

    def watch_entries(self) -> None:
        self._build()

    def _build(self) -> None:
        width = self.size.width or 80
        entries = list(self.entries)

        def length(items: list[KeyEntry]) -> int:
            return sum(len(e.shown) + len(e.description) + 2 for e in items)

        while entries and length(entries) > width:
            entries.remove(min(entries, key=lambda e: e.keep))
        line = Text()
        self._spans = []
        for entry in entries:
            start = line.cell_len
            if entry.enabled:
                line.append(entry.shown, style="bold")
                line.append(f" {entry.description} ")
            else:
                line.append(f"{entry.shown} {entry.description} ", style="dim")
            self._spans.append((start, line.cell_len, entry.key))
        self.set_lines([line])

    def refit(self) -> None:
        self._build()
        super().refit()

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.post_message(self.Pressed(key))
                return
