"""What a table is and what everybody at it is told: its configuration, its seats, the state
the other table modules share (`TableCore`), and the messages built from that state (the table
map, the updates of the hand, the ledger). The requests that change a table are in the modules
above this one (table_store, table_seats, table_play, table)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tonk.shared import protocol as p
from tonk.shared.bots import Bot
from tonk.shared.hand import Hand
from tonk.shared.ledger import Ledger
from tonk.shared.messages import (
    SEAT_KINDS,
    TABLE_STATES,
    LedgerMessage,
    SeatKind,
    SeatStatus,
    ServerMessage,
    SessionEndReason,
    TableMessage,
    TableState,
    TableSummary,
    Update,
)
from tonk.shared.rematch import RematchOffer
from tonk.shared.rules import HouseRules
from tonk.shared.server_messages import new_player_summary, new_table_summary
from tonk.shared.session import SeatRecord, Session, SessionError, played_for_at, seat_status
from tonk.shared.waiting import AwayTally

from . import store as st
from .connection import Connection, encode_message
from .updates import UpdateFrames

if TYPE_CHECKING:
    from .config import Limits
    from .host import TableHost

WAITING, PLAYING, FINISHED, CLOSED = TableState
HUMAN, BOT, EMPTY = SeatKind
_INF = float("inf")


class RequestError(Exception):
    """A request refused; nothing was changed. `code` is a protocol error code."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail

    @classmethod
    def refused(cls, exc: SessionError) -> RequestError:
        """The request the session's rules refused, as the protocol's error (a field at fault
        named first: `stake: ...`)."""
        message = exc.message if exc.detail is None else f"{exc.detail}: {exc.message}"
        return cls(exc.code, message, exc.detail)


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

    @property
    def status(self) -> SeatStatus:
        return seat_status(self, self.conn is not None)

    def saved(self, number: int) -> st.SavedSeat:
        assert self.name is not None
        return st.SavedSeat(
            number, self.name, self.kind, self.strategy, self.token_hash, self.stake, self.away
        )


@dataclass(slots=True)
class TableCore:
    """A table's state, and what it tells everybody at it."""

    server: TableHost
    id: int
    name: str
    config: TableConfig
    created: float
    state: TableState = WAITING
    seats: list[Seat] = field(default_factory=list)
    spectators: set[Connection] = field(default_factory=set)
    creator: int | None = None
    creator_address: str | None = None  # where it was created from (not kept over a restart)
    # The session's rules and its state between hands (the ledger, who dealt, the multiplier);
    # its deserted_since and unseated_since are in loop time, its started in wall-clock time.
    session: Session = field(init=False)
    hand: Hand | None = None
    hand_settled: bool = True
    bots: dict[int, Bot] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    kicked: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    turn_started: float = 0.0
    last_change: float = 0.0
    next_hand_at: float | None = None
    turn_seat: int | None = None
    # (hand number, events) of the hand in play that everybody at the table has been sent:
    # behind the hand while a change to it waits to be saved.
    told: tuple[int, int] = (0, 0)
    # The hashes of tokens whose seats were given to bots, with the name that held each: its
    # player is told so when they come back (kept until the server stops).
    given_to_bots: dict[str, str] = field(default_factory=dict)
    # Seats of bots that people asked for during a hand, taken as it ends: seat -> connection.
    claims: dict[int, Connection] = field(default_factory=dict)
    paused: str | None = None  # why play is paused: the storage cannot be written
    # Once the session is over: the offer of a rematch (deadline in loop time), if one was made.
    rematch: RematchOffer | None = None
    rematch_reason: SessionEndReason = SessionEndReason.HANDS  # why the session ended
    # A rematch's table: the table it is a rematch of, and the balances of every earlier
    # session of the chain, oldest first (the combined standings add them to this one's).
    rematch_of: int | None = None
    earlier: list[dict[str, int]] = field(default_factory=list)
    paused_at: float = 0.0  # loop time the pause started
    # The loop the table runs in, kept: asyncio.get_running_loop() makes a system call each
    # time in CPython 3.11 (getpid, to notice a fork), and the clock is read on every action.
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.get_running_loop)

    def __post_init__(self) -> None:
        config = self.config
        self.session = Session(
            config.rules, config.stake, config.hands, config.minutes, config.dealer
        )
        if not self.seats:
            self.seats = [Seat(stake=config.stake) for _ in range(config.seats)]

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger

    @property
    def hands_played(self) -> int:
        return self.session.hands_played

    @property
    def dealer(self) -> int | None:
        return self.session.dealer

    @property
    def hand_number(self) -> int:
        return self.session.hand_number

    @hand_number.setter
    def hand_number(self, number: int) -> None:
        self.session.hand_number = number

    # -- life ---------------------------------------------------------------------------------

    async def stop(self) -> None:
        task = self.task
        self.task = None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def kick(self) -> None:
        self.kicked.set()

    @property
    def now(self) -> float:
        return self.loop.time()

    @property
    def rules(self) -> HouseRules:
        return self.config.rules

    @property
    def limits(self) -> Limits:
        return self.server.config.limits

    def rng(self, label: str) -> random.Random:
        """A seeded generator: from the dev seed (repeatable), or from the system's entropy."""
        if self.config.seed is not None:
            return random.Random(f"{self.config.seed}:{label}")
        return random.Random(random.SystemRandom().getrandbits(128))

    def connections(self) -> list[tuple[Connection, int | None]]:
        out: list[tuple[Connection, int | None]] = [
            (seat.conn, number) for number, seat in enumerate(self.seats) if seat.conn is not None
        ]
        out.extend((conn, None) for conn in self.spectators)
        return out

    @property
    def listed(self) -> bool:
        """In the lobby's list: waiting, playing, or finished with somebody still at it."""
        return self.state != CLOSED and self.server.tables.get(self.id) is self

    @property
    def open(self) -> bool:
        """Waiting or playing (what the server's table limits count)."""
        return self.state in (WAITING, PLAYING) and self.server.tables.get(self.id) is self

    def attached(self) -> bool:
        return bool(self.spectators) or any(seat.conn is not None for seat in self.seats)

    def players_here(self) -> bool:
        """Whether any player (a person in a seat, not a bot or a spectator) is connected."""
        return any(seat.kind == HUMAN and seat.conn is not None for seat in self.seats)

    def names(self) -> list[str]:
        return [seat.name or "" for seat in self.seats]

    # -- the clock of the seat to act ---------------------------------------------------------

    def due(self, number: int) -> float:
        """When the seat to act, `number`, is played for if it does not act itself (the
        session's rule: `played_for_at`)."""
        seat = self.seats[number]
        disconnected_at = seat.disconnected_at
        config = self.config
        return played_for_at(
            seat,
            seat.conn is not None,
            disconnected_at,
            last_change=self.last_change,
            turn_started=self.turn_started,
            bot_pause=config.bot_pause,
            turn_timer=config.turn_timer,
            # (the server's grace only read when it counts: a table built for a test of its
            # messages has no server)
            grace=0.0 if disconnected_at is None else self.server.config.grace,
        )

    def deadline(self) -> float | None:
        """Seconds until the seat to act is played for (a person's turn timer or grace)."""
        hand = self.hand
        if hand is None or hand.ended:
            return None
        seat = self.seats[hand.turn]
        if seat.kind != HUMAN or seat.away:
            return None
        due = self.due(hand.turn)
        return None if due == _INF else round(max(0.0, due - self.now), 3)

    # -- what everybody sees ------------------------------------------------------------------

    def played_for_in(self, seat: Seat) -> float | None:
        """Seconds until a disconnected player's seat is played for (before the start: given
        up); None for any other seat."""
        disconnected_at = seat.disconnected_at
        if disconnected_at is None or seat.conn is not None or seat.kind != HUMAN or seat.away:
            return None
        return round(max(0.0, disconnected_at + self.server.config.grace - self.now), 1)

    def summary(self) -> TableSummary:
        config = self.config
        balances = self.ledger.balances
        taken = sum(seat.taken for seat in self.seats)
        return new_table_summary(
            id=self.id,
            name=self.name,
            rules=self.rules.to_wire(),
            rules_name=self.rules.name,
            stake=config.stake,
            unit=config.unit,
            seats=len(self.seats),
            taken=taken,
            free=len(self.seats) - taken,
            state=TABLE_STATES[self.state],
            spectators=len(self.spectators),
            turn_timer=config.turn_timer,
            hands=config.hands,
            minutes=config.minutes,
            bot_pause=config.bot_pause,
            hands_played=self.hands_played,
            creator=self.creator,
            dealer=self.dealer,
            paused=self.paused,
            players=tuple(
                new_player_summary(
                    seat=number,
                    name=seat.name,
                    kind=SEAT_KINDS[seat.kind],
                    strategy=seat.strategy,
                    status=seat.status,
                    stake=seat.stake,
                    balance=balances.get(seat.name, 0) if seat.name else 0,
                    played_for_in=self.played_for_in(seat),
                    votes=tuple(sorted(seat.votes)),
                )
                for number, seat in enumerate(self.seats)
            ),
            changes=self.rules.overrides(),
        )

    def broadcast(self, message: ServerMessage, answer: Connection | None = None) -> None:
        """Send `message` to everybody at the table; `answer`, the connection whose request
        this answers, gets its copy with the request's `reply_to`."""
        frame = encode_message(message)
        for conn, _ in self.connections():
            if conn is answer and conn.request_id is not None:
                conn.reply(message)
            else:
                conn.send_frame(frame)

    def broadcast_table(self, answer: Connection | None = None) -> None:
        """Everybody at the table gets its summary (`answer`'s copy answers its request); the
        lobby's list shows it too."""
        self.broadcast(TableMessage(self.summary()), answer)
        self.server.lobby.changed(self.id)

    def update_message(self, seat: int | None, start: int, reply_to: int | None = None) -> Update:
        hand = self.hand
        assert hand is not None
        events = tuple(hand.events_for(seat, start))
        view = hand.view(seat)
        return Update(self.id, self.hand_number, start, events, view, self.deadline(), reply_to)

    def send_updates(self, start: int, answer: Connection | None = None) -> None:
        """Every connection at the table gets its `update_message(seat, start)`, each frame
        put together from the parts all seats share, packed once (see updates.py); `answer`,
        the connection whose action this is, gets its frame with the action's `reply_to`."""
        hand = self.hand
        assert hand is not None
        number = self.session.hand_number
        frames = UpdateFrames(self.id, number, hand, start, self.deadline())
        self.told = (number, len(hand.events))
        # (self.connections() spelt out: no list built, on every action)
        for number, seat in enumerate(self.seats):
            conn = seat.conn
            if conn is not None:
                if conn is answer and conn.request_id is not None:
                    conn.send_frame(frames.answer(number, conn.request_id))
                else:
                    conn.send_frame(frames.frame(number))
        for conn in self.spectators:
            conn.send_frame(frames.frame(None))

    def send_ledger(self, conn: Connection) -> None:
        """The ledger as far as a newcomer to the table is shown it."""
        conn.send(ledger_message(self.id, self.ledger, self.server.config.ledger_hands))


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
