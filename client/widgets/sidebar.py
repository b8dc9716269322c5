"""The right-hand side of the table: the ledger, and the log and chat."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip

from ..model.state import LogLine, TableState, ledger_rows
from ..text.render import CardStyle, fit_name, signed, sparkline
from .lines import LineWidget


class LedgerPanel(LineWidget):
    """Each player's balance in the table's unit, a sparkline of the balance over the hands
    played (all players on one scale), and last hand's net."""

    #: The table whose ledger this is (set by the screen; redrawn as far as it changed).
    state: var[TableState | None] = var(None, init=False, always_update=True)

    def __init__(self, style: CardStyle, id: str | None = None) -> None:
        super().__init__(id=id)
        self.card_style = style

    def watch_state(self) -> None:
        self._build()

    def _build(self) -> None:
        state, style = self.state, self.card_style
        if state is None:
            return
        rows = ledger_rows(state)
        width = max(20, self.size.width or 28)
        longest = max((len(row[0]) for row in rows), default=6)
        name_width = max(6, min(longest, width - 18))
        spark_width = max(3, width - name_width - 12)
        lines = []
        me = state.players[state.seat].name if state.seat is not None and state.players else None
        shown = [v for row in rows for v in row[2][-spark_width:]]
        scale = (min(shown), max(shown)) if shown else None
        for name, balance, series, last in rows:
            line = Text()
            shown_name = fit_name(name, name_width, style.ascii)
            line.append(f"{shown_name} ", style="bold" if name == me else "")
            line.append(
                f"{signed(balance):>5}",
                style="green" if balance > 0 else "red" if balance < 0 else "",
            )
            line.append(" ")
            spark = sparkline(series, spark_width, style.ascii, scale) if len(series) > 1 else ""
            line.append(f"{spark:<{spark_width}}")
            line.append(f" {signed(last) if state.last_net else '':>4}", style="dim")
            lines.append(line)
        if not lines:
            lines.append(Text("No hands played yet.", style="dim"))
        self.set_lines(lines)

    def refit(self) -> None:
        self._build()
        super().refit()


class LogPanel(LineWidget):
    """What happened at the table, and the table's chat, the newest line at the bottom (as
    every chat and log people know). Until the panel is full the lines fill it from the top;
    after that each new line moves the others up, and only whole lines are shown. A line the
    connection amends (the same number, new text: a turn's draw, then its discard) is drawn
    again in place."""

    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    """

    KEEP = 500

    class Scrolled(Message):
        """How far back the log shows now: `newer` lines below the ones in sight (0: the
        newest is in sight), and whether there are `earlier` ones above."""

        def __init__(self, newer: int, earlier: bool) -> None:
            super().__init__()
            self.newer = newer
            self.earlier = earlier

    #: The table whose log this is: another table's log starts afresh.
    table_id: var[str] = var("", init=False)
    #: The log's lines as the connection keeps them (set by the screen): new ones are added
    #: at the bottom, amended ones drawn again in place.
    log_lines: var[tuple[LogLine, ...]] = var((), init=False)

    def __init__(self, id: str | None = None) -> None:
        super().__init__(wrap=True, id=id)
        self.last_number = -1
        self.entries: list[tuple[int, Text]] = []
        self._cache: dict[int, tuple[int, Text, list[Strip]]] = {}
        #: Lines below the ones shown, while the log is scrolled back (0: the newest shown).
        self.newer = 0
        self._shown = 0  # lines shown now
        self._told: tuple[int, bool] | None = None  # what Scrolled said last

    def watch_table_id(self) -> None:
        self.entries.clear()
        self._cache.clear()
        self.last_number = -1
        self.newer = 0
        self._rebuild()

    def page(self, direction: int) -> None:
        """Scroll a page back (`direction` -1) or forward (1), a page being the lines shown
        less one, so that one line stays in sight: back as far as the oldest line at the top,
        forward as far as the newest at the bottom."""
        step = max(1, self._shown - 1)
        if direction < 0:
            above = len(self.entries) - self.newer - self._shown  # lines out of sight above
            self.newer += min(step, max(0, above))
        else:
            self.newer = max(0, self.newer - step)
        self._rebuild()

    def on_click(self, event: events.Click) -> None:
        """A tap (a click) on the log's top half scrolls it a page back, on its bottom half a
        page forward: a touch screen has no page keys."""
        self.page(-1 if event.y < self.size.height // 2 else 1)

    def watch_log_lines(self, lines: tuple[LogLine, ...]) -> None:
        changed = False
        # An amended line keeps its number: its text is replaced where it is (only the
        # newest few lines are ever amended).
        recent = len(self.entries) - min(8, len(self.entries))
        index = {number: recent + i for i, (number, _) in enumerate(self.entries[recent:])}
        for line in lines:
            if line.number > self.last_number:
                self.entries.append((line.number, line.text))
                self.last_number = line.number
                changed = True
                if self.newer:
                    self.newer += 1  # scrolled back: what is shown stays where it is
            elif line.number in index:
                at = index[line.number]
                if self.entries[at][1] is not line.text:
                    self.entries[at] = (line.number, line.text)
                    changed = True
        if not changed:
            return
        del self.entries[: max(0, len(self.entries) - self.KEEP)]
        self.newer = min(self.newer, max(0, len(self.entries) - 1))
        width, height = self.size
        if width <= 0 or height <= 0 or width != self._width:
            self._rebuild()
            return
        self.paint(self.rows_for_width(width))

    def _entry_rows(self, number: int, text: Text, width: int) -> list[Strip]:
        cached = self._cache.get(number)
        if cached is not None and cached[0] == width and cached[1] is text:
            return cached[2]
        rows = self.render_rows([text], width)
        self._cache[number] = (width, text, rows)
        return rows

    def rows_for_width(self, width: int) -> list[Strip]:
        """The newest whole lines that fit (above the `newer` ones, while scrolled back),
        the newest at the bottom."""
        height = self.size.height
        rows: list[Strip] = []
        used: set[int] = set()
        shown = self.entries[: len(self.entries) - self.newer]
        self._shown = 0
        for number, text in reversed(shown):
            if height <= 0 or len(rows) >= height:
                break
            entry = self._entry_rows(number, text, width)
            used.add(number)
            if len(rows) + len(entry) > height:
                if not rows:  # one line taller than the panel: its end
                    rows = entry[-height:]
                break  # only whole lines
            rows[:0] = entry
            self._shown += 1
        self._cache = {k: v for k, v in self._cache.items() if k in used}
        told = (self.newer, len(shown) > self._shown)
        if told != self._told:
            self._told = told
            self.post_message(self.Scrolled(*told))
        return rows
