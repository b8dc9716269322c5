"""A table's changes on disk: each written durably before anybody is told of it, a table that
pauses while the store cannot write and carries on once it can, and a table rebuilt from the
database after a restart."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from tonk.shared import protocol as p
from tonk.shared.bots import make_bot
from tonk.shared.hand import HandRecord
from tonk.shared.ledger import Ledger, LedgerEntry
from tonk.shared.messages import SEAT_KINDS, TABLE_STATES, Error, SessionEndReason
from tonk.shared.rematch import RematchOffer
from tonk.shared.waiting import AwayTally

from . import store as st
from .table_core import (
    BOT,
    CLOSED,
    FINISHED,
    HUMAN,
    PLAYING,
    RequestError,
    Seat,
    TableCore,
    without_paths,
)

log = logging.getLogger("tonk.server")


class TableStore(TableCore):
    """Writing a table's changes, pausing through storage faults, restoring after a restart."""

    __slots__ = ()

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

    def begin_absence(self, number: int) -> None:
        """Seat `number`'s player went (lost the link, left, or missed a turn) during the
        session: what the table does for the seat from now on is counted for them."""
        seat = self.seats[number]
        if self.state == PLAYING and seat.kind == HUMAN and seat.tally is None:
            assert seat.name is not None
            seat.tally = AwayTally(self.ledger.balances.get(seat.name, 0))

    async def set_away(self, number: int, away: bool) -> None:
        """Mark seat `number` away (played for until its player is back) or back, in memory and
        on disk: after a restart a seat away is played for at once, with no new grace period.
        If the store fails the table pauses (see `write`) and the mark stays in memory."""
        seat = self.seats[number]
        if seat.away == away:
            return
        seat.away = away
        if away:
            seat.votes.clear()  # played for now: nothing more to vote on
            self.begin_absence(number)
        ops = [st.set_away(self.id, number, away)]
        if self.paused is not None:
            # Queued behind the writes that wait for the storage, not waited for: the mark
            # reaches the disk when they do, and who comes back is not kept waiting.
            self.server.store.write(ops).add_done_callback(_ignore_result)
            return
        with contextlib.suppress(RequestError):
            await self.write(ops)

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
        session = self.session
        if session.unseated_since is not None:
            session.unseated_since += lost
        if session.deserted_since is not None:
            session.deserted_since += lost
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
        if self.told != (self.hand_number, len(hand.events)):
            return  # a change waits to be saved: its own update, once it is, has the deadline
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
        session = self.session
        if session.unseated_since is not None:
            session.unseated_since += lost
        self.broadcast_table()
        self.refresh_deadline()
        self.kick()

    def restore(self, saved: st.SavedTable) -> None:
        """Rebuild from the database: seats (everybody disconnected), ledger, hand in play."""
        now = self.now
        session = self.session
        playing = saved.state in (PLAYING, FINISHED)  # the seats as the session numbered them
        self.state = TABLE_STATES[saved.state]
        session.started = saved.started
        session.hands_played = saved.hands_played
        session.dealer = saved.dealer
        session.multiplier = saved.multiplier
        self.creator = saved.creator
        self.rematch_of = saved.rematch_of
        self.earlier = [dict(balances) for balances in saved.earlier]
        if saved.rematch is not None:
            # The wait goes on from where it was, on the wall clock: what time the server
            # was down for counts (friends waiting for it do not wait forever).
            offer = saved.rematch
            deadline = now + max(0.0, float(offer["deadline"]) - time.time())
            self.rematch = RematchOffer.from_dict(offer, deadline)
            self.rematch_reason = SessionEndReason(offer.get("reason", "hands"))
        if playing:
            self.seats = []
        for s in saved.seats:
            kind = SEAT_KINDS[s.kind]
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
        if playing:
            for seat in self.seats:
                if seat.name is not None:
                    session.ledger.join(seat.name)
            for number, seat in enumerate(self.seats):
                if seat.kind == BOT:
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
            self.told = (self.hand_number, len(hand.events))  # (a newcomer is sent it all)
        self.turn_started = self.last_change = now


def _ignore_result(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: a failure here is already logged by the store
