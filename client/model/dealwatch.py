"""One table's deals as this client watches them (PROTOCOL.md, "A deal anyone can check"): the
commitment of each hand, the value it gave, the cut and the events it was shown, and the core's
check of the deal once the secret is revealed. No I/O: the value's bytes come from `entropy`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from tonk.shared.game.actions import Event
from tonk.shared.game.fairdeal import fresh_value
from tonk.shared.game.view import SeatView
from tonk.shared.wire import messages as m

#: The line the end-of-hand window shows for a deal that checked.
CHECKED = "deck checked"


@dataclass(frozen=True, slots=True)
class DealChecked:
    """The check of one hand's deal: `ok`, and the line to show (a warning naming the hand
    and what failed when not ok; a note when our value came too late to count)."""

    hand: int
    ok: bool
    line: str


@dataclass(slots=True)
class _Hand:
    """What one hand's deal was shown to us."""

    commitment: str | None = None
    dev: bool = False
    value: str | None = None  # the value we sent
    request: int | None = None  # its request's id
    late: bool = False  # refused: the hand was dealt before it came
    cut: tuple[tuple[tuple[str | None, ...], ...], int] | None = None
    events: list[Event] = field(default_factory=list)
    view: SeatView | None = None


class DealWatch:
    """The deals of the table we are at: `committed` (answered by the value to send),
    `cut`, `update`, `refused` as they come; `revealed` checks the hand."""

    def __init__(self, entropy: Callable[[int], bytes] = os.urandom) -> None:
        self._entropy = entropy
        self._hands: dict[int, _Hand] = {}
        self._dealing: int | None = None  # the hand committed to and not yet dealt
        self.checked: dict[int, DealChecked] = {}

    def _hand(self, number: int) -> _Hand:
        hand = self._hands.get(number)
        if hand is None:
            hand = self._hands[number] = _Hand()
            for old in [n for n in self._hands if n < number - 1]:
                del self._hands[old]  # (a hand before the last is over and checked)
        return hand

    def committed(self, message: m.DealCommit, seated: bool) -> str | None:
        """A commitment came: the value to send for it (None: none to send: a test deck, a
        hand already dealt, or we only watch)."""
        hand = self._hand(message.hand)
        if hand.commitment != message.commitment and not hand.events:
            hand.value = hand.request = None  # (another round for that hand: a value anew)
            hand.late = False
        hand.commitment, hand.dev = message.commitment, message.dev
        if not hand.events:
            self._dealing = message.hand  # (a `cut` before its first update is its)
        if message.dev or message.wait <= 0 or not seated or hand.value is not None:
            return None
        hand.value = fresh_value(self._entropy)
        return hand.value

    def sent(self, number: int, request: int | None) -> None:
        """The value for hand `number` went as request `request`."""
        self._hand(number).request = request

    def refused(self, request: int) -> bool:
        """A request of ours was refused: True if it was a value (it came too late)."""
        for hand in self._hands.values():
            if hand.request == request:
                hand.late = True
                return True
        return False

    def cut(self, message: m.Cut) -> None:
        """The cut belongs to the hand being dealt (the first of the session)."""
        if self._dealing is not None:
            self._hand(self._dealing).cut = (message.rounds, message.dealer)

    def update(self, message: m.Update) -> None:
        number = message.hand
        if self._dealing == number:
            self._dealing = None
        hand = self._hand(number)
        events = hand.events
        if message.start <= len(events):
            del events[message.start :]
            events.extend(message.events)
        hand.view = message.view

    def revealed(self, message: m.DealReveal, table: int) -> DealChecked:
        """Check hand `message.hand` from what we were shown (through the hand engine, loaded
        here, at the first hand's end: a client does not load it to start)."""
        from tonk.shared.game.dealcheck import Shown, check_deal

        number = message.hand
        hand = self._hands.get(number)
        view = None if hand is None else hand.view
        if hand is None or hand.commitment is None or view is None:
            problem: str | None = "its commitment or its deal was not shown to this client"
        else:
            shown = Shown(
                table=table,
                hand=number,
                commitment=hand.commitment,
                rules=view.rules,
                players=view.players,
                dealer=view.dealer,
                stakes=view.stakes,
                multiplier=view.multiplier,
                seat=view.seat,
                events=tuple(hand.events),
                settlement=view.settlement,
                cut=hand.cut,
            )
            own = None if hand.late else hand.value
            values = dict(message.values)
            problem = check_deal(shown, message.secret, values, own)
        if problem is not None:
            result = DealChecked(number, False, f"Hand {number}: the deck did NOT check: {problem}")
        elif hand is not None and hand.late and hand.value is not None:
            result = DealChecked(number, True, f"{CHECKED} (your value came too late to count)")
        else:
            result = DealChecked(number, True, CHECKED)
        self.checked[number] = result
        return result
