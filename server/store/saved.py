"""What the database gives back, as values: a table with its seats and last hand, a name
claimed through a door, a door seat. Read by the schema's loader, written by the store's ops."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tonk.shared.game.history import Occupants


@dataclass(slots=True)
class SavedSeat:
    seat: int
    name: str
    kind: str
    strategy: str | None
    token_hash: str | None
    stake: int
    away: bool = False  # its seat is played for it until its player is back


@dataclass(slots=True)
class SavedHand:
    number: int
    record: dict[str, Any]
    names: list[str]
    settlement: dict[str, Any] | None
    actions: list[dict[str, Any]]
    occupants: Occupants  # who held each seat at each step (its seats that changed hands)


@dataclass(slots=True)
class SavedTable:
    id: int
    name: str
    config: dict[str, Any]
    state: str
    created: float
    started: float | None
    hands_played: int
    dealer: int | None
    multiplier: int
    creator: int | None
    seats: list[SavedSeat] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)
    history: list[tuple[int, str, list[tuple[str, str, int]]]] = field(default_factory=list)
    hand: SavedHand | None = None  # the last hand dealt (in play, or the one just settled)
    rematch_of: int | None = None  # the table this one is a rematch of
    rematch: dict[str, Any] | None = None  # a finished table's offer of a rematch, waiting
    # The balances of every earlier session of its chain of rematches, oldest first.
    earlier: list[dict[str, int]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SavedName:
    """A name claimed through a door: at the SSH door by the first key that came under it
    (`public_key`), or at the web door by a browser (`token_hash`, and no key)."""

    name: str
    public_key: str  # OpenSSH's one-line form, without a comment ("" for a browser's)
    fingerprint: str  # SHA256:... ("" for a browser's)
    claimed: float
    token_hash: str | None = None  # the browser's token, hashed (the cookie holds the token)

    @property
    def by_browser(self) -> bool:
        return self.token_hash is not None


@dataclass(frozen=True, slots=True)
class SavedDoorSeat:
    """A table at which a name claimed over SSH took a seat through the door (no token: the
    key is the player's proof, and a copy of the database must give nobody a seat)."""

    table_id: int
    left: bool
    taken: float
