"""What the web door checks before a request reaches a page: that it came by one of the names
the server answers to (not another site's name made to point at this box: DNS rebinding), and
a log that says each kind of trouble in one line, a few times a minute at most."""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from aiohttp import web

log = logging.getLogger("tonk.server")

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
