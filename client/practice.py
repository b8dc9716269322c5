"""The practice table's server: the real server code, embedded in this process (see
`tonk.server.embedded`), started with the client and stopped with it."""

from __future__ import annotations

from typing import Any

from tonk.server.embedded import EmbeddedServer, start_embedded

#: A running practice server.
PracticeServer = EmbeddedServer


async def start_practice_server(dev: bool = False, **options: Any) -> EmbeddedServer:
    """Start the embedded server for a practice table; `dev` allows a fixed seed, deck or
    dealer; `options` are other server settings (tests use them for timing)."""
    return await start_embedded(dev, **options)
