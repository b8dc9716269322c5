"""One table: its seats and spectators, the hand in play, bots and timers, the session's ledger.

Every change happens under the table's lock, is written to the store, and only then is anybody
told of it. The table asks the core about every rule; it decides none itself.

When the store cannot write (a locked or full disk, a removed database file), every table
pauses: everybody at it is told once why, new actions are refused, timers stop, and a change
already on its way to the disk waits there (the store tries that same write again until it goes
through). Once it does, everybody is told once that play carries on, from the last change saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import random
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tonk.shared import protocol as p
from tonk.shared.actions import (
    Action,
    IllegalAction,
    action_from_dict,
    action_to_dict,
)
from tonk.shared.bots import BOT_STRATEGIES, Bot, fallback, make_bot
from tonk.shared.cards import parse_cards
from tonk.shared.hand import Hand, HandRecord
from tonk.shared.ledger import Ledger, LedgerEntry, Payments
from tonk.shared.messages import (
    SEAT_KINDS,
    SEAT_STATUSES,
    TABLE_STATES,
    Error,
    LedgerMessage,
    PlayerSummary,
    SeatStatus,
    TableMessage,
    TableState,
    TableSummary,
    Update,
)
from tonk.shared.rules import HouseRules
from tonk.shared.session import (
    Session,
    SessionError,
    Settled,
    bot_name,
    check_can_start,
    check_name_free,
    next_creator,
    pick_seat,
    seat_stake,
    starts_itself,
    without_last_action,
)
from tonk.shared.settlement import Settlement
from tonk.shared.view import SeatView
from tonk.shared.words import plural

from . import store as st
from .connection import Connection, Outgoing, encode_outgoing
from .updates import UpdateFrames

if TYPE_CHECKING:
    from .host import TableHost

log = logging.getLogger("tonk.server")

WAITING, PLAYING, FINISHED, CLOSED = TableState
#: Seconds before the table loop tries again after a write of its own failed alone.
STORAGE_RETRY = 1.0


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
class Seat:
    name: str | None = None
    kind: str = "empty"  # human, bot, empty
    strategy: str | None = None
    token_hash: str | None = None
    stake: int = 1
    conn: Connection | None = None
    disconnected_at: float | None = None  # loop time; None while connected or once away
    away: bool = False  # played automatically until its player is back

    @property
    def taken(self) -> bool:
        return self.kind != "empty"

    @property
    def status(self) -> str:
        if self.kind != "human":
            return self.kind
        if self.away:
            return "away"
        return "connected" if self.conn is not None else "disconnected"

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
    def names(self) -> list[str]:
        return list(self.settled.names)

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
    was when the bot was asked (`Table.still_due`)."""

    number: int  # the seat to act
    seat: Seat
    hand: Hand
    events: int  # how many events the hand had when the bot was asked
    bot: Bot  # the seat's bot then: never touched by the thread
    thinker: Bot  # a copy of it that decides, and replaces it if the decision is acted on
    view: SeatView
    announce: bool  # the seat was just marked away: the table goes out after the move


@dataclass(slots=True)
class Table:
    server: TableHost
    id: int
    name: str
    config: TableConfig
    created: float
    state: str = WAITING
    seats: list[Seat] = field(default_factory=list)
    spectators: set[Connection] = field(default_factory=set)
    creator: int | None = None
    creator_address: str | None = None  # where it was created from (not kept over a restart)
    # The session's rules and its state between hands (the ledger, who dealt, the multiplier);
    # its deserted_since is in loop time, its started in wall-clock time.
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
    unseated_since: float | None = None  # a waiting table with no player: closed after grace
    paused: str | None = None  # why play is paused: the storage cannot be written
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

    def begin(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"table-{self.id}")

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
    def limits(self) -> Any:
        return self.server.config.limits

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
        return any(seat.kind == "human" and seat.conn is not None for seat in self.seats)

    # -- what everybody sees ------------------------------------------------------------------

    def summary(self) -> TableSummary:
        config = self.config
        balances = self.ledger.balances
        taken = sum(seat.taken for seat in self.seats)
        return TableSummary(
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
                PlayerSummary(
                    seat=number,
                    name=seat.name,
                    kind=SEAT_KINDS[seat.kind],
                    strategy=seat.strategy,
                    status=SEAT_STATUSES[seat.status if seat.taken else SeatStatus.EMPTY],
                    stake=seat.stake,
                    balance=balances.get(seat.name, 0) if seat.name else 0,
                )
                for number, seat in enumerate(self.seats)
            ),
        )

    def broadcast(self, message: Outgoing, answer: Connection | None = None) -> None:
        """Send `message` to everybody at the table; `answer`, the connection whose request
        this answers, gets its copy with the request's `reply_to`."""
        frame = encode_outgoing(message)
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
        frames = UpdateFrames(self.id, self.hand_number, hand, start, self.deadline())
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

    def deadline(self) -> float | None:
        """Seconds until the seat to act is played for (a person's turn timer or grace)."""
        hand = self.hand
        if hand is None or hand.ended:
            return None
        seat = self.seats[hand.turn]
        if seat.kind != "human" or seat.away:
            return None
        due = self.due(hand.turn)
        return None if due == float("inf") else round(max(0.0, due - self.now), 3)

    def names(self) -> list[str]:
        return [seat.name or "" for seat in self.seats]

    # -- seats --------------------------------------------------------------------------------

    def seat_of(self, conn: Connection) -> int:
        if conn.table is not self or conn.seat is None:
            raise RequestError(p.NOT_SEATED, "you do not have a seat at this table")
        return conn.seat

    def require_creator(self, conn: Connection) -> None:
        if self.creator is None or conn.seat != self.creator or conn.table is not self:
            raise RequestError(p.NOT_CREATOR, "only the table's creator may do that")

    def require_waiting(self) -> None:
        if self.state != WAITING:
            raise RequestError(p.ALREADY_STARTED, "the session has started")

    def pick_seat(self, seat: int | None) -> int:
        try:
            return pick_seat([candidate.taken for candidate in self.seats], seat)
        except SessionError as exc:
            raise RequestError.refused(exc) from None

    def check_stake(self, stake: int | None) -> int:
        """A new seat's stake (see `session.seat_stake`)."""
        config = self.config
        try:
            return seat_stake(config.rules, config.stake, config.unit, stake)
        except SessionError as exc:
            raise RequestError.refused(exc) from None

    async def sit(self, conn: Connection, seat: int | None, stake: int | None) -> None:
        async with self.lock:
            if self.state != WAITING:
                if self.state == PLAYING:
                    raise RequestError(
                        p.ALREADY_STARTED, "the session has started: watch, or resume your seat"
                    )
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            number = self.pick_seat(seat)
            assert conn.name is not None
            try:
                check_name_free(self.names(), conn.name)
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            token = secrets.token_urlsafe(18)
            new = Seat(
                name=conn.name,
                kind="human",
                token_hash=st.hash_token(token),
                stake=self.check_stake(stake),
                conn=conn,
            )
            ops = [st.put_seat(self.id, new.saved(number))]
            creator = self.creator
            if creator is None:
                creator = number
                ops.append(st.update_table(self.id, creator=creator))
            await self.write(ops)
            self.seats[number] = new
            self.creator = creator
            self.server.seating.put(conn, self, number)
            conn.reply({"type": p.SEATED, "table": self.id, "seat": number, "token": token})
            self.server.door_seat(conn, self.id, left=False)
            log.info("table %d: %s sits in seat %d", self.id, conn.name, number)
            self.broadcast_table()
            self.kick()

    async def resume(self, conn: Connection, token: str) -> None:
        async with self.lock:
            if self.state not in (WAITING, PLAYING):
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            wanted = st.hash_token(token)
            number = next(
                (n for n, s in enumerate(self.seats) if s.token_hash == wanted),
                None,
            )
            if number is None:
                raise RequestError(p.BAD_TOKEN, "that is not the token of a seat at this table")
            if conn.table is self and conn.seat is not None and conn.seat != number:
                raise RequestError(p.ALREADY_AT_TABLE, "you hold another seat at this table")
            seat = self.seats[number]
            old = seat.conn
            if old is not None and old is not conn:
                self.server.seating.clear(old)
                old.error(
                    p.SEAT_RESUMED_ELSEWHERE,
                    "your seat was taken back with its token from another connection",
                )
                self.server.lobby.arrived(old)
            seat.conn = conn
            seat.disconnected_at = None
            await self.set_away(number, False)
            self.server.seating.put(conn, self, number)
            conn.reply({"type": p.SEATED, "table": self.id, "seat": number, "token": token})
            self.server.door_seat(conn, self.id, left=False)
            log.info("table %d: %s resumes seat %d", self.id, seat.name, number)
            self.broadcast_table()
            conn.send(ledger_message(self.id, self.ledger, self.server.config.ledger_hands))
            if self.hand is not None:
                conn.send(self.update_message(number, 0))
            self.kick()

    def door_token(self, name: str) -> str | None:
        """A new token for the human seat `name` holds here, or None. The SSH door's players
        prove who they are with their key, not with a token kept in a file: the door asks
        for a token when such a player comes back; the seat's old token stops working."""
        if self.state not in (WAITING, PLAYING):
            return None
        for number, seat in enumerate(self.seats):
            if seat.kind == "human" and seat.name == name:
                token = secrets.token_urlsafe(18)
                seat.token_hash = st.hash_token(token)
                written = self.server.store.write(
                    [st.set_token(self.id, number, name, seat.token_hash)]
                )
                written.add_done_callback(_log_failed_write)
                return token
        return None

    async def watch(self, conn: Connection) -> None:
        async with self.lock:
            if self.state not in (WAITING, PLAYING):
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            self.spectators.add(conn)
            self.server.seating.put(conn, self, None)
            conn.reply({"type": p.WATCHING, "table": self.id})
            self.broadcast_table()
            conn.send(ledger_message(self.id, self.ledger, self.server.config.ledger_hands))
            if self.hand is not None:
                conn.send(self.update_message(None, 0))
            self.kick()

    async def detach(self, conn: Connection, *, leaving: bool) -> None:
        """`conn` leaves the table (`leaving`) or its connection was lost."""
        async with self.lock:
            number = conn.seat
            self.server.seating.clear(conn)
            if number is None:
                self.spectators.discard(conn)
            elif 0 <= number < len(self.seats) and self.seats[number].conn is conn:
                seat = self.seats[number]
                seat.conn = None
                if self.state == WAITING and leaving:
                    await self.free_seat(number)
                elif self.state == PLAYING and leaving:
                    seat.disconnected_at = None
                    await self.set_away(number, True)
                else:
                    seat.disconnected_at = self.now
                log.info(
                    "table %d: %s %s seat %d",
                    self.id,
                    seat.name,
                    "leaves" if leaving else "disconnected from",
                    number,
                )
            if self.state != CLOSED:
                self.broadcast_table()
            self.kick()
            if self.state == FINISHED and not self.attached():
                self.server.forget_table(self)

    async def free_seat(self, number: int) -> None:
        """A waiting table's seat is given up: its player left, or was gone past the grace."""
        ops: list[st.Op] = [st.delete_seat(self.id, number)]
        creator = self.creator
        if creator == number:
            here = [s.kind == "human" and s.conn is not None for s in self.seats]
            creator = next_creator(number, here)
            ops.append(st.update_table(self.id, creator=creator))
        humans = [n for n, s in enumerate(self.seats) if n != number and s.kind == "human"]
        if not humans:
            ops.append(st.update_table(self.id, state=CLOSED))
        await self.write(ops)
        self.seats[number] = Seat(stake=self.config.stake)
        self.creator = creator
        if not humans:
            self.closed("nobody left")

    def closed(self, why: str) -> None:
        """The table is closed (already so in the database): it leaves the lobby."""
        self.state = CLOSED
        log.info("table %d closed: %s", self.id, why)
        spectators = list(self.spectators)
        self.spectators.clear()
        self.server.forget_table(self)
        for conn in spectators:
            self.server.seating.clear(conn)
            conn.send({"type": p.LEFT, "table": self.id})
            self.server.lobby.arrived(conn)

    async def add_bot(
        self, conn: Connection, strategy: str, seat: int | None, stake: int | None
    ) -> None:
        async with self.lock:
            self.require_creator(conn)
            self.require_waiting()
            if strategy not in BOT_STRATEGIES:
                raise RequestError(
                    p.BAD_BOT, f"no bot {strategy!r}; the bots are {', '.join(BOT_STRATEGIES)}"
                )
            number = self.pick_seat(seat)
            name = bot_name(self.names())
            new = Seat(name=name, kind="bot", strategy=strategy, stake=self.check_stake(stake))
            await self.write([st.put_seat(self.id, new.saved(number))])
            self.seats[number] = new
            log.info("table %d: %s bot %s in seat %d", self.id, strategy, name, number)
            self.broadcast_table(answer=conn)
            self.kick()

    async def remove_bot(self, conn: Connection, seat: int) -> None:
        async with self.lock:
            self.require_creator(conn)
            self.require_waiting()
            if not 0 <= seat < len(self.seats):
                raise RequestError(p.NO_SUCH_SEAT, f"no seat {seat} at this table")
            if self.seats[seat].kind != "bot":
                raise RequestError(p.BAD_BOT, f"seat {seat} is not a bot")
            await self.write([st.delete_seat(self.id, seat)])
            self.seats[seat] = Seat(stake=self.config.stake)
            self.broadcast_table(answer=conn)

    async def start(self, conn: Connection) -> None:
        async with self.lock:
            self.require_creator(conn)
            self.require_waiting()
            await self.start_session(answer=conn)

    async def start_session(self, answer: Connection | None = None) -> None:
        """Remove the empty seats, renumber the rest in order, and start playing."""
        taken = [seat for seat in self.seats if seat.taken]
        try:
            check_can_start(len(taken))
        except SessionError as exc:
            raise RequestError.refused(exc) from None
        creator = None
        if self.creator is not None:
            creator = taken.index(self.seats[self.creator])
        started = time.time()
        ops: list[st.Op] = [st.delete_seats(self.id)]
        ops.extend(st.put_seat(self.id, seat.saved(n)) for n, seat in enumerate(taken))
        ops.append(st.update_table(self.id, state=PLAYING, started=started, creator=creator))
        await self.write(ops)
        self.seats = taken
        for number, seat in enumerate(taken):
            if seat.conn is not None:
                self.server.seating.put(seat.conn, self, number)
            if seat.kind == "bot":
                assert seat.strategy is not None
                self.bots[number] = make_bot(seat.strategy, self.rng(f"bot{number}"))
        self.session.start(self.names(), started)
        self.creator = creator
        self.state = PLAYING
        self.next_hand_at = self.now
        log.info("table %d: session starts with %s", self.id, ", ".join(self.names()))
        self.broadcast_table(answer)
        self.kick()

    async def chat(self, conn: Connection, text: str) -> None:
        if conn.table is not self:
            raise RequestError(p.NOT_AT_TABLE, "you are not at a table")
        limit = self.limits.max_chat
        if len(text) > limit or not p.is_printable_text(text):
            raise RequestError(p.BAD_CHAT, f"chat is printable text of 1 to {limit} characters")
        seat = conn.seat
        name = self.seats[seat].name if seat is not None else conn.name
        self.broadcast(
            {"type": p.CHAT, "table": self.id, "name": name or "", "seat": seat, "text": text},
            answer=conn,
        )

    async def back(self, conn: Connection) -> None:
        """Answered by a `table` (every connection's, if the seat was away; else this one's)."""
        async with self.lock:
            number = self.seat_of(conn)
            if self.seats[number].away:
                await self.welcome_back(number, answer=conn)
            else:
                conn.reply(TableMessage(self.summary()))

    async def welcome_back(self, number: int, answer: Connection | None = None) -> None:
        """The player in seat `number` is back (said so, or acted): no longer away."""
        if not self.seats[number].away:
            return
        await self.set_away(number, False)
        if self.hand is not None and not self.hand.ended and self.hand.turn == number:
            # Back during its own turn: a fresh turn clock, or a timer that ran out would
            # make the seat away again at once and play the rest of the turn for it.
            self.turn_started = self.now
        self.broadcast_table(answer)
        self.kick()

    # -- play ---------------------------------------------------------------------------------

    async def act(self, conn: Connection, message: dict[str, Any]) -> None:
        if self.paused is not None:  # at once: the lock may be held by a write that waits
            self.refuse_paused()
        async with self.lock:
            number = self.seat_of(conn)
            hand = self.hand
            if self.state != PLAYING or hand is None or hand.ended:
                raise RequestError(p.NO_HAND, "no hand is being played at this table")
            if self.paused is not None:
                self.refuse_paused()
            data = {k: v for k, v in message.items() if k != "id"}
            data["seat"] = number
            try:
                action = action_from_dict(data)
            except IllegalAction as exc:
                raise RequestError(p.ILLEGAL_ACTION, exc.reason, exc.code) from None
            if self.seats[number].away:  # (not awaited on every action: a coroutine each)
                await self.welcome_back(number)
            try:
                await self.apply(action, answer=conn)
            except IllegalAction as exc:
                # The reason as this player sees it: "your run", "Ada's book of jacks".
                reason = exc.text(self.names(), number)
                raise RequestError(p.ILLEGAL_ACTION, reason, exc.code) from None

    async def apply(self, action: Action, answer: Connection | None = None) -> None:
        """Apply one action to the hand, write it durably, then tell everyone (`answer`, the
        connection that asked for it, with its request's `reply_to`)."""
        hand = self.hand
        assert hand is not None
        start = len(hand.events)
        hand.apply(action)  # IllegalAction: nothing changed
        index = len(hand.actions) - 1
        ops = [st.insert_action(self.id, self.hand_number, index, action_to_dict(action))]
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self.write(ops)
        except RequestError:
            self.hand = without_last_action(hand)
            raise
        self.after_change(start, settle, answer)

    async def set_away(self, number: int, away: bool) -> None:
        """Mark seat `number` away (played for until its player is back) or back, in memory and
        on disk: after a restart a seat away is played for at once, with no new grace period.
        If the store fails the table pauses (see `write`) and the mark stays in memory."""
        seat = self.seats[number]
        if seat.away == away:
            return
        seat.away = away
        ops = [st.set_away(self.id, number, away)]
        if self.paused is not None:
            # Queued behind the writes that wait for the storage, not waited for: the mark
            # reaches the disk when they do, and who comes back is not kept waiting.
            self.server.store.write(ops).add_done_callback(_ignore_result)
            return
        with contextlib.suppress(RequestError):
            await self.write(ops)

    async def write(self, ops: Sequence[st.Op]) -> None:
        """Write `ops` durably. Through a storage fault this waits (the table is paused
        meanwhile); RequestError if the write itself fails, or the server stops first."""
        try:
            await self.server.store.write(ops)
        except st.StoreError as exc:
            log.error("table %d: storage error: %s", self.id, exc)
            raise RequestError(
                p.STORAGE_ERROR,
                f"the server could not save that ({without_paths(str(exc))}); nothing was changed",
            ) from None

    def refuse_paused(self) -> None:
        raise RequestError(
            p.STORAGE_ERROR,
            f"play is paused: the server cannot save the game ({self.paused}); nothing was changed",
        )

    def pause(self, reason: str) -> None:
        """The store cannot write: stop play and tell everybody at the table why, once (in
        words without the server's file paths: those are the host's, in the log)."""
        if self.paused is not None or self.state in (FINISHED, CLOSED):
            return
        reason = without_paths(reason)
        self.paused = reason
        self.paused_at = self.now
        log.debug("table %d: paused: the game cannot be saved (%s)", self.id, reason)
        self.broadcast(
            Error.of(
                p.STORAGE_ERROR,
                f"the server cannot save the game ({reason}): play is paused until it can; "
                "nothing played so far is lost",
            )
        )
        self.broadcast_table()

    def shift(self, lost: float) -> None:
        """The server did not run for `lost` seconds: every deadline moves on by as much."""
        self.turn_started += lost
        self.last_change += lost
        self.paused_at += lost
        if self.next_hand_at is not None:
            self.next_hand_at += lost
        if self.unseated_since is not None:
            self.unseated_since += lost
        if self.session.deserted_since is not None:
            self.session.deserted_since += lost
        for seat in self.seats:
            if seat.disconnected_at is not None:
                seat.disconnected_at += lost
        self.refresh_deadline()

    def refresh_deadline(self) -> None:
        """Everybody at the table is sent the running deadline again, in an `update` with no
        events: the one they have is wrong once the server lost time or play was paused."""
        hand = self.hand
        if self.state != PLAYING or self.paused is not None or hand is None or hand.ended:
            return
        if self.deadline() is not None:
            self.send_updates(len(hand.events))

    def unpause(self) -> None:
        """The store writes again: play carries on, with a fresh turn clock; a disconnected
        player's grace period is not charged the time the table was paused."""
        if self.paused is None:
            return
        self.paused = None
        now = self.now
        lost = now - self.paused_at
        log.debug("table %d: the game can be saved again; play carries on", self.id)
        self.turn_started = self.last_change = now
        for seat in self.seats:
            if seat.disconnected_at is not None:
                seat.disconnected_at += lost
        if self.unseated_since is not None:
            self.unseated_since += lost
        self.broadcast_table()
        self.refresh_deadline()
        self.kick()

    def settle(self, hand: Hand) -> Settle:
        """The ended `hand`'s settlement as the session takes it, and its writes."""
        settlement = hand.settlement
        assert settlement is not None
        now = time.time()
        settled = self.session.settle(settlement, self.names(), now)
        ops = st.settle_hand(
            self.id,
            self.hand_number,
            hand.record().to_dict(),
            settlement.to_dict(),
            now,
            list(settled.payments),
            settled.balances,
        )
        columns: dict[str, Any] = {
            "hands_played": settled.played,
            "multiplier": settled.next_multiplier,
        }
        if settled.over:
            columns["state"] = FINISHED
        ops.append(st.update_table(self.id, **columns))
        return Settle(ops, settled)

    def after_change(
        self, start: int, settle: Settle | None, answer: Connection | None = None
    ) -> None:
        """The hand changed (and the change is on disk): bots see it, everyone gets a view."""
        hand = self.hand
        assert hand is not None
        now = self.now
        self.last_change = now
        if not hand.ended and hand.turn != self.turn_seat:
            self.turn_seat = hand.turn
            self.turn_started = now
        elif any(event.kind == "turn" for event in hand.events[start:]):
            self.turn_started = now
        for number, bot in self.bots.items():
            try:
                bot.observe(hand.events_for(number, start))
            except Exception:
                log.exception("table %d: bot in seat %d failed to observe", self.id, number)
        self.send_updates(start, answer)
        if settle is not None:
            self.apply_settlement(settle)
        seat = None if hand.ended else self.seats[hand.turn]
        if (
            seat is not None
            and seat.kind == "human"
            and seat.conn is not None
            and not seat.away
            and not self.config.turn_timer
            and self.paused is None
        ):
            # A connected player is to act, with no clock running: nothing falls due that
            # the table's loop does not already wait for (it is kicked by every disconnect,
            # resume and seat change), so it need not wake for every action.
            return
        self.kick()

    def apply_settlement(self, settle: Settle) -> None:
        self.session.settled(settle.settled, self.server.config.ledger_hands)
        self.server.lobby.changed(self.id)  # the hands played and the balances
        self.hand_settled = True
        self.turn_seat = None
        log.info(
            "table %d: hand %d ends (%s): %s",
            self.id,
            self.hand_number,
            settle.settlement.ending.value,
            ", ".join(f"{a} pays {b} {c}" for a, b, c in settle.payments) or "no payments",
        )
        self.broadcast(
            {
                "type": p.HAND_END,
                "table": self.id,
                "hand": self.hand_number,
                "settlement": settle.settlement.to_dict(),
                "names": settle.names,
                "payments": [list(x) for x in settle.payments],
                "balances": dict(self.ledger.balances),
            }
        )
        if settle.session_over:
            self.state = FINISHED
            log.info("table %d: session over after %s", self.id, plural(self.hands_played, "hand"))
            self.broadcast(
                {
                    "type": p.SESSION_END,
                    "table": self.id,
                    "hands": self.hands_played,
                    "standings": [list(x) for x in self.ledger.standings()],
                    "reason": settle.session_over,
                }
            )
            self.broadcast_table()
        else:
            self.next_hand_at = self.now + self.server.config.next_hand_delay

    async def end_session(self, reason: str) -> None:
        """End the session between hands (`reason` as in session_end): the final standings
        to everybody still here, and the table leaves the lobby once nobody is at it."""
        await self.write([st.update_table(self.id, state=FINISHED)])
        self.state = FINISHED
        log.info(
            "table %d: session over (%s) after %s",
            self.id,
            reason,
            plural(self.hands_played, "hand"),
        )
        self.broadcast(
            {
                "type": p.SESSION_END,
                "table": self.id,
                "hands": self.hands_played,
                "standings": [list(x) for x in self.ledger.standings()],
                "reason": reason,
            }
        )
        self.broadcast_table()
        if not self.attached():
            self.server.forget_table(self)

    def rng(self, label: str) -> random.Random:
        """A seeded generator: from the dev seed (repeatable), or from the system's entropy."""
        if self.config.seed is not None:
            return random.Random(f"{self.config.seed}:{label}")
        return random.Random(random.SystemRandom().getrandbits(128))

    async def deal(self) -> None:
        session = self.session
        players = len(self.seats)
        deal = session.next_deal(players, self.rng("cut"))
        number, dealer, cut = deal.number, deal.dealer, deal.cut
        deck = parse_cards(self.config.deck) if number == 1 and self.config.deck else None
        hand = Hand(
            self.rules,
            players,
            dealer,
            session.hand_stakes([seat.stake for seat in self.seats]),
            deck=deck,
            rng=self.rng(f"hand{number}"),
            multiplier=session.multiplier,
        )
        names = self.names()
        ops = [
            st.insert_hand(self.id, number, hand.record().to_dict(), names, time.time()),
            st.update_table(self.id, dealer=dealer),
        ]
        previous = (self.hand, self.hand_number)
        self.hand, self.hand_number = hand, number
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self.write(ops)
        except RequestError:
            self.hand, self.hand_number = previous
            raise
        session.dealt(deal)
        self.server.lobby.changed(self.id)
        self.hand_settled = False
        self.next_hand_at = None
        self.turn_seat = None
        if cut is not None:
            self.broadcast(
                {
                    "type": p.CUT,
                    "table": self.id,
                    "rounds": [[None if c is None else str(c) for c in r] for r in cut.rounds],
                    "dealer": cut.dealer,
                }
            )
        log.info("table %d: hand %d dealt by %s", self.id, number, names[dealer])
        self.after_change(0, settle)

    # -- timers, bots and absent players -------------------------------------------------------

    def due(self, number: int) -> float:
        """When the seat to act, `number`, is played for if it does not act itself."""
        seat = self.seats[number]
        if seat.kind == "bot" or seat.away or (seat.conn is None and seat.disconnected_at is None):
            return self.last_change + self.config.bot_pause
        candidates = []
        if self.config.turn_timer:
            candidates.append(self.turn_started + self.config.turn_timer)
        if seat.conn is None and seat.disconnected_at is not None:
            candidates.append(seat.disconnected_at + self.server.config.grace)
        return min(candidates, default=float("inf"))

    async def _run(self) -> None:
        while True:
            self.kicked.clear()
            try:
                async with self.lock:
                    delay = await self.step()
                if isinstance(delay, Pending):
                    await self.decide(delay)
                    delay = 0
            except asyncio.CancelledError:
                raise
            except RequestError:
                delay = STORAGE_RETRY  # a storage error: the table is paused; try again
            except Exception:
                log.exception("table %d: error in the table loop", self.id)
                delay = 1.0
            if delay is not None and delay <= 0:
                await asyncio.sleep(0)
                continue
            try:
                async with asyncio.timeout(delay):
                    await self.kicked.wait()
            except TimeoutError:
                pass

    async def step(self) -> float | Pending | None:
        """Do whatever is due now; return the seconds until something else will be due, or a
        slow bot's decision to make with the lock free (`decide`)."""
        if self.state in (FINISHED, CLOSED):
            return None
        if self.paused is not None:
            return None  # nothing falls due while paused; `unpause` kicks the loop
        self.server.catch_up()  # time the server lost is not charged to anybody
        now = self.now
        grace = self.server.config.grace
        wake = float("inf")
        for number, seat in enumerate(self.seats):
            if seat.kind != "human" or seat.conn is not None or seat.disconnected_at is None:
                continue
            ends = seat.disconnected_at + grace
            if now < ends:
                wake = min(wake, ends)
            elif self.state == WAITING:
                log.info("table %d: %s gone past the grace period", self.id, seat.name)
                await self.free_seat(number)
                if self.state == CLOSED:
                    return None
                self.broadcast_table()
                return 0
            else:
                seat.disconnected_at = None
                await self.set_away(number, True)
                self.broadcast_table()
        if self.state == WAITING:
            if starts_itself(sum(seat.taken for seat in self.seats), len(self.seats)):
                await self.start_session()
                return 0
            if any(seat.kind == "human" for seat in self.seats):
                self.unseated_since = None
            else:
                # Nobody sat down at a table created without sitting: do not keep it forever.
                if self.unseated_since is None:
                    self.unseated_since = now
                ends = self.unseated_since + grace
                if now >= ends:
                    await self.write([st.update_table(self.id, state=CLOSED)])
                    self.closed("nobody sat down")
                    return None
                wake = min(wake, ends)
            return None if wake == float("inf") else wake - now
        hand = self.hand
        # Every player has left (or lost the link): a session nobody comes back to ends, between
        # hands; meanwhile hands are dealt only for spectators watching.
        session = self.session
        session.players_seen(self.players_here(), now)
        if hand is None or hand.ended:
            if hand is not None and not self.hand_settled:
                # The hand's end was not settled (it cannot normally happen): settle it now.
                settle = self.settle(hand)
                await self.write(settle.ops)
                self.apply_settlement(settle)
                return 0
            abandoned = session.abandoned_at(self.server.config.abandoned_after)
            if abandoned is not None:
                if now >= abandoned:
                    await self.end_session("abandoned")
                    return None
                wake = min(wake, abandoned)
                if not self.attached():
                    # No hand for nobody: wait for somebody to come (a kick), or the end.
                    return wake - now
            if self.next_hand_at is None:
                self.next_hand_at = now + self.server.config.next_hand_delay
            if now >= self.next_hand_at:
                await self.deal()
                return 0
            return min(wake, self.next_hand_at) - now
        turn = hand.turn
        due = self.due(turn)
        if now >= due:
            seat = self.seats[turn]
            if seat.kind == "human" and not seat.away:
                seat.disconnected_at = None
                await self.set_away(turn, True)
                log.info("table %d: %s is away; playing for them", self.id, seat.name)
                pending = None
                try:
                    pending = await self.autoplay(turn, announce=True)
                finally:
                    # The mark goes out after the move made for the player: a client never
                    # shows the seat away with the view from before that move (a decision
                    # made off the loop sends it once made; see `decide`).
                    if pending is None:
                        self.broadcast_table()
                return 0 if pending is None else pending
            pending = await self.autoplay(turn)
            return 0 if pending is None else pending
        wake = min(wake, due)
        return None if wake == float("inf") else wake - now

    def bot_for(self, number: int) -> Bot:
        bot = self.bots.get(number)
        if bot is None:
            bot = make_bot(self.server.config.autoplay_strategy, self.rng(f"auto{number}"))
            if self.hand is not None:
                bot.observe(self.hand.events_for(number, 0))
            self.bots[number] = bot
        return bot

    async def autoplay(self, number: int, announce: bool = False) -> Pending | None:
        """Play for seat `number` (a bot, or a player away): a quick bot's move is made now; a
        slow bot's decision is handed back, to be made off the event loop (`decide`)."""
        hand = self.hand
        assert hand is not None
        view = hand.view(number)
        bot = self.bot_for(number)
        if bot.slow:
            # The thread decides on a copy: the seat's bot goes on observing the table meanwhile
            # (a decision the table moved past is dropped), and its random numbers are drawn
            # only by decisions acted on, so play stays the same for the same seed.
            thinker = copy.deepcopy(bot)
            seat = self.seats[number]
            return Pending(number, seat, hand, len(hand.events), bot, thinker, view, announce)
        try:
            action = bot.choose(view)
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", self.id, number)
            action = fallback(number, hand.legal_actions(number))
        await self.play_for(number, hand, action)
        return None

    async def decide(self, pending: Pending) -> None:
        """Make a slow bot's decision in the server's worker thread (`TonkServer.thinking`),
        the lock free meanwhile (players act, the table pauses or stops), then act on it only
        if `still_due`; else drop it, and the table's loop asks again if the seat is still to
        be played for. Stopping the table cancels the wait at once; a decision already running
        finishes unheeded."""
        action: Action | None = None
        thinker = pending.thinker
        try:
            action = await self.loop.run_in_executor(
                self.server.thinking, thinker.choose, pending.view
            )
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", self.id, pending.number)
        async with self.lock:
            try:
                if not self.still_due(pending):
                    log.debug("table %d: seat %d's decision dropped", self.id, pending.number)
                    return
                self.bots[pending.number] = pending.thinker
                if action is None:
                    action = fallback(pending.number, pending.hand.legal_actions(pending.number))
                await self.play_for(pending.number, pending.hand, action)
            finally:
                if pending.announce:
                    self.broadcast_table()

    def still_due(self, pending: Pending) -> bool:
        """Whether the table is where it was when `pending`'s bot was asked: playing, not
        paused, the same hand with as many events, the same seat to act, still played for."""
        hand = self.hand
        number = pending.number
        seat = pending.seat
        return (
            self.state == PLAYING
            and self.paused is None
            and hand is pending.hand
            and not hand.ended
            and hand.turn == number
            and len(hand.events) == pending.events
            and number < len(self.seats)
            and self.seats[number] is seat
            and (seat.kind == "bot" or seat.away)
            and self.bots.get(number) is pending.bot
        )

    async def play_for(self, number: int, hand: Hand, action: Action) -> None:
        """Apply the move a bot chose for seat `number`; a fallback move if it is illegal."""
        try:
            await self.apply(action)
        except IllegalAction as exc:
            log.error("table %d: bot in seat %d chose %s: %s", self.id, number, action, exc.reason)
            await self.apply(fallback(number, hand.legal_actions(number)))

    # -- restoring after a restart --------------------------------------------------------------

    def restore(self, saved: st.SavedTable) -> None:
        """Rebuild from the database: seats (everybody disconnected), ledger, hand in play."""
        now = self.now
        session = self.session
        self.state = saved.state
        session.started = saved.started
        session.hands_played = saved.hands_played
        session.dealer = saved.dealer
        session.multiplier = saved.multiplier
        self.creator = saved.creator
        if saved.state == PLAYING:
            self.seats = []
        for s in saved.seats:
            seat = Seat(
                name=s.name,
                kind=s.kind,
                strategy=s.strategy,
                token_hash=s.token_hash,
                stake=s.stake,
                away=s.away,
                # Everybody is disconnected after a restart and has the grace period to come
                # back, but for a seat that was away already: it is played for at once.
                disconnected_at=now if s.kind == "human" and not s.away else None,
            )
            if saved.state == PLAYING:
                self.seats.append(seat)
            elif 0 <= s.seat < len(self.seats):
                self.seats[s.seat] = seat
        session.ledger = Ledger(
            balances=dict(saved.balances),
            history=[
                LedgerEntry(number, ending, tuple(payments))
                for number, ending, payments in saved.history
            ],
        )
        for seat in self.seats:
            if seat.name is not None and saved.state == PLAYING:
                session.ledger.join(seat.name)
        if saved.state == PLAYING:
            for number, seat in enumerate(self.seats):
                if seat.kind == "bot":
                    assert seat.strategy is not None
                    self.bots[number] = make_bot(seat.strategy, self.rng(f"bot{number}"))
        if saved.hand is not None:
            record = HandRecord.from_dict({**saved.hand.record, "actions": saved.hand.actions})
            hand = record.replay()
            self.hand = hand
            self.hand_number = saved.hand.number
            self.hand_settled = saved.hand.settlement is not None
            for number, bot in self.bots.items():
                bot.observe(hand.events_for(number, 0))
            self.turn_seat = None if hand.ended else hand.turn
        self.turn_started = self.last_change = now


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


def _ignore_result(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a failure here is already logged by the store


def _log_failed_write(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a seat's new token was not saved: %s", future.exception())
