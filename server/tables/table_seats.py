"""A table's seats: who sits where (each seat's player, token and connection), who watches, who
created the table; the requests that sit, come back with a seat's token, watch and leave, bots
added and removed, the session's start, chat, and a player back from away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

from tonk.shared.bots.bots import BOT_STRATEGIES
from tonk.shared.game.actions import Event
from tonk.shared.game.session import (
    SessionError,
    bot_name,
    check_can_start,
    check_name_free,
    next_creator,
    pick_seat,
    renumbered,
    seat_stake,
)
from tonk.shared.game.waiting import AwayTally
from tonk.shared.terms import SeatKind
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    AwaySummary,
    ChatLine,
    Seated,
    ServerMessage,
    TableMessage,
    Watching,
)

from ..connection import Connection, encode_message
from ..errors import RequestError
from ..store import store as st
from .table_core import BOT, CLOSED, FINISHED, HUMAN, PLAYING, WAITING, Seat, TableFrame
from .table_store import TableStore

if TYPE_CHECKING:
    pass

log = logging.getLogger("tonk.server")


class TableSeats:
    """A table's seats (read as a sequence of `Seat`), its spectators and its creator, and the
    requests that seat, unseat and watch. Of the other parts it asks the store to write and
    whether play is paused (given it, as `TableStore`), and through its table (`TableFrame`: the
    others are given the seats) the play what a newcomer is sent, the away part to forget a
    claim, the rematch to tell one back what comes after the session."""

    __slots__ = ("_seats", "_store", "_table", "creator", "given_to_bots", "spectators")

    def __init__(self, table: TableFrame, store: TableStore, count: int, stake: int) -> None:
        self._table = table
        self._store = store
        self._seats = [Seat(stake=stake) for _ in range(count)]
        self.spectators: set[Connection] = set()
        self.creator: int | None = None
        # The hashes of tokens whose seats were given to bots, with the name that held each: its
        # player is told so when they come back (kept until the server stops).
        self.given_to_bots: dict[str, str] = {}

    # -- the seats, as a sequence ---------------------------------------------------------------

    @overload
    def __getitem__(self, number: int) -> Seat: ...

    @overload
    def __getitem__(self, number: slice) -> list[Seat]: ...

    def __getitem__(self, number: int | slice) -> Seat | list[Seat]:
        return self._seats[number]

    def __setitem__(self, number: int, seat: Seat) -> None:
        self._seats[number] = seat

    def __len__(self) -> int:
        return len(self._seats)

    def __iter__(self) -> Iterator[Seat]:
        return iter(self._seats)

    def replace(self, seats: list[Seat], creator: int) -> None:
        """A new table's seats, taken over from the table it follows (a rematch's), and its
        creator among them."""
        self._seats = seats
        self.creator = creator

    # -- who is here --------------------------------------------------------------------------

    def connections(self) -> list[tuple[Connection, int | None]]:
        out: list[tuple[Connection, int | None]] = [
            (seat.conn, number) for number, seat in enumerate(self._seats) if seat.conn is not None
        ]
        out.extend((conn, None) for conn in self.spectators)
        return out

    def attached(self) -> bool:
        return bool(self.spectators) or any(seat.conn is not None for seat in self._seats)

    def players_here(self) -> bool:
        """Whether any player (a person in a seat, not a bot or a spectator) is connected."""
        return any(seat.kind == HUMAN and seat.conn is not None for seat in self._seats)

    def names(self) -> list[str]:
        return [seat.name or "" for seat in self._seats]

    def broadcast(self, message: ServerMessage, answer: Connection | None = None) -> None:
        """Send `message` to everybody at the table; `answer`, the connection whose request
        this answers, gets its copy with the request's `reply_to`."""
        frame = encode_message(message)
        for conn, _ in self.connections():
            if conn is answer and conn.request_id is not None:
                conn.reply(message)
            else:
                conn.send_frame(frame)

    def played_for_in(self, seat: Seat) -> float | None:
        """Seconds until a disconnected player's seat is played for (before the start: given
        up); None for any other seat."""
        disconnected_at = seat.disconnected_at
        if disconnected_at is None or seat.conn is not None or seat.kind != HUMAN or seat.away:
            return None
        table = self._table
        if table.state == FINISHED:
            return None  # nothing is played for anybody once the session is over
        return round(max(0.0, disconnected_at + table.server.config.grace - table.now), 1)

    def hand_ended(self, number: int, winner: str | None) -> None:
        """Hand `number` ended (won by `winner`): counted for each player away."""
        for seat in self._seats:
            if seat.tally is not None:
                seat.tally.hand_ended(number, winner)

    def played_for(
        self, number: int, hand_number: int, events: Sequence[Event], start: int
    ) -> None:
        """A move (the `events` of hand `hand_number` from `start` on) was made for seat
        `number` in its player's absence: counted for them (`tell_away`)."""
        tally = self._seats[number].tally
        if tally is not None:
            turn = sum(1 for event in events[:start] if event.kind == "turn")
            # The seat's own moves: not the next seat's `turn`, nor the hand's end they led to.
            moves = [
                index
                for index in range(start, len(events))
                if events[index].seat == number and events[index].kind != "turn"
            ]
            tally.played(hand_number, turn, moves)

    def shift(self, lost: float) -> None:
        """`lost` seconds not charged to the players who lost the link."""
        for seat in self._seats:
            if seat.disconnected_at is not None:
                seat.disconnected_at += lost

    # -- checks -------------------------------------------------------------------------------

    def seat_of(self, conn: Connection) -> int:
        place = conn.place  # (one look at the seating, on every action)
        if place is None or place[0] is not self._table or place[1] is None:
            raise RequestError(p.NOT_SEATED, "you do not have a seat at this table")
        return place[1]

    def require_creator(self, conn: Connection) -> None:
        if self.creator is None or conn.seat != self.creator or conn.table is not self._table:
            raise RequestError(p.NOT_CREATOR, "only the table's creator may do that")

    def require_waiting(self) -> None:
        if self._table.state != WAITING:
            raise RequestError(p.ALREADY_STARTED, "the session has started")

    def pick_seat(self, seat: int | None) -> int:
        try:
            return pick_seat([candidate.taken for candidate in self._seats], seat)
        except SessionError as exc:
            raise RequestError.refused(exc) from None

    def check_stake(self, stake: int | None) -> int:
        """A new seat's stake (see `session.seat_stake`)."""
        config = self._table.config
        try:
            return seat_stake(config.rules, config.stake, config.unit, stake)
        except SessionError as exc:
            raise RequestError.refused(exc) from None

    # -- away ---------------------------------------------------------------------------------

    def begin_absence(self, number: int) -> None:
        """Seat `number`'s player went (lost the link, left, or missed a turn) during the
        session: what the table does for the seat from now on is counted for them."""
        seat = self._seats[number]
        if self._table.state == PLAYING and seat.kind == HUMAN and seat.tally is None:
            assert seat.name is not None
            seat.tally = AwayTally(self._table.session.ledger.balances.get(seat.name, 0))

    async def set_away(self, number: int, away: bool) -> None:
        """Mark seat `number` away (played for until its player is back) or back, in memory and
        on disk: after a restart a seat away is played for at once, with no new grace period.
        If the store fails the table pauses (see `TableStore.write`) and the mark stays in
        memory."""
        seat = self._seats[number]
        if seat.away == away:
            return
        seat.away = away
        if away:
            seat.votes.clear()  # played for now: nothing more to vote on
            self.begin_absence(number)
        table = self._table
        ops = [st.set_away(table.id, number, away)]
        if self._store.paused is not None:
            # Queued behind the writes that wait for the storage, not waited for: the mark
            # reaches the disk when they do, and who comes back is not kept waiting.
            table.server.store.write(ops).add_done_callback(_ignore_result)
            return
        with contextlib.suppress(RequestError):
            await self._store.write(ops)

    # -- requests -----------------------------------------------------------------------------

    async def sit(self, conn: Connection, seat: int | None, stake: int | None) -> None:
        table = self._table
        async with table.lock:
            if table.state != WAITING:
                if table.state == PLAYING:
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
            ops = [st.put_seat(table.id, new.saved(number))]
            creator = self.creator
            if creator is None:
                creator = number
                ops.append(st.update_table(table.id, creator=creator))
            await self._store.write(ops)
            self._seats[number] = new
            self.creator = creator
            table.server.seating.put(conn, table, number)
            conn.reply(Seated(table.id, number, token))
            table.server.door_seat(conn, table.id, left=False)
            log.info("table %d: %s sits in seat %d", table.id, conn.name, number)
            table.broadcast_table()
            table.kick()

    async def resume(self, conn: Connection, token: str) -> None:
        table = self._table
        async with table.lock:
            if not table.returnable():
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            wanted = st.hash_token(token)
            number = next(
                (n for n, s in enumerate(self._seats) if s.token_hash == wanted),
                None,
            )
            if number is None:
                given = self.given_to_bots.get(wanted)
                if given is not None:
                    raise RequestError(
                        p.BAD_TOKEN,
                        f"{given}'s seat at {table.name} was given to a bot while you were "
                        "away: take it back with Take a seat on the table's row in the lobby "
                        "(at once between hands, else as the hand in play ends), or watch",
                    )
                raise RequestError(p.BAD_TOKEN, "you hold no seat at this table to take back")
            if conn.table is table and conn.seat is not None and conn.seat != number:
                raise RequestError(p.ALREADY_AT_TABLE, "you hold another seat at this table")
            seat = self._seats[number]
            old = seat.conn
            if old is not None and old is not conn:
                table.server.seating.clear(old)
                old.error(
                    p.SEAT_RESUMED_ELSEWHERE,
                    "your seat was taken back from another connection (the same player, "
                    "started again or on another computer)",
                )
                table.server.lobby.arrived(old)
            seat.conn = conn
            seat.disconnected_at = None
            seat.votes.clear()
            await self.set_away(number, False)
            table.server.seating.put(conn, table, number)
            conn.reply(Seated(table.id, number, token))
            table.server.door_seat(conn, table.id, left=False)
            log.info("table %d: %s resumes seat %d", table.id, seat.name, number)
            table.broadcast_table()
            table.send_ledger(conn)
            self.tell_away(number)
            table.send_hand(conn, number)
            table.returned(conn)
            table.kick()

    def door_token(self, name: str) -> str | None:
        """A new token for the human seat `name` holds here, or None. The SSH door's players
        prove who they are with their key, not with a token kept in a file: the door asks
        for a token when such a player comes back; the seat's old token stops working. For
        a player whose seat was given to a bot, a token that, used, tells them so."""
        table = self._table
        if not table.returnable():
            return None
        for number, seat in enumerate(self._seats):
            if seat.kind == HUMAN and seat.name == name:
                token = secrets.token_urlsafe(18)
                seat.token_hash = st.hash_token(token)
                written = table.server.store.write(
                    [st.set_token(table.id, number, name, seat.token_hash)]
                )
                written.add_done_callback(_log_failed_write)
                return token
        if table.state == PLAYING and name in self.given_to_bots.values():
            # Their seat went to a bot: a token that tells them so, as the token they held
            # tells a player who comes back by it (`resume`: bad_token, saying why).
            token = secrets.token_urlsafe(18)
            self.given_to_bots[st.hash_token(token)] = name
            return token
        return None

    def watched_by(self, conn: Connection, answer: bool = False) -> None:
        """`conn` watches the table from now on: sent what a spectator sees of it so far, in
        the order `watch` sends it (`watching`, the `table` everybody gets, `ledger`, the
        hand in play); `answer`: the `table` answers conn's request."""
        table = self._table
        self.spectators.add(conn)
        table.server.seating.put(conn, table, None)
        conn.send(Watching(table.id))
        table.broadcast_table(answer=conn if answer else None)
        table.send_ledger(conn)
        table.send_hand(conn, None)

    async def watch(self, conn: Connection) -> None:
        table = self._table
        async with table.lock:
            if table.state not in (WAITING, PLAYING, FINISHED):
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            # (A finished table is here while somebody is still at it, as the lobby lists it:
            # watched, it shows its last hand, its standings and the rematch offer.)
            self.spectators.add(conn)
            table.server.seating.put(conn, table, None)
            conn.reply(Watching(table.id))
            table.broadcast_table()
            table.send_ledger(conn)
            table.send_hand(conn, None)
            table.returned(conn)
            table.kick()

    async def detach(self, conn: Connection, *, leaving: bool) -> None:
        """`conn` leaves the table (`leaving`) or its connection was lost."""
        table = self._table
        async with table.lock:
            number = conn.seat
            table.server.seating.clear(conn)
            table.forget_claims(conn)
            if number is None:
                self.spectators.discard(conn)
            elif 0 <= number < len(self._seats) and self._seats[number].conn is conn:
                seat = self._seats[number]
                seat.conn = None
                self.begin_absence(number)
                if table.state == WAITING and leaving and seat.took_from is None:
                    await self.free_seat(number)
                elif table.state == PLAYING and leaving:
                    seat.disconnected_at = None
                    await self.set_away(number, True)
                else:
                    seat.disconnected_at = table.now
                log.info(
                    "table %d: %s %s seat %d",
                    table.id,
                    seat.name,
                    "leaves" if leaving else "disconnected from",
                    number,
                )
            if table.state != CLOSED:
                table.broadcast_table()
            table.kick()
            if table.state == FINISHED and not self.attached():
                table.forget()

    async def free_seat(self, number: int) -> None:
        """A waiting table's seat is given up: its player left, or was gone past the grace."""
        table = self._table
        ops: list[st.Op] = [st.delete_seat(table.id, number)]
        creator = self.creator
        if creator == number:
            here = [s.kind == HUMAN and s.conn is not None for s in self._seats]
            creator = next_creator(number, here)
            ops.append(st.update_table(table.id, creator=creator))
        humans = [n for n, s in enumerate(self._seats) if n != number and s.kind == HUMAN]
        if not humans:
            ops.append(st.update_table(table.id, state=CLOSED))
        await self._store.write(ops)
        self._seats[number] = Seat(stake=table.config.stake)
        self.creator = creator
        if not humans:
            table.closed("nobody left")

    async def add_bot(
        self, conn: Connection, strategy: str, seat: int | None, stake: int | None
    ) -> None:
        table = self._table
        async with table.lock:
            self.require_creator(conn)
            self.require_waiting()
            if strategy not in BOT_STRATEGIES:
                raise RequestError(
                    p.BAD_BOT, f"no bot {strategy!r}; the bots are {', '.join(BOT_STRATEGIES)}"
                )
            number = self.pick_seat(seat)
            name = bot_name(self.names())
            new = Seat(name=name, kind=BOT, strategy=strategy, stake=self.check_stake(stake))
            await self._store.write([st.put_seat(table.id, new.saved(number))])
            self._seats[number] = new
            log.info("table %d: %s bot %s in seat %d", table.id, strategy, name, number)
            table.broadcast_table(answer=conn)
            table.kick()

    async def remove_bot(self, conn: Connection, seat: int) -> None:
        table = self._table
        async with table.lock:
            self.require_creator(conn)
            self.require_waiting()
            if not 0 <= seat < len(self._seats):
                raise RequestError(p.NO_SUCH_SEAT, f"no seat {seat} at this table")
            if self._seats[seat].kind != BOT:
                raise RequestError(p.BAD_BOT, f"seat {seat} is not a bot")
            await self._store.write([st.delete_seat(table.id, seat)])
            self._seats[seat] = Seat(stake=table.config.stake)
            table.broadcast_table(answer=conn)

    async def start(self, conn: Connection) -> None:
        async with self._table.lock:
            self.require_creator(conn)
            self.require_waiting()
            await self.start_session(answer=conn)

    async def start_session(self, answer: Connection | None = None) -> None:
        """Start playing with the seats taken, numbered again in order (`session.renumbered`)."""
        table = self._table
        kept, creator = renumbered([seat.taken for seat in self._seats], self.creator)
        try:
            check_can_start(len(kept))
        except SessionError as exc:
            raise RequestError.refused(exc) from None
        taken = [self._seats[number] for number in kept]
        started = time.time()
        ops: list[st.Op] = [st.delete_seats(table.id)]
        ops.extend(st.put_seat(table.id, seat.saved(n)) for n, seat in enumerate(taken))
        ops.append(st.update_table(table.id, state=PLAYING, started=started, creator=creator))
        await self._store.write(ops)
        self._seats = taken
        for number, seat in enumerate(taken):
            if seat.conn is not None:
                table.server.seating.put(seat.conn, table, number)
        table.start_play(started)
        self.creator = creator
        table.state = PLAYING
        log.info("table %d: session starts with %s", table.id, ", ".join(self.names()))
        table.broadcast_table(answer)
        table.kick()

    async def chat(self, conn: Connection, text: str) -> None:
        table = self._table
        if conn.table is not table:
            raise RequestError(p.NOT_AT_TABLE, "you are not at a table")
        limit = table.limits.max_chat
        if len(text) > limit or not p.is_printable_text(text):
            raise RequestError(p.BAD_CHAT, f"chat is printable text of 1 to {limit} characters")
        seat = conn.seat
        name = self._seats[seat].name if seat is not None else conn.name
        self.broadcast(ChatLine(table.id, name or "", seat, text), answer=conn)

    async def back(self, conn: Connection) -> None:
        """Answered by a `table` (every connection's, if the seat was away; else this one's)."""
        table = self._table
        async with table.lock:
            number = self.seat_of(conn)
            if self._seats[number].away:
                await self.welcome_back(number, answer=conn)
            else:
                conn.reply(TableMessage(table.summary()))

    async def welcome_back(self, number: int, answer: Connection | None = None) -> None:
        """The player in seat `number` is back (said so, or acted): no longer away."""
        if not self._seats[number].away:
            return
        await self.set_away(number, False)
        self.tell_away(number)
        table = self._table
        table.back_in_turn(number)
        table.broadcast_table(answer)
        table.kick()

    # -- what happened while a player was away ---------------------------------------------

    def tell_away(self, number: int) -> None:
        """Seat `number`'s player is back: they are told what happened while they were gone
        (if anything did), and the count starts again."""
        seat = self._seats[number]
        tally, seat.tally = seat.tally, None
        if tally is None or not tally.anything or seat.conn is None:
            return
        assert seat.name is not None
        table = self._table
        net = table.session.ledger.balances.get(seat.name, 0) - tally.balance
        hand = table.session.hand_number if tally.hand == table.session.hand_number else 0
        played_for = tuple(tally.played_for) if hand else ()
        seat.conn.send(
            AwaySummary(table.id, tally.turns, tuple(tally.hands), net, hand, played_for)
        )

    # -- after a restart ----------------------------------------------------------------------

    def restore(self, saved: st.SavedTable, playing: bool, now: float) -> None:
        """The seats as the database has them, everybody disconnected (`playing`: numbered
        as the session numbered them)."""
        self.creator = saved.creator
        if playing:
            self._seats = []
        for s in saved.seats:
            kind = SeatKind(s.kind)
            seat = Seat(
                name=s.name,
                kind=kind,
                strategy=s.strategy,
                token_hash=s.token_hash,
                stake=s.stake,
                away=s.away,
                # Everybody is disconnected after a restart and has the grace period to come
                # back, but for a seat that was away already: it is played for at once.
                disconnected_at=now if kind == HUMAN and not s.away else None,
            )
            if playing:
                self._seats.append(seat)
            elif 0 <= s.seat < len(self._seats):
                self._seats[s.seat] = seat


def _ignore_result(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a failure here is already logged by the store


def _log_failed_write(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a seat's new token was not saved: %s", future.exception())
