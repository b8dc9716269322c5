"""What a table and the lobby may ask of the server that hosts them: narrow interfaces
(`TonkServer` is one), so that neither imports the server."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Collection, Mapping
from typing import Any, Protocol

from tonk.shared.wire.messages import TableSummary

from ..config import ServerConfig
from ..connection import Connection
from ..store.store import Store
from .seating import Seating


class HostedTable(Protocol):
    """A table as its host and the lobby see it."""

    @property
    def id(self) -> int: ...

    @property
    def task(self) -> asyncio.Task[None] | None: ...

    @property
    def creator_address(self) -> str | None: ...

    @property
    def open(self) -> bool: ...

    @property
    def listed(self) -> bool: ...

    def summary(self) -> TableSummary: ...


class TableLobby(Protocol):
    """The lobby as a table tells it of changes."""

    def changed(self, table_id: int) -> None: ...

    def arrived(self, conn: Connection) -> None: ...


class LobbyHost(Protocol):
    """What the lobby reads of the server: its tables and its connections."""

    @property
    def tables(self) -> Mapping[int, HostedTable]: ...

    @property
    def connections(self) -> Collection[Connection]: ...


class TableHost(Protocol):
    """What a table asks of the server that hosts it."""

    @property
    def config(self) -> ServerConfig: ...

    @property
    def store(self) -> Store: ...

    @property
    def tables(self) -> Mapping[int, object]: ...

    @property
    def lobby(self) -> TableLobby: ...

    @property
    def seating(self) -> Seating[Any]: ...

    @property
    def thinking(self) -> concurrent.futures.Executor: ...

    def catch_up(self, now: float | None = None) -> None: ...

    def door_seat(self, conn: Connection, table_id: int, *, left: bool) -> None: ...

    def forget_table(self, table: HostedTable) -> None: ...

    async def open_rematch(self, table: Any, answer: Connection | None) -> None:
        """Open the rematch of `table` (its offer has gone ahead) and move everybody at it
        there; RequestError if it cannot be saved."""
