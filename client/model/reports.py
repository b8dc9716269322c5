"""What the client's model reports for the screens, as plain values: the model (`model.py`)
gives these, and the connection hands each to the App wrapped in the Textual message of the
same name (`messages.py`), so the model knows nothing of Textual."""

from __future__ import annotations

from tonk.shared.game.history import HandSummary, HistoryStep
from tonk.shared.game.settle_up import Transfer
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.spreads import Spread
from tonk.shared.records import record
from tonk.shared.wire import messages as m

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
    names: tuple[str, ...]  # by seat, as the table shows them (our own too)
    unit: str
    balances: tuple[int | None, ...] = ()  # each seat's balance after the hand
    seat: int | None = None  # our seat (None: watching)
    spreads: tuple[Spread, ...] = ()  # the spreads on the table as the hand ended
    # The check of the hand's deal ("deck checked", or a warning naming the hand); empty
    # when there is none (a test deck).
    deck_line: str = ""
    deck_ok: bool = True


@record
class SessionEnded:
    """The session is over: the final standings, how to settle them up, the last hand's
    result, across a chain of rematches the totals too, and the rematch offered."""

    table_name: str
    hands: int
    standings: tuple[tuple[str, int], ...]
    unit: str
    table_id: int = 0
    settle_up: tuple[tuple[str, str, int], ...] = ()
    sessions: int = 1  # sessions in the chain of rematches, this one the last
    combined: tuple[tuple[str, int], ...] = ()  # their standings added up (sessions > 1)
    combined_settle_up: tuple[tuple[str, str, int], ...] = ()
    rematch: float | None = None  # seconds a rematch offer waits; None: none is offered
    last_hand: tuple[str, ...] = ()  # the last hand's ending and payments, in words
    abandoned: bool = False  # every player had left
    timed: bool = False  # its time was up (a session of so many minutes)
    seated: bool = False  # we held a seat (a spectator has no rematch to answer)


@record
class RematchChanged:
    """Where the rematch offered at our finished table stands: each seat's name and answer
    (`yes`, `no`, `awaited`, `left`, `late`, `bot`), the outcome (`waiting`, `started`,
    `off`), the seconds still waited, and the new table once it has started."""

    table_id: int
    seats: tuple[tuple[str, str], ...]
    outcome: str
    seconds: float | None
    next_table: int | None


@record
class ServerRefused:
    """The server refused a request; `message` is its reason, for a person."""

    code: str
    message: str
    detail: str = ""
    request: str = ""  # the type of the request refused, if known


@record
class JoinNotice:
    """Where a table asked for by name (`--table`, the door's `join`) took us: a seat,
    watching, or the lobby when there is no such table; `message` says which."""

    message: str
    found: bool = True


@record
class HistoryListed:
    """A page of the history of our table: its hands (newest first), how many in all and
    whether older ones are left, and the ledger now with its settle-up."""

    table: int
    table_name: str
    hands: tuple[HandSummary, ...]
    total: int
    more: bool
    unit: str
    balances: tuple[tuple[str, int], ...]
    settle_up: tuple[Transfer, ...]


@record
class HandReplayed:
    """One hand of our table's history, every step of it as we saw it (`seat` None: as a
    spectator), with the players' names at each step as we saw them (who held each seat
    then, "You" in ours while we held it)."""

    table: int
    hand: int
    seat: int | None
    names: tuple[tuple[str, ...], ...]
    steps: tuple[HistoryStep, ...]
    unit: str


#: Everything the model reports: these, and a server's answer the screens take as it is (the
#: standings, the coach's advice: the App's message for it is derived from its class).
Report = (
    Connected
    | LobbyChanged
    | TableChanged
    | LeftTable
    | HandEnded
    | SessionEnded
    | RematchChanged
    | ServerRefused
    | JoinNotice
    | HistoryListed
    | HandReplayed
    | m.ServerMessage
)
