"""The table's area, and on a large terminal the seats around it: each other player where they
sit (at your left, across, at your right) with their name, their cards face down, their marks
and last move; your own line at the bottom, above your hand."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.strip import Strip
from tonk.shared.game.words import plural

from ..model.state import TableState
from ..text.render import CardStyle
from ..touch import by_touch
from .lines import LineWidget
from .table import CentrePanel, seat_marks, waiting_lines

#: Where the others sit, by how many there are, in the order of play from your left: the
#: player after you at your left, the one before you at your right.
PLACES: dict[int, tuple[str, ...]] = {
    1: ("across-1",),
    2: ("left", "right"),
    3: ("left", "across-1", "right"),
    4: ("left", "across-1", "across-2", "right"),
}
#: The places across the table from you.
ACROSS = ("across-1", "across-2")


def places(seats: Sequence[int], bottom: int | None) -> tuple[int | None, dict[str, int]]:
    """The seat drawn at the bottom (yours; a spectator sees the table from the first seat's
    side) and which seat is drawn in which other place, in the order of play from there."""
    ordered = sorted(seats)
    if not ordered:
        return None, {}
    start = bottom if bottom in ordered else ordered[0]
    after = [s for s in ordered if s > start] + [s for s in ordered if s < start]
    return start, dict(zip(PLACES.get(len(after), ()), after, strict=False))


def card_backs(cards: int, ascii_only: bool = False) -> Text:
    """`cards` face down (`▒ ▒ ▒`): what another player holds, to be seen at a glance (six,
    the most a player holds, and their count fit a place at the side: 22 cells, leaving the
    table's centre room for its lines at 140 columns)."""
    return Text(" ".join(["#" if ascii_only else "▒"] * cards), style="blue")


def seat_block(
    state: TableState, seat: int, ascii_only: bool = False, touch: bool = False
) -> list[Text]:
    """One seat in its place: the turn's mark, the name and the dealer; the cards held, face
    down, and how many; its marks (hit-locked, a bot, away, lost the link and how long until
    it is played for); and its last move of the hand."""
    player = state.player(seat)
    if player is None:
        return []
    view = state.view
    to_play, marks = seat_marks(state, player, listed=False, touch=touch)
    head = Text(("> " if ascii_only else "▶ ") if to_play else "  ")
    head.append(state.names(me_as_you=False)[seat], style="bold" if to_play else "")
    if view is not None and view.dealer == seat:
        head.append(" D")
    head.append_text(marks)
    lines = [head]
    if view is not None and seat < view.players and seat != state.seat:
        cards = view.card_counts[seat]
        held = card_backs(cards, ascii_only)
        held.append(f"{'  ' if cards else ''}{plural(cards, 'card')}")
        lines.append(Text("  ").append_text(held))
    if not player.connected and player.played_for_at is not None:
        lines.extend(waiting_lines(state, player))
    move = state.last_moves.get(seat)
    if move is not None:
        lines.append(Text("  ").append_text(move))
    return lines


class SeatBlock(LineWidget):
    """One place at the table (at the left, across, at the right, or the bottom): the seat
    drawn there, if any; across, in the middle of its place."""

    def __init__(self, place: str, ascii_only: bool = False) -> None:
        super().__init__(wrap=True, id=f"seat-{place}", classes="seat")
        self.place = place
        self.ascii_only = ascii_only
        self.centred = place in ACROSS

    def show(self, state: TableState, seat: int | None) -> None:
        touch = by_touch(self.app)
        self.set_lines([] if seat is None else seat_block(state, seat, self.ascii_only, touch))

    def render_rows(self, lines: Sequence[Text], width: int) -> list[Strip]:
        rows = super().render_rows(lines, width)
        if not self.centred or not rows:
            return rows
        indent = max(0, (width - max(row.cell_length for row in rows)) // 2)
        return [Strip([Segment(" " * indent), *row], indent + row.cell_length) for row in rows]


class TableArea(Vertical):
    """The table: the stock, the discard and the spreads (`CentrePanel`); on a large terminal
    (`around`) with the players around them, yourself at the bottom."""

    DEFAULT_CSS = """
    TableArea > #across { height: auto; margin-bottom: 1; }
    TableArea > #across > .seat { width: 1fr; }
    TableArea > #middle { height: 1fr; }
    TableArea > #middle > .seat { width: 22; }
    TableArea > #middle > #seat-right { margin-left: 1; }
    TableArea > #middle > #seat-left { margin-right: 1; }
    TableArea > #middle > CentrePanel { width: 1fr; }
    """

    #: The table (set by the screen; each row redrawn as far as it changed).
    state: var[TableState | None] = var(None, init=False, always_update=True)
    #: The players drawn around the table (a large terminal: the screen sets it).
    around: var[bool] = var(False, init=False)

    def __init__(self, style: CardStyle, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.card_style = style

    def compose(self) -> ComposeResult:
        ascii_only = self.card_style.ascii
        # (Each place is shown only where a seat is drawn in it: none but the centre at first.)
        with Horizontal(id="across") as across:
            across.display = False
            yield SeatBlock("across-1", ascii_only)
            yield SeatBlock("across-2", ascii_only)
        with Horizontal(id="middle"):
            yield SeatBlock("left", ascii_only)
            yield CentrePanel(self.card_style, id="centre")
            yield SeatBlock("right", ascii_only)
        yield SeatBlock("bottom", ascii_only)

    def on_mount(self) -> None:
        for block in self.query(SeatBlock):
            block.display = False

    def watch_around(self) -> None:
        if self.state is not None:
            self.watch_state(self.state)

    def watch_state(self, state: TableState | None) -> None:
        if state is None:
            return
        self.query_one(CentrePanel).state = state
        bottom, placed = places([p.seat for p in state.players], state.seat)
        if bottom is not None:
            placed["bottom"] = bottom
        around = self.around
        for block in self.query(SeatBlock):
            seat = placed.get(block.place) if around else None
            block.display = seat is not None
            if seat is not None or block.lines:  # (a place left empty is not drawn again)
                block.show(state, seat)
        self.query_one("#across").display = around and any(p in placed for p in ACROSS)
