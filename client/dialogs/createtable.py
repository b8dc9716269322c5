"""The create-table form."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select
from tonk.shared.bots.bots import BOT_STRATEGIES
from tonk.shared.game.rules import OPTIONS, PRESETS, HouseRules, RulesError, parse_options
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..tablerequest import TableRequest
from ..touch import by_touch
from ..widgets import TooSmall
from .help import HelpScreen

SESSION_ENDS = (
    ("never", "never"),
    ("after a number of hands", "hands"),
    ("after a number of minutes", "minutes"),
)

#: How many characters of an option's explanation the form shows under its field: two lines
#: of the form at 80x24, cut at a word (f1 shows every option whole).
HINT_CHARS = 110


def cut_at_word(text: str, most: int) -> str:
    """`text` whole if it has at most `most` characters, else cut at a word with an ellipsis
    (never mid-word)."""
    if len(text) <= most:
        return text
    cut = text[: most - 1].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return cut + "…"


def option_explained(name: str) -> str:
    """An option's whole explanation in the form: what it takes and its classic value first,
    as that is what is being typed, then what it does."""
    option = OPTIONS[name]
    meaning = option.meaning.replace("`", "")
    return (
        f"{name}: takes {option.takes}; classic: {option.typed(option.default)}. "
        f"{meaning[:1].upper()}{meaning[1:]}."
    )


def option_hint(typed: str) -> str:
    """What the form says under the Options field as it is typed: the help of the option whose
    name is being typed (what it takes and its classic value, then what it does), or the
    options whose names begin so (from the core's table)."""
    words = typed.replace(",", " ").split()
    name = words[-1].partition("=")[0] if words and typed[-1] not in " ," else ""
    if not name:
        return ""
    if name in OPTIONS:
        # Cut at two lines, so that the form's keys stay on an 80x24 screen: f1 has it all.
        return cut_at_word(option_explained(name), HINT_CHARS)
    begun = [each for each in OPTIONS if each.startswith(name)]
    if begun:
        return "Options: " + ", ".join(begun)
    return f"No option begins {name!r}; f1 lists them."


#: Who may take a bot's seat at the table (create_table's `open_bot_seats`): the creator's
#: choice; kept for who has played at the table (a player back after losing the link), or
#: open to anybody (a late friend).
BOT_SEATS = (
    ("bot seats: kept", False),
    ("bot seats: open", True),
)


def seat_counts(players: int) -> list[tuple[str, int]]:
    """The seat counts a table under rules of `players` players may have: 2 to that."""
    return [(str(n), n) for n in range(2, players + 1)]


def bot_counts(seats: int) -> list[tuple[str, int]]:
    """The bots that fit beside you at a table of `seats`: none to `seats` - 1."""
    return [(str(n), n) for n in range(seats)]


class FormBox(Vertical):
    """The form's box, which scrolls where the rows run out (upright, under 40 rows): made
    shorter (a phone turned, a terminal made smaller), it keeps the field with the focus in
    sight, as a tab to a field scrolls it into sight."""

    def on_resize(self) -> None:
        focused = self.screen.focused
        if focused is not None and self in focused.ancestors:
            self.scroll_to_widget(focused, animate=False)


class CreateTableScreen(ModalScreen[None]):
    """The create-table form: name, preset, option overrides, stake and unit, seats, bots and
    their strategy, turn timer, who may take a bot's seat, and how the session ends. Create
    sends the request (the create_table message, and the bots for the client to seat) and the
    form stays, with everything typed, until the table is made (the App closes it) or the
    server refuses it (the reason is said in the form, to change and create again)."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(form=True)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Create"),
        Binding("f1", "options_help", "Options"),
    ]

    def __init__(self, default_name: str) -> None:
        super().__init__()
        self.default_name = default_name
        # What the seats and the bots lists offer now (up to these).
        self.most_seats = PRESETS["classic"].players
        self.most_bots = self.most_seats - 1

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with FormBox(id="dialog", classes="dialog create"):
            yield Label("Create a table", classes="title")
            with Grid(classes="create-form"):
                yield Label("Name")
                yield Input(self.default_name, id="name", max_length=32, compact=True)
                yield Label("Rules")
                yield Select(
                    [(name, name) for name in PRESETS],
                    value="classic",
                    allow_blank=False,
                    id="preset",
                    compact=True,
                )
                yield Label("Options")
                yield Input(
                    placeholder="e.g. hit_lock=1 no_rediscard=true  (f1: all options)",
                    id="options",
                    compact=True,
                )
            # The option being typed is explained right under its field.
            yield Label("", id="option-help")
            with Grid(classes="create-form"):
                yield Label("Stake, unit")
                with Horizontal(classes="pair"):
                    yield Input("1", id="stake", type="integer", max_length=7, compact=True)
                    yield Input("chips", id="unit", max_length=16, compact=True)
                yield Label("Seats, bots")
                with Horizontal(classes="pair"):
                    yield Select(
                        seat_counts(self.most_seats),
                        value=self.most_seats,
                        allow_blank=False,
                        id="seats",
                        compact=True,
                    )
                    yield Select(
                        bot_counts(self.most_seats),
                        value=0,
                        allow_blank=False,
                        id="bots",
                        compact=True,
                    )
                    yield Select(
                        [(name, name) for name in BOT_STRATEGIES],
                        value="easy",
                        allow_blank=False,
                        id="strategy",
                        compact=True,
                    )
                yield Label("Turn timer (s)")
                with Horizontal(classes="pair"):
                    yield Input("0", id="timer", type="integer", max_length=4, compact=True)
                    yield Select(
                        BOT_SEATS,
                        value=False,
                        allow_blank=False,
                        id="bot-seats",
                        compact=True,
                    )
                yield Label("Session ends")
                with Horizontal(classes="pair", id="ends-pair"):
                    yield Select(
                        SESSION_ENDS, value="never", allow_blank=False, id="ends", compact=True
                    )
                    yield Input(
                        "",
                        id="ends-n",
                        type="integer",
                        max_length=6,
                        placeholder="(never ends)",
                        disabled=True,
                        compact=True,
                    )
            yield Label("", id="form-note")
            yield Label("", id="form-error")
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="create", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
                yield Button("House rules", id="house-rules", compact=True)
            keys = "tab: next field    ctrl+s: create    f1: options    escape: cancel"
            if by_touch(self.app):
                keys = "Tap a field to change it; House rules lists the options."
            yield Label(keys, classes="hint")

    def _players(self) -> int | None:
        """How many players the rules chosen seat (the preset, and a `players` option typed
        over it), or None while the options do not read."""
        preset = str(self.query_one("#preset", Select).value)
        try:
            options = parse_options(self._value("#options"))
            return HouseRules.preset_named(preset).with_options(options).players
        except RulesError:
            return None

    @on(Select.Changed, "#preset")
    @on(Input.Changed, "#options")
    def _rules_changed(self) -> None:
        """The seat counts offered are those the rules allow; new rules set the seats to
        their number of players (as a table made without a count has)."""
        players = self._players()
        if players is None or players == self.most_seats:
            return
        self.most_seats = players
        seats = self.query_one("#seats", Select)
        seats.set_options(seat_counts(players))
        seats.value = players

    @on(Select.Changed, "#seats")
    def _bots_offered(self) -> None:
        """The bots offered fit beside you: at most a seat fewer than the table has."""
        seats = int(str(self.query_one("#seats", Select).value))
        if seats - 1 == self.most_bots:
            return
        self.most_bots = seats - 1
        bots = self.query_one("#bots", Select)
        was = int(str(bots.value))
        bots.set_options(bot_counts(seats))
        bots.value = min(was, seats - 1)

    @on(Select.Changed, "#seats, #bots")
    def _seats_changed(self) -> None:
        """Say, before the table is made, when you and the bots fill every seat."""
        seats = int(str(self.query_one("#seats", Select).value))
        bots = int(str(self.query_one("#bots", Select).value))
        note = ""
        if bots == seats - 1:
            note = (
                f"You and {bots} bot{'s' if bots != 1 else ''} fill all {seats} seats: nobody "
                "else will be able to sit, and the game starts at once."
            )
        self.query_one("#form-note", Label).update(Text(note, style="bold"))

    @on(Input.Changed, "#options")
    def _options_changed(self, event: Input.Changed) -> None:
        """Say what the option being typed takes and its classic value."""
        self.query_one("#option-help", Label).update(Text(option_hint(event.value)))

    @on(Select.Changed, "#ends")
    def _ends_changed(self, event: Select.Changed) -> None:
        """The box beside "Session ends" asks for the number of hands or minutes, and is
        closed while the session never ends."""
        box = self.query_one("#ends-n", Input)
        ends = str(event.value)
        box.disabled = ends == "never"
        box.placeholder = "(never ends)" if ends == "never" else f"how many {ends}"

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        """An error said on create is about the form as it was: any change clears it."""
        self.query_one("#form-error", Label).update("")

    @on(Button.Pressed, "#house-rules")
    def action_options_help(self) -> None:
        """Every house-rule option and what it takes, in the help."""
        self.app.push_screen(HelpScreen(None, at_options=True))

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()

    def form(self) -> TableRequest:
        """The form as a create-table request; raises ValueError with a reason to show."""
        name = self._value("#name")
        if not name:
            raise ValueError("the table needs a name")
        preset = str(self.query_one("#preset", Select).value)
        try:
            options = parse_options(self._value("#options"))
            HouseRules.preset_named(preset).with_options(options)
        except RulesError as exc:
            raise ValueError(str(exc)) from None
        stake = int(self._value("#stake") or "1")
        if stake < 1:
            raise ValueError("the stake must be at least 1")
        seats = int(str(self.query_one("#seats", Select).value))
        bots = int(str(self.query_one("#bots", Select).value))
        if bots > seats - 1:
            raise ValueError(f"{seats} seats leave room for at most {seats - 1} bots and you")
        timer = int(self._value("#timer") or "0")
        ends = str(self.query_one("#ends", Select).value)
        hands: int | m.Unset = m.UNSET
        minutes: float | m.Unset = m.UNSET
        if ends != "never":
            n = int(self._value("#ends-n") or "0")
            if n < 1:
                raise ValueError(f"give the number of {ends} the session lasts")
            if ends == "hands":
                hands = n
            else:
                minutes = n
        message = m.CreateTable(
            name,
            rules={"preset": preset, **options},
            stake=stake,
            unit=self._value("#unit"),
            seats=seats,
            turn_timer=timer or None,
            hands=hands,
            minutes=minutes,
            open_bot_seats=bool(self.query_one("#bot-seats", Select).value),
        )
        return TableRequest(message, bots, str(self.query_one("#strategy", Select).value))

    @on(Button.Pressed, "#create")
    def action_submit(self) -> None:
        try:
            request = self.form()
        except ValueError as exc:
            self.refused(str(exc))
            return
        self.post_message(Request(request))
        self.query_one("#form-error", Label).update(Text("Creating the table...", style="bold"))

    def refused(self, reason: str) -> None:
        """The form as it is cannot make a table (the form's check, or the server's answer):
        why, in the form, which keeps everything typed."""
        self.query_one("#form-error", Label).update(Text(reason, style="bold red"))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
