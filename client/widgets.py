"""The table's widgets. Each renders values its screen sets on it (attributes down); none of them
decides anything about the game."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static
from tonk.shared.cards import Card, count
from tonk.shared.view import Phase, SeatView

from .render import CardStyle, amount_text, card_text, hand_lines, signed, sparkline, spread_line
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


class StatusBar(Static):
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
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(Text(message, style="bold"), Text(" · ".join(parts)))
        self.message = message
        key = (message, tuple(parts))
        if getattr(self, "_shown_key", None) != key:
            self._shown_key = key
            self.update(grid)


def turn_message(state: TableState, now: float | None = None) -> str:
    """What the status line says about the turn: yours (and what you may do) or someone's."""
    view = state.view
    if state.session_over:
        return "The session is over."
    if state.paused:
        return f"Play is paused: {state.paused}"
    if view is None:
        return "Waiting for the first deal." if not state.playing else "Dealing..."
    if view.phase is Phase.ENDED:
        return "The hand is over; the next is dealt soon."
    timer = ""
    if state.turn_deadline is not None:
        left = max(0, round(state.turn_deadline - (now if now is not None else time.monotonic())))
        timer = f" ({left}s)"
    if view.my_turn:
        if view.phase is Phase.START:
            return f"Your turn{timer}: d draw · p pick up · k drop"
        return f"Your turn{timer}: s spread · h hit · x discard"
    if state.seat is not None and view.turn < len(state.players):
        return f"{state.players[view.turn].name} to play{timer}."
    name = state.names()[view.turn] if view.turn < len(state.players) else "?"
    return f"{name} to play{timer}."


class PlayersPanel(Vertical):
    """Every seat, one line each: whose turn, the dealer, cards held, and marks for
    disconnected, away and hit-locked players. A line is repainted only when it changes."""

    DEFAULT_CSS = """
    PlayersPanel { height: auto; }
    PlayersPanel > Static { height: 1; }
    """

    def show(self, state: TableState, ascii_only: bool = False) -> None:
        lines = player_lines(state, ascii_only) or [Text("Nobody is seated yet.")]
        children = list(self.query_children(Static))
        if len(children) != len(lines):
            self.remove_children()
            self.mount_all(Static(line) for line in lines)
            return
        for child, line in zip(children, lines, strict=True):
            _update_if_changed(child, line, layout=False)


def player_lines(state: TableState, ascii_only: bool = False) -> list[Text]:
    view = state.view
    lines: list[Text] = []
    names = state.names()
    for player in state.players:
        seat = player.seat
        line = Text()
        to_play = view is not None and view.phase is not Phase.ENDED and view.turn == seat
        line.append(("> " if ascii_only else "▶ ") if to_play else "  ")
        line.append(f"{names[seat]:<10.10}", style="bold" if to_play else "")
        if view is not None and seat < view.players:
            line.append(" D" if view.dealer == seat else "  ", style="bold")
            cards = view.card_counts[seat]
            line.append(f" {cards} card{'s' if cards != 1 else ''}")
            if view.hit_locks[seat]:
                line.append(" hit-locked", style="italic")
        if player.bot:
            line.append(" bot", style="dim")
        if not player.connected:
            line.append(" disconnected", style="bold red")
        elif player.away:
            line.append(" away", style="italic")
        lines.append(line)
    return lines


class CentrePanel(Vertical):
    """The middle of the table: the stock and the top discard on one line, the spreads by
    owner below; each part repainted only when it changes."""

    DEFAULT_CSS = """
    CentrePanel > #pile { height: 1; }
    CentrePanel > #spreads { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="pile")
        yield Static("", id="spreads")

    def show(self, state: TableState, style: CardStyle) -> None:
        pile = self.query_one("#pile", Static)
        spreads = self.query_one("#spreads", Static)
        view = state.view
        if view is None:
            _update_if_changed(pile, Text("No hand dealt yet."), layout=False)
            _update_if_changed(spreads, Text(""), layout=False)
            return
        line = Text(f"Stock: {view.stock_size}   Discard: ")
        if view.discard_top is None:
            line.append("none")
        else:
            line.append_text(card_text(view.discard_top, style, "bold"))
            line.append(f"  ({view.discard_size} in the pile)", style="dim")
        _update_if_changed(pile, line, layout=False)
        names = state.names()
        lines: list[RenderableType] = [
            spread_line(number, spread, names, style)
            for number, spread in enumerate(view.spreads, start=1)
        ] or [Text("No spreads on the table.", style="dim")]
        _update_if_changed(spreads, Group(*lines), layout=False)


class HandView(Widget):
    """Your hand as cards, with a cursor (reverse video, `^N^` under it) and a selection
    (raised cards). The screen moves the cursor and the selection; this only draws them."""

    DEFAULT_CSS = """
    HandView { height: 5; width: 1fr; }
    """

    cards: reactive[tuple[Card, ...]] = reactive(())
    cursor: reactive[int] = reactive(0)
    selected: reactive[frozenset[Card]] = reactive(frozenset())
    note: reactive[str] = reactive("")

    def __init__(self, style: CardStyle, id: str | None = None) -> None:
        super().__init__(id=id)
        self.style_ = style

    def validate_cursor(self, cursor: int) -> int:
        return max(0, min(cursor, len(self.cards) - 1)) if self.cards else 0

    def watch_cards(self, cards: tuple[Card, ...]) -> None:
        self.selected = frozenset(card for card in self.selected if card in cards)
        self.cursor = self.cursor

    @property
    def card_under_cursor(self) -> Card | None:
        return self.cards[self.cursor] if self.cards else None

    def selected_cards(self) -> tuple[Card, ...]:
        """The selection in hand order."""
        return tuple(card for card in self.cards if card in self.selected)

    def render(self) -> RenderableType:
        if not self.cards:
            return Text(self.note or "No cards.", style="dim")
        index = {card: i for i, card in enumerate(self.cards)}
        selected = frozenset(index[card] for card in self.selected if card in index)
        gap = 2 if self.size.width >= len(self.cards) * 7 + 2 else 1
        return Group(*hand_lines(self.cards, self.style_, self.cursor, selected, gap))


class LedgerPanel(Static):
    """Each player's balance in the table's unit, last hand's net, and a sparkline of the
    balance over the hands played."""

    def show(self, state: TableState, style: CardStyle) -> None:
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
        _update_if_changed(self, Group(*lines))


class LogPanel(Widget):
    """What happened at the table, and the table's chat, newest at the bottom.

    Drawn line by line (Textual's line API) so a new line repaints only its own rows; when
    the panel is full it jumps, keeping the newest lines, rather than shifting every row for
    every line: an opponent's move costs the terminal a row or two, not the whole panel.
    After a jump the newest third stays, so jumps come every two thirds of a panel.
    """

    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.last_number = -1
        self.entries: list[Text] = []
        self.rows: list[Strip] = []
        self._width = 0

    def clear(self) -> None:
        self.entries.clear()
        self.rows.clear()
        self.last_number = -1
        self.refresh()

    def show(self, lines: Sequence[LogLine]) -> None:
        new = [line.text for line in lines if line.number > self.last_number]
        if not new:
            return
        self.last_number = lines[-1].number
        self.entries.extend(new)
        del self.entries[: max(0, len(self.entries) - 500)]
        width, height = self.size
        if not width or not height or width != self._width:
            self._rebuild()
            return
        added = [row for text in new for row in self._wrap(text)]
        start = len(self.rows)
        rows = self.rows + added
        if len(rows) > height:
            keep = max(height // 3, min(len(added), height))
            self.rows = rows[-keep:]
            self.refresh(Region(0, 0, width, height))
            return
        self.rows = rows
        self.refresh(Region(0, start, width, len(added)))

    def _wrap(self, text: Text) -> list[Strip]:
        console = self.app.console
        options = console.options.update_width(self._width)
        return [Strip(line) for line in console.render_lines(text, options, pad=False)]

    def _rebuild(self) -> None:
        width, height = self.size
        self._width = width
        self.rows = []
        if not width or not height:
            return
        for text in reversed(self.entries):
            self.rows[:0] = self._wrap(text)
            if len(self.rows) >= height:
                break
        self.rows = self.rows[-height:]
        self.refresh()

    def on_resize(self) -> None:
        self._rebuild()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if y < len(self.rows):
            return self.rows[y].crop_extend(0, width, style).apply_style(style)
        return Strip.blank(width, style)


def hand_title(view: SeatView | None) -> str:
    """The hand panel's border title: your count (only a display; the core counts)."""
    if view is None or view.seat is None:
        return "Your hand"
    return f"Your hand · count {count(view.hand)}"


def _update_if_changed(widget: Static, content: RenderableType, layout: bool = True) -> None:
    """Update a Static only when what it shows has changed: a repaint costs terminal bytes."""
    key = _fingerprint(content)
    if getattr(widget, "_shown_key", None) == key:
        return
    widget._shown_key = key  # type: ignore[attr-defined]
    widget.update(content, layout=layout)


def _fingerprint(content: RenderableType) -> object:
    if isinstance(content, Text):
        return (content.plain, tuple((s.start, s.end, str(s.style)) for s in content.spans))
    if isinstance(content, Group):
        return tuple(_fingerprint(r) for r in content.renderables)
    return repr(content)
