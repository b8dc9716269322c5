"""Messages for the App: the model's reports (`reports.py`) wrapped as Textual messages by the
connection, what the connection itself says of the link, and the requests screens post up.

Dataclasses, as in posting; a state message can replace an older one of its kind still in the
queue (toolong's `can_replace`), so a burst of updates draws only the newest. Those that may
answer a move are `MoveAnswer`s (`keys.py`): the keys after a move wait for one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.message import Message
from tonk.shared.wire import messages as m

from .keys import MoveAnswer, Progress
from .model import reports
from .tablerequest import TableRequest

R = TypeVar("R", bound=reports.Report)


class Reported(Message, Generic[R]):
    """One of the model's reports, for the App: `report` is the value."""

    def __init__(self, report: R) -> None:
        super().__init__()
        self.report = report


class Connected(Reported[reports.Connected]):
    """The handshake is done."""


class LobbyChanged(Reported[reports.LobbyChanged]):
    """The server's list of tables changed."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LobbyChanged)


class TableChanged(Reported[reports.TableChanged], MoveAnswer):
    """The table we sit at (or watch) changed."""

    def answers(self, sent: Progress) -> bool:
        """The table got past where it was when the move was sent, unless the move ended the
        hand: the end-of-hand window (the `HandEnded` that follows) answers that one, so that
        the keys after it find the window up."""
        state = self.report.state
        ended = state.view is not None and state.view.settlement is not None
        return not ended and state.progress != sent

    def can_replace(self, message: Message) -> bool:
        return (
            isinstance(message, TableChanged)
            and message.report.state.table_id == self.report.state.table_id
        )


class LeftTable(Reported[reports.LeftTable], MoveAnswer):
    """We are back in the lobby."""


class HandEnded(Reported[reports.HandEnded], MoveAnswer):
    """A hand was settled."""


class SessionEnded(Reported[reports.SessionEnded]):
    """The session is over."""


class RematchChanged(Reported[reports.RematchChanged]):
    """Where the rematch offer stands."""


class ServerRefused(Reported[reports.ServerRefused], MoveAnswer):
    """The server refused a request."""


class JoinNotice(Reported[reports.JoinNotice]):
    """Where a table asked for by name took us."""


class HistoryListed(Reported[reports.HistoryListed]):
    """A page of our table's history came."""


class HandReplayed(Reported[reports.HandReplayed]):
    """A hand of our table's history came, every step of it."""


#: The App's message for each of the model's reports written here (those without one: see
#: `wrapped`).
MESSAGES: dict[type[reports.Report], type[Reported[Any]]] = {
    reports.Connected: Connected,
    reports.LobbyChanged: LobbyChanged,
    reports.TableChanged: TableChanged,
    reports.LeftTable: LeftTable,
    reports.HandEnded: HandEnded,
    reports.SessionEnded: SessionEnded,
    reports.RematchChanged: RematchChanged,
    reports.ServerRefused: ServerRefused,
    reports.JoinNotice: JoinNotice,
    reports.HistoryListed: HistoryListed,
    reports.HandReplayed: HandReplayed,
}
#: The App's message for a report with none written above (a server's answer handed on as it
#: is): one class each, derived from the report's class once, of the same name, so that the
#: App's handler is named after it (`on_standings` for `m.Standings`, `on_coach_advice`).
_DERIVED: dict[type[reports.Report], type[Reported[Any]]] = {}


def message_class(kind: type[reports.Report]) -> type[Reported[Any]]:
    """The App's message for reports of class `kind`: written above, or derived."""
    written = MESSAGES.get(kind)
    if written is not None:
        return written
    derived = _DERIVED.get(kind)
    if derived is None:
        doc = f"The model's report of a `{kind.__name__}`, for the App: `report` is its value."
        derived = _DERIVED[kind] = type(
            kind.__name__,
            (Reported,),
            {"__doc__": doc, "__module__": __name__, "__qualname__": kind.__name__},
        )
    return derived


def wrapped(report: reports.Report) -> Message:
    """A report of the model's as the App's message of the same name."""
    return message_class(type(report))(report)


@dataclass
class LinkLost(MoveAnswer):
    """The connection dropped; the worker is retrying in `retry_in` seconds."""

    reason: str
    retry_in: float
    attempt: int


@dataclass
class ConnectFailed(Message):
    """The server cannot be reached or will not talk to us: a message for a person; the app
    ends with it."""

    reason: str


@dataclass
class Request(Message):
    """A screen asks the App to send a message to the server (a play, a chat, a seat...), or
    to create a table and seat its bots."""

    message: m.ClientMessage | TableRequest


@dataclass
class RefusedHere(Message):
    """A screen refused a move before sending it (the core's reason, as the server would
    give it): for the table's log, where the server's refusals go too."""

    reason: str
