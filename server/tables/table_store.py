"""A table's part that writes its changes: each written durably before anybody is told of it,
and play paused while the store cannot write (why, and since when), carried on once it can."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import Error

from ..errors import RequestError
from ..store import store as st
from .table_core import CLOSED, FINISHED, TableFrame, without_paths

log = logging.getLogger("tonk.server")


class TableStore:
    """Writing a table's changes, and the pause through storage faults. It asks nothing of the
    other parts: of the table (`TableFrame`), its host's store, and to tell everybody at it of
    a pause."""

    __slots__ = ("_table", "paused", "paused_at")

    def __init__(self, table: TableFrame) -> None:
        self._table = table
        self.paused: str | None = None  # why play is paused: the storage cannot be written
        self.paused_at = 0.0  # loop time the pause started

    async def write(self, ops: Sequence[st.Op]) -> None:
        """Write `ops` durably. Through a storage fault this waits (the table is paused
        meanwhile); RequestError if the write itself fails, or the server stops first."""
        table = self._table
        try:
            await table.server.store.write(ops)
        except st.StoreError as exc:
            log.error("table %d: storage error: %s", table.id, exc)
            raise RequestError(
                p.STORAGE_ERROR,
                f"the server could not save that ({without_paths(str(exc))}); nothing was changed",
            ) from None

    def refuse_paused(self) -> None:
        raise RequestError(
            p.STORAGE_ERROR,
            f"play is paused: the server cannot save the game ({self.paused}); nothing was changed",
        )

    def pause(self, reason: str) -> None:
        """The store cannot write: stop play and tell everybody at the table why, once (in
        words without the server's file paths: those are the host's, in the log)."""
        table = self._table
        if self.paused is not None or table.state in (FINISHED, CLOSED):
            return
        reason = without_paths(reason)
        self.paused = reason
        self.paused_at = table.now
        log.debug("table %d: paused: the game cannot be saved (%s)", table.id, reason)
        table.broadcast(
            Error.of(
                p.STORAGE_ERROR,
                f"the server cannot save the game ({reason}): play is paused until it can; "
                "nothing played so far is lost",
            )
        )
        table.broadcast_table()

    def shift(self, lost: float) -> None:
        """The server did not run for `lost` seconds: not counted in the pause."""
        self.paused_at += lost

    def unpause(self, now: float) -> float | None:
        """The store writes again (at loop time `now`): no longer paused; the seconds the
        pause lasted (None if play was not paused)."""
        if self.paused is None:
            return None
        self.paused = None
        log.debug("table %d: the game can be saved again; play carries on", self._table.id)
        return now - self.paused_at
