"""The lobby: the server's tables, kept up to date by the server."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable, Label, Static
from tonk.shared.game.words import amount_text, plural
from tonk.shared.wire import messages as m

from ..dialogs import ConfirmModal, CreateTableScreen, HelpScreen
from ..messages import Request
from ..model.state import TableInfo
from ..text.render import DOT, broken_at_dots
from ..touch import by_touch
from ..widgets import PORTRAIT, TooSmall
from ..widgets.screenkeys import screen_keys
from .nights import NightsScreen

#: The lobby's columns: (key, heading). A table's number is the one its television page
#: names it by (`/watch/N` at the web door).
LOBBY_COLUMNS = (
    ("number", "No."),
    ("name", "Table"),
    ("rules", "Rules"),
    ("stake", "Stake"),
    ("seats", "Seats"),
    ("state", "State"),
    ("watching", "Watching"),
    ("players", "Players"),
)


def lobby_row(info: TableInfo) -> tuple[str, ...]:
    """One table's cells in the lobby, in the order of LOBBY_COLUMNS."""
    state = str(info.state)
    return (
        info.table_id,
        info.name,
        info.rules,
        amount_text(info.stake, info.unit),
        f"{info.seats_taken}/{info.seats}",
        f"{state}, your seat" if info.mine else state,
        str(info.spectators),
        players_text(info.players, info.bots),
    )


#: Under PORTRAIT columns the columns the list goes without, the first first, until it fits
#: the screen with no sideways scroll (the line under the list says them, for the table
#: under the cursor).
NARROW_DROPS = ("watching", "rules", "stake", "state")
#: The columns that wrap onto more rows where the row is still too wide (a table's name,
#: who plays there), and the least room each is given.
WRAPPED = ("name", "players")
LEAST_WRAP = 10

_KEYS = [key for key, _ in LOBBY_COLUMNS]


def lobby_layout(
    rows: dict[str, tuple[str, ...]], width: int, narrow: bool = False
) -> tuple[tuple[int, ...], dict[str, tuple[str, ...]]]:
    """The columns shown in `width` cells (indexes into LOBBY_COLUMNS) and the rows' cells in
    them: on a `narrow` screen (under PORTRAIT columns) the list goes without the columns
    NARROW_DROPS names as it must, and where a row is still too wide, a table's name and who
    plays there wrap onto more rows (each column as wide as its widest cell or heading, with
    a cell of padding each side): the list fits the screen and nothing of it is cut."""
    if width <= 0:
        return tuple(range(len(LOBBY_COLUMNS))), rows

    def natural(index: int) -> int:
        widest = max((len(cells[index]) for cells in rows.values()), default=0)
        return max(len(LOBBY_COLUMNS[index][1]), widest)

    keep = list(range(len(LOBBY_COLUMNS)))
    drops = NARROW_DROPS if narrow else ()
    for key in drops:
        if sum(natural(i) + 2 for i in keep) <= width:
            break
        keep.remove(_KEYS.index(key))
    wrapped = [_KEYS.index(key) for key in WRAPPED]
    fixed = sum(natural(i) + 2 for i in keep if i not in wrapped)
    room = width - fixed - 2 * len(wrapped)
    if room >= sum(natural(i) for i in wrapped):
        return tuple(keep), {key: tuple(cells[i] for i in keep) for key, cells in rows.items()}
    # Who plays takes what it needs up to half the room; the table's name, the rest.
    name, players = wrapped
    players_room = max(LEAST_WRAP, min(natural(players), room // 2))
    rooms = {name: max(LEAST_WRAP, min(natural(name), room - players_room)), players: 0}
    rooms[players] = max(LEAST_WRAP, room - rooms[name])
    laid = {
        key: tuple(
            "\n".join(textwrap.wrap(cells[i], rooms[i]) or [""]) if i in rooms else cells[i]
            for i in keep
        )
        for key, cells in rows.items()
    }
    return tuple(keep), laid


def hidden_note(info: TableInfo, shown: tuple[int, ...]) -> str:
    """What the list's columns left out on a narrow screen say of a table (`Friday: classic ·
    1 chip · waiting · 2 watching`); "" where none is left out."""
    cells = dict(zip(_KEYS, lobby_row(info), strict=True))
    words = {"watching": f"{cells['watching']} watching"}
    left_out = [words.get(key, cells[key]) for i, key in enumerate(_KEYS) if i not in shown]
    return f"{info.name}: {DOT.join(left_out)}" if left_out else ""


def changes_note(info: TableInfo) -> str:
    """What the list's row does not say of a table: what its rules changed from their preset,
    as the options are typed, its turn timer and when its session ends (`Kitchen, pagat+:
    hit_lock=1; 30 s a turn; ends after 10 hands`); "" for none of them."""
    parts = []
    if info.turn_timer:
        parts.append(f"{info.turn_timer:g} s a turn")
    if info.hands:
        parts.append(f"ends after {plural(info.hands, 'hand')}")
    elif info.minutes:
        parts.append(f"ends after {plural(round(info.minutes), 'minute')}")
    if info.changes:
        parts.insert(0, " ".join(info.changes))
        return f"{info.name}, {info.rules}: {'; '.join(parts)}"
    return f"{info.name}: {'; '.join(parts)}" if parts else ""


def players_text(people: tuple[str, ...], bots: int) -> str:
    """Who plays at a table, in the lobby: the people by name, the bots counted ("Ada + 3
    bots"), so that a full table's line still fits 80 columns and says who is a person."""
    if not bots:
        return ", ".join(people)
    counted = plural(bots, "bot")
    return f"{', '.join(people)} + {counted}" if people else counted


def _height(cells: tuple[str, ...]) -> int:
    """The rows a table's line takes in the list (a wrapped cell takes more than one)."""
    return max((cell.count("\n") + 1 for cell in cells), default=1)


class LobbyScreen(Screen[None]):
    """The server's tables, kept up to date by the server; keys to create one, take a seat,
    and watch."""

    # Each key's tooltip is what the lobby's help says it does.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "create", "New table", tooltip="create a table (its rules, stake, seats)"),
        Binding(
            "enter,j",
            "sit",
            "Take a seat",
            key_display="enter j",
            tooltip="sit at the table under the cursor (or take your own seat back)",
        ),
        Binding("w", "watch", "Watch", tooltip="watch the table under the cursor"),
        Binding(
            "s",
            "standings",
            "Standings",
            tooltip="the standings across nights: tonight, the week, the month, all time",
        ),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="this help"),
        Binding("q", "app.quit", "Quit", tooltip="quit tonk"),
        # Above the list's own (which scroll it sideways to its last column).
        Binding("home", "first_table", show=False, priority=True, tooltip="the first table"),
        Binding("end", "last_table", show=False, priority=True, tooltip="the last table"),
    ]

    def __init__(self, server: str = "", player: str = "") -> None:
        super().__init__()
        self.server = server
        self.player = player
        self._rows: dict[str, tuple[str, ...]] = {}  # the rows shown, by table id, in order
        self._shown: tuple[int, ...] = ()  # the columns shown (indexes into LOBBY_COLUMNS)

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield Static(self._title(), id="lobby-title")
        table: DataTable[str | Text] = DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield table
        yield Label("", id="lobby-note")
        yield screen_keys(self.app)

    def _title(self) -> Text:
        """The top line: on as many rows as a narrow screen needs, broken between its parts."""
        line = Text("tonk · lobby", style="bold")
        if self.server:
            line.append(f" · {self.server}")
        if self.player:
            line.append(f" · playing as {self.player}")
        return Text("\n").join(broken_at_dots(line, self.size.width - 2))

    def on_mount(self) -> None:
        # The list and who we are flow down from the App's reactives: drawn now and on
        # every change.
        self.watch(self.app, "identity", self._show_identity)
        self.watch(self.app, "tables", self._show_tables)

    @property
    def tables(self) -> tuple[TableInfo, ...]:
        """The server's tables, as the App has them."""
        tables: tuple[TableInfo, ...] = getattr(self.app, "tables", ())
        return tables

    def _show_identity(self, identity: tuple[str, str]) -> None:
        self.server, self.player = identity
        self.query_one("#lobby-title", Static).update(self._title())

    def _show_tables(self, tables: tuple[TableInfo, ...]) -> None:
        """Show `tables` (in id order), changing only the cells that changed: the list is
        updated by the server as tables come, fill up, play and go, and the cursor stays on
        the table it is on. The columns are those that fit the screen (`lobby_layout`)."""
        chosen = self.selected()
        try:
            table = self.query_one("#tables", DataTable)
        except NoMatches:
            return  # the screen is being taken down (the list keeps coming till the end)
        # (No table: the list is its header, and how to make one is said right under it.)
        self.set_class(not tables, "-empty")
        width = self.size.width
        rows = {info.table_id: lobby_row(info) for info in tables}
        shown, rows = lobby_layout(rows, width - 1, narrow=width < PORTRAIT)
        old = self._rows
        kept = [key for key in rows if key in old]
        added = [key for key in rows if key not in old]
        again = (
            shown != self._shown
            or kept != [key for key in old if key in rows]
            or (kept and added and int(added[0]) < int(kept[-1]))
            or any(_height(rows[key]) != _height(old[key]) for key in kept)
        )
        if again:
            # Other columns, rows of another height, or out of order (cannot happen with ids
            # that only grow): drawn again whole.
            table.clear(columns=shown != self._shown)
            if shown != self._shown:
                for index in shown:
                    key, heading = LOBBY_COLUMNS[index]
                    table.add_column(heading, key=key)
                self._shown = shown
            old.clear()
            added = list(rows)
        for key in [key for key in old if key not in rows]:
            table.remove_row(key)
            del old[key]
        columns = [LOBBY_COLUMNS[index][0] for index in shown]
        for key in [key for key in rows if key in old]:
            for column, before, after in zip(columns, old[key], rows[key], strict=True):
                if before != after:
                    table.update_cell(key, column, after, update_width=True)
            old[key] = rows[key]
        for key in added:
            table.add_row(*rows[key], key=key, height=_height(rows[key]))
            old[key] = rows[key]
        if chosen is not None and chosen.table_id in old:
            table.move_cursor(row=table.get_row_index(chosen.table_id))
        self._show_note()
        self.refresh_bindings()

    def _show_note(self) -> None:
        """The line under the list: how to start when there is no table, else what the list
        does not say of the table under the cursor: the columns a narrow screen left out,
        and what it changed from its preset (the `+` of `classic+`)."""
        if not self.tables:
            note = f"No tables yet: {self._to_create()}."
        else:
            chosen = self.selected()
            notes = (hidden_note(chosen, self._shown), changes_note(chosen)) if chosen else ()
            # (Each broken between its parts where it takes rows: `1 chip` kept whole.)
            width = self.size.width - 2  # (the note's padding)
            note = "\n".join(
                row.plain for part in notes if part for row in broken_at_dots(Text(part), width)
            )
        label = self.query_one("#lobby-note", Label)
        if str(label.content) != note:
            label.update(note)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_note()

    def on_resize(self) -> None:
        self.query_one("#lobby-title", Static).update(self._title())
        self._show_tables(self.tables)  # the columns laid out for the new width

    def action_first_table(self) -> None:
        self.query_one("#tables", DataTable).move_cursor(row=0)

    def action_last_table(self) -> None:
        table = self.query_one("#tables", DataTable)
        table.move_cursor(row=max(0, table.row_count - 1))

    def selected(self) -> TableInfo | None:
        """The table under the cursor."""
        if not self.tables:
            return None
        try:
            table = self.query_one("#tables", DataTable)
        except NoMatches:
            return None
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((info for info in self.tables if info.table_id == key), None)

    def _to_create(self) -> str:
        """How to create a table, in a terminal or on a touch screen."""
        if by_touch(self.app):
            return "tap New table to create one"
        return "press n to create one"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("sit", "watch"):
            return True if self.tables else None
        return True

    def action_create(self) -> None:
        """The form: it sends the table it describes itself, and stays until it is made."""
        named = f"{self.player}'s table" if self.player else "my table"
        self.app.push_screen(CreateTableScreen(named[:32]))

    @on(DataTable.RowSelected)
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_sit()

    def action_sit(self) -> None:
        info = self.selected()
        if info is not None and info.playing and not info.mine and info.bot_seats:
            self._offer_a_bots_seat(info)
            return
        self._ask_at_selected(m.Sit, f"There is no table to sit at: {self._to_create()}.")

    def _offer_a_bots_seat(self, info: TableInfo) -> None:
        """A game under way where bots play: a late friend may take a bot's seat; one whose
        own seat was given to a bot, that seat (their place in the order of play)."""
        own = next(
            (seat for seat, name in info.held_for if self.player and name == self.player), None
        )
        held = {seat for seat, _ in info.held_for}
        free = [seat for seat in info.bot_seats if seat not in held]
        seat = own if own is not None else (free or list(info.bot_seats))[0]

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(Request(m.TakeBotSeat(info.number, seat)))
                whose = "your seat back" if own is not None else "the bot's seat"
                self.notify(
                    f"You take {whose}: at once between hands, else as the hand in play ends"
                    " (you watch meanwhile)."
                )

        no_watches = "No: the Watch button watches." if by_touch(self.app) else "No: w watches."
        if own is not None:
            question = (
                f"Your seat at {info.name} was given to a bot while you were away. Take it back?"
                " You watch until the hand in play ends, then play on in your own place, from"
                f" your own balance there. {no_watches}"
            )
        else:
            bots = "a bot plays a seat" if info.bots == 1 else f"bots play {info.bots} seats"
            question = (
                f"{info.name}'s game has started, and {bots} there. Take a bot's"
                " seat? You watch until the hand in play ends, then play from your own balance"
                " there (0 if you are new to it; the bot's stays the bot's)."
                f" {no_watches}"
            )
        self.app.push_screen(ConfirmModal(question), answered)

    def action_watch(self) -> None:
        self._ask_at_selected(m.Watch, "There is no table to watch.")

    def _ask_at_selected(self, ask: Callable[[int], m.ClientMessage], no_table: str) -> None:
        """Ask the server to sit or watch (`ask`: the message for a table's number) at the
        table under the cursor; `no_table` says why not when there is none."""
        info = self.selected()
        if info is None:
            self.notify(no_table)
            return
        self.post_message(Request(ask(info.number)))

    def action_standings(self) -> None:
        self.app.push_screen(NightsScreen())

    def action_help(self) -> None:
        keys = [("up down", "choose a table (the list scrolls sideways with left and right)")]
        keys += [
            (binding.key_display or binding.key, binding.tooltip or binding.description)
            for binding in self.BINDINGS
            if isinstance(binding, Binding)
        ]
        taps = [("a table", "tap it to choose it; tap it again to take a seat there")]
        taps += [
            (binding.description, binding.tooltip)
            for binding in self.BINDINGS
            if isinstance(binding, Binding) and binding.show
        ]
        self.app.push_screen(HelpScreen(None, keys=keys, taps=taps))
