"""The status line at the top of the table: the table, the hand, and what the turn asks."""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.reactive import var
from tonk.shared.game.cards import Card, count
from tonk.shared.game.view import LegalActions, Phase, SeatView
from tonk.shared.game.words import amount_text, plural
from tonk.shared.records import record

from ..model.state import TableState
from ..text.render import DOT, broken_at_dots
from .lines import LineWidget


@record
class Status:
    """What the status line shows: the table, and what the turn asks of you (in words the
    screen chose: the turn, the link, the card under the cursor)."""

    state: TableState
    message: str = ""


#: The order in which the right part's pieces (the table's name, rules, stake, hand number
#: and the stakes' multiple) give way to the message: the rules and stake first, the name kept
#: longer (a waiting table is known by it).
_GIVING_WAY = (1, 2, 0, 3, 4)


class StatusBar(LineWidget):
    """The top line: whose turn it is (and what you may do) on the left; the table, its
    rules, stake and hand number on the right."""

    #: What to show (set by the screen; redrawn as far as it changed).
    status: var[Status | None] = var(None, init=False, always_update=True)

    @property
    def message(self) -> str:
        """The line's left part: what the turn asks."""
        return self.status.message if self.status is not None else ""

    def watch_status(self, status: Status | None) -> None:
        if status is None:
            return
        state = status.state
        parts = [state.name, state.rules.name, amount_text(state.stake, state.unit)]
        if state.hand_number:
            parts.append(hand_words(state.hand_number, state.hands))
        view = state.view
        if view is not None and view.multiplier > 1:
            parts.append(f"x{view.multiplier} stakes")
        self._parts = tuple(parts)
        self._build()

    _parts: tuple[str, ...] = ()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        # Notices come under the top line however many rows it takes (upright, two or three):
        # a notice's own top margin is one row, the rack's the rest.
        for rack in self.screen.query_children("ToastRack"):
            rack.styles.margin = (max(0, event.size.height - 1), 0, 0, 0)

    def _build(self) -> None:
        width = self.size.width
        left = Text(self.message, style="bold")
        if width <= 0:
            self.set_lines([left])
            return
        # The turn matters more than the table: the rules and the stake give way first when
        # the message needs the room, then the table's name, the hand and the stakes' multiple.
        parts = list(self._parts)
        right = Text(DOT.join(parts))
        for drop in (index for index in _GIVING_WAY if index < len(parts)):
            if left.cell_len + 2 + right.cell_len <= width:
                break
            parts[drop] = ""
            right = Text(DOT.join(part for part in parts if part))
        parts = [part for part in parts if part]
        if self.wrap and (not parts or left.cell_len + 2 + right.cell_len > width):
            # (A narrow screen: the message whole, on as many rows as it takes, and the
            # table's name, rules, stake and hand under it; each broken between its parts.)
            table = Text(DOT.join(self._parts), style="dim")
            self.set_lines([*broken_at_dots(left, width), *broken_at_dots(table, width)])
            return
        room = width - (right.cell_len + 2 if parts else 0)
        left.truncate(room, overflow="ellipsis", pad=True)
        self.set_lines([left + Text("  ") + right if parts else left])

    def refit(self) -> None:
        self._build()
        super().refit()


def hand_words(number: int, hands: int | None) -> str:
    """The hand in play, and where it stands in a session of `hands` (None: no end set)."""
    if hands is None:
        return f"hand {number}"
    if number >= hands:
        return f"last hand ({number} of {hands})"
    return f"hand {number} of {hands}"


#: What the status line says while our seat is played for us.
AWAY = "You are away, played for. Press any key to come back."
#: The same on a touch screen (the key bar's Back button).
AWAY_TOUCH = "You are away, played for. Tap Back to come back."


def turn_message(
    state: TableState,
    now: float | None = None,
    legal: LegalActions | None = None,
    cursor: Card | None = None,
    ascii_only: bool = False,
    touch: bool = False,
) -> str:
    """What the status line says about the turn: yours, and the keys for what you may do
    now (`legal`, from the core; `cursor` the card a discard would throw), or someone's
    (`touch`: the buttons to tap, not the keys)."""
    view = state.view
    if state.session_over:
        return "The session is over."
    if state.paused:
        return f"Play is paused: {state.paused}"
    me = state.player(state.seat) if state.seat is not None else None
    if me is not None and me.away:
        return AWAY_TOUCH if touch else AWAY
    if view is None:
        return waiting_message(state, touch) if not state.playing else "Dealing..."
    if view.phase is Phase.ENDED:
        return "The hand is over; the next is dealt soon."
    timer = ""
    if state.turn_deadline is not None:
        left = max(0, round(state.turn_deadline - (now if now is not None else time.monotonic())))
        timer = f" ({left}s)"
    if view.my_turn:
        moves = moves_now(view, legal, cursor, ascii_only)
        if touch:
            return f"Your turn{timer}: tap " + DOT.join(button for _, button in moves)
        return f"Your turn{timer}: " + DOT.join(key for key, _ in moves)
    name = state.names()[view.turn] if view.turn < len(state.players) else "?"
    line = f"{name} to play{timer}."
    if state.seat is not None and view.plays_next == state.seat:
        line += " You are next."
    return line


def moves_now(
    view: SeatView, legal: LegalActions | None, cursor: Card | None, ascii_only: bool
) -> list[tuple[str, str]]:
    """What you may do now, each as the top line says it in a terminal (its key) and on a
    touch screen (the key bar's button to tap)."""
    legal = view.legal() if legal is None else legal
    if view.phase is Phase.START:
        moves = [("d draw", "Draw")] if legal.draw_stock else []
        if legal.take_discard and view.discard_top is not None:
            top = view.discard_top.pretty(ascii_only)
            moves.append((f"p pick up {top}", f"Pick up {top}"))
        if legal.drop:
            moves.append((f"k drop at {count(view.hand)}", f"Drop at {count(view.hand)}"))
        return moves
    thrown = f" {cursor.pretty(ascii_only)}" if cursor is not None else ""
    moves = [(f"x discard{thrown}", f"a card, then Discard{thrown}")]
    if legal.spreads:
        moves.append(("s spread", "Spread"))
    if legal.hits:
        moves.append(("h hit", "Hit"))
    return moves


def waiting_message(state: TableState, touch: bool = False) -> str:
    """A table waiting for its players: how many seats are open, and how it starts (`touch`:
    the key bar's Start button to tap, not the key)."""
    seated = len(state.players)
    free = max(0, state.seats - seated)
    line = f"Waiting: {free} of {plural(state.seats, 'seat')} open."
    if state.seat is None:
        return line
    if state.creator:
        if seated >= 2:
            start = "Tap Start to start" if touch else "g: start"
            return f"{line} {start} now with {seated} players."
        start = "Start works" if touch else "g starts"
        return f"{line} {start} once another player sits."
    return f"{line} The creator may start it sooner."
