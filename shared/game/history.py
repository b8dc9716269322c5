"""Looking back at a hand: a recorded hand replayed through the core, one step for the deal and
one for each action, each as one seat (or a spectator) saw it live (`Hand.view`,
`Hand.events_for`), so that the history can show nothing that live play would not."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..records import record
from .actions import Event
from .rules import HouseRules
from .settlement import Settlement
from .view import SeatView

if TYPE_CHECKING:  # (a client reads the steps without loading the hand's engine)
    from .hand import HandRecord


@record
class HistoryStep:
    """One step of a hand looked back at: the events it told (the deal, or one action's), and
    the view after them, as the seat whose history it is saw them."""

    events: tuple[Event, ...]
    view: SeatView

    def to_wire(self) -> dict[str, Any]:
        """The step for the wire: the view without its rules (the same at every step: the
        answer carries them once)."""
        view = self.view.to_dict()
        del view["rules"]
        return {"events": [event.to_dict() for event in self.events], "view": view}

    @classmethod
    def from_wire(cls, data: dict[str, Any], rules: HouseRules) -> HistoryStep:
        return cls(
            tuple(Event.from_dict(event) for event in data["events"]),
            SeatView.from_dict(data["view"], rules),
        )


def seat_in(names: Sequence[str], name: str | None) -> int | None:
    """The seat `name` held in a hand of these `names`; None (a spectator's view) for a name
    that did not sit in it, or no name."""
    if name is None:
        return None
    for seat, held in enumerate(names):
        if held == name:
            return seat
    return None


#: A seat that changed hands during a hand: from step `step` on (that step's action, and its
#: view, are the new occupant's), seat `seat` was held by `name`.
SeatChange = tuple[int, int, str]  # step, seat, name

#: Past the last step of any hand.
MAX_STEP = 1 << 62


@record
class Occupants:
    """Who held each seat of a hand at each of its steps: `dealt`, the names by seat at the
    deal (step 0), and the seats that changed hands during it (`changes`, in the order of
    their steps): the creator gave an absent player's seat to a bot, or a person took a bot's.
    A hand nobody changed seats in has no changes."""

    dealt: tuple[str, ...]
    changes: tuple[SeatChange, ...] = ()

    def names_at(self, step: int) -> tuple[str, ...]:
        """The names by seat of those who held the seats at `step`."""
        names = list(self.dealt)
        for changed, seat, name in self.changes:
            if changed <= step and seat < len(names):
                names[seat] = name
        return tuple(names)

    @property
    def final(self) -> tuple[str, ...]:
        """The names by seat as the hand ended (as its `hand_end` said them: who paid whom)."""
        return self.names_at(MAX_STEP)

    def seat_at(self, name: str | None, step: int) -> int | None:
        """The seat `name` held at `step`; None: no seat then (or no name)."""
        return seat_in(self.names_at(step), name)

    def seat_of(self, name: str | None) -> int | None:
        """The seat `name` held in the hand (the last, if more than one); None: none."""
        held = [seat_in(self.dealt, name)]
        held += [seat for _, seat, changed in self.changes if changed == name]
        return next((seat for seat in reversed(held) if seat is not None), None)

    def holders(self, firsts: Sequence[int]) -> list[tuple[int, int, str]]:
        """Every holder of each seat that changed hands, in the order of their steps, as an
        update's `holders` says them: (seat, the index of the first event theirs, name), the
        first holder's from 0. `firsts`: the index of each step's first event (the deal's, 0,
        each action's, and one past the last action's: a change made after it, whose first
        event is yet to come). Live play makes the same list as the seats change hands."""
        rows: list[tuple[int, int, str]] = []
        for step, seat, name in self.changes:
            if not 0 <= seat < len(self.dealt):
                continue
            if not any(held == seat for held, _, _ in rows):
                rows.append((seat, 0, self.dealt[seat]))
            rows.append((seat, firsts[min(step, len(firsts) - 1)], name))
        return rows

    def to_wire(self) -> list[list[Any]]:
        """For the wire: every occupant of each seat that changed hands, `[seat, from, name]`
        ordered by seat, then step (the first from step 0); [] when no seat changed hands."""
        rows: list[list[Any]] = []
        for seat in sorted({seat for _, seat, _ in self.changes}):
            if seat < len(self.dealt):
                rows.append([seat, 0, self.dealt[seat]])
            rows += [[seat, step, name] for step, held, name in self.changes if held == seat]
        return rows

    @classmethod
    def from_wire(cls, final: Sequence[str], rows: Sequence[Sequence[Any]]) -> Occupants:
        """Read back from the hand's names as it ended and its occupants (`to_wire`); a row
        for a seat the hand did not have is left out."""
        dealt = list(final)
        changes: list[SeatChange] = []
        for seat, step, name in rows:
            if not 0 <= seat < len(dealt):
                continue
            if step == 0:
                dealt[seat] = name
            else:
                changes.append((step, seat, name))
        changes.sort(key=lambda change: change[0])
        return cls(tuple(dealt), tuple(changes))


def hand_steps(
    record: HandRecord, seat: int | None, seats: Callable[[int], int | None] | None = None
) -> list[HistoryStep]:
    """The hand replayed from its record, as `seat` (None: a spectator) saw it: the deal, then
    each action; the last step's view carries the settlement (what the rules revealed). With
    `seats`, each step is seen from the seat it gives for that step (None: as a spectator):
    for one who held a seat for only part of the hand."""
    hand = record.deal()
    held = seat if seats is None else seats(0)
    steps = [HistoryStep(tuple(hand.events_for(held)), hand.view(held))]
    for number, action in enumerate(record.actions, 1):
        start = len(hand.events)
        hand.apply(action)
        held = seat if seats is None else seats(number)
        steps.append(HistoryStep(tuple(hand.events_for(held, start)), hand.view(held)))
    return steps


@record
class HandSummary:
    """One settled hand in a session's history: its number, the players' names in seat order
    as it ended (as its `hand_end` said them), the dealer's seat, the stakes' multiplier, its
    settlement (how it ended, who won, who paid whom, what the rules revealed: what every seat
    was told at its end), and every occupant of a seat that changed hands during it
    (`Occupants.to_wire`'s rows; none if no seat did)."""

    number: int
    names: tuple[str, ...]
    dealer: int
    multiplier: int
    settlement: Settlement
    occupants: tuple[tuple[int, int, str], ...] = ()

    @property
    def seating(self) -> Occupants:
        """Who held each seat at each step."""
        return Occupants.from_wire(self.names, self.occupants)

    @property
    def dealer_name(self) -> str:
        """The dealer as the hand was dealt."""
        dealt = self.seating.dealt
        return dealt[self.dealer] if self.dealer < len(dealt) else "?"

    @property
    def payments(self) -> tuple[tuple[str, str, int], ...]:
        """(payer, payee, amount) by name."""
        names = self.names
        return tuple((names[x.payer], names[x.payee], x.amount) for x in self.settlement.payments)

    @property
    def winners(self) -> tuple[str, ...]:
        return tuple(self.names[seat] for seat in self.settlement.winners)

    def to_wire(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "names": list(self.names),
            "dealer": self.dealer,
            "multiplier": self.multiplier,
            "settlement": self.settlement.to_dict(),
            "occupants": [list(row) for row in self.occupants],
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> HandSummary:
        return cls(
            data["number"],
            tuple(data["names"]),
            data["dealer"],
            data["multiplier"],
            Settlement.from_dict(data["settlement"]),
            tuple((seat, step, name) for seat, step, name in data.get("occupants", ())),
        )


def hand_summary(
    number: int,
    seating: Occupants,
    record: dict[str, Any],
    settlement: dict[str, Any],
) -> HandSummary:
    """A settled hand's summary from its stored record and settlement (as the store keeps
    them) and who held its seats; only the record's dealer and multiplier are read from it."""
    return HandSummary(
        number,
        seating.final,
        record["dealer"],
        record["multiplier"],
        Settlement.from_dict(settlement),
        tuple((seat, step, name) for seat, step, name in seating.to_wire()),
    )
