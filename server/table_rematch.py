"""A finished table's offer of a rematch: the players' answers, a player leaving, the wait
running out, and what everybody at the table is told of it. The new table itself is opened by
the server (`TableHost.open_rematch`); the rules of the offer are tonk.shared.rematch's."""

from __future__ import annotations

import logging

from tonk.shared import protocol as p
from tonk.shared.messages import RematchStatus
from tonk.shared.rematch import Outcome, why_off
from tonk.shared.session import SessionError

from .connection import Connection
from .table_core import CLOSED, FINISHED, HUMAN, RequestError
from .table_play import TablePlay

log = logging.getLogger("tonk.server")


class TableRematch(TablePlay):
    """The rematch offer of a table whose session is over."""

    __slots__ = ()

    def rematch_status(self, next_table: int | None = None) -> RematchStatus:
        offer = self.rematch
        assert offer is not None
        return RematchStatus(
            self.id,
            tuple(zip(offer.names, (a.value for a in offer.answers), strict=True)),
            offer.outcome.value,
            offer.seconds_left(self.now),
            next_table,
        )

    async def answer_rematch(self, conn: Connection, yes: bool) -> None:
        async with self.lock:
            number = self.seat_of(conn)  # a spectator has no answer to give
            offer = self.rematch
            if self.state != FINISHED or offer is None:
                why = (
                    "this table's session is not over"
                    if self.state not in (FINISHED, CLOSED)
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
                self.id,
                self.seats[number].name,
                "yes" if yes else "no",
            )
            try:
                await self.rematch_changed(answer=conn, saved=True)
            except RequestError:
                offer.answers, offer.outcome = before  # not saved: not given
                raise

    def returnable(self) -> bool:
        offer = self.rematch
        waiting = self.state == FINISHED and offer is not None and offer.outcome is Outcome.WAITING
        return waiting or super().returnable()

    def returned(self, conn: Connection) -> None:
        if self.state == FINISHED and self.rematch is not None:
            conn.send(self.session_end(self.rematch_reason))
            conn.send(self.rematch_status())

    async def detach(self, conn: Connection, *, leaving: bool) -> None:
        number = conn.seat if conn.table is self else None
        await super().detach(conn, leaving=leaving)
        offer = self.rematch
        if not leaving or number is None or self.state != FINISHED or offer is None:
            return  # (one who lost the link is still awaited: they may come back)
        async with self.lock:
            if offer.left(number):
                await self.rematch_changed()

    async def rematch_due(self) -> float | None:
        """The table loop's part once the session is over: the seconds until the offer's wait
        runs out (None: nothing waits), or the offer decided now that it has."""
        offer = self.rematch
        if offer is None or offer.outcome is not Outcome.WAITING:
            return None
        now = self.now
        if offer.expire(now) or (offer.answered() and not self.absent() and offer.decide()):
            await self.rematch_changed()  # (all in, and those who said yes are back)
            return None
        return offer.deadline - now

    def absent(self) -> list[int]:
        """The seats of people in the rematch who are not connected now."""
        offer = self.rematch
        assert offer is not None
        return [
            n for n in offer.staying() if self.seats[n].kind == HUMAN and self.seats[n].conn is None
        ]

    async def rematch_changed(self, answer: Connection | None = None, saved: bool = False) -> None:
        """The offer is kept on disk as it stands and everybody at the table is told; once it
        goes ahead, the server opens the new table (the offer saved with it) and moves the
        players there. `saved`: wait for the offer to be on disk (RequestError if it cannot
        be: an answer not saved is not given); otherwise a failed write is logged."""
        offer = self.rematch
        assert offer is not None
        absent = self.absent() if offer.outcome is Outcome.STARTED else []
        if absent and self.now < offer.deadline:
            # Somebody who said yes lost the link since (a restart of the server, say): the
            # rematch waits for them to be back (the table's loop starts it then).
            offer.hold()
        elif absent:
            offer.without(absent)  # not back in time: they cannot be seated
        if offer.outcome is Outcome.STARTED:
            try:
                await self.server.open_rematch(self, answer)
            except RequestError:
                # The new table could not be saved: the offer is called off, said so.
                offer.outcome = Outcome.OFF
                log.warning("table %d: the rematch could not be saved; called off", self.id)
            else:
                return
        if saved:
            await self.write([self.rematch_op()])
        else:
            self.save_offer()
        self.broadcast(self.rematch_status(), answer)
        if offer.outcome is Outcome.OFF:
            log.info("table %d: the rematch is called off: %s", self.id, why_off(offer.answers))
            if not self.attached():
                self.server.forget_table(self)  # (restored after a restart, nobody came back)
            return
        self.kick()
