"""The history of the table: every hand of the session (its dealer, how it ended, who paid
whom), newest first, and at its foot how the session's ledger would settle up now."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option
from tonk.shared.game.history import HandSummary
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..model.replay import hand_entry, ledger_foot
from ..model.reports import HistoryListed
from ..touch import by_touch
from ..widgets import TooSmall
from .taps import tapped_outside, way_out

#: The last line of the list while older hands are left to ask for.
OLDER = "older"


class HistoryScreen(ModalScreen[None]):
    """The session's hands; enter on one replays it, enter on the last line asks for older
    hands (the server sends a page at a time)."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="up/down and enter replay a hand, escape goes back"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,l,q", "close", "Back to the table"),
    ]

    def __init__(self, page: HistoryListed) -> None:
        super().__init__()
        self.table = page.table
        self.table_name = page.table_name
        self.hands: list[HandSummary] = []
        self.page = page

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog history"):
            yield Label("", id="history-title", classes="title")
            yield OptionList(id="history-hands")
            yield Static("", id="history-foot")
            yield way_out(
                self.app,
                "up/down: choose   enter: replay the hand   escape: back to the table",
                (("Back to the table", "close"),),
            )

    def on_mount(self) -> None:
        self.show(self.page)

    def show(self, page: HistoryListed) -> None:
        """A page come from the server: older hands than those listed are added below them;
        any other page (the newest) lists the session afresh."""
        self.page = page
        if self.hands and page.hands and page.hands[0].number < self.hands[-1].number:
            self.hands.extend(page.hands)
        else:
            self.hands = list(page.hands)
        listed = self.query_one("#history-hands", OptionList)
        highlighted = listed.highlighted
        listed.clear_options()
        for hand in self.hands:
            listed.add_option(Option(hand_entry(hand, page.unit), id=str(hand.number)))
        if page.more:
            left = page.total - len(self.hands)
            shows = "a tap shows" if by_touch(self.app) else "enter shows"
            listed.add_option(
                Option(Text(f"{left} older hands: {shows} them", style="italic"), id=OLDER)
            )
        if not self.hands:
            listed.add_option(Option(Text("No hand has been played to its end yet."), id=""))
        listed.highlighted = min(highlighted or 0, listed.option_count - 1)
        shown = f"{len(self.hands)} of {page.total}" if page.more else str(page.total)
        title = f"{self.table_name}: the session's hands ({shown})"
        self.query_one("#history-title", Label).update(title)
        foot = ledger_foot(dict(page.balances), page.settle_up, page.unit)
        self.query_one("#history-foot", Static).update(foot)
        listed.focus()

    @on(OptionList.OptionSelected, "#history-hands")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id
        if chosen == OLDER:
            before = self.hands[-1].number
            self.post_message(Request(m.History(self.table, before=before)))
        elif chosen:
            self.post_message(Request(m.HistoryHand(self.table, int(chosen))))

    def on_click(self, event: events.Click) -> None:
        if tapped_outside(self, event):
            self.action_close()

    def action_close(self) -> None:
        self.dismiss(None)
