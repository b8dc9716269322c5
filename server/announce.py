"""The server announced on the LAN: a DNS-SD `_tonk._tcp` service over multicast DNS (what Avahi
and Bonjour speak), by the `zeroconf` package, so that `tonk-client` lists it without being
told an address. Its TXT record (`tonk.shared.wire.discovery`) says the doors' ports and the
tables and players, looked at every `interval` seconds and sent again only when it changed: at
most one update an interval, however busy the tables are."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tonk.shared.terms import SeatKind
from tonk.shared.wire import discovery as dd

if TYPE_CHECKING:
    from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

    from .app import TonkServer

log = logging.getLogger("tonk.server")

#: Seconds between two looks at the tables (so at most one TXT update per this many).
UPDATE_INTERVAL = 2.0
#: Seconds a client's cache keeps the records of a server that vanished without its goodbye
#: (one killed, or cut off): its TTL. A server stopped as usual says goodbye and goes at once.
RECORD_TTL = 60
#: Addresses that mean "every address of this machine".
EVERYWHERE = ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Whether listening on `host` lets no other machine in (127.x, ::1, localhost)."""
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def interface_addresses() -> list[str]:
    """Every address on this machine's network interfaces (IPv6 without its scope)."""
    import ifaddr

    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            found.append(ip.ip if isinstance(ip.ip, str) else ip.ip[0])
    return found


def lan_addresses(found: Iterable[str]) -> list[str]:
    """Of `found`, each address once that another machine could reach: no loopback, no
    link-local (which needs its interface named), no unspecified; IPv4 first, else in order."""
    seen: dict[str, int] = {}
    for text in found:
        with contextlib.suppress(ValueError):
            ip = ipaddress.ip_address(text.partition("%")[0])
            if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
                seen.setdefault(str(ip), ip.version)
    return sorted(seen, key=lambda a: seen[a])


def announced_addresses(host: str) -> list[str]:
    """The LAN addresses a server listening on `host` is reached at: for 0.0.0.0 every IPv4
    address of this machine's interfaces, for :: every address, else `host`'s own (a name
    resolved); loopback and link-local left out."""
    if host in EVERYWHERE:
        found = interface_addresses()
        if host != "::":
            found = [a for a in found if ":" not in a]
        return lan_addresses(found)
    try:
        resolved = [str(info[4][0]) for info in socket.getaddrinfo(host, None)]
    except OSError:
        return []
    return lan_addresses(resolved)


def server_host_label(name: str) -> str:
    """A host name for the service's SRV record: letters, digits and hyphens."""
    label = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-")[:50] or "tonk"
    return f"{label}.local."


class Announcer:
    """The server's `_tonk._tcp` service on the addresses it listens on; `await start()`,
    `await close()` (which says goodbye, so clients drop it at once)."""

    def __init__(
        self,
        server: TonkServer,
        name: str,
        addresses: list[str],
        *,
        ssh_port: int | None = None,
        web_port: int | None = None,
        interval: float = UPDATE_INTERVAL,
    ) -> None:
        self.server = server
        self.name = dd.instance_name(name)
        self.addresses = addresses
        self.ssh_port = ssh_port
        self.web_port = web_port
        self.interval = interval
        self._zc: AsyncZeroconf | None = None
        self._info: AsyncServiceInfo | None = None
        self._task: asyncio.Task[None] | None = None

    def txt(self) -> dict[str, str]:
        """The TXT record as the tables are now."""
        tables = 0
        names: list[str] = []
        for table in self.server.tables.values():
            if not table.open:
                continue
            tables += 1
            names.extend(s.name for s in table.seats if s.kind == SeatKind.HUMAN and s.name)
        return dd.txt_record(
            ssh_port=self.ssh_port, web_port=self.web_port, tables=tables, players=names
        )

    def _service(self, properties: dict[str, str]) -> AsyncServiceInfo:
        from zeroconf.asyncio import AsyncServiceInfo

        name = self._info.name if self._info is not None else f"{self.name}.{dd.SERVICE_TYPE}"
        return AsyncServiceInfo(
            dd.SERVICE_TYPE,
            name,
            port=self.server.port,
            properties=properties,
            server=server_host_label(socket.gethostname()),
            parsed_addresses=self.addresses,
            host_ttl=RECORD_TTL,
            other_ttl=RECORD_TTL,
        )

    async def start(self) -> None:
        """Open the multicast sockets on the listened addresses' interfaces (raises OSError
        when none can be) and announce in the background."""
        from zeroconf.asyncio import AsyncZeroconf

        self._zc = AsyncZeroconf(interfaces=list(self.addresses))
        self._task = asyncio.create_task(self._run(), name="announce")

    async def _run(self) -> None:
        assert self._zc is not None
        sent = self.txt()
        info = self._service(sent)
        try:
            waiting = await self._zc.async_register_service(info, allow_name_change=True)
            await waiting
        except Exception as exc:  # (the LAN is the host's: the tables go on without it)
            log.warning("not announced on the LAN: %s", exc)
            return
        self._info = info
        self.name = info.name.removesuffix("." + dd.SERVICE_TYPE)
        log.info(
            "announced on the LAN as %r (%s) at %s",
            self.name,
            dd.SERVICE_TYPE,
            ", ".join(self.addresses),
        )
        while True:
            await asyncio.sleep(self.interval)
            now = self.txt()
            if now == sent:
                continue
            self._info = info = self._service(now)
            try:
                await self._zc.async_update_service(info)
            except Exception as exc:  # (tried again at the next look)
                log.debug("the LAN's record not sent again: %s", exc)
                continue
            sent = now

    async def close(self) -> None:
        """Say goodbye (clients drop the server at once) and close the sockets."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._zc is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(3):
                    await self._zc.async_close()  # (unregisters: the goodbyes are sent)
            self._zc = None


def address_port(address: str, port: int) -> str:
    """`HOST:PORT` (an IPv6 address in brackets)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def web_url(address: str, port: int) -> str:
    """The web door's page at `address`."""
    return f"http://{address_port(address, port)}/"


def machine_addresses(hostname: str | None = None) -> list[str]:
    """This machine's addresses, without sending anything: the one its default route leaves
    from (a UDP socket's connect sends no packet), what its host name resolves to, and its
    network interfaces' own; the LAN's first, loopback left out when there are others."""
    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("10.255.255.255", 9))
        found.append(udp.getsockname()[0])
    with contextlib.suppress(OSError):
        for *_, sockaddr in socket.getaddrinfo(
            hostname or socket.gethostname(), None, type=socket.SOCK_STREAM
        ):
            found.append(str(sockaddr[0]))
    found += interface_addresses()
    return ordered(found)


def ordered(addresses: Iterable[str]) -> list[str]:
    """Each address once: IPv4 before IPv6, loopback and link-local left out when any other
    is there (else loopback only)."""
    seen: dict[str, ipaddress.IPv4Address | ipaddress.IPv6Address] = {}
    for text in addresses:
        with contextlib.suppress(ValueError):
            address = ipaddress.ip_address(text.partition("%")[0])
            if not address.is_unspecified:
                seen.setdefault(str(address), address)
    lan = [a for a, ip in seen.items() if not ip.is_loopback and not ip.is_link_local]
    chosen = lan or [a for a, ip in seen.items() if ip.is_loopback] or ["127.0.0.1"]
    return sorted(chosen, key=lambda a: seen[a].version if a in seen else 4)


def listened_addresses(host: str | None) -> list[str]:
    """Where friends reach the server: the host it listens on, or for every address
    (0.0.0.0, ::) this machine's own."""
    if host is None or host in EVERYWHERE:
        return machine_addresses()
    return [host]


def web_page_url(host: str | None, port: int) -> str:
    """The web door's page as `invite` tells it (and the television page's code shows)."""
    return web_url(listened_addresses(host)[0], port)
