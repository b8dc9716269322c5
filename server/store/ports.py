"""The ports a server keeps in its database (the `settings` table): asked for port 0, the
table port, the SSH door and the web door each listen again where this database's server
listened last, so that every player's `tonk-client HOST:PORT`, every guest's `ssh -p PORT` and
every bookmarked `http://HOST:PORT/` keep working."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from . import store as st

log = logging.getLogger("tonk.server")

#: The settings: the table port, the SSH door's port, the web door's port, the address
#: listened on, and whether the server last started with each door open (ON) or not (OFF).
PORT = "port"
SSH_PORT = "ssh_port"
WEB_PORT = "web_port"
HOST = "host"
SSH_DOOR = "ssh_door"
WEB_DOOR = "web_door"
ON, OFF = "on", "off"

T = TypeVar("T")


def port_of(value: str | None) -> int | None:
    """A kept port read back (None: none kept, or not a port)."""
    if value is not None and value.isdigit() and 0 < int(value) < 65536:
        return int(value)
    return None


async def listen_kept(
    store: st.Store,
    setting: str,
    port: int,
    listen: Callable[[int], Awaitable[T]],
    what: str,
) -> tuple[T, int | None]:
    """`listen(port)`; with port 0, first on the port kept under `setting` (a free one the
    first time, or when that one is taken now: then a warning names `what` and the port).
    Returns what `listen` gave and the port that was kept, if any."""
    kept = port_of(await asyncio.to_thread(store.setting, setting))
    if kept is not None and port == 0:
        try:
            return await listen(kept), kept
        except OSError as exc:
            log.warning(
                "port %d, where %s of %s listened before, cannot be used (%s): listening on "
                "a free port instead; %s (tonk-server invite says what)",
                kept,
                what,
                store.path,
                exc.strerror or exc,
                "players must be told it" if setting == PORT else "guests must be told it",
            )
    return await listen(port), kept


async def keep(store: st.Store, settings: dict[str, str]) -> None:
    """Keep `settings` in the database; a write that fails is logged, not raised."""
    try:
        await store.write([st.put_setting(name, value) for name, value in settings.items()])
    except st.StoreError as exc:
        log.warning("could not keep the %s in the database: %s", ", ".join(settings), exc)
