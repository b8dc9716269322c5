"""One table: asyncio around its seats, its spectators and the hand in play; its loop plays
for the seats due to be played for, deals the next hand and ends the session when its time
comes. The table asks the core (tonk.shared.session) about every rule; it decides none itself.

Every change happens under the table's lock, is written to the store, and only then is anybody
told of it. When the store cannot write (a locked or full disk, a removed database file), every
table pauses: everybody at it is told once why, new actions are refused, timers stop, and a
change already on its way to the disk waits there (the store tries that same write again until
it goes through). Once it does, everybody is told once that play carries on, from the last
change saved.

The table is built in layers, one module each, every one importing only the one below it:
table_core (state, messages), table_store (writes, pauses, restore), table_seats (sitting,
watching, leaving, the start), table_away (played for now, bots' seats taken and given),
table_play (actions, bots, settlement, the deal), table_rematch (the offer of a rematch once
the session is over), and this loop.
"""

from __future__ import annotations

import asyncio
import logging

from tonk.shared.messages import SessionEndReason
from tonk.shared.session import Absence, past_grace, starts_itself

from . import store as st
from .table_core import (
    CLOSED,
    FINISHED,
    HUMAN,
    PLAYING,
    WAITING,
    RequestError,
    Seat,
    TableConfig,
    ledger_message,
    without_paths,
)
from .table_play import Pending, Settle
from .table_rematch import TableRematch

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


class Table(TableRematch):
    """A table with its loop: what falls due is done when it falls due."""

    __slots__ = ()

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
                    await self.decide(delay)
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
            return await self.rematch_due() if self.state == FINISHED else None
        if self.paused is not None:
            return None  # nothing falls due while paused; `unpause` kicks the loop
        self.server.catch_up()  # time the server lost is not charged to anybody
        now = self.now
        grace = self.server.config.grace
        session = self.session
        started = self.state == PLAYING
        wake = _INF
        for number, seat in enumerate(self.seats):
            disconnected_at = seat.disconnected_at
            if seat.kind != HUMAN or seat.conn is not None or disconnected_at is None:
                continue
            gone = past_grace(disconnected_at, grace, now, started)
            if gone is None:
                wake = min(wake, disconnected_at + grace)
            elif gone is Absence.FREED:
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
            # Nobody sat down at a table created without sitting: do not keep it forever.
            session.seated_seen(any(seat.kind == HUMAN for seat in self.seats), now)
            closes = session.unseated_closes_at(grace)
            if closes is not None:
                if now >= closes:
                    await self.write([st.update_table(self.id, state=CLOSED)])
                    self.closed("nobody sat down")
                    return None
                wake = min(wake, closes)
            return None if wake == _INF else wake - now
        hand = self.hand
        # Every player has left (or lost the link): a session nobody comes back to ends, between
        # hands; meanwhile hands are dealt only for spectators watching.
        here = self.players_here()
        session.players_seen(here, now)
        if not here and self.spectators:
            # Played on only for spectators: at a pace they can follow, not as fast as bots go.
            paced = self.last_change + self.server.config.watched_pace
            if now < paced:
                return paced - now
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
                    await self.end_session(SessionEndReason.ABANDONED)
                    return None
                wake = min(wake, abandoned)
                if not self.attached():
                    # No hand for nobody: wait for somebody to come (a kick), or the end.
                    return wake - now
            if self.claims:
                await self.seat_claims()  # bots' seats asked for during the hand
                return 0
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
            if seat.kind == HUMAN and not seat.away:
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
        return None if wake == _INF else wake - now
