"""Modal screens: confirm, help, choose a spread to hit, the end of a hand, the end of a
session, and the create-table form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Label, Select, Static
from tonk.shared.bots import BOT_STRATEGIES
from tonk.shared.cards import Card
from tonk.shared.rules import PRESETS, HouseRules, RulesError, parse_options
from tonk.shared.settlement import Settlement
from tonk.shared.spreads import Spread

from .render import (
    CardStyle,
    amount_text,
    cards_text,
    catchers,
    ending_line,
    payment_lines,
    signed,
    spread_line,
)
from .widgets import TooSmall


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question: y or enter says yes, n or escape says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog confirm"):
            yield Static(self.question, id="question")
            yield Label("y: yes    n: no", classes="hint")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class DropModal(ModalScreen[str]):
    """Asked before a drop, which cannot be taken back: k (again) or enter drops, a drops
    and stops asking for the rest of this run of the client, escape or n keeps playing.
    Dismisses with "drop", "always" or "cancel"."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k,enter,y", "answer('drop')", "Drop"),
        Binding("a", "answer('always')", "Drop, never ask"),
        Binding("escape,n", "answer('cancel')", "Keep playing"),
    ]

    def __init__(self, count: int, asked_at: tuple[int, int] = (0, 0)) -> None:
        super().__init__()
        self.count = count
        self.asked_at = asked_at  # (hand, events so far) when it was asked

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog confirm drop"):
            yield Static(
                f"Drop with {self.count}? The hand ends now; if another count is low "
                "enough, you are caught and pay.",
                id="question",
            )
            yield Label(
                "k or enter: drop    escape: keep playing\n"
                "a: drop, and stop asking (or start with --no-confirm-drop)",
                classes="hint",
            )

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)


KEYS_HELP: tuple[tuple[str, str], ...] = (
    ("left right", "move the cursor in your hand"),
    ("space", "select or unselect the card under the cursor"),
    ("1-6", "select or unselect card N"),
    ("d", "draw from the stock"),
    ("p", "pick up the top discard"),
    ("s", "spread the selected cards"),
    ("h", "hit the selected card onto a spread (then choose the spread)"),
    ("x", "discard the card under the cursor"),
    ("k", "drop (knock): end the hand with your count, before drawing (asks first)"),
    ("o", "show your hand by suit, by rank, or as dealt"),
    ("b", "back: play your own turns again after being away"),
    ("c", "chat with the table"),
    ("g", "start the game (the table's creator)"),
    ("?", "this help"),
    ("q", "leave the table (asks first during a hand)"),
)

#: What the marks on the table mean.
MARKS_HELP: tuple[tuple[str, str], ...] = (
    ("▶", "whose turn it is (the top line says what you may do on yours)"),
    ("D", "the dealer"),
    ("^3^", "the card under the cursor; raised cards are selected"),
    ("3*", "the card you just drew or picked up"),
    ("Played for you", "in the log: a move the table made for you while you were away"),
)


class HelpScreen(ModalScreen[None]):
    """The keys, and the table's rules as the core describes them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,enter", "close", "Close")
    ]

    def __init__(self, rules: HouseRules | None, ascii_only: bool = False) -> None:
        super().__init__()
        self.rules = rules
        self.ascii_only = ascii_only

    def compose(self) -> ComposeResult:
        yield TooSmall()
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold", no_wrap=True)
        keys.add_column()
        for key, meaning in KEYS_HELP:
            keys.add_row(key, meaning)
        rules = self.rules or PRESETS["classic"]
        rule_lines = Text("\n".join(rules.describe()))
        with Vertical(id="dialog", classes="dialog help"):
            yield Label("Help", classes="title")
            with VerticalScroll(id="help-body"):
                yield Static(Text("Keys", style="bold underline"))
                yield Static(keys)
                marks = Table.grid(padding=(0, 2))
                marks.add_column(style="bold", no_wrap=True)
                marks.add_column()
                for mark, meaning in MARKS_HELP:
                    if self.ascii_only:
                        mark = mark.replace("▶", ">").replace("┄", "-")
                    marks.add_row(mark, meaning)
                yield Static(Text("\nOn the table", style="bold underline"))
                yield Static(marks)
                heading = (
                    "\nThe rules at this table"
                    if self.rules is not None
                    else "\nThe classic rules (each table names its own)"
                )
                yield Static(Text(heading, style="bold underline"))
                yield Static(rule_lines, id="help-rules")
            yield Label("escape: close    up/down: scroll", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class HitChooser(ModalScreen[int | None]):
    """Choose the spread to hit a card onto: its number, or up/down and enter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose(-1)", "Cancel"),
        Binding("up,left", "move(-1)", "Up", show=False),
        Binding("down,right", "move(1)", "Down", show=False),
        Binding("enter,space", "pick", "Hit"),
        *(Binding(str(n), f"choose({n - 1})", show=False) for n in range(1, 10)),
    ]

    def __init__(
        self,
        card: Card,
        spreads: Sequence[Spread],
        legal: frozenset[int],
        names: Sequence[str],
        style: CardStyle,
    ) -> None:
        super().__init__()
        self.card = card
        self.spreads = tuple(spreads)
        self.legal = legal
        self.names = list(names)
        self.card_style = style
        first = next((i for i, s in enumerate(self.spreads) if s.id in legal), 0)
        self.index = first

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog hit"):
            title = Text("Hit ")
            title.append_text(cards_text((self.card,), self.card_style))
            title.append(" onto which spread?")
            yield Label(title, classes="title")
            yield Static(self._body(), id="hit-list")
            yield Label("1-9 or arrows and enter: hit    escape: cancel", classes="hint")

    def _body(self) -> Group:
        lines = []
        for i, spread in enumerate(self.spreads):
            line = Text("> " if i == self.index else "  ", style="bold")
            line.append_text(spread_line(i + 1, spread, self.names, self.card_style))
            if spread.id not in self.legal:
                line.stylize("dim")
            if i == self.index:
                line.stylize("reverse")
            lines.append(line)
        return Group(*lines)

    def action_move(self, step: int) -> None:
        if self.spreads:
            self.index = (self.index + step) % len(self.spreads)
            self.query_one("#hit-list", Static).update(self._body())

    def action_pick(self) -> None:
        self.action_choose(self.index)

    def action_choose(self, index: int) -> None:
        if 0 <= index < len(self.spreads):
            self.dismiss(self.spreads[index].id)
        elif index < 0:
            self.dismiss(None)
        else:
            spreads = len(self.spreads)
            self.notify(
                f"There is no spread {index + 1}: the table has {spreads} "
                f"spread{'s' if spreads != 1 else ''}."
            )


class EndOfHandModal(ModalScreen[None]):
    """Every revealed hand and its count, who won how, and who paid whom."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,escape,space", "close", "Continue")]

    def __init__(
        self,
        hand_number: int,
        settlement: Settlement,
        names: Sequence[str],
        unit: str,
        style: CardStyle,
        balances: Sequence[int | None] = (),
    ) -> None:
        super().__init__()
        self.hand_number = hand_number
        self.settlement = settlement
        self.names = list(names)
        self.unit = unit
        self.card_style = style
        self.balances = list(balances)
        self.keys_before = 0  # how many keys had arrived when it was shown (the App says)

    def compose(self) -> ComposeResult:
        s = self.settlement
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        table.add_row(
            *(
                Text(heading, style="bold")
                for heading in ("Player", "Hand", "Count", "", "This hand", "Balance")
            )
        )
        net = s.net(len(self.names))
        caught_by = {seat for _, seat in catchers(s)}
        for seat, name in enumerate(self.names):
            revealed = s.revealed[seat] if seat < len(s.revealed) else None
            counted = s.counts[seat] if seat < len(s.counts) else None
            won = seat in s.winners
            result = "dropped" if seat == s.dropper else ""
            if won:
                result = f"{result}, won" if result else "won"
            elif seat in caught_by:
                result = "caught"
            balance = self.balances[seat] if seat < len(self.balances) else None
            table.add_row(
                Text(name, style="bold" if won else ""),
                cards_text(revealed, self.card_style) if revealed else Text("-", style="dim"),
                "-" if counted is None else str(counted),
                Text(result, style="bold green" if won else ""),
                Text(
                    signed(net[seat]) if seat < len(net) else "",
                    style="green" if net[seat] > 0 else "red" if net[seat] < 0 else "",
                ),
                "" if balance is None else signed(balance),
            )
        payments = "\n".join(payment_lines(s, self.names, self.unit))
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog end-of-hand"):
            yield Label(f"Hand {self.hand_number} is over", classes="title")
            yield Static(Text(ending_line(s, self.names), style="bold"), id="ending")
            yield Static(table, id="revealed")
            yield Static(Text(payments), id="payments")
            yield Label(
                "enter: back to the table (it closes by itself at the next deal)", classes="hint"
            )

    def action_close(self) -> None:
        self.dismiss(None)


class StandingsScreen(Screen[None]):
    """The end of a session: the final standings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape", "close", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(
        self, table_name: str, standings: Sequence[tuple[str, int]], hands: int, unit: str
    ) -> None:
        super().__init__()
        self.table_name = table_name
        self.standings = list(standings)
        self.hands = hands
        self.unit = unit

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 3))
        table.add_column(justify="right")
        table.add_column()
        table.add_column(justify="right")
        for place, (name, balance) in enumerate(self.standings, start=1):
            table.add_row(
                f"{place}.",
                Text(name, style="bold" if place == 1 else ""),
                Text(
                    amount_text(balance, self.unit)
                    if balance <= 0
                    else "+" + amount_text(balance, self.unit),
                    style="green" if balance > 0 else "red" if balance < 0 else "",
                ),
            )
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog standings"):
            yield Label(f"{self.table_name}: the session is over", classes="title")
            yield Static(
                f"{self.hands} hand{'s' if self.hands != 1 else ''} played. Final standings:"
            )
            yield Static(table, id="standings")
            yield Label("enter: back    q: quit", classes="hint")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


SESSION_ENDS = (("never", "never"), ("after N hands", "hands"), ("after N minutes", "minutes"))


class CreateTableScreen(ModalScreen[dict[str, Any] | None]):
    """The create-table form: name, preset, option overrides, stake and unit, seats, bots and
    their strategy, turn timer, and how the session ends. Dismisses with the request's fields
    (`bots` and `strategy` for the client to seat), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Create"),
    ]

    def __init__(self, default_name: str) -> None:
        super().__init__()
        self.default_name = default_name

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog create"):
            yield Label("Create a table", classes="title")
            with Grid(id="create-form"):
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
                    placeholder="e.g. hit_lock=1 no_rediscard=true", id="options", compact=True
                )
                yield Label("Stake, unit")
                with Horizontal(classes="pair"):
                    yield Input("1", id="stake", type="integer", max_length=7, compact=True)
                    yield Input("chips", id="unit", max_length=16, compact=True)
                yield Label("Seats, bots")
                with Horizontal(classes="pair"):
                    yield Select(
                        [(str(n), n) for n in range(2, 6)],
                        value=4,
                        allow_blank=False,
                        id="seats",
                        compact=True,
                    )
                    yield Select(
                        [(str(n), n) for n in range(5)],
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
                yield Input("0", id="timer", type="integer", max_length=4, compact=True)
                yield Label("Session ends")
                with Horizontal(classes="pair"):
                    yield Select(
                        SESSION_ENDS, value="never", allow_blank=False, id="ends", compact=True
                    )
                    yield Input(
                        "",
                        id="ends-n",
                        type="integer",
                        max_length=6,
                        placeholder="N",
                        compact=True,
                    )
            yield Label("", id="form-note")
            yield Label("", id="form-error")
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="create", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Label("tab: next field    ctrl+s: create    escape: cancel", classes="hint")

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

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()

    def form(self) -> dict[str, Any]:
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
        request: dict[str, Any] = {
            "name": name,
            "rules": {"preset": preset, **options},
            "stake": stake,
            "unit": self._value("#unit"),
            "seats": seats,
            "bots": bots,
            "strategy": str(self.query_one("#strategy", Select).value),
            "turn_timer": timer or None,
        }
        if ends != "never":
            n = int(self._value("#ends-n") or "0")
            if n < 1:
                raise ValueError(f"give the number of {ends} the session lasts")
            request[ends] = n
        return request

    @on(Button.Pressed, "#create")
    def action_submit(self) -> None:
        try:
            request = self.form()
        except ValueError as exc:
            self.query_one("#form-error", Label).update(Text(str(exc), style="bold red"))
            return
        self.dismiss(request)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
