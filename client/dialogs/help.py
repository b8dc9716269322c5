"""The help screen: the keys, the marks on the table, the table's rules, and the house-rule
options a new table may change (read from the core's table of options)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from tonk.shared.game.rules import OPTIONS, PRESETS, HouseRules, Option

from ..keys import ScreenKeys
from ..tablekeys import KEYS_HELP, TAPS_HELP
from ..touch import by_touch
from ..widgets import TooSmall
from .taps import tapped_outside, way_out

#: What the marks on the table mean.
MARKS_HELP: tuple[tuple[str, str], ...] = (
    ("▶", "whose turn it is (the top line says what you may do on yours)"),
    ("D", "the dealer"),
    ("^3^", "the card under the cursor; raised cards are selected"),
    ("3*", "the card you just drew or picked up"),
    ("Played for you", "in the log: a move the table made for you while you were away"),
)

#: How options are typed, above the list of them.
OPTIONS_INTRO = (
    "A new table may change these, typed in the create-table form's Options field as "
    "name=value, separated by spaces (e.g. hit_lock=1 no_rediscard=true). A preset may set "
    "some differently from classic."
)


def option_text(option: Option) -> str:
    """One option's help: its meaning, the values it takes and its classic value."""
    meaning = option.meaning.replace("`", "")
    return f"{meaning}. Takes {option.takes}; classic: {option.typed(option.default)}."


def option_rows() -> list[tuple[str, str]]:
    """Every house-rule option in the core's table, by name, with its help."""
    return [(option.name, option_text(option)) for option in OPTIONS.values()]


class HelpScreen(ModalScreen[None]):
    """The keys, the table's rules as the core describes them, and the house-rule options.
    With `at_options`, it opens at the options (the create-table form's f1)."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(passes_through=True)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,enter", "close", "Close")
    ]

    def __init__(
        self,
        rules: HouseRules | None,
        ascii_only: bool = False,
        at_options: bool = False,
        keys: Sequence[tuple[str, str]] | None = None,
        taps: Sequence[tuple[str, str]] = (),
    ) -> None:
        """`keys`: (key, what it does) of the screen the help is for, the table's if none
        (the lobby's help lists its own keys, and no marks of the table); `taps`: (what is
        tapped, what it does), listed in their place on a touch screen (the table's if
        `keys` is none)."""
        super().__init__()
        self.rules = rules
        self.ascii_only = ascii_only
        self.at_options = at_options
        self.at_table = keys is None
        self.keys = KEYS_HELP if keys is None else tuple(keys)
        self.taps = TAPS_HELP if keys is None else tuple(taps)

    def compose(self) -> ComposeResult:
        yield TooSmall()
        touch = by_touch(self.app)
        keys = Table.grid(padding=(0, 2))
        keys.add_column(style="bold", no_wrap=True)
        keys.add_column()
        for key, meaning in self.taps if touch else self.keys:
            keys.add_row(key, meaning)
        rules = self.rules or PRESETS["classic"]
        rule_lines = Text("\n".join(rules.describe()))
        with Vertical(id="dialog", classes="dialog help"):
            yield Label("Help", classes="title")
            with VerticalScroll(id="help-body"):
                keys_title = "Taps and buttons" if touch else "Keys"
                if not self.at_table:
                    keys_title += " in the lobby"
                yield Static(Text(keys_title, style="bold underline"))
                yield Static(keys)
                if self.at_table:
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
                options = Group(
                    *(
                        Group(Text(name, style="bold"), Padding(Text(text), (0, 0, 0, 2)))
                        for name, text in option_rows()
                    )
                )
                yield Static(
                    Text("\nHouse-rule options", style="bold underline"), id="help-options-title"
                )
                yield Static(Text(OPTIONS_INTRO))
                yield Static(options, id="help-options")
            yield way_out(self.app, "escape: close    up/down: scroll", (("Close", "close"),))

    def on_mount(self) -> None:
        self.app.clear_notifications()  # a notice would draw over the help
        if self.at_options:
            self.call_after_refresh(self._scroll_to_options)

    def _scroll_to_options(self) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        body.scroll_to_widget(self.query_one("#help-options-title"), top=True, animate=False)

    def on_click(self, event: events.Click) -> None:
        if tapped_outside(self, event):
            self.action_close()

    def action_close(self) -> None:
        self.dismiss(None)
