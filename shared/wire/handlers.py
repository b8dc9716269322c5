"""The registry of who takes each message of one side: the server's `@handles` (a request to
its handler, server/requests.py) and the client's `@receives` (a server message to the model's
reader of it, client/model/model.py) are each one `Handlers`, checked whole at import: every
message of the side has exactly one taker, or is marked as ignored, or is another's (the
link's), so a message added without its taker stops the program at start, not in play."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Generic, TypeVar

from .wire import Message

K = TypeVar("K", bound=Message)
H = TypeVar("H")


class Handlers(Generic[K, H]):
    """Each message class of one side (`K`: ClientMessage or ServerMessage) to the one
    function (`H`) that takes it. `add` registers a taker (the typed decorator around it is
    its module's: `handles`, `receives`), `ignores` marks messages nobody takes, `check`
    holds the whole against the side's messages."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._takers: dict[type[K], H] = {}
        self._ignored: set[type[K]] = set()

    def add(self, kinds: Iterable[type[K]], taker: H) -> None:
        """`taker` takes each message of `kinds`; TypeError for one already taken."""
        for kind in kinds:
            if kind in self._takers or kind in self._ignored:
                raise TypeError(f"{kind.__name__} has two {self.name}")
            self._takers[kind] = taker

    def ignores(self, *kinds: type[K]) -> None:
        """Mark messages of the side that nobody here takes, on purpose."""
        for kind in kinds:
            if kind in self._takers or kind in self._ignored:
                raise TypeError(f"{kind.__name__} has two {self.name}")
            self._ignored.add(kind)

    def get(self, kind: type[K]) -> H | None:
        """The taker of messages of `kind` (None: ignored, or another's)."""
        return self._takers.get(kind)

    @property
    def taken(self) -> frozenset[type[K]]:
        return frozenset(self._takers)

    def check(self, side: Iterable[type[K]], elsewhere: Collection[type[K]] = ()) -> None:
        """TypeError unless every message of `side` has exactly one taker here, is ignored,
        or is taken `elsewhere` (and only there), and nothing here is not of `side`."""
        kinds = set(side)
        here = set(self._takers) | self._ignored
        missing = kinds - here - set(elsewhere)
        twice = here & set(elsewhere)
        unknown = here - kinds
        if missing or twice or unknown:
            raise TypeError(
                f"{self.name}: none for {sorted(k.__name__ for k in missing)}, two for "
                f"{sorted(k.__name__ for k in twice)}, not of the side: "
                f"{sorted(k.__name__ for k in unknown)}"
            )
