"""The coach's answer as a value, for the wire and the client: the expert's choice at one
decision, the one played, what the expert's choice gained over it and how sure that is
(shared/bots/coach.py works it out)."""

from __future__ import annotations

from typing import Any

from ..game.actions import Action, action_from_dict, action_to_dict
from ..records import record


def action_to_wire(action: Action) -> dict[str, Any]:
    """An action as the coach sends it: as a hand's record writes it, but a spread's cards
    one string, as every list of cards on the wire (PROTOCOL.md, "Card text")."""
    data = action_to_dict(action)
    cards = data.get("cards")
    if isinstance(cards, list):
        data["cards"] = " ".join(cards)
    return data


@record
class Weighed:
    """One choice the coach weighed: what the seat nets by it on average over the deals."""

    action: Action
    mean: float

    def to_wire(self) -> dict[str, Any]:
        return {"action": action_to_wire(self.action), "mean": self.mean}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Weighed:
        return cls(action_from_dict(data["action"]), float(data["mean"]))


@record
class Advice:
    """The expert's view of a decision: its choice (`best`), the one played (None: asked before
    the move), what `best` gained over it on average per hand in the table's unit (`gain`, 0
    when they are the same) with its 95% interval (`low`, `high`), the deals it was measured
    on (0: the seat had not seen enough to deal the rest, and nothing was measured), every
    choice weighed, and the seat's stake at that hand (its stake times the multiplier), to say
    the gain in stakes."""

    best: Action
    played: Action | None
    gain: float
    low: float
    high: float
    deals: int
    weighed: tuple[Weighed, ...]
    stake: int

    @property
    def agrees(self) -> bool:
        """Whether the expert would have done what was played."""
        return self.played == self.best

    @property
    def sure(self) -> bool:
        """Whether the interval of the gain is clear of zero: the expert's choice did better
        (or worse) on nearly any run of deals, not just on these."""
        return self.deals > 0 and (self.low > 0 or self.high < 0)

    def to_wire(self) -> dict[str, Any]:
        return {
            "best": action_to_wire(self.best),
            "played": None if self.played is None else action_to_wire(self.played),
            "gain": self.gain,
            "low": self.low,
            "high": self.high,
            "deals": self.deals,
            "weighed": [w.to_wire() for w in self.weighed],
            "stake": self.stake,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Advice:
        played = data["played"]
        return cls(
            action_from_dict(data["best"]),
            None if played is None else action_from_dict(played),
            float(data["gain"]),
            float(data["low"]),
            float(data["high"]),
            data["deals"],
            tuple(Weighed.from_wire(w) for w in data["weighed"]),
            data["stake"],
        )
