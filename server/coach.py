"""The coach's questions (`coach`), answered off every table's event loop: each is worked out
in a process of the coach's own (tonk.shared.bots.coach; a practice table's embedded server: in a
thread), at most as many at once as the host allows (`tonk-server --coach N`; 0 turns the
coach off), more refused until one is done. A settled hand is read from the database (in a
thread, on a read-only connection); a hint on the hand in play is given only where no other
person sits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import random
from pathlib import Path
from typing import Any

from tonk.shared.bots.coach import NotADecision, advise_record
from tonk.shared.game.hand import HandRecord
from tonk.shared.terms import SeatKind
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.advice import Advice

from .errors import RequestError
from .store import history
from .tables.table import Table


def _advise(record: dict[str, Any], seat: int, at: int | None, seed: str) -> dict[str, Any]:
    """In the coach's process: the advice, from and to plain data."""
    return advise_record(HandRecord.from_dict(record), seat, at, random.Random(seed)).to_wire()


class Coach:
    """The server's coach: its processes or thread (started at the first question), and how many
    questions it is working on."""

    def __init__(self, limit: int, in_thread: bool = False) -> None:
        self.limit = limit  # questions worked on at once (0: no coach)
        self.in_thread = in_thread  # one thread instead of processes (ServerConfig's note)
        self.busy = 0
        self._pool: concurrent.futures.Executor | None = None

    async def advise(self, record: HandRecord, seat: int, at: int | None, seed: str) -> Advice:
        """The expert's view of `seat`'s decision at step `at` of `record` (None: now);
        RequestError if the coach is off, busy, or it was not that seat's decision."""
        self.check_on()
        if self.busy >= self.limit:
            raise RequestError(
                p.COACH_BUSY, "the coach is answering as many questions as it can: ask again soon"
            )
        if self._pool is None:
            self._pool = self._start()
        self.busy += 1
        try:
            loop = asyncio.get_running_loop()
            answer = await loop.run_in_executor(
                self._pool, _advise, record.to_dict(), seat, at, seed
            )
        except NotADecision as exc:
            raise RequestError(p.BAD_VALUE, str(exc), "step") from None
        finally:
            self.busy -= 1
        return Advice.from_wire(answer)

    def _start(self) -> concurrent.futures.Executor:
        if self.in_thread:
            return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tonk-coach")
        context = multiprocessing.get_context("spawn")
        return concurrent.futures.ProcessPoolExecutor(self.limit, mp_context=context)

    def check_on(self) -> None:
        if self.limit == 0:
            raise RequestError(p.COACH_BUSY, "this server's host has turned the coach off")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def people_besides(table: Table, seat: int) -> bool:
    """Whether another person sits at `table` (a hint in play would be a second brain there)."""
    return any(
        number != seat and held.kind == SeatKind.HUMAN for number, held in enumerate(table.seats)
    )


async def answer(
    coach: Coach,
    readers: asyncio.Semaphore,
    path: Path,
    table: Table,
    seat: int | None,
    name: str | None,
    message: m.CoachRequest,
    reply_to: int | None,
) -> m.CoachAdvice:
    """The coach's answer to `message` from the player called `name` in seat `seat` of
    `table` (None: watching it)."""
    coach.check_on()
    if seat is None:
        raise RequestError(
            p.NO_COACH, "the coach looks at the decisions of players, not spectators"
        )
    hand = table.play.hand
    if message.step is None:
        if people_besides(table, seat):
            raise RequestError(
                p.NO_COACH,
                "at a table with other people the coach looks only at hands that are over",
            )
        if hand is None or hand.ended or message.hand != table.session.hand_number:
            raise RequestError(p.NO_HAND, f"hand {message.hand} is not being played", "hand")
        if hand.turn != seat:
            raise RequestError(p.NO_COACH, "it is not your turn: there is nothing to weigh yet")
        record = hand.record()
        at: int | None = None
        step = len(record.actions)
    else:
        record, seating = await history.settled_record(readers, path, table.id, message.hand)
        if seating.seat_of(name) is None:
            raise RequestError(p.NO_COACH, f"you did not play in hand {message.hand}", "hand")
        # The move after step `step` is step `step + 1`'s: the asker's only if they held its
        # seat then (a seat that changed hands during the hand was theirs for part of it).
        held = seating.seat_at(name, message.step + 1)
        if held is None:
            raise RequestError(
                p.BAD_VALUE,
                f"step {message.step}'s move was not yours: your seat was another's then",
                "step",
            )
        seat = held
        at = step = message.step
    seed = f"coach {table.id} {message.hand} {step}"
    advice = await coach.advise(record, seat, at, seed)
    return m.CoachAdvice(table.id, message.hand, message.step, advice, reply_to)
