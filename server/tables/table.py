"""One table, made of the parts it holds, each with its own state: its seats (who sits and
watches, tokens, connections: table_seats), its store (writes and the pause: table_store), its
play (the hand in play, the turn's clock, the deal: table_play), the seats between people and
bots during a session (table_away), and its rematch (table_rematch). The table itself holds what
it is (its id, configuration, state, lock and clock) and the session its parts share, says what
everybody at it sees of it (its summary), and runs its loop: it plays for the seats due to be
played for, deals the next hand and ends the session when its time comes. A request goes to the
part that owns it, which the caller reaches through the table (`table.seats.sit`,
`table.play.act`, `table.rematch.answer`). The table asks the core (tonk.shared.game.session)
about every rule; it decides none itself.

Every change happens under the table's lock, is written to the store, and only then is anybody
told of it. When the store cannot write (a locked or full disk, a removed database file), every
table pauses: everybody at it is told once why, new actions are refused, timers stop, and a
change already on its way to the disk waits there (the store tries that same write again until
it goes through). Once it does, everybody is told once that play carries on, from the last
change saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import TYPE_CHECKING

from tonk.shared.game.rules import HouseRules
from tonk.shared.game.session import Absence, Session, past_grace, returns_to_bot, starts_itself
from tonk.shared.terms import TableState
from tonk.shared.wire.messages import (
    Left,
    PlayerSummary,
    ServerMessage,
    SessionEndReason,
    TableMessage,
    TableSummary,
)

from ..connection import Connection
from ..errors import RequestError
from ..store import store as st
from .table_away import TableAway
from .table_core import (
    BOT,
    CLOSED,
    FINISHED,
    HUMAN,
    PLAYING,
    WAITING,
    Pending,
    Seat,
    Settle,
    TableConfig,
    ledger_message,
    without_paths,
)
from .table_play import TablePlay
from .table_rematch import TableRematch
from .table_seats import TableSeats
from .table_store import TableStore

if TYPE_CHECKING:
    from ..config import Limits
    from .host import TableHost

__all__ = [
    "CLOSED",
    "FINISHED",
    "PLAYING",
    "STORAGE_RETRY",
    "WAITING",
    "Pending",
    "RequestError",
    "Seat",
    "Settle",
    "Table",
    "TableConfig",
    "ledger_message",
    "without_paths",
]

log = logging.getLogger("tonk.server")

#: Seconds before the table loop tries again after a write of its own failed alone.
STORAGE_RETRY = 1.0
_INF = float("inf")


class Table:
    """A table: what it is, the parts it holds, and its loop (what falls due is done when it
    falls due)."""

    __slots__ = (
        "away",
        "config",
        "created",
        "creator_address",
        "id",
        "kicked",
        "lock",
        "name",
        "play",
        "rematch",
        "seats",
        "server",
        "session",
        "state",
        "store",
        "task",
    )

    def __init__(
        self, server: TableHost, id: int, name: str, config: TableConfig, created: float
    ) -> None:
        self.server = server
        self.id = id
        self.name = name
        self.config = config
        self.created = created
        # Where it was created from (not kept over a restart).
        self.creator_address: str | None = None
        self.state = WAITING
        self.lock = asyncio.Lock()
        self.kicked = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        # The session's rules and its state between hands (the ledger, who dealt, the
        # multiplier), which the parts share; its deserted_since and unseated_since are in loop
        # time, its started in wall-clock time.
        self.session = Session(
            config.rules, config.stake, config.hands, config.minutes, config.dealer
        )
        # Each part is given the parts it calls, made before it, and holds them privately; the
        # seats, made first, tell the later parts through the table (`TableFrame`).
        self.store = TableStore(self)
        self.seats = TableSeats(self, self.store, config.seats, config.stake)
        self.rematch = TableRematch(self, self.seats, self.store)
        self.play = TablePlay(self, self.seats, self.store, self.rematch)
        self.away = TableAway(self, self.seats, self.store, self.play)

    # -- what it is -----------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return asyncio.get_running_loop().time()

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

    @property
    def listed(self) -> bool:
        """In the lobby's list: waiting, playing, or finished with somebody still at it."""
        return self.state != CLOSED and self.server.tables.get(self.id) is self

    @property
    def open(self) -> bool:
        """Waiting or playing (what the server's table limits count)."""
        return self.state in (WAITING, PLAYING) and self.server.tables.get(self.id) is self

    def returnable(self) -> bool:
        """Whether a seat here may be taken back: the session is to come or under way, or,
        once over, a rematch still waits for its players' answers."""
        return self.state in (WAITING, PLAYING) or self.rematch.waiting()

    # -- what everybody sees ------------------------------------------------------------------

    def summary(self) -> TableSummary:
        config = self.config
        session = self.session
        balances = session.ledger.balances
        seats = self.seats
        taken = sum(seat.taken for seat in seats)
        return TableSummary(
            id=self.id,
            name=self.name,
            rules=self.rules.to_wire(),
            rules_name=self.rules.name,
            stake=config.stake,
            unit=config.unit,
            seats=len(seats),
            taken=taken,
            free=len(seats) - taken,
            state=self.state,
            spectators=len(seats.spectators),
            turn_timer=config.turn_timer,
            hands=config.hands,
            minutes=config.minutes,
            bot_pause=config.bot_pause,
            hands_played=session.hands_played,
            creator=seats.creator,
            dealer=session.dealer,
            paused=self.store.paused,
            open_bot_seats=config.open_bot_seats,
            players=tuple(
                PlayerSummary(
                    seat=number,
                    name=seat.name,
                    kind=seat.kind,
                    strategy=seat.strategy,
                    status=seat.status,
                    stake=seat.stake,
                    balance=balances.get(seat.name, 0) if seat.name else 0,
                    played_for_in=seats.played_for_in(seat),
                    votes=tuple(sorted(seat.votes)),
                    holds_for=seat.holds_for if seat.kind == BOT else None,
                )
                for number, seat in enumerate(seats)
            ),
            changes=self.rules.overrides(),
        )

    def broadcast(self, message: ServerMessage, answer: Connection | None = None) -> None:
        """Send `message` to everybody at the table (see `TableSeats.broadcast`)."""
        self.seats.broadcast(message, answer)

    def broadcast_table(self, answer: Connection | None = None) -> None:
        """Everybody at the table gets its summary (`answer`'s copy answers its request); the
        lobby's list shows it too."""
        self.seats.broadcast(TableMessage(self.summary()), answer)
        self.server.lobby.changed(self.id)

    # -- what the seats tell the parts made after them (`TableFrame`) -------------------------

    def send_ledger(self, conn: Connection) -> None:
        self.play.send_ledger(conn)

    def send_hand(self, conn: Connection, seat: int | None) -> None:
        self.play.send_hand(conn, seat)

    def back_in_turn(self, number: int) -> None:
        self.play.back_in_turn(number)

    def start_play(self, started: float) -> None:
        self.play.start(started)

    def forget_claims(self, conn: Connection) -> None:
        self.away.forget(conn)

    def returned(self, conn: Connection) -> None:
        self.rematch.returned(conn)

    # -- a connection leaving: the seats, then the rematch (every request is the part's own) ---

    async def detach(self, conn: Connection, *, leaving: bool) -> None:
        """`conn` leaves the table (`leaving`) or its connection was lost."""
        number = conn.seat if conn.table is self else None
        await self.seats.detach(conn, leaving=leaving)
        await self.rematch.left(number, leaving)

    # -- what the server asks of it -----------------------------------------------------------

    def unpause(self) -> None:
        """The store writes again: play carries on, with a fresh turn clock; a disconnected
        player's grace period is not charged the time the table was paused."""
        now = self.now
        lost = self.store.unpause(now)
        if lost is None:
            return
        self.play.unpaused(now, lost)
        self.seats.shift(lost)
        self.broadcast_table()
        self.play.refresh_deadline()
        self.kick()

    def shift(self, lost: float) -> None:
        """The server did not run for `lost` seconds: every deadline moves on by as much."""
        self.play.shift(lost)
        self.store.shift(lost)
        self.seats.shift(lost)
        self.play.refresh_deadline()

    def restore(self, saved: st.SavedTable) -> None:
        """Rebuild from the database: seats (everybody disconnected), ledger, hand in play,
        the rematch's chain and offer."""
        now = self.now
        playing = saved.state in (PLAYING, FINISHED)  # the seats as the session numbered them
        self.state = TableState(saved.state)
        self.rematch.restore(saved, now)
        self.seats.restore(saved, playing, now)
        self.play.restore(saved, playing, now)

    def forget(self) -> None:
        """The table leaves the server's tables (over, and nobody is at it)."""
        self.server.forget_table(self)

    def closed(self, why: str) -> None:
        """The table is closed (already so in the database): it leaves the lobby."""
        self.state = CLOSED
        log.info("table %d closed: %s", self.id, why)
        spectators = list(self.seats.spectators)
        self.seats.spectators.clear()
        self.forget()
        for conn in spectators:
            self.server.seating.clear(conn)
            conn.send(Left(self.id))
            self.server.lobby.arrived(conn)

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

    def begin(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"table-{self.id}")

    async def _run(self) -> None:
        while True:
            self.kicked.clear()
            try:
                async with self.lock:
                    delay = await self.step()
                if delay is None and self.server.tables.get(self.id) is not self:
                    return  # over and forgotten (from this loop, say): nothing falls due
                if isinstance(delay, Pending):
                    await self.play.decide(delay)
                    delay = 0
                if self.server.tables.get(self.id) is not self:
                    # Closed or over by its own doing, and forgotten: nothing can fall due
                    # again, and a loop left waiting would be destroyed pending with the table.
                    return
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
            return await self.rematch.due() if self.state == FINISHED else None
        if self.store.paused is not None:
            return None  # nothing falls due while paused; `unpause` kicks the loop
        self.server.catch_up()  # time the server lost is not charged to anybody
        now = self.now
        grace = self.server.config.grace
        seats, play, store = self.seats, self.play, self.store
        session = self.session
        started = self.state == PLAYING
        wake = _INF
        for number, seat in enumerate(seats):
            if returns_to_bot(seat, seat.conn is not None, seat.took_from is not None):
                await self.away.back_to_bot(number)  # (its taker went: not waited for)
                return 0
            disconnected_at = seat.disconnected_at
            if seat.kind != HUMAN or seat.conn is not None or disconnected_at is None:
                continue
            gone = past_grace(disconnected_at, grace, now, started)
            if gone is None:
                wake = min(wake, disconnected_at + grace)
            elif gone is Absence.FREED:
                log.info("table %d: %s gone past the grace period", self.id, seat.name)
                await seats.free_seat(number)
                if self.state == CLOSED:
                    return None
                self.broadcast_table()
                return 0
            else:
                log.info(
                    "table %d: %s gone past the grace period; playing for them", self.id, seat.name
                )
                seat.disconnected_at = None
                await seats.set_away(number, True)
                self.broadcast_table()
        if self.state == WAITING:
            if starts_itself(sum(seat.taken for seat in seats), len(seats)):
                await seats.start_session()
                return 0
            # Nobody sat down at a table created without sitting: do not keep it forever.
            session.seated_seen(any(seat.kind == HUMAN for seat in seats), now)
            closes = session.unseated_closes_at(grace)
            if closes is not None:
                if now >= closes:
                    await store.write([st.update_table(self.id, state=CLOSED)])
                    self.closed("nobody sat down")
                    return None
                wake = min(wake, closes)
            return None if wake == _INF else wake - now
        hand = play.hand
        # Every player has left (or lost the link): a session nobody comes back to ends, between
        # hands; meanwhile hands are dealt only for spectators watching.
        here = seats.players_here()
        session.players_seen(here, now)
        if not here and seats.spectators:
            # Played on only for spectators: at a pace they can follow, not as fast as bots go.
            paced = play.last_change + self.server.config.watched_pace
            if now < paced:
                return paced - now
        if hand is None or hand.ended:
            if hand is not None and not play.hand_settled:
                # The hand's end was not settled (it cannot normally happen): settle it now.
                settle = play.settle(hand)
                await store.write(settle.ops)
                play.apply_settlement(settle)
                return 0
            abandoned = session.abandoned_at(self.server.config.abandoned_after)
            if abandoned is not None:
                if now >= abandoned:
                    await play.end_session(SessionEndReason.ABANDONED)
                    return None
                wake = min(wake, abandoned)
                if not seats.attached():
                    # No hand for nobody: wait for somebody to come (a kick), or the end.
                    return wake - now
            if self.away.claims:
                await self.away.seat_claims()  # bots' seats asked for during the hand
                return 0
            if play.next_hand_at is None:
                play.next_hand_at = now + self.server.config.next_hand_delay
            # The players' values for the next deal are asked for meanwhile: the wait for
            # them runs alongside the pause between hands.
            play.open_deal()
            deal_at = play.deal_at()
            if now >= deal_at:
                await play.deal()
                return 0
            return min(wake, deal_at) - now
        turn = hand.turn
        due = play.due(turn)
        if now >= due:
            seat = seats[turn]
            if seat.kind == HUMAN and not seat.away and seat.took_from is not None:
                log.info("table %d: %s let the turn run out", self.id, seat.name)
                await self.away.back_to_bot(turn)  # (its bot plays the turn)
                return 0
            if seat.kind == HUMAN and not seat.away:
                seat.disconnected_at = None
                await seats.set_away(turn, True)
                log.info("table %d: %s is away; playing for them", self.id, seat.name)
                pending = None
                try:
                    pending = await play.autoplay(turn, announce=True)
                finally:
                    # The mark goes out after the move made for the player: a client never
                    # shows the seat away with the view from before that move (a decision
                    # made off the loop sends it once made; see `TablePlay.decide`).
                    if pending is None:
                        self.broadcast_table()
                return 0 if pending is None else pending
            pending = await play.autoplay(turn)
            return 0 if pending is None else pending
        wake = min(wake, due)
        return None if wake == _INF else wake - now
