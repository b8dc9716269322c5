"""Messages the connection worker posts to the App, and the requests screens post up to it.

Dataclasses, as in posting; a state message can replace an older one of its kind still in the
queue (toolong's `can_replace`), so a burst of updates draws only the newest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.message import Message
from tonk.shared import messages as m
from tonk.shared.settlement import Settlement

from .state import TableInfo, TableState
from .tablerequest import TableRequest


@dataclass
class Connected(Message):
    """The handshake is done: `server` names the server, `name` is ours as it accepted it."""

    server: str
    name: str
    address: str
    reconnect: bool


@dataclass
class LinkLost(Message):
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
class LobbyChanged(Message):
    """The server's list of tables changed; `show`: the lobby is where we are (not on our
    way to a table we asked for on connecting)."""

    tables: tuple[TableInfo, ...]
    show: bool = True

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LobbyChanged)


@dataclass
class TableChanged(Message):
    """The table we sit at (or watch) changed; `state` is all of it."""

    state: TableState

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TableChanged) and message.state.table_id == self.state.table_id


@dataclass
class LeftTable(Message):
    """We are back in the lobby; `reason` says why when we did not ask."""

    reason: str = ""


@dataclass
class HandEnded(Message):
    """A hand was settled: for the end-of-hand modal."""

    hand_number: int
    settlement: Settlement
    names: Sequence[str]
    unit: str
    balances: Sequence[int | None] = ()  # each seat's balance after the hand


@dataclass
class SessionEnded(Message):
    table_name: str
    hands: int
    standings: Sequence[tuple[str, int]]
    unit: str


@dataclass
class ServerRefused(Message):
    """The server refused a request; `message` is its reason, for a person."""

    code: str
    message: str
    detail: str = ""


@dataclass
class Request(Message):
    """A screen asks the App to send a message to the server (a play, a chat, a seat...), or
    to create a table and seat its bots."""

    message: m.ClientMessage | TableRequest
