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
    """The table's keys on one line (on a narrow screen, `bar_rows`), those not open now greyed
    out. Unlike Textual's footer (a widget per key, all repainted when any changes) it is
    rows of text, repainted as far as they changed. A click on a key presses it."""

    class Pressed(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    #: The keys to show, in order (set by the screen; drawn as far as they changed).
    entries: var[tuple[KeyEntry, ...]] = var((), init=False)

    #: How many rows the keys may take (a narrow screen's bar takes two).
    bar_rows: var[int] = var(1, init=False)

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, int, str]] = []  # (row, start, end, key)

    def watch_entries(self) -> None:
        self._build()

    def watch_bar_rows(self) -> None:
        self._build()

    def _build(self) -> None:
        width = self.size.width or 80
        entries = list(self.entries)

        def length(entry: KeyEntry) -> int:
            return len(entry.shown) + len(entry.description) + 2

        def laid(items: list[KeyEntry]) -> list[list[KeyEntry]]:
            """`items` in order, row after row, each row as many as fit `width`."""
            lines: list[list[KeyEntry]] = [[]]
            used = 0
            for entry in items:
                if lines[-1] and used + length(entry) > width:
                    lines.append([])
                    used = 0
                lines[-1].append(entry)
                used += length(entry)
            return lines

        while entries and len(laid(entries)) > max(self.bar_rows, 1):
            entries.remove(min(entries, key=lambda e: e.keep))
        lines = []
        self._spans = []
        for y, row in enumerate(laid(entries)):
            line = Text()
            for entry in row:
                start = line.cell_len
                if entry.enabled:
                    line.append(entry.shown, style="bold")
                    line.append(f" {entry.description} ")
                else:
                    line.append(f"{entry.shown} {entry.description} ", style="dim")
                self._spans.append((y, start, line.cell_len, entry.key))
            lines.append(line)
        self.set_lines(lines)

    def refit(self) -> None:
        self._build()
        super().refit()

    def on_click(self, event: events.Click) -> None:
        for y, start, end, key in self._spans:
            if y == event.y and start <= event.x < end:
                self.post_message(self.Pressed(key))
                return
