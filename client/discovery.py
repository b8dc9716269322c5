"""The tonk-servers on the LAN, as they announce themselves: a browser of the `_tonk._tcp`
DNS-SD service over multicast DNS (the `zeroconf` package), each server resolved to its name,
address, port and TXT record (`tonk.shared.wire.discovery`). A server that says goodbye (it
stopped) leaves the list at once; one that vanished without (killed, cut off) when its records'
time to live runs out."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tonk.shared.wire import discovery as dd

from .recent import client_address

if TYPE_CHECKING:
    from zeroconf import ServiceStateChange, Zeroconf
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

#: Milliseconds to wait for a server's records once it is seen.
RESOLVE_MS = 3000


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A tonk-server found on the LAN."""

    name: str  # its instance name (tonk-server --name)
    addresses: tuple[str, ...]  # IPv4 first
    port: int
    announced: dd.Announced

    @property
    def address(self) -> str:
        """`HOST:PORT` as tonk-client takes it (an IPv6 address in brackets)."""
        return client_address(self.addresses[0], self.port)

    @property
    def host(self) -> str:
        return self.addresses[0]

    def line(self) -> str:
        """One tab-separated line: name, address, tables, players, their names."""
        who = ", ".join(self.announced.who) + (", ..." if self.announced.more else "")
        return "\t".join(
            (
                self.name,
                self.address,
                str(self.announced.tables),
                str(self.announced.players),
                who,
            )
        )


def _ordered(addresses: Sequence[str]) -> tuple[str, ...]:
    def version(text: str) -> int:
        try:
            return ipaddress.ip_address(text.partition("%")[0]).version
        except ValueError:
            return 6

    return tuple(sorted(dict.fromkeys(addresses), key=version))


class LanBrowser:
    """Browses the LAN for tonk-servers while started; `servers` is what it knows now, and
    `on_change()` is called (in the event loop) each time that changes."""

    def __init__(
        self,
        on_change: Callable[[], None] | None = None,
        interfaces: Sequence[str] | None = None,
    ) -> None:
        self.on_change = on_change
        self.interfaces = interfaces
        self.servers: dict[str, FoundServer] = {}  # by the service's full name
        self.changed = asyncio.Event()  # set at each change (cleared by whoever waits on it)
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Open the multicast sockets and start asking; raises OSError where they cannot be
        opened (no network)."""
        from zeroconf import InterfaceChoice
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

        if self.interfaces is not None:
            self._zc = AsyncZeroconf(interfaces=list(self.interfaces))
        else:
            self._zc = AsyncZeroconf(interfaces=InterfaceChoice.All)
        self._browser = AsyncServiceBrowser(
            self._zc.zeroconf, dd.SERVICE_TYPE, handlers=[self._state_changed]
        )

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await self._browser.async_cancel()
        if self._zc is not None:
            with contextlib.suppress(Exception):
                await self._zc.async_close()
        self._zc = self._browser = None

    def sorted(self) -> list[FoundServer]:
        """The servers found, by name."""
        return sorted(self.servers.values(), key=lambda s: (s.name.casefold(), s.address))

    def _state_changed(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
        **_: Any,
    ) -> None:
        from zeroconf import ServiceStateChange

        if state_change is ServiceStateChange.Removed:
            if self.servers.pop(name, None) is not None:
                self._changed()
            return
        task = asyncio.get_running_loop().create_task(self._resolve(service_type, name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, service_type: str, name: str) -> None:
        from zeroconf.asyncio import AsyncServiceInfo

        if self._zc is None:
            return
        info = AsyncServiceInfo(service_type, name)
        if not await info.async_request(self._zc.zeroconf, RESOLVE_MS):
            return
        addresses = _ordered(info.parsed_scoped_addresses())
        if not addresses or not info.port:
            return
        label = name.removesuffix("." + service_type).replace("\\.", ".")
        self.servers[name] = FoundServer(
            label, addresses, info.port, dd.read_txt(info.properties or {})
        )
        self._changed()

    def _changed(self) -> None:
        self.changed.set()
        if self.on_change is not None:
            self.on_change()


async def find_servers(wait: float, interfaces: Sequence[str] | None = None) -> list[FoundServer]:
    """The servers found on the LAN in `wait` seconds (`tonk-client --lan`)."""
    browser = LanBrowser(interfaces=interfaces)
    await browser.start()
    try:
        await asyncio.sleep(wait)
        return browser.sorted()
    finally:
        await browser.close()
