"""The help screen: the keys, the marks on the table, and the table's rules."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from tonk.shared.rules import PRESETS, HouseRules

from ..tablekeys import KEYS_HELP
from ..widgets import TooSmall

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
