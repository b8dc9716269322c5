"""The key bar at the foot of the table: every key, greyed out when it is not open now."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.geometry import Size
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
    """The table's keys, those not open now greyed out: on one line, or on two when one
    line is too narrow for them all (at 80 columns, with a key such as f shown), so that no
    key leaves the bar. Unlike Textual's footer (a widget per key, all repainted when any
    changes) it is rows of text, repainted as far as they changed. A click on a key presses
    it."""

    #: The most rows the bar takes; keys that fit in none are left out, the least kept first.
    MAX_ROWS = 2
    #: The terminal's rows a row of keys takes.
    ROW_HEIGHT = 1

    class Pressed(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    #: The keys to show, in order (set by the screen; drawn as far as they changed).
    entries: var[tuple[KeyEntry, ...]] = var((), init=False)

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, int, str]] = []  # (row, start, end, key)

    def watch_entries(self) -> None:
        self._build()

    def _fitted(self, width: int) -> list[list[KeyEntry]]:
        """The rows of keys at `width`, the least kept left out where they are too many."""
        entries = list(self.entries)
        rows = self._laid(entries, width)
        while entries and len(rows) > self._rows_allowed():
            entries.remove(min(entries, key=lambda e: e.keep))
            rows = self._laid(entries, width)
        return rows

    def _laid(self, entries: list[KeyEntry], width: int) -> list[list[KeyEntry]]:
        """`entries` in rows of `width` (a touch bar lays its buttons otherwise)."""
        return key_rows(entries, width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The rows the keys take at the layout's `width`, which the bar may not be built at
        yet (a screen's first layout comes before the bar's Resize): a layout asked for
        again once it is built may wait, as a screen just made current waits for its next
        idle moment, and the bar would show one row of two keys' rows till then (the lobby
        at 40 columns)."""
        return self.rows_at(width) if width > 0 else len(self.lines)

    def rows_at(self, width: int) -> int:
        """The rows the bar takes at `width`."""
        return self.ROW_HEIGHT * max(1, len(self._fitted(width)))

    def _build(self) -> None:
        width = self.size.width or 80
        rows = self._fitted(width)
        lines = []
        self._spans = []
        for y, row in enumerate(rows):
            line = Text()
            for entry in row:
                start = line.cell_len
                if entry.enabled:
                    line.append(entry.shown, style="bold")
                    line.append(f" {entry.description} ")
                else:
                    line.append(f"{entry.shown} {entry.description} ", style="dim")
                self._spans.append((y, start, line.cell_len, entry.key))
            line.rstrip()  # (a row's last space may be past the edge: see key_rows)
            lines.append(line)
        self.set_lines(lines or [Text()])

    def _rows_allowed(self) -> int:
        """The rows the bar may take: its height if that is fixed, else MAX_ROWS (or its
        max-height, if lower)."""
        height, most = self.styles.height, self.styles.max_height
        if height is not None and not height.is_auto and height.is_cells:
            return max(1, int(height.value))
        if most is not None and most.is_cells:
            return max(1, min(self.MAX_ROWS, int(most.value)))
        return self.MAX_ROWS

    def refit(self) -> None:
        self._build()
        super().refit()

    def on_click(self, event: events.Click) -> None:
        for y, start, end, key in self._spans:
            if y == event.y and start <= event.x < end:
                self.post_message(self.Pressed(key))
                return


def entry_width(entry: KeyEntry) -> int:
    """The cells a key takes on the bar: `d Draw ` (its trailing space the gap to the next)."""
    return len(entry.shown) + len(entry.description) + 2


def key_rows(entries: list[KeyEntry], width: int) -> list[list[KeyEntry]]:
    """The keys in order, on as few rows of `width` as hold them: a key goes to the next row
    when it would not fit whole (its trailing space may fall off the edge)."""
    rows: list[list[KeyEntry]] = [[]]
    used = 0
    for entry in entries:
        needed = entry_width(entry)
        if rows[-1] and used + needed - 1 > width:
            rows.append([])
            used = 0
        rows[-1].append(entry)
        used += needed
    return rows if rows[-1] else []
