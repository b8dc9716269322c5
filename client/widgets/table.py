"""The table itself: the players, the stock, discard and spreads, and your hand (on a large
terminal the players are drawn around the table instead: seats.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.widget import Widget
from tonk.shared.game.cards import Card, count
from tonk.shared.game.spreads import Spread
from tonk.shared.game.view import Phase, SeatView
from tonk.shared.game.waiting import clock_text
from tonk.shared.game.words import amount_text, plural

from ..model.state import PlayerInfo, TableState
from ..text.felt import SIZES, SMALL, CardSize, Pile, pile_block, spreads_as_cards
from ..text.render import (
    BIG_CARD_WIDTH,
    CARD_WIDTH,
    DOT,
    HAND_ORDERS,
    CardStyle,
    card_text,
    fit_name,
    hand_lines,
    short_names,
    signed,
    spread_line,
)
from ..touch import by_touch
from .lines import LineWidget

#: How many of the discard pile's last cards are fanned with who threw each, where they fit,
#: and the fewest worth fanning: smaller cards are drawn rather than fewer fanned.
PILE_FAN = 5
PILE_LEAST = 3


#: The fewest cells a player's last move is shown in, in the players' list.
MOVE_LEAST = 20


class PlayersPanel(LineWidget):
    """Every seat, one line each: whose turn, the dealer, cards held, and marks for
    disconnected, away and hit-locked players."""

    #: The table (set by the screen; each row redrawn as far as it changed).
    state: var[TableState | None] = var(None, init=False, always_update=True)

    #: Each player's balance at the end of their line (a narrow screen's: no ledger beside).
    balances: var[bool] = var(False, init=False)

    def __init__(self, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ascii_only = ascii_only

    def watch_balances(self) -> None:
        if self.state is not None:
            self.watch_state(self.state)

    def watch_state(self, state: TableState | None) -> None:
        if state is not None:
            width = self.size.width
            lines = player_lines(
                state,
                self.ascii_only,
                width=width,
                balances=self.balances,
                touch=by_touch(self.app),
            )
            self.set_lines(lines or [Text("Nobody is seated yet.")])

    def refit(self) -> None:
        """The names' column follows the panel's width."""
        if self.state is not None:
            self.watch_state(self.state)
        super().refit()


def player_lines(
    state: TableState,
    ascii_only: bool = False,
    now: float | None = None,
    width: int = 0,
    balances: bool = False,
    touch: bool = False,
) -> list[Text]:
    """One line a seat; with `balances`, each player's balance at its end (as the ledger
    says it: a narrow screen has no ledger beside the players); `touch`: see seat_marks."""
    # Your own name, as in the ledger and the chat, marked as you.
    names = state.names(me_as_you=False)
    rows = [(player, *seat_marks(state, player, touch=touch)) for player in state.players]
    owed = [signed(state.balances.get(player.name, 0)) for player in state.players]
    owed_wide = max((len(text) for text in owed), default=0) + 2 if balances else 0
    # The names in one column, as wide as the longest where the panel has room beside the
    # longest of the rest: a long name is cut with an ellipsis only where it must be.
    beside = max((len(rest.plain) for _, _, rest in rows), default=0)
    column = name_column(names, width - 2 - beside - owed_wide if width else 0)
    # Each player's last move of the hand in a column of its own, where the panel is wide
    # enough to say it (at 100x30, not 80x24; from 140x44 it is beside each seat instead).
    move_at = 2 + column + beside + 2
    move_room = width - owed_wide - move_at if width else 0
    lines: list[Text] = []
    for (player, to_play, rest), balance in zip(rows, owed, strict=True):
        line = Text(("> " if ascii_only else "▶ ") if to_play else "  ")
        name = fit_name(names[player.seat], column, ascii_only)
        line.append(name, style="bold" if to_play else "")
        line.append_text(rest)
        move = state.last_moves.get(player.seat)
        if move is not None and move_room >= MOVE_LEAST:
            shown = move.copy()
            shown.truncate(move_room, overflow="ellipsis")
            line.append(" " * (move_at - line.cell_len)).append_text(shown)
        if balances:
            # At the panel's right edge where it is known, else after the longest line.
            room = (width or 2 + column + beside + owed_wide) - line.cell_len
            colour = "green" if balance.startswith("+") else "red" if balance != "0" else ""
            line.append(balance.rjust(max(room, len(balance) + 1)), style=colour)
        lines.append(line)
        if not player.connected and player.played_for_at is not None:
            lines.extend(waiting_lines(state, player, now, width))
    return lines


def seat_marks(
    state: TableState, player: PlayerInfo, listed: bool = True, touch: bool = False
) -> tuple[bool, Text]:
    """Whether the seat is to play, and what stands beside its name: in the players' list
    (`listed`), the dealer's `D`, the cards held and `bot` in columns (where the name does not
    say it); marks for hit-locked, you, a player who lost the link or is away (and, yourself
    away, how to come back: any key, or on a touch screen, `touch`, the Back button)."""
    view = state.view
    seat = player.seat
    to_play = view is not None and view.phase is not Phase.ENDED and view.turn == seat
    rest = Text()
    if view is not None and seat < view.players:
        if listed:
            rest.append(" D" if view.dealer == seat else "  ")
            cards = view.card_counts[seat]
            rest.append(f" {cards} card{'s' if cards != 1 else ''}")
        if view.hit_locks[seat]:
            rest.append(" hit-locked", style="italic")
    if seat == state.seat:
        rest.append(" (you)", style="dim")
    if player.bot and listed and not player.name.endswith("(bot)"):
        rest.append(" bot", style="dim")  # (a seat given to a bot keeps its player's name)
    if not player.connected:
        rest.append(" disconnected", style="bold red")
    elif player.away and seat == state.seat:
        rest.append(" away", style="bold")
        rest.append(" (tap Back)" if touch else " (any key)", style="dim")
    elif player.away:
        rest.append(" away, played for", style="bold")
    return to_play, rest


def name_column(names: Sequence[str], room: int) -> int:
    """How wide the players' names are drawn: as wide as the longest, as far as `room` (the
    panel's width less what stands beside the names) allows, and 10 at the least (and where
    the width is not known)."""
    longest = max((len(name) for name in names), default=0)
    return max(min(longest, max(room, 10)), 1)


def waiting_lines(
    state: TableState, player: PlayerInfo, now: float | None = None, width: int = 0
) -> list[Text]:
    """How long the table waits for a player who lost the connection, counted down here
    from the time left the server sent ("Bob lost the connection: played for in 1:47", on
    two lines where one is too narrow), and who has voted to play for the seat now."""
    assert player.played_for_at is not None
    left = player.played_for_at - (time.monotonic() if now is None else now)
    then = "played for" if state.playing else "seat given up"
    lost, when = f"{player.name} lost the connection:", f"{then} in {clock_text(left)}"
    if not width or len(lost) + len(when) + 3 <= width:
        lines = [Text(f"  {lost} {when}", "italic")]
    else:
        lines = [Text(f"  {lost}", "italic"), Text(f"    {when}", "italic")]
    if player.votes:
        lines.append(Text(f"    voted to play for now: {', '.join(player.votes)}", "dim"))
    return lines


class SpreadsPanel(LineWidget):
    """The spreads as cards (`size`, which the centre panel chooses: see CentrePanel), each
    under its number and owner, grouped by owner; where cards do not fit (`size` None), as
    text by owner, one a row as long as each fits on one and they fit the rows there are;
    else in short (`1 Ada: 8♠ 9♠ 10♠ +10♠ Bo`), two a line where two fit, and if they still
    do not, as many as fit and a last line saying how many more (`h` lists them all on your
    turn)."""

    def __init__(self, style: CardStyle, id: str | None = None) -> None:
        super().__init__(wrap=True, id=id)
        self.card_style = style
        self.spreads: tuple[Spread, ...] | None = None  # None: no hand dealt (no line)
        self.names: list[str] = []
        self.order: tuple[int, ...] = ()  # the owners' seats in the order they are grouped
        self.size_: CardSize | None = None  # the cards' size (None: as text)

    def show(
        self,
        spreads: tuple[Spread, ...] | None,
        names: list[str],
        order: Sequence[int] = (),
        size: CardSize | None = None,
    ) -> None:
        self.spreads, self.names, self.order, self.size_ = spreads, names, tuple(order), size
        self.set_lines(self.fitted())

    def refit(self) -> None:
        """The rows there are decide how the spreads are laid: laid again at a new size."""
        self.lines = self.fitted()
        super().refit()

    def _rows(self, lines: Sequence[Text]) -> int:
        return len(self.render_rows(lines, self.size.width))

    def as_cards(self, size: CardSize, width: int) -> list[Text] | None:
        """The spreads as cards of `size` in `width` cells (None: one is wider)."""
        if not self.spreads:
            return self.fitted_text(0)
        return spreads_as_cards(self.spreads, self.names, self.card_style, size, width, self.order)

    def fitted(self, height: int | None = None) -> list[Text]:
        """The spreads' lines for the panel's width, in `height` rows (None: the panel's
        height now; the centre panel passes the rows the pile leaves, which the panel is
        given only at the next layout)."""
        width = self.size.width
        height = self.size.height if height is None else height
        if self.size_ is not None and width > 0:
            cards = self.as_cards(self.size_, width)
            if cards is not None:  # (the centre panel chose the size for the rows there are)
                return centred(cards, width)
        lines = self.fitted_text(height)
        return lines if self.spreads else centred(lines, width)  # ("No spreads ...": centred)

    def fitted_text(self, height: int) -> list[Text]:
        """The spreads as text in `height` rows (0: as many as they take)."""
        style = self.card_style
        if self.spreads is None:
            return []
        if not self.spreads:
            return [Text("No spreads on the table.", style="dim")]
        numbered = list(enumerate(self.spreads, start=1))
        full = [spread_line(number, spread, self.names, style) for number, spread in numbered]
        width = self.size.width
        if width <= 0 or height <= 0 or self._rows(full) <= min(height, len(full)):
            return full  # each on one row: none has a hit's name on a row of its own
        short = short_names(self.names)
        compact = [spread_line(n, spread, short, style, compact=True) for n, spread in numbered]
        if self._rows(compact) <= height:
            return compact
        packed = pack_lines(compact, width)
        lines = [line for line, _ in packed]
        if self._rows(lines) <= height:
            return lines
        # As many lines as fit above the line that says how many spreads are not shown.
        shown: list[Text] = []
        count = 0
        below = self._rows([self._more(len(self.spreads))])
        for line, spreads in packed:
            if self._rows([*shown, line]) > height - below:
                break
            shown.append(line)
            count += spreads
        shown.append(self._more(len(self.spreads) - count))
        return shown

    def _more(self, more: int) -> Text:
        spreads = "spreads" if more != 1 else "spread"
        lists = "Hit lists" if by_touch(self.app) else "h lists"
        return Text(f"+{more} more {spreads}: {lists} them on your turn")

    def whole_text(self, height: int) -> tuple[list[Text], int] | None:
        """The spreads as text and the rows they take, where each is written whole on a row
        of its own in `height` rows (not in short); None where they are not."""
        lines = self.fitted_text(height)
        rows = self._rows(lines)
        whole = not self.spreads or (rows == len(lines) == len(self.spreads))
        return (lines, rows) if whole and rows <= height else None


def centred(lines: Sequence[Text], width: int) -> list[Text]:
    """`lines` moved right together, to the middle of `width` cells."""
    wide = max((line.cell_len for line in lines), default=0)
    indent = max(0, (width - wide) // 2)
    return [Text(" " * indent).append_text(line) if indent else line for line in lines]


def pack_lines(lines: Sequence[Text], width: int, gap: int = 3) -> list[tuple[Text, int]]:
    """`lines` two to a line where the two fit in `width` cells side by side (`gap` apart),
    in order; each with how many of `lines` it holds."""
    packed: list[tuple[Text, int]] = []
    for line in lines:
        if packed:
            last, held = packed[-1]
            if held == 1 and last.cell_len + gap + line.cell_len <= width:
                packed[-1] = (Text.assemble(last, " " * gap, line), 2)
                continue
        packed.append((line, 1))
    return packed


def before_the_deal(state: TableState, touch: bool = False) -> list[Text]:
    """The table before its first deal, what the players read while friends sit down: the
    seats (taken and open), the stake, how the session ends and the turn timer, then the
    house rules in words, a sentence a line (the last line: where to read them whole, kept
    for when the rest is cut)."""
    names = state.names(me_as_you=False)
    if state.seat is not None and state.seat < len(names):
        names[state.seat] += " (you)"
    open_seats = max(0, state.seats - len(names))
    seats = Text("Seats: ", style="bold")
    seats.append(DOT.join([*names, *(["open"] * open_seats)]))
    terms = [
        f"Stake {amount_text(state.stake, state.unit)}",
        "no set end" if state.hands is None else f"a session of {plural(state.hands, 'hand')}",
        "no turn timer" if state.turn_timer is None else f"{state.turn_timer:g} s a turn",
    ]
    where = "tap Help" if touch else "press ?"
    return [
        seats,
        Text(DOT.join(terms)),
        Text(""),
        *(Text(line, style="dim") for line in state.rules.describe()),
        Text(f"The rules in full: {where}.", style="dim"),
    ]


def fitted(lines: Sequence[Text], rows_of: Callable[[Text], int], room: int) -> list[Text]:
    """As many of `lines` as fit in `room` rows (`rows_of`: the rows a line takes), in order;
    where they do not all fit, the last line kept in place of those cut (it says where to read
    the rest), and a blank line left without what it stood before."""
    if sum(rows_of(line) for line in lines) <= room:
        return list(lines)
    last = lines[-1]
    kept: list[Text] = []
    used = rows_of(last)
    for line in lines[:-1]:
        used += rows_of(line)
        if used > room:
            break
        kept.append(line)
    while kept and not kept[-1].plain:
        kept.pop()
    return [*kept, last] if rows_of(last) <= room else kept[:room] or [last]


class CentrePanel(Vertical):
    """The middle of the table: the stock and the discard pile above, the spreads by owner
    below, each row repainted only where it changes. Both are drawn as cards, as large as
    the panel has room for (`fit_cards`), or as text lines where no cards fit."""

    DEFAULT_CSS = """
    CentrePanel > #pile { height: auto; }
    CentrePanel > #spreads { height: 1fr; }
    """

    #: The table (set by the screen; each row redrawn as far as it changed).
    state: var[TableState | None] = var(None, init=False, always_update=True)
    #: The rows the panel may take, where the screen sizes it to what it draws (an upright
    #: screen's: the log takes the rest); None: its own height. The cards are chosen for
    #: these rows, and the screen told the rows they take (`Sized`).
    budget: var[int | None] = var(None, init=False)

    class Sized(Message):
        """The rows the pile and the spreads take, as drawn for the panel's budget."""

        def __init__(self, rows: int) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self, style: CardStyle, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.card_style = style
        self.pile_shown = 0  # how many discards the text lists with who threw them (0: none)
        #: The sizes drawn now (the pile's, the spreads'; None: as text) and the pile fanned.
        self.chosen: tuple[CardSize | None, CardSize | None, bool] = (None, None, False)
        self.taken = 0  # the rows the pile and the spreads take as drawn now
        self._told: int | None = None  # the rows the screen was told last (None: not sized)
        self._drawn_width = 0  # the width the pile and the spreads were last drawn for

    def compose(self) -> ComposeResult:
        yield LineWidget(wrap=True, id="pile")
        yield SpreadsPanel(self.card_style, id="spreads")

    def watch_state(self, state: TableState | None) -> None:
        self.fit_cards()

    def watch_budget(self) -> None:
        self.fit_cards()

    def on_resize(self) -> None:
        # Sized to what it draws, its height follows the budget it was drawn for; a width
        # other than the one drawn for is drawn for again.
        if self.budget is None or self.size.width != self._drawn_width:
            self.fit_cards()

    def fit_cards(self) -> None:
        """Draw the pile and the spreads with cards of one size, the largest they fit at with
        the pile's last cards fanned (three at least, where the hand has had three), else
        the largest they fit at; short of rows, the pile in words beside the smallest cards,
        or the spreads in words; text where no cards fit."""
        state = self.state
        if state is None or not self.is_mounted:
            return
        self._drawn_width = self.size.width
        pile = self.query_one("#pile", LineWidget)
        spreads = self.query_one("#spreads", SpreadsPanel)
        view = state.view
        if view is None:
            spreads.show(None, [])
            room = self.size.height if self.budget is None else self.budget
            lines = fitted(
                before_the_deal(state, by_touch(self.app)),
                lambda line: len(pile.render_rows([line], self.size.width)),
                max(1, room),
            )
            pile.set_lines(lines)
            self._sized(len(pile.render_rows(lines, self.size.width)))
            return
        names = state.names()
        seats = sorted(p.seat for p in state.players)
        me = state.seat if state.seat in seats else (seats[0] if seats else 0)
        order = [s for s in seats if s >= me] + [s for s in seats if s < me]
        spreads.spreads, spreads.names, spreads.order = view.spreads, names, tuple(order)
        width = self.size.width
        height = self.size.height if self.budget is None else self.budget
        followed = bool(state.pile) and state.pile[-1][0] == view.discard_top
        last = state.pile[-PILE_FAN:] if followed else ()
        fanned = Pile(
            view.stock_size, view.discard_top, view.discard_size, last, min(PILE_LEAST, len(last))
        )
        plain = Pile(view.stock_size, view.discard_top, view.discard_size)
        text_pile = self.pile_text(state)
        if width > 0 and height > 0:
            # The pile and the spreads at one size: the largest with the pile fanned, else
            # the largest; then, short of rows, the pile or the spreads in words.
            # Before the first spread, the smallest cards' pile fanned over "No spreads on the
            # table." on one row, rather than rows kept empty for a spread's cards (80x24):
            # where the pile keeps its cards as the first spread takes those rows back.
            fan_first = False
            if not view.spreads:
                small = pile_block(plain, self.card_style, SMALL, width)
                fan_first = small is not None and len(small) + SMALL.rows + 1 <= height
            candidates: list[tuple[CardSize | None, Pile, CardSize | None]] = [
                *((size, fanned, size) for size in SIZES),
                *(((SMALL, fanned, None),) if fan_first else ()),
                *((size, plain, size) for size in SIZES),
            ]
            # Short of rows for both as cards: the spreads as cards beside the pile in words;
            # with no spread yet, the pile's cards over "No spreads on the table." rather than
            # the pile in words over rows kept empty (four seats at 80x24: a centre of 6 rows).
            words = [(None, plain, SMALL)]
            small_pile = [(SMALL, fanned, None), (SMALL, plain, None)]
            candidates += [*words, *small_pile] if view.spreads else [*small_pile, *words]
            laid: dict[CardSize, list[Text] | None] = {}
            chosen: tuple[CardSize | None, CardSize | None, bool]
            for pile_size, pile_seen, spread_size in candidates:
                rows = (
                    text_pile
                    if pile_size is None
                    else pile_block(pile_seen, self.card_style, pile_size, width)
                )
                if rows is None:
                    continue
                # (The pile's line of text may wrap on a narrow table: its rows, not lines.)
                taken = len(pile.render_rows(rows, width)) if pile_size is None else len(rows)
                if spread_size is None:
                    # In words, each spread whole on a row, in the rows the pile leaves.
                    text = spreads.whole_text(height - taken)
                    if text is not None:
                        chosen = (pile_size, None, pile_seen is fanned)
                        self._draw(rows, chosen, text[1], taken + text[1])
                        return
                    continue
                if spread_size not in laid:
                    laid[spread_size] = spreads.as_cards(spread_size, width)
                cards = laid[spread_size]
                if cards is None:
                    continue
                # With no spreads yet, room is kept for one of this size: the pile keeps its
                # size as the first is laid.
                need = len(cards)
                if not view.spreads:
                    need = max(need, spread_size.rows + 1)
                if taken + need <= height:
                    chosen = (pile_size, spread_size, pile_seen is fanned)
                    self._draw(rows, chosen, need, taken + max(len(cards), 1))
                    return
        self._draw(text_pile, (None, None, False), taken=height)

    def _draw(
        self,
        rows: list[Text],
        chosen: tuple[CardSize | None, CardSize | None, bool],
        spread_rows: int = 0,
        taken: int = 0,
    ) -> None:
        """Show the pile's `rows` and the spreads at the size `chosen`; cards in the middle
        of the panel, across and (with the spreads' `spread_rows`) down; `taken`: the rows
        the two take (the screen told them, where it sizes the panel to them)."""
        self.chosen = chosen
        pile = self.query_one("#pile", LineWidget)
        spreads = self.query_one("#spreads", SpreadsPanel)
        width, height = self.size.width, self.size.height
        if chosen[0] is not None:
            above = max(0, (height - len(rows) - spread_rows) // 2) if self.budget is None else 0
            rows = [*([Text()] * above), *centred(rows, width)]
        pile.set_lines(rows)
        spreads.size_ = chosen[1]
        # Fitted to the rows under the pile now (set_lines laid its rows out): the panel's
        # own height is the one before (one row under the first spread's pile of cards, and
        # "+5 more spreads" in it until the next layout made it four rows).
        room = (height if self.budget is None else self.budget) - len(pile.rows)
        spreads.set_lines(spreads.fitted(room))
        self._sized(taken)

    def _sized(self, taken: int) -> None:
        """The rows drawn now are `taken`: the screen is told, where it sizes the panel (and
        the rows it was told last were others)."""
        self.taken = taken
        told = taken if self.budget is not None else None
        if told != self._told:
            self._told = told
            if told is not None:
                self.post_message(self.Sized(told))

    def pile_text(self, state: TableState) -> list[Text]:
        """The stock and the discard as a line of text (`Stock: 29   Discard: Q♠`), and on a
        large terminal the pile's top cards with who threw them."""
        view = state.view
        assert view is not None
        style = self.card_style
        line = Text(f"Stock: {view.stock_size}   Discard: ")
        if view.discard_top is None:
            line.append("none")
        else:
            line.append_text(card_text(view.discard_top, style, "bold"))
            line.append(f"  ({view.discard_size} in the pile)", style="dim")
        return [line, *pile_lines(state, style, self.pile_shown)]


def pile_lines(state: TableState, style: CardStyle, shown: int) -> list[Text]:
    """The discard pile's top `shown` cards, newest first, each with who threw it by the name
    the log says (`9♣ Ada · 4♦ You · K♠ up card`): a line, or none where there are none to
    show."""
    view = state.view
    if not shown or not state.pile or view is None or state.pile[-1][0] != view.discard_top:
        return []  # (a pile not followed from the hand's start is not guessed at)
    line = Text("Pile, newest first: ", style="dim")
    for i, (card, name) in enumerate(reversed(state.pile[-shown:])):
        if i:
            line.append(" · ", style="dim")
        line.append_text(card_text(card, style))
        line.append(f" {'up card' if name is None else name}", style="dim")
    if len(state.pile) > shown:
        line.append(f" · {len(state.pile) - shown} under them", style="dim")
    return [line]


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
    note: reactive[str | Text] = reactive("")
    fresh: reactive[Card | None] = reactive(None)
    #: Larger cards (a large terminal: the screen sets it).
    big: reactive[bool] = reactive(False)

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

    class Tapped(Message):
        """A card was clicked (or tapped, on a touch screen): its number, from 1."""

        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def watch_big(self, big: bool) -> None:
        self.styles.height = 7 if big else 5

    @property
    def card_width(self) -> int:
        return BIG_CARD_WIDTH if self.big else CARD_WIDTH

    def _gap(self) -> int:
        return 2 if self.size.width >= len(self.cards) * (self.card_width + 2) + 2 else 1

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.cards:
            return
        step = self.card_width + self._gap()
        index, within = divmod(offset.x, step)
        if within < self.card_width and 0 <= index < len(self.cards):
            self.post_message(self.Tapped(index + 1))

    def render(self) -> RenderableType:
        if not self.cards:
            if isinstance(self.note, Text):
                return self.note
            return Text(self.note or "No cards.", style="dim")
        index = {card: i for i, card in enumerate(self.cards)}
        selected = frozenset(index[card] for card in self.selected if card in index)
        gap = self._gap()
        fresh = index.get(self.fresh) if self.fresh is not None else None
        lines = hand_lines(self.cards, self.style_, self.cursor, selected, gap, fresh, self.big)
        return Group(*lines)


def hand_title(view: SeatView | None, order: str = "", touch: bool = False) -> str:
    """The hand panel's border title: your count (only a display; the core counts) and how
    the cards are ordered, with what changes it (the o key; on a touch screen the Sort
    button)."""
    if view is None or view.seat is None:
        return "Your hand"
    shown = dict(HAND_ORDERS).get(order, "")
    changes = "Sort" if touch else "o"
    return f"Your hand · count {count(view.hand)}" + (f" · {shown} ({changes})" if shown else "")
