"""One hand of the history played again step by step, as you saw it: your cards at each step,
the table, the moves so far, and at the end what the rules revealed."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..model.replay import board, step_logs, step_title
from ..model.reports import HandReplayed
from ..text.render import CardStyle
from ..widgets import TooSmall
from .taps import tapped_outside, way_out

#: The replay's keys, as its last line shows them.
KEYS_LINE = "left/right: step back/on  home/end: deal/end  c: coach  escape: back"
#: A spectator's: the coach looks at a player's own moves, and a spectator made none.
WATCHING_KEYS_LINE = "left/right: step back/on  home/end: deal/end  escape: back"


class HandReplayScreen(ModalScreen[None]):
    """A hand of the history, one step at a time: the deal, then each move."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="left/right step through the hand, escape goes back"
    )
    # (priority: the log's scroll would take the arrows, home and end for itself)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h,comma", "step(-1)", "Back a step", priority=True),
        Binding("right,l,period,space", "step(1)", "On a step", priority=True),
        Binding("home", "to(0)", "The deal", priority=True),
        Binding("end", "to(-1)", "The end", priority=True),
        Binding("c", "coach", "The coach's view of your move"),
        Binding("escape,q,enter", "close", "Back to the list"),
    ]

    def __init__(self, replayed: HandReplayed, style: CardStyle) -> None:
        super().__init__()
        self.replayed = replayed
        self.card_style = style
        self.at = 0
        self.logs = step_logs(replayed.hand, replayed.steps, replayed.names, style)
        #: The coach's answers by step, as text (asked once each).
        self.advice: dict[int, str] = {}
        self.answered: set[int] = set()
        self.asked: int | None = None  # the step of the question the coach has not answered

    def compose(self) -> ComposeResult:
        replayed = self.replayed
        seen = "as a spectator saw it" if replayed.seat is None else "as you saw it"
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog replay"):
            yield Label(f"Hand {replayed.hand}, {seen}", classes="title")
            yield Label("", id="replay-step")
            yield Static("", id="replay-board")
            with VerticalScroll(id="replay-log"):
                yield Static("", id="replay-moves")
            yield Static("", id="replay-coach")
            yield way_out(
                self.app,
                WATCHING_KEYS_LINE if replayed.seat is None else KEYS_LINE,
                (
                    ("< Back", "step(-1)"),
                    ("On >", "step(1)"),
                    *((("Coach", "coach"),) if replayed.seat is not None else ()),
                    ("Close", "close"),
                ),
            )

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        replayed = self.replayed
        steps = replayed.steps
        view = steps[self.at].view
        names = replayed.names[self.at]
        self.query_one("#replay-step", Label).update(step_title(self.at, steps, names))
        self.query_one("#replay-board", Static).update(
            board(view, names, replayed.unit, self.card_style)
        )
        moves = Text("\n").join(self.logs[self.at]) if self.logs[self.at] else Text("")
        self.query_one("#replay-moves", Static).update(moves)
        self.query_one("#replay-log", VerticalScroll).scroll_end(animate=False)
        self.query_one("#replay-coach", Static).update(self.advice.get(self.at, ""))

    def decision(self) -> bool:
        """Whether the step shown is one you chose from (its next move is yours: made from
        the seat the next step is seen from, which you held then)."""
        steps = self.replayed.steps
        if self.at >= len(steps) - 1:
            return False
        view = steps[self.at].view
        return view.settlement is None and view.turn == steps[self.at + 1].view.seat

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No coach for a spectator's replay: they made no move to ask about."""
        return not (action == "coach" and self.replayed.seat is None)

    def action_coach(self) -> None:
        """Ask the coach for the expert's view of your move from this step."""
        if self.at in self.answered or self.asked is not None:
            return  # answered already (the same question gets the same answer), or asking
        if not self.decision():
            self.advice[self.at] = (
                "The coach looks at your own moves: step to one where it is your turn."
            )
        else:
            self.advice[self.at] = "Asking the coach..."
            self.asked = self.at
            replayed = self.replayed
            self.post_message(Request(m.CoachRequest(replayed.table, replayed.hand, self.at)))
        self._draw()

    def show_advice(self, step: int | None, text: str) -> None:
        """The coach's answer about `step`; None: the question asked was refused (`text` says
        why; asked again, it may be answered)."""
        if step is None:
            if self.asked is None:
                return
            step = self.asked
            self.advice[step] = f"The coach did not answer: {text}"
        else:
            self.advice[step] = f"The coach: {text}"
            self.answered.add(step)
        if step == self.asked:
            self.asked = None
        self._draw()

    def action_step(self, by: int) -> None:
        self.action_to(max(0, min(len(self.replayed.steps) - 1, self.at + by)))

    def action_to(self, step: int) -> None:
        self.at = step % len(self.replayed.steps)
        self._draw()

    def on_click(self, event: events.Click) -> None:
        if tapped_outside(self, event):
            self.action_close()

    def action_close(self) -> None:
        self.dismiss(None)
