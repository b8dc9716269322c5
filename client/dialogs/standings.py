"""The end of a session: the final standings (across a chain of rematches too), the last
hand's result, how to settle up, and the rematch offered (`r` says yes, `n` no)."""

from __future__ import annotations

import re
import time
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Label, Static
from tonk.shared.game.settle_up import settle_up_text
from tonk.shared.game.words import amount_text, plural
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..model.reports import RematchChanged, SessionEnded
from ..model.state import TableState
from ..touch import by_touch
from ..widgets import TooSmall
from ..widgets.screenkeys import screen_keys

#: What the screen's result says: the player moved on to the rematch (nothing more to do).
MOVED = "moved"


class StandingsScreen(Screen[str | None]):
    """The end of a session: the final standings and the rematch offer."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="r says yes to a rematch, n no, l shows the hands, enter goes back, q quits",
        ends_earlier_keys=True,
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "rematch(True)", "Rematch"),
        Binding("n", "rematch(False)", "No rematch"),
        Binding("l", "history", "History"),
        Binding("enter,escape", "close", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, ended: SessionEnded, me: str = "", practice: bool = False) -> None:
        super().__init__()
        self.ended = ended
        self.me = me
        self.practice = practice  # enter ends the program (no lobby to go back to)
        self.table_name = ended.table_name
        self.table_id = ended.table_id
        self.standings = list(ended.standings)
        self.hands = ended.hands
        self.unit = ended.unit
        offered = ended.rematch is not None and ended.seated
        self.rematch: RematchChanged | None = None
        self.away: frozenset[str] = frozenset()  # the players not here now (the table says)
        self._until: float | None = (
            time.monotonic() + ended.rematch if offered and ended.rematch is not None else None
        )
        self._offered = offered

    def compose(self) -> ComposeResult:
        ended = self.ended
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog standings"):
            why = ": every player had left" if ended.abandoned else ""
            yield Label(f"{self.table_name}: the session is over{why}", classes="title")
            played = f"{plural(self.hands, 'hand')} played."
            if ended.timed:
                played = f"Time is up: {played}"
            last = _sentence(ended.last_hand)
            yield Static(f"{played} {last}" if last else played, id="last-hand")
            yield Static(self._table(), id="standings")
            yield Static(self._settle_up(), id="settle-up")
            yield Static(self._rematch_text(), id="rematch")
            hint = Label(self._hint(), id="standings-hint", classes="hint")
            hint.display = not by_touch(self.app)
            yield hint
        yield screen_keys(self.app)

    def on_mount(self) -> None:
        if self._until is not None:
            self.set_interval(1.0, self._tick)
        self.watch(self.app, "table_state", self._table_changed)

    def _table_changed(self, state: TableState | None) -> None:
        """Who is not here now (lost the link, or away): an answer they still owe says so."""
        if state is None or state.table_id != str(self.table_id):
            return
        away = frozenset(p.name for p in state.players if p.away or not p.connected)
        if away != self.away:
            self.away = away
            self._refresh()

    def _table(self) -> Table:
        ended = self.ended
        table = Table.grid(padding=(0, 3))
        table.add_column(justify="right")
        table.add_column()
        table.add_column(justify="right")
        combined = dict(ended.combined)
        if combined:
            table.add_column(justify="right")
            table.add_row(
                "",
                "",
                Text("this session", style="dim"),
                Text(f"{ended.sessions} sessions", style="dim"),
            )
            order = list(ended.combined)
        else:
            order = list(self.standings)
        balances = dict(self.standings)
        for place, (name, _) in zip(ranks([amount for _, amount in order]), order, strict=True):
            shown = Text(name, style="bold" if place == 1 else "")
            if name == self.me and ended.seated:
                shown.append(" (you)", style="dim")
            row: list[str | Text] = [
                f"{place}.",
                shown,
                self._amount(balances[name]) if name in balances else Text("-", style="dim"),
            ]
            if combined:
                row.append(self._amount(combined[name]))
            table.add_row(*row)
        return table

    def _amount(self, balance: int) -> Text:
        text = amount_text(balance, self.unit)
        return Text(
            "+" + text if balance > 0 else text,
            style="green" if balance > 0 else "red" if balance < 0 else "",
        )

    def _settle_up(self) -> str:
        ended = self.ended
        line = f"Settle up: {settle_up_text(ended.settle_up, self.unit)}"
        if ended.sessions > 1:
            together = settle_up_text(ended.combined_settle_up, self.unit)
            line += f"\nThe {ended.sessions} sessions together: {together}"
        return line

    # -- the rematch -------------------------------------------------------------------------

    def _seconds(self) -> int:
        return 0 if self._until is None else max(0, round(self._until - time.monotonic()))

    def _rematch_text(self) -> Text:
        status = self.rematch
        left = f"{self._seconds() // 60}:{self._seconds() % 60:02d}"
        if status is None:
            if self.ended.rematch is None:
                return Text("No rematch is offered: nobody is left to play it.", style="dim")
            if not self._offered:
                return Text("The players are offered a rematch.", style="dim")
            return Text(
                f"Rematch? The same seats, rules and stakes: {self._answers()} ({left} left "
                "to answer).",
                style="bold",
            )
        answers = dict(status.seats)
        mine = answers.get(self.me) if self._offered else None
        if status.outcome == "started":
            if mine in ("yes", "bot"):
                return Text("The rematch starts: taking your seat...", style="bold green")
            playing = [name for name, given in status.seats if given == "yes"]
            verb = "plays" if len(playing) == 1 else "play"
            return Text(
                f"The rematch has started: {self._names(status, 'yes')} {verb} on.", style="bold"
            )
        if status.outcome == "off":
            why = "nobody said yes" if "yes" not in answers.values() else "too few players stay"
            return Text(f"The rematch is called off: {why}.", style="bold")
        parts = [
            f"{name}{' (you)' if name == self.me and self._offered else ''}: "
            f"{'away, ' if answer == 'awaited' and name in self.away else ''}"
            f"{_ANSWER_WORDS.get(answer, answer)}"
            for name, answer in status.seats
        ]
        awaited = self._names(status, "awaited")
        if mine == "yes" and not awaited:
            lead = f"You said yes; waiting for the others to be back ({left} left)."
        elif mine == "yes":
            lead = f"You said yes; waiting for {awaited} ({left} left)."
        elif mine == "no":
            lead = f"You said no: the rest may play on without you ({left} left)."
        elif mine == "awaited":
            lead = f"Rematch? The same seats, rules and stakes: {self._answers()} ({left} left)."
        else:
            lead = f"Rematch: waiting for {awaited or 'the players to be back'} ({left} left)."
        return Text(f"{lead}\n" + ", ".join(parts) + ".")

    @staticmethod
    def _names(status: RematchChanged, answer: str) -> str:
        names = [name for name, given in status.seats if given == answer]
        return " and ".join(names) if len(names) < 3 else ", ".join(names)

    def _open(self) -> bool:
        """Whether we may answer the offer now."""
        status = self.rematch
        return self._offered and (status is None or status.outcome == "waiting")

    def _answers(self) -> str:
        """How the offer is answered: by its keys in a terminal, its buttons on a touch screen."""
        return "tap Rematch or No rematch" if by_touch(self.app) else "r says yes, n no"

    def _hint(self) -> str:
        """The keys, in a terminal (a touch screen's buttons are under it: no line)."""
        if by_touch(self.app):
            return ""
        keys = "r: rematch    n: no    " if self._open() else ""
        back = "enter: done" if self.practice else "enter: back to the lobby"
        return f"{keys}l: history    {back}    q: quit"

    def show_rematch(self, status: RematchChanged) -> None:
        """Where the offer stands, as the server says."""
        self.rematch = status
        self._until = None if status.seconds is None else time.monotonic() + status.seconds
        self._refresh()

    def _tick(self) -> None:
        if self.rematch is None or self.rematch.outcome == "waiting":
            self._refresh()

    def _refresh(self) -> None:
        if not self.is_mounted:
            return
        self.query_one("#rematch", Static).update(self._rematch_text())
        self.query_one("#standings-hint", Label).update(self._hint())

    def action_rematch(self, yes: bool) -> None:
        if not self._offered:
            self.notify(
                "No rematch is offered here."
                if self.ended.seated
                else "You are watching: the players answer the rematch."
            )
            return
        if not self._open():
            self.notify("The rematch has been decided already.")
            return
        self.post_message(Request(m.Rematch(yes)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """r and n only for one who has a rematch to answer: not on a spectator's key bar
        (pressed, they say why; see on_key)."""
        if action == "rematch":
            return self._offered
        return True

    def on_key(self, event: events.Key) -> None:
        if event.key in ("r", "n") and not self._offered:
            event.stop()
            self.action_rematch(event.key == "r")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_history(self) -> None:
        """The session's hands, over the standings (the App shows them when they come)."""
        self.post_message(Request(m.History(self.table_id)))


_ANSWER_WORDS = {
    "yes": "yes",
    "no": "no",
    "awaited": "not answered yet",
    "left": "left",
    "late": "did not answer",
    "bot": "a bot, stays",
}


def ranks(amounts: list[int]) -> list[int]:
    """Each place in an order already ranked, most ahead first: equal amounts share the
    place, and the next after them counts them all (1, 2, 2, 4)."""
    places: list[int] = []
    for index, amount in enumerate(amounts):
        tied = index > 0 and amounts[index - 1] == amount
        places.append(places[-1] if tied else index + 1)
    return places


def _sentence(last_hand: tuple[str, ...]) -> str:
    """The last hand's ending and its payments as one sentence or two."""
    if not last_hand:
        return ""
    ending, *payments = last_hand
    # (`You pay Ann 2 chips, you pay Bix 2 chips`: a "You" past the first is mid-sentence.)
    said = [payment.rstrip(".") for payment in payments]
    paid = ", ".join(said[:1] + [re.sub(r"^You\b", "you", payment) for payment in said[1:]])
    return f"{ending} {paid}." if paid else ending
