"""The standings across nights (lobby key `s`): every player's hands, wins, drops, tonks and net
for tonight, the last 7 or 30 nights or all time, people first and bots apart, as the server
counts them."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Static
from tonk.shared.game.standings import PERIOD_TITLES, PERIODS, Period
from tonk.shared.standings_text import Kind, standings_lines
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..touch import by_touch
from ..widgets import TooSmall
from ..widgets.screenkeys import screen_keys

#: How each kind of line looks.
STYLES = {
    Kind.TITLE: "bold",
    Kind.NOTE: "dim",
    Kind.SECTION: "bold underline",
    Kind.HEADING: "bold",
    Kind.ROW: "",
    Kind.BLANK: "",
}


def standings_text(answer: m.Standings) -> Text:
    out = Text()
    for line, kind in standings_lines(answer):
        out.append(line + "\n", style=STYLES[kind])
    return out


class NightsScreen(Screen[None]):
    """The standings across nights, asked of the server for one period at a time."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="t, w, m and a choose the nights, escape goes back, q quits"
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "period('tonight')", "Tonight"),
        Binding("w", "period('week')", "7 days"),
        Binding("m", "period('month')", "30 days"),
        Binding("a", "period('all')", "All time"),
        Binding("r", "refresh", "Again"),
        Binding("escape,s", "close", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    #: The server's latest answer (set by the App as it comes).
    answer: var[m.Standings | None] = var(None)
    #: Why the server did not answer the last request (set by the App).
    refused: var[str] = var("", always_update=True)

    def __init__(self, period: Period = Period.TONIGHT) -> None:
        super().__init__()
        self.period = period

    def compose(self) -> ComposeResult:
        yield TooSmall()
        yield Static(Text("tonk · standings across nights", style="bold"), id="nights-title")
        with VerticalScroll(id="nights-scroll"):
            yield Static("", id="nights-body")
        yield screen_keys(self.app)

    def on_mount(self) -> None:
        self.action_refresh()

    def action_period(self, word: str) -> None:
        self.period = PERIODS[word]
        self.action_refresh()

    def action_refresh(self) -> None:
        body = self.query_one("#nights-body", Static)
        body.update(f"{PERIOD_TITLES[self.period]}: asking the server...")
        self.post_message(Request(m.StandingsRequest(str(self.period))))

    def watch_answer(self, answer: m.Standings | None) -> None:
        if answer is None or answer.period != self.period:
            return  # an answer to a period asked before this one
        self.query_one("#nights-body", Static).update(standings_text(answer))

    def watch_refused(self, reason: str) -> None:
        if reason:
            self.query_one("#nights-body", Static).update(
                f"{PERIOD_TITLES[self.period]}: the server did not answer ({reason}). "
                + ("Tap Again to ask again." if by_touch(self.app) else "r asks again.")
            )

    def action_close(self) -> None:
        self.dismiss(None)
