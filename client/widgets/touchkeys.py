"""The key bar on a touch screen (the web door's page on a phone or a tablet): each key a
button three rows tall (a finger's size at a phone's font), named by what it does, not by its
key; as many rows of buttons as the width needs (two at about 40 columns)."""

from __future__ import annotations

from rich.text import Text
from textual import events

from .keybar import KeyBar, KeyEntry

#: Rows a button takes, and the most rows of buttons.
BUTTON_ROWS = 3
MOST_ROWS = 2


def button_width(entry: KeyEntry) -> int:
    return len(entry.description) + 2


class TouchKeyBar(KeyBar):
    """The key bar's keys as buttons (the words on the middle of three rows, reversed while
    the key is open now), one column apart, laid in rows as the width allows; those that keep
    least go first when even the rows are too few. A tap anywhere on a button presses it."""

    ROW_HEIGHT = BUTTON_ROWS

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._buttons: list[tuple[int, int, int, str]] = []  # (row, start, end, key)

    def _laid(self, entries: list[KeyEntry], width: int) -> list[list[KeyEntry]]:
        rows: list[list[KeyEntry]] = [[]]
        used = 0
        for entry in entries:
            wide = button_width(entry) + (1 if rows[-1] else 0)
            if rows[-1] and used + wide > width:
                rows.append([])
                used, wide = 0, button_width(entry)
            rows[-1].append(entry)
            used += wide
        return rows

    def _rows_allowed(self) -> int:
        return MOST_ROWS

    def _build(self) -> None:
        width = self.size.width or 80
        lines: list[Text] = []
        self._buttons = []
        for number, row in enumerate(self._fitted(width)):
            texts = [Text() for _ in range(BUTTON_ROWS)]
            for entry in row:
                start = texts[1].cell_len + (1 if texts[1] else 0)
                style = "reverse" if entry.enabled else "dim"
                for middle, text in zip((False, True, False), texts, strict=True):
                    if text:
                        text.append(" ")
                    face = f" {entry.description} " if middle else " " * button_width(entry)
                    text.append(face, style=f"bold {style}" if middle else style)
                self._buttons.append((number, start, texts[1].cell_len, entry.key))
            lines += texts
        self.set_lines(lines)

    def on_click(self, event: events.Click) -> None:
        row = event.y // BUTTON_ROWS
        for number, start, end, key in self._buttons:
            if number == row and start <= event.x < end:
                self.post_message(self.Pressed(key))
                return
