"""A small line-repainting engine: a widget drawn as lines of text, of which only the cells
that changed since the last frame are repainted."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

Cell = tuple[str, Style | None]


def _cells(strip: Strip | None, width: int) -> list[Cell]:
    """A row as its cells (a wide character takes two), blank to `width`."""
    cells: list[Cell] = []
    if strip is not None:
        for segment in strip:
            style = segment.style
            for char in segment.text:
                cells.append((char, style))
                if cell_len(char) == 2:
                    cells.append(("", style))
    del cells[width:]
    cells.extend([(" ", None)] * (width - len(cells)))
    return cells


def changed_to(old: Strip | None, new: Strip | None, width: int) -> int:
    """How far from the left a row must be repainted to turn `old` into `new`: one past the
    last cell that differs, 0 when none does."""
    if old is new:
        return 0
    a, b = _cells(old, width), _cells(new, width)
    for x in range(width - 1, -1, -1):
        if a[x] != b[x]:
            return x + 1
    return 0


class LineWidget(Widget):
    """Rows of text through Textual's line API, repainted only where they change.

    Textual writes a refreshed row from the widget's left edge to the right edge of the
    refreshed region, so `set_lines` refreshes each changed row only as far right as it
    changed, and no row that did not: an opponent's move costs the terminal a few short runs
    of cells instead of whole panels (what an SSH link carries). With `wrap`, a long line
    takes several rows; without, it is cut with an ellipsis. Subclasses whose lines depend
    on the width build them again in `refit`.
    """

    DEFAULT_CSS = """
    LineWidget { height: auto; }
    """

    def __init__(
        self, *, wrap: bool = False, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.wrap = wrap
        self.lines: list[Text] = []
        self.rows: list[Strip] = []
        self._width = 0

    def set_lines(self, lines: Sequence[Text]) -> None:
        self.lines = list(lines)
        width = self.size.width
        if width <= 0 or width != self._width:
            self._rebuild()
            return
        rows = self.render_rows(self.lines, width)
        if len(rows) != len(self.rows) and self._auto_height:
            self.rows = rows
            self._lay_out_again()
            return
        self.paint(rows)

    def render_rows(self, lines: Sequence[Text], width: int) -> list[Strip]:
        """`lines` as rows of `width` cells (at most: the rest is blank)."""
        if width <= 0:
            return []
        console = self.app.console
        options = console.options.update(
            width=width,
            no_wrap=not self.wrap,
            overflow="fold" if self.wrap else "ellipsis",
            height=None,
        )
        rows: list[Strip] = []
        for text in lines:
            rows.extend(Strip(line) for line in console.render_lines(text, options, pad=False))
        return rows

    def paint(self, rows: list[Strip]) -> None:
        """Show `rows`, refreshing only what differs from the rows shown now."""
        width = self._width
        old, self.rows = self.rows, rows
        regions = []
        for y in range(max(len(old), len(rows))):
            end = changed_to(
                old[y] if y < len(old) else None, rows[y] if y < len(rows) else None, width
            )
            if end:
                regions.append(Region(0, y, end, 1))
        if regions:
            self.refresh(*regions)

    @property
    def _auto_height(self) -> bool:
        height = self.styles.height
        return height is not None and height.is_auto

    def rows_for_width(self, width: int) -> list[Strip]:
        return self.render_rows(self.lines, width)

    def _rebuild(self) -> None:
        width = self.size.width
        self._width = width
        self.rows = self.rows_for_width(width) if width > 0 else []
        if self.is_mounted:
            if self._auto_height:
                self._lay_out_again()
            else:
                self.refresh()

    def _lay_out_again(self) -> None:
        """Refresh with a new layout, the height taken from the rows there are now, also where
        one is already asked for. Textual (6.3 to 8.2 at least) keys the box model it caches
        by a count of the layouts asked for, and counts one only where none is pending: rows
        set twice before the first layout, with the parent laid out between (its size
        changed, as when a table's state changes many panels at once), were laid out at the
        first rows' height until something else changed (the pile 4 rows high around 1 row
        of text, the spreads cut short: tests/client/test_client_table.py)."""
        if self._layout_required and hasattr(self, "_layout_updates"):
            self._layout_updates += 1
        self.refresh(layout=True)

    def refit(self) -> None:
        """The size changed: build the rows again (subclasses first rebuild their lines)."""
        self._rebuild()

    def on_resize(self, event: events.Resize) -> None:
        self.refit()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.wrap:
            return len(self.lines)
        return len(self.render_rows(self.lines, width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if y < len(self.rows):
            return self.rows[y].crop_extend(0, width, None).apply_style(style).simplify()
        return Strip.blank(width, style)

    def line_text(self, y: int) -> str:
        """Row `y` as plain text (for tests and for reading the screen)."""
        if not 0 <= y < len(self.rows):
            return ""
        return "".join(segment.text for segment in self.rows[y]).rstrip()

    @property
    def text(self) -> str:
        return "\n".join(self.line_text(y) for y in range(len(self.rows)))
