"""What the client's model reports for the screens, as plain values: the model (`model.py`)
gives these, and the connection hands each to the App wrapped in the Textual message of the
same name (`messages.py`), so the model knows nothing of Textual."""

from __future__ import annotations

from tonk.shared import messages as m
from tonk.shared.records import record
from tonk.shared.settlement import Settlement

from .state import TableInfo, TableState


@record
class Connected:
    """The handshake is done: `server` names the server, `name` is ours as it accepted it."""

    server: str
    name: str
    address: str
    reconnect: bool


@record
class LobbyChanged:
    """The server's list of tables changed; `show`: the lobby is where we are (not on our
    way to a table we asked for on connecting)."""

    tables: tuple[TableInfo, ...]
    show: bool = True


@record
class TableChanged:
    """The table we sit at (or watch) changed; `state` is all of it."""

    state: TableState


@record
class LeftTable:
    """We are back in the lobby; `reason` says why when we did not ask."""

    reason: str = ""


@record
class HandEnded:
    """A hand was settled: for the end-of-hand window."""

    hand_number: int
    settlement: Settlement
    names: tuple[str, ...]
    unit: str
    balances: tuple[int | None, ...] = ()  # each seat's balance after the hand


@record
class SessionEnded:
    """The session is over: the final standings."""

    table_name: str
    hands: int
    standings: tuple[tuple[str, int], ...]
    unit: str


@record
class ServerRefused:
    """The server refused a request; `message` is its reason, for a person."""

    code: str
    message: str
    detail: str = ""
    request: str = ""  # the type of the request refused, if known


@record
class StandingsArrived:
    """The server's standings across nights, for the period asked."""

    standings: m.Standings


#: Everything the model reports.
Report = (
    Connected
    | LobbyChanged
    | TableChanged
    | LeftTable
    | HandEnded
    | SessionEnded
    | ServerRefused
    | StandingsArrived
)
