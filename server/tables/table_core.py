"""The values a table is made of: its configuration (`TableConfig`), a seat (`Seat`), a request
refused (`RequestError`), a hand's settlement on its way to the disk (`Settle`), a slow bot's
decision on its way (`Pending`), and the ledger as a newcomer is shown it. The table itself and
the parts it holds are in table.py and the table_* modules beside it; what the parts ask of the
table that holds them (`TableFrame`) is here too. A part is given the other parts it calls
themselves, each made before it: the store, the seats, the rematch, the play, the away part."""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tonk.shared.bots.bots import Bot
from tonk.shared.game.hand import Hand
from tonk.shared.game.ledger import Ledger, Payments
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.session import SeatRecord, Session, Settled, seat_status
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.view import SeatView
from tonk.shared.game.waiting import AwayTally
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    LedgerMessage,
    SeatKind,
    SeatStatus,
    ServerMessage,
    TableState,
    TableSummary,
)

from ..connection import Connection
from ..store import store as st

if TYPE_CHECKING:
    from ..config import Limits
    from .host import TableHost

WAITING, PLAYING, FINISHED, CLOSED = TableState
HUMAN, BOT, EMPTY = SeatKind
_INF = float("inf")


class TableFrame(Protocol):
    """The table as the parts it holds ask it: what it is (its id, name, state, configuration,
    clock, lock and host), its summary to everybody at it, its closing and leaving the
    server's tables; and, for the seats, what they tell the parts made after them (each of
    those is given the seats themselves, so the seats reach them through their table). Table
    is its one implementation: the seam is the import, as table.py imports the parts."""

    state: TableState

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> TableConfig: ...

    @property
    def now(self) -> float: ...

    @property
    def lock(self) -> asyncio.Lock: ...

    @property
    def server(self) -> TableHost: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def session(self) -> Session: ...

    def rng(self, label: str) -> random.Random: ...

    def kick(self) -> None: ...

    def summary(self) -> TableSummary: ...

    def broadcast(self, message: ServerMessage, answer: Connection | None = None) -> None: ...

    def broadcast_table(self, answer: Connection | None = None) -> None: ...

    def returnable(self) -> bool: ...

    def closed(self, why: str) -> None: ...

    def forget(self) -> None: ...

    # what the seats tell the play, the away part and the rematch

    def send_ledger(self, conn: Connection) -> None: ...

    def send_hand(self, conn: Connection, seat: int | None) -> None: ...

    def back_in_turn(self, number: int) -> None: ...

    def start_play(self, started: float) -> None: ...

    def forget_claims(self, conn: Connection) -> None: ...

    def returned(self, conn: Connection) -> None: ...


@dataclass(frozen=True, slots=True)
class TableConfig:
    """What a table was created with (persisted as JSON)."""

    rules: HouseRules
    stake: int = 1
    unit: str = "chips"
    seats: int = 4
    turn_timer: float | None = None
    hands: int | None = None
    minutes: float | None = None
    bot_pause: float = 0.8
    # May anybody take a bot's seat (take_bot_seat), or only who has played at the table?
    open_bot_seats: bool = True
    seed: int | None = None
    deck: str | None = None
    dealer: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "stake": self.stake,
            "unit": self.unit,
            "seats": self.seats,
            "turn_timer": self.turn_timer,
            "hands": self.hands,
            "minutes": self.minutes,
            "bot_pause": self.bot_pause,
            "open_bot_seats": self.open_bot_seats,
            "seed": self.seed,
            "deck": self.deck,
            "dealer": self.dealer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableConfig:
        return cls(**{**data, "rules": HouseRules.from_dict(data["rules"])})


_PATH = re.compile(r"""(?:^|\s)(?:'/[^']*'|"/[^"]*"|/[^\s'"]+)""")


def without_paths(reason: str) -> str:
    """`reason` without the server's file paths: what is wrong is the players' business,
    where the host keeps the database is not (the log has the paths)."""
    return _PATH.sub(" on the server", reason).replace(": on the server", " on the server")


@dataclass(slots=True)
class Seat(SeatRecord):
    """A seat as the server holds it: the session's record of it, the hash of its token, the
    connection of its player, and since when (loop time) that player has lost the link (None
    while connected, or once away; kept while the grace runs of a player the table voted to
    play for now)."""

    token_hash: str | None = None
    conn: Connection | None = None
    disconnected_at: float | None = None
    # The seats whose players voted to play for this one now (its player lost the link).
    votes: set[int] = field(default_factory=set)
    # What the table did for the seat since its player went (told them when they are back).
    tally: AwayTally | None = None
    # A bot's seat given it during the session: the name of the player it was taken from (in
    # memory: the table map says whose seat it is, so that they take their own back).
    holds_for: str | None = None
    # A person's seat that they took from a bot during the session: that bot's seat, back in
    # its place as soon as they go (`session.returns_to_bot`; in memory: after a restart its
    # taker holds the seat as any player does).
    took_from: Seat | None = None

    @property
    def status(self) -> SeatStatus:
        return seat_status(self, self.conn is not None)

    def saved(self, number: int) -> st.SavedSeat:
        assert self.name is not None
        return st.SavedSeat(
            number, self.name, self.kind, self.strategy, self.token_hash, self.stake, self.away
        )


@dataclass(slots=True)
class Settle:
    """A hand's settlement, ready to be written and then applied."""

    ops: list[st.Op]
    settled: Settled

    @property
    def settlement(self) -> Settlement:
        return self.settled.settlement

    @property
    def names(self) -> tuple[str, ...]:
        return self.settled.names

    @property
    def payments(self) -> Payments:
        return self.settled.payments

    @property
    def session_over(self) -> str | None:
        return self.settled.over


@dataclass(slots=True)
class Pending:
    """A slow bot's decision (`Bot.slow`), made in a worker thread while the event loop serves
    everybody else, with the table's lock free: acted on only if the table is still where it
    was when the bot was asked (`TablePlay.still_due`)."""

    number: int  # the seat to act
    seat: Seat
    hand: Hand
    events: int  # how many events the hand had when the bot was asked
    bot: Bot  # the seat's bot then: never touched by the thread
    thinker: Bot  # a copy of it that decides, and replaces it if the decision is acted on
    view: SeatView
    announce: bool  # the seat was just marked away: the table goes out after the move


def ledger_message(table_id: int, ledger: Ledger, limit: int = p.LEDGER_HANDS) -> LedgerMessage:
    """The ledger's newest `limit` settled hands, each as its number and every player's net
    (in the order of `names`), with the balances now: what a client that has just come to the
    table needs to draw each balance over the hands played."""
    entries = ledger.history[-limit:] if limit > 0 else []
    nets = [entry.net() for entry in entries]
    names = tuple(dict.fromkeys([*ledger.balances, *(name for net in nets for name in net)]))
    return LedgerMessage(
        table_id,
        names,
        tuple(
            (entry.hand_number, tuple(net.get(name, 0) for name in names))
            for entry, net in zip(entries, nets, strict=True)
        ),
        {name: ledger.balances.get(name, 0) for name in names},
    )
