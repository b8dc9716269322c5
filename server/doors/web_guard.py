"""What the web door checks before a request reaches a page: that it came by one of the names
the server answers to (not another site's name made to point at this box: DNS rebinding), and
a log that says each kind of trouble in one line, a few times a minute at most."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import web

log = logging.getLogger("tonk.server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: The names every server answers to, whatever its host is called.
LOCAL_NAMES = ("localhost",)
#: Lines of one kind the log takes in a minute; the rest are counted, and said with the next.
LINES_A_MINUTE = 6


def host_names() -> set[str]:
    """This machine's names: its host name, its full name, and its name on the LAN's mDNS.
    (getfqdn may ask the resolver: called once, as the door starts, off the event loop.)"""
    short = socket.gethostname()
    names = {short, socket.getfqdn(), f"{short.split('.')[0]}.local", *LOCAL_NAMES}
    return {fold_host(name) for name in names if name}


def fold_host(name: str) -> str:
    return name.strip().rstrip(".").lower()


class KnownHosts:
    """The names and addresses the web door answers to: this machine's names, the names the
    host gives (--web-name), and any address the request came in on (a browser that typed the
    address is on this server's own origin)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = {fold_host(name) for name in names}

    def allows(self, request: web.Request) -> bool:
        name = host_part(request.host)
        if name is None:
            return False
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return fold_host(name) in self.names
        return address.is_loopback or address == local_address(request)


def host_part(host: str | None) -> str | None:
    """The name or address in a `Host` header (without its port; an IPv6 address unbracketed)."""
    if not host:
        return None
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else None
    name, _, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    if port and not port.isdigit():
        return None
    return name


def local_address(request: web.Request) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The server's own address the request came in on."""
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    if not sockname:
        return None
    try:
        address = ipaddress.ip_address(str(sockname[0]).split("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class LogEvery:
    """A log line of one kind, LINES_A_MINUTE times a minute at most: past that the lines are
    counted, and the count said with the next line let through."""

    def __init__(self, logger: logging.Logger = log) -> None:
        self.logger = logger
        self.minute = 0
        self.said = 0
        self.held = 0

    def __call__(self, level: int, text: str) -> None:
        minute = int(time.monotonic() // 60)
        if minute != self.minute:
            self.minute, self.said = minute, 0
        if self.said >= LINES_A_MINUTE:
            self.held += 1
            return
        self.said += 1
        if self.held:
            text = f"{text} (and {self.held} more like it not logged)"
            self.held = 0
        self.logger.log(level, "%s", text)


#: Names chosen in the form and not claimed yet, kept from one address (the newest)...
CHOSEN_PER_ADDRESS = 3
#: ...and in all (the oldest go first).
MAX_CHOSEN = 1000
#: Seconds over which `web_names_per_address` counts an address's claims.
CLAIMS_WINDOW = 3600.0


@dataclass(frozen=True, slots=True)
class Chosen:
    """A name chosen in the form: the browser's token (hashed) and its address."""

    name: str
    token_hash: str
    address: str


class ChosenNames:
    """Names chosen in the web door's form, not claimed yet: a name is claimed when a session
    opens under it (as at the SSH door), and an address claims `per_address` names in
    CLAIMS_WINDOW at most. What is only chosen is kept in memory, bounded, and lost with a
    restart (the browser is asked for its name again)."""

    def __init__(self, per_address: int) -> None:
        self.per_address = per_address
        self.chosen: dict[str, Chosen] = {}  # by token hash, the oldest first
        self.claims: dict[str, deque[float]] = {}  # an address's claims' times

    def choose(self, chosen: Chosen) -> None:
        self.chosen.pop(chosen.token_hash, None)
        self.chosen[chosen.token_hash] = chosen
        same = [c.token_hash for c in self.chosen.values() if c.address == chosen.address]
        for token in same[:-CHOSEN_PER_ADDRESS]:
            del self.chosen[token]
        while len(self.chosen) > MAX_CHOSEN:
            del self.chosen[next(iter(self.chosen))]

    def of(self, token_hash: str) -> Chosen | None:
        return self.chosen.get(token_hash)

    def forget(self, token_hash: str) -> None:
        self.chosen.pop(token_hash, None)

    def may_claim(self, address: str, now: float) -> bool:
        """May `address` claim one more name now?"""
        times = self.claims.get(address)
        if times is None:
            return True
        while times and times[0] <= now - CLAIMS_WINDOW:
            times.popleft()
        if not times:
            del self.claims[address]
            return True
        return len(times) < self.per_address

    def claimed(self, address: str, now: float) -> None:
        self.claims.setdefault(address, deque()).append(now)


class GuardedHandler(web.RequestHandler):
    """aiohttp's handler of one HTTP connection, counted by the door's guard: let in or closed
    at once as it connects, timed while it is not in a request."""

    def __init__(self, manager: web.Server, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guard = guard
        self.address = ""
        self.since = 0.0  # (the loop's time) it connected, or its last request was answered
        self.busy = 0  # requests being handled (a websocket's: its whole session)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.guard.connected(self, cast(asyncio.Transport, transport))

    def connection_lost(self, exc: BaseException | None) -> None:
        self.guard.lost(self)
        super().connection_lost(exc)


class ConnectionGuard:
    """The web door's HTTP connections: `per_address` from one address at most (one past it is
    closed as it connects), `total` in all (past it, the one idle the longest makes room), and
    `timeout` seconds for each to send a request's head, from connecting or from its last
    answer (a connection idle, or sending a byte at a time, is closed). A request in hand (a
    websocket's session, the form's body, which has its own time) is not timed here."""

    def __init__(self, total: int, per_address: int, timeout: float) -> None:
        self.total = total
        self.per_address = per_address
        self.timeout = timeout
        self.connections: dict[GuardedHandler, asyncio.Transport] = {}
        self.by_address: dict[str, int] = {}
        self._log = LogEvery()
        self._sweeper: asyncio.Task[None] | None = None

    def protocol(self, manager: web.Server, **kwargs: Any) -> Callable[[], GuardedHandler]:
        """The factory of the listening socket's protocols."""
        loop = asyncio.get_running_loop()
        return lambda: GuardedHandler(manager, self, loop=loop, **kwargs)

    def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep(), name="web-connections")

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()

    def connected(self, handler: GuardedHandler, transport: asyncio.Transport) -> None:
        peer = transport.get_extra_info("peername")
        handler.address = str(peer[0]) if peer else ""
        handler.since = asyncio.get_running_loop().time()
        over = None
        if self.by_address.get(handler.address, 0) >= self.per_address:
            over = f"{self.per_address} from {handler.address}"
        elif len(self.connections) >= self.total and not self._make_room():
            over = f"{self.total} in all, each with a request in hand"
        if over is not None:
            self._log(
                logging.WARNING,
                f"web door: a connection from {handler.address} closed at once: the door "
                f"holds as many HTTP connections as it takes ({over})",
            )
            transport.abort()
            return
        self.connections[handler] = transport
        self.by_address[handler.address] = self.by_address.get(handler.address, 0) + 1

    def _make_room(self) -> bool:
        """All the places are taken: the connection idle the longest (with no request in
        hand) is closed for the new one, so that idle sockets cannot keep a player out."""
        idle = [h for h in self.connections if not h.busy]
        if not idle:
            return False
        oldest = min(idle, key=lambda h: h.since)
        self.connections[oldest].abort()
        self.lost(oldest)
        return True

    def lost(self, handler: GuardedHandler) -> None:
        if self.connections.pop(handler, None) is None:
            return
        left = self.by_address.get(handler.address, 1) - 1
        if left > 0:
            self.by_address[handler.address] = left
        else:
            self.by_address.pop(handler.address, None)

    async def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(1.0, self.timeout / 4))
            late = loop.time() - self.timeout
            for handler, transport in list(self.connections.items()):
                if not handler.busy and handler.since < late:
                    transport.abort()


@web.middleware
async def in_hand(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request being handled: its connection is not timed meanwhile (ConnectionGuard)."""
    connection = request.protocol
    if not isinstance(connection, GuardedHandler):
        return await handler(request)
    connection.busy += 1
    try:
        return await handler(request)
    finally:
        connection.busy -= 1
        connection.since = asyncio.get_running_loop().time()


class GuardedSite(web.BaseSite):
    """aiohttp's TCP site, its connections counted and timed by `guard`."""

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, guard: ConnectionGuard, **handler: Any
    ) -> None:
        super().__init__(runner, backlog=128)
        self.host = host
        self.port = port
        self.guard = guard
        self.handler = handler

    @property
    def name(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        manager = self._runner.server
        assert manager is not None
        server = await asyncio.get_running_loop().create_server(
            self.guard.protocol(manager, **self.handler), self.host, self.port, backlog=128
        )
        self._server = server
        self.port = int(server.sockets[0].getsockname()[1]) if server.sockets else self.port


class OneLine(logging.Filter):
    """A logger's records (those that begin with `only`, if given) said in one line each, the
    exception's type and text in place of its traceback, LINES_A_MINUTE a minute at most:
    aiohttp's about a request it could not parse, asyncio's about a connection it could not
    accept (a crowd of them must not fill the disk)."""

    def __init__(self, prefix: str, only: str | None = None) -> None:
        super().__init__()
        self.prefix = prefix
        self.only = only
        self.every = LogEvery()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self.only is not None and not text.startswith(self.only):
            return True
        text = text.split("\n", 1)[0]
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            said = " ".join(str(exc).split())[:200]
            text = f"{text}: {type(exc).__name__}: {said}"
        self.every(record.levelno, self.prefix + text)
        return False
