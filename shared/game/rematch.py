"""A rematch: the same table again once a session is over. Who has said yes, who is awaited,
when it goes ahead and when it is called off; and the standings added up across the sessions
of a chain of rematches."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from ..terms import NO_REMATCH
from .session import SessionError, past_grace


def gone_at_the_offer(
    connected: bool, away: bool, disconnected_at: float | None, grace: float, now: float
) -> bool:
    """Whether a person is out of the rematch offered as their session ends: they have no link
    and are away (played for, or left), unless they lost the link less than `grace` seconds
    ago: played for while their grace period runs, they are awaited, as they may come back."""
    if connected or not away:
        return False
    return disconnected_at is None or past_grace(disconnected_at, grace, now, True) is not None


class Answer(StrEnum):
    """Where one seat of the finished session stands on the rematch."""

    YES = "yes"
    NO = "no"
    AWAITED = "awaited"  # a person who has not answered yet
    LEFT = "left"  # a person who left the table (or lost the link) before answering yes
    LATE = "late"  # a person who had not answered when the wait ran out
    BOT = "bot"  # a bot stays in its seat and needs no answer


class Outcome(StrEnum):
    WAITING = "waiting"
    STARTED = "started"
    OFF = "off"


#: Seconds a rematch offer waits for the answers, unless the server is told otherwise.
REMATCH_WAIT = 120.0


class RematchOffer:
    """The offer made to the seats of a finished session. A person who says no, leaves or has
    not answered when the wait runs out is left out; the rematch goes ahead with everybody
    else once every other person has said yes, as long as one person and two players in all
    (bots count) stay; otherwise it is called off. `deadline` is in the caller's clock."""

    __slots__ = ("answers", "deadline", "names", "outcome")

    def __init__(self, names: Sequence[str], answers: Sequence[Answer], deadline: float) -> None:
        self.names = list(names)
        self.answers = list(answers)
        self.deadline = deadline
        self.outcome = Outcome.WAITING
        self._decide(None)

    @classmethod
    def offered(
        cls, names: Sequence[str], bots: Sequence[bool], gone: Sequence[bool], deadline: float
    ) -> RematchOffer:
        """The offer at the end of a session: bots stay; a person who had left the table
        (`gone`) is out; everybody else is awaited (one who lost the link may come back)."""
        answers = [
            Answer.BOT if bot else Answer.LEFT if left else Answer.AWAITED
            for bot, left in zip(bots, gone, strict=True)
        ]
        return cls(names, answers, deadline)

    @classmethod
    def from_dict(cls, data: Mapping[str, object], deadline: float) -> RematchOffer:
        """An offer as `to_dict` kept it, its deadline given again in the caller's clock."""
        names = data["names"]
        answers = data["answers"]
        if not isinstance(names, list) or not isinstance(answers, list):
            raise ValueError(f"not a rematch offer: {dict(data)}")
        offer = cls([str(n) for n in names], [Answer(a) for a in answers], deadline)
        offer.outcome = Outcome(str(data["outcome"]))
        return offer

    def answer(self, seat: int, yes: bool) -> None:
        """The person in `seat` says yes or no; SessionError if that cannot be answered."""
        if self.outcome is not Outcome.WAITING:
            raise SessionError(NO_REMATCH, f"the rematch has {self._decided()} already")
        given = self.answers[seat]
        if given in (Answer.BOT, Answer.LEFT, Answer.LATE):
            raise SessionError(NO_REMATCH, "your seat is not in the rematch")
        wanted = Answer.YES if yes else Answer.NO
        if given is wanted:
            raise SessionError(NO_REMATCH, f"you have said {given.value} already")
        self.answers[seat] = wanted
        self._decide(None)

    def left(self, seat: int) -> bool:
        """The person in `seat` left the table (`leave`) before it was decided; whether that
        changed anything. (One who only lost the link is still awaited: they may come back.)"""
        if self.outcome is not Outcome.WAITING or self.answers[seat] is Answer.BOT:
            return False
        if self.answers[seat] is Answer.LEFT:
            return False
        self.answers[seat] = Answer.LEFT
        self._decide(None)
        return True

    def answered(self) -> bool:
        """Whether every person has answered (or is out)."""
        return Answer.AWAITED not in self.answers

    def hold(self) -> None:
        """Decided to go ahead, but some who said yes are not here right now (the link lost
        since): it waits for them, with every answer in, until they are back or the wait
        runs out."""
        if self.outcome is Outcome.STARTED:
            self.outcome = Outcome.WAITING

    def decide(self) -> bool:
        """Decide on the answers as they stand (after `hold`); whether it is decided."""
        if self.outcome is Outcome.WAITING:
            self._decide(None)
        return self.outcome is not Outcome.WAITING

    def without(self, seats: Iterable[int]) -> None:
        """Decided to go ahead, but the people in `seats` are not here to play (they lost the
        link after saying yes): they are left out, and it is decided again."""
        gone = [n for n in seats if self.answers[n] is Answer.YES]
        if not gone:
            return
        for number in gone:
            self.answers[number] = Answer.LEFT
        self.outcome = Outcome.WAITING
        self._decide(None)

    def expire(self, now: float) -> bool:
        """The wait ran out by `now`: whoever has not answered is left out. Whether it was
        decided by that."""
        if self.outcome is not Outcome.WAITING or now < self.deadline:
            return False
        self._decide(now)
        return True

    def seconds_left(self, now: float) -> float | None:
        return max(0.0, self.deadline - now) if self.outcome is Outcome.WAITING else None

    def staying(self) -> list[int]:
        """The seats in the rematch: the people who said yes and the bots, in seat order."""
        return [n for n, a in enumerate(self.answers) if a in (Answer.YES, Answer.BOT)]

    def awaited(self) -> list[str]:
        return [self.names[n] for n, a in enumerate(self.answers) if a is Answer.AWAITED]

    def _decide(self, now: float | None) -> None:
        if now is not None:
            self.answers = [Answer.LATE if a is Answer.AWAITED else a for a in self.answers]
        yes = self.answers.count(Answer.YES)
        awaited = self.answers.count(Answer.AWAITED)
        staying = len(self.staying())
        if awaited:
            if staying + awaited < 2:
                self.outcome = Outcome.OFF  # too few could stay, whatever they answer
        elif yes and staying >= 2:
            self.outcome = Outcome.STARTED
        else:
            self.outcome = Outcome.OFF

    def _decided(self) -> str:
        return "started" if self.outcome is Outcome.STARTED else "been called off"

    def to_dict(self) -> dict[str, object]:
        """The offer but its deadline (the caller keeps that in a clock of its choosing)."""
        return {
            "names": list(self.names),
            "answers": [a.value for a in self.answers],
            "outcome": self.outcome.value,
        }


def why_off(answers: Iterable[Answer]) -> str:
    """Why a rematch was called off, in the table's words."""
    answers = list(answers)
    if Answer.YES not in answers:
        return "nobody said yes"
    return "too few players said yes"


def combined_standings(
    sessions: Sequence[Mapping[str, int]],
) -> list[tuple[str, int]]:
    """Every player's balances added up across `sessions`, most ahead first (names break
    ties)."""
    total: dict[str, int] = {}
    for balances in sessions:
        for name, balance in balances.items():
            total[name] = total.get(name, 0) + balance
    return sorted(total.items(), key=lambda item: (-item[1], item[0]))
