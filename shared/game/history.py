"""Looking back at a hand: a recorded hand replayed through the core, one step for the deal and
one for each action, each as one seat (or a spectator) saw it live (`Hand.view`,
`Hand.events_for`), so that the history can show nothing that live play would not."""

from __future__ import annotations

from collections.abc import Sequence
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


def hand_steps(record: HandRecord, seat: int | None) -> list[HistoryStep]:
    """The hand replayed from its record, as `seat` (None: a spectator) saw it: the deal, then
    each action; the last step's view carries the settlement (what the rules revealed)."""
    hand = record.deal()
    steps = [HistoryStep(tuple(hand.events_for(seat)), hand.view(seat))]
    for action in record.actions:
        start = len(hand.events)
        hand.apply(action)
        steps.append(HistoryStep(tuple(hand.events_for(seat, start)), hand.view(seat)))
    return steps


@record
class HandSummary:
    """One settled hand in a session's history: its number, the players' names in seat order,
    the dealer's seat, the stakes' multiplier, and its settlement (how it ended, who won, who
    paid whom, what the rules revealed: what every seat was told at its end)."""

    number: int
    names: tuple[str, ...]
    dealer: int
    multiplier: int
    settlement: Settlement

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
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> HandSummary:
        return cls(
            data["number"],
            tuple(data["names"]),
            data["dealer"],
            data["multiplier"],
            Settlement.from_dict(data["settlement"]),
        )


def hand_summary(
    number: int, names: Sequence[str], record: dict[str, Any], settlement: dict[str, Any]
) -> HandSummary:
    """A settled hand's summary from its stored record and settlement (as the store keeps
    them); only the record's dealer and multiplier are read from it."""
    return HandSummary(
        number,
        tuple(names),
        record["dealer"],
        record["multiplier"],
        Settlement.from_dict(settlement),
    )
