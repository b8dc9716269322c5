"""Seats between people and bots while a session runs: a disconnected player's seat played for
now (the creator's word, or the players' vote), a bot's seat taken by a late friend between
hands, and an absent player's seat given to a bot by the creator."""

from __future__ import annotations

import logging
import secrets

from tonk.shared import protocol as p
from tonk.shared.messages import Seated, Watching
from tonk.shared.session import SessionError, bot_name, check_name_free, play_for_now

from . import store as st
from .connection import Connection
from .table_core import BOT, HUMAN, PLAYING, WAITING, RequestError, Seat
from .table_seats import TableSeats

log = logging.getLogger("tonk.server")


class TableAway(TableSeats):
    """The requests that change who plays a seat during the session."""

    __slots__ = ()

    def _seat_number(self, seat: int) -> int:
        if not 0 <= seat < len(self.seats):
            raise RequestError(p.NO_SUCH_SEAT, f"this table has seats 0 to {len(self.seats) - 1}")
        return seat

    def _between_hands(self) -> bool:
        return self.hand is None or self.hand.ended

    async def play_for_now(self, conn: Connection, absent: int) -> None:
        """Seat `absent`, whose player lost the link, is played for now (`waiting.play_for_now`
        says who may); answered by the `table` everybody gets."""
        async with self.lock:
            asker = self.seat_of(conn)
            if self.state != PLAYING:
                raise RequestError(p.NO_HAND, "the session has not started")
            absent = self._seat_number(absent)
            seat = self.seats[absent]
            try:
                vote = play_for_now(
                    asker,
                    absent,
                    [s.status for s in self.seats],
                    [s.kind == HUMAN and s.conn is not None for s in self.seats],
                    self.names(),
                    self.creator,
                    frozenset(seat.votes),
                )
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            if vote.now:
                log.info("table %d: %s's seat played for now", self.id, seat.name)
                # (disconnected_at kept: their grace still runs, for a rematch offered meanwhile)
                await self.set_away(absent, True)
            else:
                seat.votes = set(vote.votes)
            self.broadcast_table(answer=conn)
            self.kick()

    async def take_bot_seat(self, conn: Connection, number: int) -> None:
        """`conn` (in the lobby, or watching this table) takes the seat a bot plays: at once
        between hands, else as the hand in play ends (the answer then is the `table`, and
        `seated` follows at the hand's end). The bot's balance stays with the bot's name; the
        player plays on from their own (0, or what they had if they sat here before)."""
        async with self.lock:
            if self.state not in (WAITING, PLAYING):
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            number = self._seat_number(number)
            if self.seats[number].kind != BOT:
                raise RequestError(p.BAD_BOT, f"seat {number} is not a bot's")
            claimant = self.claims.get(number)
            if claimant is not None and claimant is not conn:
                raise RequestError(p.SEAT_TAKEN, f"someone has asked for seat {number} already")
            assert conn.name is not None
            try:
                check_name_free(self.names(), conn.name)
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            if any(c is conn for n, c in self.claims.items() if n != number):
                raise RequestError(p.ALREADY_AT_TABLE, "you have asked for another seat already")
            if self._between_hands():
                await self._take_seat(number, conn)
                return
            self.claims[number] = conn
            if conn not in self.spectators:
                self.spectators.add(conn)
                self.server.seating.put(conn, self, None)
                conn.send(Watching(self.id))
                self.send_ledger(conn)
                if self.hand is not None:
                    conn.send(self.update_message(None, 0))
            log.info("table %d: %s takes seat %d once the hand ends", self.id, conn.name, number)
            self.broadcast_table(answer=conn)

    async def seat_claims(self) -> None:
        """Between hands: the bots' seats asked for during the hand are taken."""
        for number, conn in list(self.claims.items()):
            if conn.table is self and conn.seat is None and self.seats[number].kind == BOT:
                try:
                    check_name_free(self.names(), conn.name or "")
                except SessionError as exc:
                    conn.error(exc.code, exc.message)
                else:
                    # (a write that fails leaves the claim, tried again by the table's loop)
                    await self._take_seat(number, conn)
            del self.claims[number]

    async def _take_seat(self, number: int, conn: Connection) -> None:
        old = self.seats[number]
        assert conn.name is not None
        token = secrets.token_urlsafe(18)
        new = Seat(
            name=conn.name,
            kind=HUMAN,
            token_hash=st.hash_token(token),
            stake=old.stake,
            conn=conn,
        )
        await self.write([st.put_seat(self.id, new.saved(number))])
        self.seats[number] = new
        self.bots.pop(number, None)
        if self.state == PLAYING:
            self.ledger.join(conn.name)
        self.spectators.discard(conn)
        self.server.seating.put(conn, self, number)
        conn.reply(Seated(self.id, number, token))
        self.server.door_seat(conn, self.id, left=False)
        log.info("table %d: %s takes %s's seat %d", self.id, conn.name, old.name, number)
        self.broadcast_table()
        self.send_ledger(conn)
        if self.hand is not None:
            conn.send(self.update_message(number, 0))
        self.kick()

    async def seat_to_bot(self, conn: Connection, number: int) -> None:
        """The creator gives an absent player's seat (away, or disconnected) to a bot: the
        player's balance stays under their name, their token no longer holds the seat, and a
        connection of theirs still here watches from now on."""
        async with self.lock:
            self.require_creator(conn)
            if self.state != PLAYING:
                raise RequestError(
                    p.NO_HAND,
                    "the session has not started: before it does, a seat whose player is gone "
                    "is given up after the grace period",
                )
            number = self._seat_number(number)
            seat = self.seats[number]
            if seat.kind != HUMAN:
                raise RequestError(p.BAD_VALUE, f"seat {number} has no player", "seat")
            if not seat.away and seat.conn is not None:
                raise RequestError(
                    p.BAD_VALUE,
                    f"{seat.name} is here: only an absent player's seat goes to a bot",
                    "seat",
                )
            strategy = self.server.config.autoplay_strategy
            new = Seat(name=bot_name(self.names()), kind=BOT, strategy=strategy, stake=seat.stake)
            await self.write([st.put_seat(self.id, new.saved(number))])
            self.seats[number] = new
            if seat.token_hash is not None and seat.name is not None:
                self.given_to_bots[seat.token_hash] = seat.name
            gone = seat.conn
            if gone is not None:
                self.spectators.add(gone)
                self.server.seating.put(gone, self, None)
                gone.send(Watching(self.id))
                self.server.door_seat(gone, self.id, left=True)
                if self.hand is not None:
                    gone.send(self.update_message(None, 0))
            log.info("table %d: %s's seat %d goes to %s", self.id, seat.name, number, new.name)
            self.broadcast_table(answer=conn)
            self.kick()
