"""Who is at a table: sitting down, coming back with a seat's token, watching, leaving, bots
added and removed, the session's start, chat, and a player back from away."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time

from tonk.shared import protocol as p
from tonk.shared.bots import BOT_STRATEGIES, make_bot
from tonk.shared.messages import AwaySummary, ChatLine, Left, Seated, TableMessage, Watching
from tonk.shared.session import (
    SessionError,
    bot_name,
    check_can_start,
    check_name_free,
    next_creator,
    pick_seat,
    renumbered,
    seat_stake,
)

from . import store as st
from .connection import Connection
from .table_core import BOT, CLOSED, FINISHED, HUMAN, PLAYING, WAITING, RequestError, Seat
from .table_store import TableStore

log = logging.getLogger("tonk.server")


class TableSeats(TableStore):
    """The requests that seat, unseat and watch, and the session's start."""

    __slots__ = ()

    def seat_of(self, conn: Connection) -> int:
        place = conn.place  # (one look at the seating, on every action)
        if place is None or place[0] is not self or place[1] is None:
            raise RequestError(p.NOT_SEATED, "you do not have a seat at this table")
        return place[1]

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
                kind=HUMAN,
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
            conn.reply(Seated(self.id, number, token))
            self.server.door_seat(conn, self.id, left=False)
            log.info("table %d: %s sits in seat %d", self.id, conn.name, number)
            self.broadcast_table()
            self.kick()

    def returnable(self) -> bool:
        """Whether a seat here may be taken back: the session is to come or under way (or,
        once over, a rematch still waits for its players' answers: table_rematch)."""
        return self.state in (WAITING, PLAYING)

    def returned(self, conn: Connection) -> None:
        """A seat was taken back by `conn`, sent everything but what comes after the
        session (table_rematch sends that)."""

    async def resume(self, conn: Connection, token: str) -> None:
        async with self.lock:
            if not self.returnable():
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            wanted = st.hash_token(token)
            number = next(
                (n for n, s in enumerate(self.seats) if s.token_hash == wanted),
                None,
            )
            if number is None:
                given = self.given_to_bots.get(wanted)
                if given is not None:
                    raise RequestError(
                        p.BAD_TOKEN,
                        f"{given}'s seat was given to a bot while you were away; watch the "
                        "table, or take a bot's seat between hands",
                    )
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
            seat.votes.clear()
            await self.set_away(number, False)
            self.server.seating.put(conn, self, number)
            conn.reply(Seated(self.id, number, token))
            self.server.door_seat(conn, self.id, left=False)
            log.info("table %d: %s resumes seat %d", self.id, seat.name, number)
            self.broadcast_table()
            self.send_ledger(conn)
            self.tell_away(number)
            if self.hand is not None:
                conn.send(self.update_message(number, 0))
            self.returned(conn)
            self.kick()

    def door_token(self, name: str) -> str | None:
        """A new token for the human seat `name` holds here, or None. The SSH door's players
        prove who they are with their key, not with a token kept in a file: the door asks
        for a token when such a player comes back; the seat's old token stops working."""
        if not self.returnable():
            return None
        for number, seat in enumerate(self.seats):
            if seat.kind == HUMAN and seat.name == name:
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
            conn.reply(Watching(self.id))
            self.broadcast_table()
            self.send_ledger(conn)
            if self.hand is not None:
                conn.send(self.update_message(None, 0))
            self.kick()

    async def detach(self, conn: Connection, *, leaving: bool) -> None:
        """`conn` leaves the table (`leaving`) or its connection was lost."""
        async with self.lock:
            number = conn.seat
            self.server.seating.clear(conn)
            for claimed in [n for n, c in self.claims.items() if c is conn]:
                del self.claims[claimed]
            if number is None:
                self.spectators.discard(conn)
            elif 0 <= number < len(self.seats) and self.seats[number].conn is conn:
                seat = self.seats[number]
                seat.conn = None
                self.begin_absence(number)
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
            here = [s.kind == HUMAN and s.conn is not None for s in self.seats]
            creator = next_creator(number, here)
            ops.append(st.update_table(self.id, creator=creator))
        humans = [n for n, s in enumerate(self.seats) if n != number and s.kind == HUMAN]
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
            conn.send(Left(self.id))
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
            new = Seat(name=name, kind=BOT, strategy=strategy, stake=self.check_stake(stake))
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
            if self.seats[seat].kind != BOT:
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
        """Start playing with the seats taken, numbered again in order (`session.renumbered`)."""
        kept, creator = renumbered([seat.taken for seat in self.seats], self.creator)
        try:
            check_can_start(len(kept))
        except SessionError as exc:
            raise RequestError.refused(exc) from None
        taken = [self.seats[number] for number in kept]
        started = time.time()
        ops: list[st.Op] = [st.delete_seats(self.id)]
        ops.extend(st.put_seat(self.id, seat.saved(n)) for n, seat in enumerate(taken))
        ops.append(st.update_table(self.id, state=PLAYING, started=started, creator=creator))
        await self.write(ops)
        self.seats = taken
        for number, seat in enumerate(taken):
            if seat.conn is not None:
                self.server.seating.put(seat.conn, self, number)
            if seat.kind == BOT:
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
        self.broadcast(ChatLine(self.id, name or "", seat, text), answer=conn)

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
        self.tell_away(number)
        if self.hand is not None and not self.hand.ended and self.hand.turn == number:
            # Back during its own turn: a fresh turn clock, or a timer that ran out would
            # make the seat away again at once and play the rest of the turn for it.
            self.turn_started = self.now
        self.broadcast_table(answer)
        self.kick()

    # -- what happened while a player was away ---------------------------------------------

    def tell_away(self, number: int) -> None:
        """Seat `number`'s player is back: they are told what happened while they were gone
        (if anything did), and the count starts again."""
        seat = self.seats[number]
        tally, seat.tally = seat.tally, None
        if tally is None or not tally.anything or seat.conn is None:
            return
        assert seat.name is not None
        net = self.ledger.balances.get(seat.name, 0) - tally.balance
        hand = self.hand_number if tally.hand == self.hand_number else 0
        played_for = tuple(tally.played_for) if hand else ()
        seat.conn.send(AwaySummary(self.id, tally.turns, tuple(tally.hands), net, hand, played_for))


def _log_failed_write(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a seat's new token was not saved: %s", future.exception())
