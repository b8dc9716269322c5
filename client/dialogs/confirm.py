"""Questions: a plain yes/no, the one asked before a drop, and one with a few answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ..keys import ScreenKeys
from ..touch import by_touch
from ..widgets import TooSmall
from .chooser import Chooser
from .taps import TapButtons


class TapHint(Label):
    """A dialog's hint of its keys, whose parts answer taps as their keys do: each line is
    its parts, (what is shown, the dialog's action), shown four spaces apart (`buttons`: each
    part drawn as a button, reversed)."""

    GAP = "    "

    def __init__(self, *lines: tuple[tuple[str, str], ...], buttons: bool = False) -> None:
        style = "bold reverse" if buttons else ""
        shown = Text("\n").join(
            Text(self.GAP).join(Text(t, style=style) for t, _ in ln) for ln in lines
        )
        super().__init__(shown, classes="hint")
        self.lines = lines

    async def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not 0 <= offset.y < len(self.lines):
            return
        start = 0
        for text, action in self.lines[offset.y]:
            if start <= offset.x < start + len(text):
                await self.app.run_action(action, self.screen)
                return
            start += len(text) + len(self.GAP)


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question: y or enter says yes, n or escape says no."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(hint="y answers yes, n or escape no")
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
            if by_touch(self.app):
                yield TapButtons(("Yes", "answer(True)"), ("No", "answer(False)"))
            else:
                yield TapHint((("y: yes", "answer(True)"), ("n: no", "answer(False)")))

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ChoiceModal(Chooser[int]):
    """A question with a few answers: an answer's number, or the arrows and enter, gives its
    index; escape gives None (no answer)."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(
        hint="an answer's number, or the arrows and enter, answers; escape cancels"
    )

    def __init__(self, question: str, answers: Sequence[str]) -> None:
        super().__init__()
        self.question = question
        self.answers = tuple(answers)

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog confirm"):
            yield Static(self.question, id="question")
            yield Static(self.lines(), id="choices")
            if by_touch(self.app):
                yield TapButtons(("Cancel", "choose(-1)"))
            else:
                yield TapHint((("1-9 or enter: choose", "pick"), ("escape: cancel", "choose(-1)")))

    def count(self) -> int:
        return len(self.answers)

    def lines(self) -> str:
        return "\n".join(
            f"{'>' if n == self.index else ' '} {n + 1} {answer}"
            for n, answer in enumerate(self.answers)
        )

    def chosen(self, index: int) -> int:
        return index


class DropModal(ModalScreen[str]):
    """Asked before a drop, which cannot be taken back: k (again) or enter drops, a drops
    and stops asking for the rest of this run of the client, escape or n keeps playing.
    Dismisses with "drop", "always" or "cancel"."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k,enter,y", "answer('drop')", "Drop"),
        Binding("a", "answer('always')", "Drop, never ask"),
        Binding("escape,n", "answer('cancel')", "Keep playing"),
    ]

    def __init__(
        self, count: int, asked_at: tuple[int, int] = (0, 0), command_line: bool = True
    ) -> None:
        super().__init__()
        self.count = count
        self.asked_at = asked_at  # (hand, events so far) when it was asked
        # The player started tonk-client themselves (not a guest of a door, whose command
        # line is the server's): the option that never asks is theirs to give.
        self.command_line = command_line

    def compose(self) -> ComposeResult:
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog confirm drop"):
            yield Static(
                f"Drop with {self.count}? The hand ends now; if another count is low "
                "enough, you are caught and pay.",
                id="question",
            )
            if by_touch(self.app):
                yield TapButtons(("Drop", "answer('drop')"), ("Keep playing", "answer('cancel')"))
                yield TapButtons(("Drop, and stop asking", "answer('always')"))
                return
            yield TapHint(
                (
                    ("k or enter: drop", "answer('drop')"),
                    ("escape: keep playing", "answer('cancel')"),
                ),
                (
                    (
                        "a: drop, and stop asking"
                        + (" (or start with --no-confirm-drop)" if self.command_line else ""),
                        "answer('always')",
                    ),
                ),
                buttons=True,
            )

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)
