"""Waiting for a friend who lost the connection: how many votes have a seat played for now
(`session.play_for_now` says who may ask), what a player is told of the hands played while
they were away, and when the client rings for a turn left waiting.

Pure, and light: the client imports it without the hand engine. The server and the client ask
it; neither decides these rules itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .words import amount_text, plural

#: Seconds a player's own turn waits untouched before the client rings the bell, at a table
#: without a turn timer (with one: half the timer, if that is sooner).
BELL_AFTER = 20.0


def bell_after(turn_timer: float | None) -> float:
    """Seconds of a turn without a key pressed before the terminal bell rings once."""
    if turn_timer:
        return min(BELL_AFTER, turn_timer / 2)
    return BELL_AFTER


def clock_text(seconds: float) -> str:
    """Seconds left as a clock reads: "1:47", "0:05"."""
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


@dataclass(frozen=True, slots=True)
class Vote:
    """The outcome of asking for a seat to be played for now: `now` if it is played for at
    once; else the seats that have voted for it and how many votes it needs."""

    now: bool
    votes: frozenset[int]
    needed: int


def votes_needed(here: Sequence[bool], absent: int) -> int:
    """A majority of the players connected (`here[n]`: a person is connected in seat n),
    the absent one not counted."""
    voters = sum(1 for n, present in enumerate(here) if present and n != absent)
    return voters // 2 + 1


# -- while you were away -------------------------------------------------------------------------


@dataclass(slots=True)
class AwayTally:
    """What the table did for a seat since its player lost the connection or was marked away:
    the turns played for it, the hands that ended meanwhile (each with its winner's name, None
    for a hand nobody won), the player's balance when they went, and which events of the hand
    in play were moves made for them."""

    balance: int
    turns: int = 0
    hands: list[tuple[int, str | None]] = field(default_factory=list)
    last_turn: tuple[int, int] | None = None
    hand: int = 0
    played_for: list[int] = field(default_factory=list)

    def played(self, hand: int, turn: int, events: Iterable[int]) -> None:
        """A move made for the seat in hand `hand`, turn `turn` of it (turns counted from its
        start), whose events are those numbered `events`."""
        if self.last_turn != (hand, turn):
            self.turns += 1
            self.last_turn = (hand, turn)
        if self.hand != hand:
            self.hand = hand
            self.played_for = []
        self.played_for.extend(events)

    def hand_ended(self, hand: int, winner: str | None) -> None:
        self.hands.append((hand, winner))

    @property
    def anything(self) -> bool:
        return bool(self.turns or self.hands)


def away_text(
    turns: int,
    hands: Sequence[tuple[int, str | None]],
    net: int,
    unit: str,
    me: str,
) -> str:
    """ "While you were away: 3 turns played for you; hand 7 won by Ann; you -2 chips"."""
    parts = [f"{plural(turns, 'turn')} played for you"]
    for number, winner in hands:
        if winner is None:
            parts.append(f"hand {number} won by nobody")
        else:
            parts.append(f"hand {number} won by {'you' if winner == me else winner}")
    if hands or net:
        parts.append(f"you {'+' if net > 0 else ''}{amount_text(net, unit)}" if net else "you even")
    return "While you were away: " + "; ".join(parts)
