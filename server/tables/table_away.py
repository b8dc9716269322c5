"""A table's seats between people and bots while a session runs: a disconnected player's seat
played for now (the creator's word, or the players' vote), a bot's seat taken by a late friend
between hands (asked for during a hand: a claim, kept here until the hand ends), an absent
player's seat given to a bot by the creator, and a bot's seat back to its bot once the person
who took it goes."""

from __future__ import annotations

import logging
import secrets
from dataclasses import replace
from typing import TYPE_CHECKING

from tonk.shared.game.session import SessionError, bot_name, check_name_free, play_for_now
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import Seated, Watching

from ..connection import Connection
from ..errors import RequestError
from ..store import store as st
from .table_core import BOT, HUMAN, PLAYING, WAITING, Seat, TableFrame
from .table_play import TablePlay
from .table_seats import TableSeats
from .table_store import TableStore

if TYPE_CHECKING:
    pass

log = logging.getLogger("tonk.server")


class TableAway:
    """The requests that change who plays a seat during the session, and the bots' seats
    asked for during a hand. Of the other parts it asks the seats to change, the store to
    write, and the play to let a bot's seat go and to send a newcomer the hand."""

    __slots__ = ("_play", "_seats", "_store", "_table", "claims")

    def __init__(
        self, table: TableFrame, seats: TableSeats, store: TableStore, play: TablePlay
    ) -> None:
        self._table = table
        self._seats = seats
        self._store = store
        self._play = play
        # Seats of bots that people asked for during a hand, taken as it ends: seat -> connection.
        self.claims: dict[int, Connection] = {}

    def bot_seats_open_to(self, name: str) -> bool:
        """May `name` take a bot's seat here: the table's bots' seats are open to anybody
        (its creator's choice), or `name` has played at it (a balance here)?"""
        if self._table.config.open_bot_seats:
            return True
        return name.casefold() in {n.casefold() for n in self._play.session.ledger.balances}

    def forget(self, conn: Connection) -> None:
        """`conn` left the table: the seats it asked for are no longer asked for."""
        for claimed in [n for n, c in self.claims.items() if c is conn]:
            del self.claims[claimed]

    def _seat_number(self, seat: int) -> int:
        seats = self._seats
        if not 0 <= seat < len(seats):
            raise RequestError(p.NO_SUCH_SEAT, f"this table has seats 0 to {len(seats) - 1}")
        return seat

    def _between_hands(self) -> bool:
        hand = self._play.hand
        return hand is None or hand.ended

    async def play_for_now(self, conn: Connection, absent: int) -> None:
        """Seat `absent`, whose player lost the link, is played for now (`waiting.play_for_now`
        says who may); answered by the `table` everybody gets."""
        table = self._table
        seats = self._seats
        async with table.lock:
            asker = seats.seat_of(conn)
            if table.state != PLAYING:
                raise RequestError(p.NO_HAND, "the session has not started")
            absent = self._seat_number(absent)
            seat = seats[absent]
            try:
                vote = play_for_now(
                    asker,
                    absent,
                    [s.status for s in seats],
                    [s.kind == HUMAN and s.conn is not None for s in seats],
                    seats.names(),
                    seats.creator,
                    frozenset(seat.votes),
                )
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            if vote.now:
                log.info("table %d: %s's seat played for now", table.id, seat.name)
                # (disconnected_at kept: their grace still runs, for a rematch offered meanwhile)
                await seats.set_away(absent, True)
            else:
                seat.votes = set(vote.votes)
            table.broadcast_table(answer=conn)
            table.kick()

    async def take_bot_seat(self, conn: Connection, number: int) -> None:
        """`conn` (in the lobby, or watching this table) takes the seat a bot plays: at once
        between hands, else as the hand in play ends (the answer then is the `table`, and
        `seated` follows at the hand's end). The bot's balance stays with the bot's name; the
        player plays on from their own (0, or what they had if they sat here before)."""
        table = self._table
        seats = self._seats
        async with table.lock:
            if table.state not in (WAITING, PLAYING):
                raise RequestError(p.NO_SUCH_TABLE, "that table's session is over")
            number = self._seat_number(number)
            if seats[number].kind != BOT:
                raise RequestError(p.BAD_BOT, f"seat {number} is not a bot's")
            assert conn.name is not None
            if not self.bot_seats_open_to(conn.name):
                raise RequestError(
                    p.BAD_BOT,
                    "this table's creator keeps its bots' seats for who has played at it",
                )
            claimant = self.claims.get(number)
            if claimant is not None and claimant is not conn:
                raise RequestError(p.SEAT_TAKEN, f"someone has asked for seat {number} already")
            assert conn.name is not None
            try:
                check_name_free(seats.names(), conn.name)
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            if any(c is conn for n, c in self.claims.items() if n != number):
                raise RequestError(p.ALREADY_AT_TABLE, "you have asked for another seat already")
            if self._between_hands():
                await self._take_seat(number, conn)
                return
            self.claims[number] = conn
            log.info("table %d: %s takes seat %d once the hand ends", table.id, conn.name, number)
            if conn not in seats.spectators:
                seats.watched_by(conn, answer=True)
            else:
                table.broadcast_table(answer=conn)

    async def seat_claims(self) -> None:
        """Between hands: the bots' seats asked for during the hand are taken."""
        table = self._table
        seats = self._seats
        for number, conn in list(self.claims.items()):
            if conn.table is table and conn.seat is None and seats[number].kind == BOT:
                try:
                    check_name_free(seats.names(), conn.name or "")
                except SessionError as exc:
                    conn.error(exc.code, exc.message)
                else:
                    # (a write that fails leaves the claim, tried again by the table's loop)
                    await self._take_seat(number, conn)
            del self.claims[number]

    async def _take_seat(self, number: int, conn: Connection) -> None:
        table = self._table
        seats = self._seats
        play = self._play
        old = seats[number]
        assert conn.name is not None
        token = secrets.token_urlsafe(18)
        own = old.holds_for is not None and old.holds_for.casefold() == conn.name.casefold()
        new = Seat(
            name=conn.name,
            kind=HUMAN,
            token_hash=st.hash_token(token),
            stake=old.stake,
            conn=conn,
            # (a player back in their own seat holds it as before it was given to a bot)
            took_from=None if own else old,
        )
        ops = [st.put_seat(table.id, new.saved(number)), *play.changed_hands(number, conn.name)]
        await self._store.write(ops)
        seats[number] = new
        play.handed(number, old.name or "", conn.name)
        play.seat_taken(number, conn.name)
        seats.spectators.discard(conn)
        table.server.seating.put(conn, table, number)
        conn.reply(Seated(table.id, number, token))
        table.server.door_seat(conn, table.id, left=False)
        log.info("table %d: %s takes %s's seat %d", table.id, conn.name, old.name, number)
        table.broadcast_table()
        play.send_ledger(conn)
        if not self._between_hands():
            play.send_hand(conn, number)
        # (A hand over is not sent again: its seat was the bot's, and its cards were the bot's
        # to see, a hand the rules keep hidden among them. One who watched it has it as a
        # spectator saw it; the next deal comes to the seat.)
        table.kick()

    async def seat_to_bot(self, conn: Connection, number: int) -> None:
        """The creator gives an absent player's seat (away, or disconnected) to a bot: the
        player's balance stays under their name, their token no longer holds the seat, and a
        connection of theirs still here watches from now on."""
        table = self._table
        seats = self._seats
        async with table.lock:
            seats.require_creator(conn)
            if table.state != PLAYING:
                raise RequestError(
                    p.NO_HAND,
                    "the session has not started: before it does, a seat whose player is gone "
                    "is given up after the grace period",
                )
            number = self._seat_number(number)
            seat = seats[number]
            if seat.kind != HUMAN:
                raise RequestError(p.BAD_VALUE, f"seat {number} has no player", "seat")
            if not seat.away and seat.conn is not None:
                raise RequestError(
                    p.BAD_VALUE,
                    f"{seat.name} is here: only an absent player's seat goes to a bot",
                    "seat",
                )
            strategy = table.server.config.autoplay_strategy
            name = bot_name(seats.names())
            new = Seat(
                name=name, kind=BOT, strategy=strategy, stake=seat.stake, holds_for=seat.name
            )
            await self._give_to_bot(number, new, answer=conn)

    async def back_to_bot(self, number: int) -> None:
        """Seat `number`, which its player took from a bot during the session, goes back to
        that bot (by its name, if no seat has it now): they went, or let a turn run out
        (`session.returns_to_bot`). Their balance stays under their name, their token no
        longer holds the seat, and a connection of theirs still here watches from now on.
        Called by the table's loop, its lock held."""
        seat = self._seats[number]
        bot = seat.took_from
        assert bot is not None and bot.strategy is not None
        names = self._seats.names()
        name = bot.name
        if name is None or name.casefold() in {n.casefold() for n in names}:
            name = bot_name(names)
        # (the bot's seat as it was: its strategy, its stake, whose seat it holds, if anybody's)
        await self._give_to_bot(number, replace(bot, name=name, votes=set()))
        self._play.bot_seated(number, bot.strategy)

    async def _give_to_bot(self, number: int, new: Seat, answer: Connection | None = None) -> None:
        """Seat `number`'s player gives way to the bot `new`, written first: a connection of
        theirs still here watches from now on, and their token tells them why it no longer
        holds the seat."""
        table = self._table
        seats = self._seats
        seat = seats[number]
        ops = [
            st.put_seat(table.id, new.saved(number)),
            *self._play.changed_hands(number, new.name or ""),
        ]
        await self._store.write(ops)
        seats[number] = new
        self._play.handed(number, seat.name or "", new.name or "")
        if seat.token_hash is not None and seat.name is not None:
            seats.given_to_bots[seat.token_hash] = seat.name
        gone = seat.conn
        if gone is not None:
            seats.spectators.add(gone)
            table.server.seating.put(gone, table, None)
            gone.send(Watching(table.id))
            table.server.door_seat(gone, table.id, left=True)
            self._play.send_hand(gone, None)
        log.info("table %d: %s's seat %d goes to %s", table.id, seat.name, number, new.name)
        table.broadcast_table(answer=answer)
        table.kick()
