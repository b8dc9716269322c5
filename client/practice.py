"""The practice table's server: the real server code, embedded in this process (see
`tonk.server.embedded`), started with the client and stopped with it.

The server's modules are imported when a practice table is started, not with the client: a
client for another host, and every SSH door session, never load the store, the tables and the
lobby (about 45 ms and 4 MiB a process)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from tonk.server.embedded import EmbeddedServer

#: A running practice server.
PracticeServer: TypeAlias = "EmbeddedServer"


async def start_practice_server(dev: bool = False, **options: Any) -> EmbeddedServer:
    """Start the embedded server for a practice table; `dev` allows a fixed seed, deck or
    dealer; `options` are other server settings (tests use them for timing)."""
    from tonk.server.embedded import start_embedded

    return await start_embedded(dev, **options)
