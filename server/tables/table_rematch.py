"""A table's rematch: the offer made once its session is over (the players' answers, a player
leaving, the wait running out, and what everybody at the table is told of it), and the chain of
sessions a rematch carries on. The new table itself is opened by the server
(`TableHost.open_rematch`); the rules of the offer are tonk.shared.game.rematch's."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from tonk.shared.game.rematch import (
    Outcome,
    RematchOffer,
    combined_standings,
    gone_at_the_offer,
    why_off,
)
from tonk.shared.game.session import SessionError
from tonk.shared.game.settle_up import settle_up
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    Combined,
    RematchStatus,
    SessionEnd,
    SessionEndReason,
)

from ..connection import Connection
from ..errors import RequestError
from ..store import store as st
from .table_core import BOT, CLOSED, FINISHED, HUMAN, TableFrame
from .table_seats import TableSeats
from .table_store import TableStore

if TYPE_CHECKING:
    pass

log = logging.getLogger("tonk.server")


class TableRematch:
    """The rematch offer of a table whose session is over, and the earlier sessions of the
    chain of rematches the table is part of. Of the other parts it asks the seats who is in
    the offer and who is here (`TableSeats`), and the store to write (`TableStore`)."""

    __slots__ = ("_seats", "_store", "_table", "earlier", "of", "offer", "reason")

    def __init__(self, table: TableFrame, seats: TableSeats, store: TableStore) -> None:
        self._table = table
        self._seats = seats
        self._store = store
        # Once the session is over: the offer of a rematch (deadline in loop time), if one was
        # made, and why the session ended.
        self.offer: RematchOffer | None = None
        self.reason = SessionEndReason.HANDS
        # A rematch's table: the table it is a rematch of, and the balances of every earlier
        # session of the chain, oldest first (the combined standings add them to this one's).
        self.of: int | None = None
        self.earlier: list[dict[str, int]] = []

    def follow(self, old: TableRematch, balances: dict[str, int]) -> None:
        """The table is the rematch of `old`'s table, whose session ended with `balances`."""
        self.of = old._table.id
        self.earlier = [*old.earlier, balances]

    def session_end(self, reason: SessionEndReason) -> SessionEnd:
        """The final standings with their settling up, across the chain of rematches too, and
        how long a rematch offer waits (`reason`, why the session ended, is kept: one who
        comes to the table later is told the same)."""
        self.reason = reason
        table = self._table
        ledger = table.session.ledger
        balances = dict(ledger.balances)
        combined = None
        if self.earlier:
            sessions = [*self.earlier, balances]
            total = combined_standings(sessions)
            combined = Combined(len(sessions), tuple(total), tuple(settle_up(dict(total))))
        offer = self.offer
        return SessionEnd(
            table.id,
            table.session.hands_played,
            tuple(ledger.standings()),
            reason,
            tuple(settle_up(balances)),
            combined,
            None if offer is None else offer.seconds_left(table.now),
        )

    def offer_after(self, reason: SessionEndReason) -> None:
        """The session is over: the same table again is offered to the people at it (one
        who had left it, or lost the link and is past the grace period, is out; one played for
        while the grace runs is awaited: they may come back; the bots stay). Kept on disk so
        that a restart of the server during the wait loses nothing; the session's end itself
        is on disk already."""
        table = self._table
        seats = self._seats
        config = table.server.config
        wait = config.rematch_wait

        gone = [
            seat.kind == HUMAN
            and gone_at_the_offer(
                seat.conn is not None, seat.away, seat.disconnected_at, config.grace, table.now
            )
            for seat in seats
        ]
        self.offer = RematchOffer.offered(
            seats.names(), [seat.kind == BOT for seat in seats], gone, table.now + wait
        )
        self.reason = reason
        self.save_offer()
        table.kick()  # the offer's wait runs in the table's loop

    def save_offer(self) -> None:
        """The offer written without waiting for it (a failure is logged)."""
        self._table.server.store.write([self.op()]).add_done_callback(_log_failed_offer)

    def op(self) -> st.Op:
        """The offer as it stands, to keep (its deadline in wall-clock time)."""
        offer = self.offer
        assert offer is not None
        deadline = time.time() + (offer.deadline - self._table.now)
        data = {**offer.to_dict(), "deadline": deadline, "reason": self.reason}
        return st.put_rematch(self._table.id, data)

    def status(self, next_table: int | None = None) -> RematchStatus:
        offer = self.offer
        assert offer is not None
        return RematchStatus(
            self._table.id,
            tuple(zip(offer.names, (a.value for a in offer.answers), strict=True)),
            offer.outcome.value,
            offer.seconds_left(self._table.now),
            next_table,
        )

    async def answer(self, conn: Connection, yes: bool) -> None:
        table = self._table
        async with table.lock:
            number = self._seats.seat_of(conn)  # a spectator has no answer to give
            offer = self.offer
            if table.state != FINISHED or offer is None:
                why = (
                    "this table's session is not over"
                    if table.state not in (FINISHED, CLOSED)
                    else "no rematch was offered at this table"
                )
                raise RequestError(p.NO_REMATCH, f"there is no rematch to answer: {why}")
            before = list(offer.answers), offer.outcome
            try:
                offer.answer(number, yes)
            except SessionError as exc:
                raise RequestError.refused(exc) from None
            log.info(
                "table %d: %s says %s to a rematch",
                table.id,
                self._seats[number].name,
                "yes" if yes else "no",
            )
            try:
                await self.changed(answer=conn, saved=True)
            except RequestError:
                offer.answers, offer.outcome = before  # not saved: not given
                raise

    def waiting(self) -> bool:
        """Whether the session is over and the offer waits for its players' answers (a seat
        may be taken back meanwhile)."""
        offer = self.offer
        return (
            self._table.state == FINISHED and offer is not None and offer.outcome is Outcome.WAITING
        )

    def returned(self, conn: Connection) -> None:
        """A seat was taken back by `conn`, or `conn` watches, sent everything else already:
        what comes after the session, if it is over (the offer, if one was made)."""
        if self._table.state == FINISHED:
            conn.send(self.session_end(self.reason))
            if self.offer is not None:
                conn.send(self.status())

    async def left(self, number: int | None, leaving: bool) -> None:
        """The player of seat `number` (None: not a player) left the table (`leaving`) or
        lost the link: one who left is out of the rematch."""
        table = self._table
        offer = self.offer
        if not leaving or number is None or table.state != FINISHED or offer is None:
            return  # (one who lost the link is still awaited: they may come back)
        async with table.lock:
            if offer.left(number):
                await self.changed()

    async def due(self) -> float | None:
        """The table loop's part once the session is over: the seconds until the offer's wait
        runs out (None: nothing waits), or the offer decided now that it has."""
        offer = self.offer
        if offer is None or offer.outcome is not Outcome.WAITING:
            return None
        now = self._table.now
        if offer.expire(now) or (offer.answered() and not self.absent() and offer.decide()):
            await self.changed()  # (all in, and those who said yes are back)
            return None
        return offer.deadline - now

    def absent(self) -> list[int]:
        """The seats of people in the rematch who are not connected now."""
        offer = self.offer
        assert offer is not None
        seats = self._seats
        return [n for n in offer.staying() if seats[n].kind == HUMAN and seats[n].conn is None]

    async def changed(self, answer: Connection | None = None, saved: bool = False) -> None:
        """The offer is kept on disk as it stands and everybody at the table is told; once it
        goes ahead, the server opens the new table (the offer saved with it) and moves the
        players there. `saved`: wait for the offer to be on disk (RequestError if it cannot
        be: an answer not saved is not given); otherwise a failed write is logged."""
        table = self._table
        offer = self.offer
        assert offer is not None
        absent = self.absent() if offer.outcome is Outcome.STARTED else []
        if absent and table.now < offer.deadline:
            # Somebody who said yes lost the link since (a restart of the server, say): the
            # rematch waits for them to be back (the table's loop starts it then).
            offer.hold()
        elif absent:
            offer.without(absent)  # not back in time: they cannot be seated
        if offer.outcome is Outcome.STARTED:
            try:
                await table.server.open_rematch(table, answer)
            except RequestError:
                # The new table could not be saved: the offer is called off, said so.
                offer.outcome = Outcome.OFF
                log.warning("table %d: the rematch could not be saved; called off", table.id)
            else:
                return
        if saved:
            await self._store.write([self.op()])
        else:
            self.save_offer()
        self._seats.broadcast(self.status(), answer)
        if offer.outcome is Outcome.OFF:
            log.info("table %d: the rematch is called off: %s", table.id, why_off(offer.answers))
            if not self._seats.attached():
                table.forget()  # (restored after a restart, nobody came back)
            return
        table.kick()

    def restore(self, saved: st.SavedTable, now: float) -> None:
        """The chain of sessions and the offer as the database has them."""
        self.of = saved.rematch_of
        self.earlier = [dict(balances) for balances in saved.earlier]
        if saved.rematch is not None:
            # The wait goes on from where it was, on the wall clock: what time the server
            # was down for counts (friends waiting for it do not wait forever).
            offer = saved.rematch
            deadline = now + max(0.0, float(offer["deadline"]) - time.time())
            self.offer = RematchOffer.from_dict(offer, deadline)
            self.reason = SessionEndReason(offer.get("reason", "hands"))


def _log_failed_offer(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a rematch offer was not saved: %s", future.exception())
