"""The table's widgets. Each renders values its screen sets on it (attributes down); none of them
decides anything about the game."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static
from tonk.shared.cards import Card, count
from tonk.shared.session import plays_next
from tonk.shared.view import LegalActions, Phase, SeatView
from tonk.shared.words import plural

from .render import (
    HAND_ORDERS,
    CardStyle,
    amount_text,
    card_text,
    hand_lines,
    signed,
    sparkline,
    spread_line,
)
from .state import LogLine, TableState, ledger_rows


class TooSmall(Static):
    """Covers a screen when the terminal is smaller than the table needs."""

    MIN_WIDTH = 80
    MIN_HEIGHT = 24

    def __init__(self) -> None:
        super().__init__("", id="too-small")

    def on_resize(self) -> None:
        self.update_text()

    def on_mount(self) -> None:
        self.update_text()

    def update_text(self) -> None:
        width, height = self.app.size
        self.update(
            f"Terminal too small: {width}x{height}.\n\n"
            f"tonk needs at least {self.MIN_WIDTH}x{self.MIN_HEIGHT}.\n"
            "Make the window larger, or press q to leave."
        )


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
            self.refresh(layout=True)
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
            self.refresh(layout=self._auto_height)

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


class StatusBar(LineWidget):
    """The top line: whose turn it is (and what you may do) on the left; the table, its
    rules, stake and hand number on the right."""

    message = ""

    def show(self, state: TableState, message: str = "") -> None:
        parts = [state.name, state.rules.name, amount_text(state.stake, state.unit)]
        if state.hand_number:
            parts.append(f"hand {state.hand_number}")
        view = state.view
        if view is not None and view.multiplier > 1:
            parts.append(f"x{view.multiplier} stakes")
        self.message = message
        self._parts = tuple(parts)
        self._build()

    _parts: tuple[str, ...] = ()

    def _build(self) -> None:
        width = self.size.width
        left = Text(self.message, style="bold")
        if width <= 0:
            self.set_lines([left])
            return
        # The turn matters more than the table: the table's name, rules and stake give way
        # first when the message needs the room.
        parts = list(self._parts)
        right = Text(" · ".join(parts))
        while parts and left.cell_len + 2 + right.cell_len > width:
            parts.pop(0)
            right = Text(" · ".join(parts))
        room = width - (right.cell_len + 2 if parts else 0)
        left.truncate(room, overflow="ellipsis", pad=True)
        self.set_lines([left + Text("  ") + right if parts else left])

    def refit(self) -> None:
        self._build()
        super().refit()


@dataclass(frozen=True, slots=True)
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

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: tuple[KeyEntry, ...] = ()
        self._spans: list[tuple[int, int, str]] = []

    def show(self, entries: Sequence[KeyEntry]) -> None:
        self.entries = tuple(entries)
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


def turn_message(
    state: TableState,
    now: float | None = None,
    legal: LegalActions | None = None,
    cursor: Card | None = None,
    ascii_only: bool = False,
) -> str:
    """What the status line says about the turn: yours, and the keys for what you may do
    now (`legal`, from the core; `cursor` the card a discard would throw), or someone's."""
    view = state.view
    if state.session_over:
        return "The session is over."
    if state.paused:
        return f"Play is paused: {state.paused}"
    if view is None:
        return waiting_message(state) if not state.playing else "Dealing..."
    if view.phase is Phase.ENDED:
        return "The hand is over; the next is dealt soon."
    timer = ""
    if state.turn_deadline is not None:
        left = max(0, round(state.turn_deadline - (now if now is not None else time.monotonic())))
        timer = f" ({left}s)"
    me = state.player(state.seat) if state.seat is not None else None
    away = me is not None and me.away
    if view.my_turn:
        legal = view.legal() if legal is None else legal
        if view.phase is Phase.START:
            keys = ["d draw"] if legal.draw_stock else []
            if legal.take_discard and view.discard_top is not None:
                keys.append(f"p pick up {view.discard_top.pretty(ascii_only)}")
            if legal.drop:
                keys.append(f"k drop at {count(view.hand)}")
        else:
            keys = [f"x discard {cursor.pretty(ascii_only)}" if cursor is not None else "x discard"]
            if legal.spreads:
                keys.append("s spread")
            if legal.hits:
                keys.append("h hit")
        return f"Your turn{timer}: " + " · ".join(keys)
    name = state.names()[view.turn] if view.turn < len(state.players) else "?"
    line = f"{name} to play{timer}."
    if away:
        return f"You are away (b: back). {line}"
    if state.seat is not None and plays_next(view) == state.seat:
        line += " You are next."
    return line


def waiting_message(state: TableState) -> str:
    """A table waiting for its players: how many seats are open, and how it starts."""
    seated = len(state.players)
    free = max(0, state.seats - seated)
    line = f"Waiting for players: {free} of {plural(state.seats, 'seat')} open."
    if state.seat is None:
        return line
    if state.creator:
        if seated >= 2:
            return f"{line} g: start now with {seated} players."
        return f"{line} g starts once another player sits."
    return f"{line} The table's creator may start it sooner."


class PlayersPanel(LineWidget):
    """Every seat, one line each: whose turn, the dealer, cards held, and marks for
    disconnected, away and hit-locked players."""

    def show(self, state: TableState, ascii_only: bool = False) -> None:
        self.set_lines(player_lines(state, ascii_only) or [Text("Nobody is seated yet.")])


def player_lines(state: TableState, ascii_only: bool = False) -> list[Text]:
    view = state.view
    lines: list[Text] = []
    # Your own name, as in the ledger and the chat, marked as you.
    names = state.names(me_as_you=False)
    for player in state.players:
        seat = player.seat
        line = Text()
        to_play = view is not None and view.phase is not Phase.ENDED and view.turn == seat
        line.append(("> " if ascii_only else "▶ ") if to_play else "  ")
        line.append(f"{names[seat]:<10.10}", style="bold" if to_play else "")
        if view is not None and seat < view.players:
            line.append(" D" if view.dealer == seat else "  ")
            cards = view.card_counts[seat]
            line.append(f" {cards} card{'s' if cards != 1 else ''}")
            if view.hit_locks[seat]:
                line.append(" hit-locked", style="italic")
        if seat == state.seat:
            line.append(" (you)", style="dim")
        if player.bot:
            line.append(" bot", style="dim")
        if not player.connected:
            line.append(" disconnected", style="bold red")
        elif player.away:
            line.append(" away", style="bold")
            if seat == state.seat:
                line.append(" (b: back)", style="dim")
        lines.append(line)
    return lines


class CentrePanel(Vertical):
    """The middle of the table: the stock and the top discard on one line, the spreads by
    owner below, each row repainted only where it changes."""

    DEFAULT_CSS = """
    CentrePanel > #pile { height: 1; }
    CentrePanel > #spreads { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield LineWidget(id="pile")
        yield LineWidget(wrap=True, id="spreads")

    def show(self, state: TableState, style: CardStyle) -> None:
        pile = self.query_one("#pile", LineWidget)
        spreads = self.query_one("#spreads", LineWidget)
        view = state.view
        if view is None:
            pile.set_lines([Text("No hand dealt yet.")])
            spreads.set_lines([])
            return
        line = Text(f"Stock: {view.stock_size}   Discard: ")
        if view.discard_top is None:
            line.append("none")
        else:
            line.append_text(card_text(view.discard_top, style, "bold"))
            line.append(f"  ({view.discard_size} in the pile)", style="dim")
        pile.set_lines([line])
        names = state.names()
        spreads.set_lines(
            [
                spread_line(number, spread, names, style)
                for number, spread in enumerate(view.spreads, start=1)
            ]
            or [Text("No spreads on the table.", style="dim")]
        )


class HandView(Widget):
    """Your hand as cards, with a cursor (reverse video, `^N^` under it), a selection (raised
    cards) and a mark on the card just drawn or picked up. The screen sets the cards (in the
    order shown), moves the cursor and the selection; this only draws them. The cursor stays
    on its card when the hand changes."""

    DEFAULT_CSS = """
    HandView { height: 5; width: 1fr; }
    """

    cards: reactive[tuple[Card, ...]] = reactive(())
    cursor: reactive[int] = reactive(0)
    selected: reactive[frozenset[Card]] = reactive(frozenset())
    note: reactive[str] = reactive("")
    fresh: reactive[Card | None] = reactive(None)

    def __init__(self, style: CardStyle, id: str | None = None) -> None:
        super().__init__(id=id)
        self.style_ = style
        self.order = HAND_ORDERS[0][0]

    def validate_cursor(self, cursor: int) -> int:
        return max(0, min(cursor, len(self.cards) - 1)) if self.cards else 0

    def watch_cards(self, old: tuple[Card, ...], cards: tuple[Card, ...]) -> None:
        self.selected = frozenset(card for card in self.selected if card in cards)
        if set(old) != set(cards):
            added = [card for card in cards if card not in old]
            # One card more than before: the card drawn or picked up.
            self.fresh = added[0] if old and len(added) == 1 and len(cards) > len(old) else None
        under = old[self.cursor] if 0 <= self.cursor < len(old) else None
        self.cursor = cards.index(under) if under in cards else self.cursor

    @property
    def card_under_cursor(self) -> Card | None:
        return self.cards[self.cursor] if self.cards else None

    def selected_cards(self) -> tuple[Card, ...]:
        """The selection in the order shown."""
        return tuple(card for card in self.cards if card in self.selected)

    def render(self) -> RenderableType:
        if not self.cards:
            return Text(self.note or "No cards.", style="dim")
        index = {card: i for i, card in enumerate(self.cards)}
        selected = frozenset(index[card] for card in self.selected if card in index)
        gap = 2 if self.size.width >= len(self.cards) * 7 + 2 else 1
        fresh = index.get(self.fresh) if self.fresh is not None else None
        return Group(*hand_lines(self.cards, self.style_, self.cursor, selected, gap, fresh))


class LedgerPanel(LineWidget):
    """Each player's balance in the table's unit, a sparkline of the balance over the hands
    played (all players on one scale), and last hand's net."""

    _state: TableState | None = None
    _style: CardStyle | None = None

    def show(self, state: TableState, style: CardStyle) -> None:
        self._state, self._style = state, style
        self._build()

    def _build(self) -> None:
        state, style = self._state, self._style
        if state is None or style is None:
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
            line.append(f"{name:<{name_width}.{name_width}} ", style="bold" if name == me else "")
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

    def __init__(self, id: str | None = None) -> None:
        super().__init__(wrap=True, id=id)
        self.last_number = -1
        self.entries: list[tuple[int, Text]] = []
        self._cache: dict[int, tuple[int, Text, list[Strip]]] = {}

    def clear(self) -> None:
        self.entries.clear()
        self._cache.clear()
        self.last_number = -1
        self._rebuild()

    def show(self, lines: Sequence[LogLine]) -> None:
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
            elif line.number in index:
                at = index[line.number]
                if self.entries[at][1] is not line.text:
                    self.entries[at] = (line.number, line.text)
                    changed = True
        if not changed:
            return
        del self.entries[: max(0, len(self.entries) - self.KEEP)]
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
        """The newest whole lines that fit, the newest at the bottom."""
        height = self.size.height
        rows: list[Strip] = []
        used: set[int] = set()
        for number, text in reversed(self.entries):
            if height <= 0 or len(rows) >= height:
                break
            entry = self._entry_rows(number, text, width)
            used.add(number)
            if len(rows) + len(entry) > height:
                if not rows:  # one line taller than the panel: its end
                    rows = entry[-height:]
                break  # only whole lines
            rows[:0] = entry
        self._cache = {k: v for k, v in self._cache.items() if k in used}
        return rows


def hand_title(view: SeatView | None, order: str = "") -> str:
    """The hand panel's border title: your count (only a display; the core counts) and how
    the cards are ordered."""
    if view is None or view.seat is None:
        return "Your hand"
    shown = dict(HAND_ORDERS).get(order, "")
    return f"Your hand · count {count(view.hand)}" + (f" · {shown} (o)" if shown else "")
