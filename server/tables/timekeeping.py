"""The server's clock jobs: noticing time the server lost (it was stopped, paused or too busy
to run), and each connection's deadlines (the handshake, heartbeats, the idle timeout)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from tonk.shared.wire import protocol as p

from ..config import Limits
from ..connection import Connection

log = logging.getLogger("tonk.server")

#: Seconds between looks at the clock, to notice the server did not run (see `LostTime`).
CLOCK_TICK = 0.1
#: A look at the clock this late means the server lost the time: it was stopped (SIGSTOP, a
#: paused virtual machine, a suspended laptop) or too busy to run.
STALL = 0.5


class LostTime:
    """The time the server did not run, noticed from how late each look at the clock is."""

    def __init__(self, now: float) -> None:
        self.alive = now  # loop time the server was last seen running
        self.stalls = 0
        self.lost = 0.0  # seconds lost to stalls in all

    def late(self, now: float) -> bool:
        """Whether a look at the clock now would find a stall."""
        return now - self.alive > STALL

    def look(self, now: float) -> tuple[float, float] | None:
        """Note that the server runs at `now`; if it had not run for a while, when the lost
        time began and how long it was."""
        gap = now - self.alive
        self.alive = now
        if gap <= STALL:
            return None
        lost = gap - CLOCK_TICK
        self.stalls += 1
        self.lost += lost
        log.log(
            logging.WARNING if lost >= 1.0 else logging.INFO,
            "the server did not run for %.1f s: every deadline moves on by as much",
            lost,
        )
        return now - lost, lost


def housekeeping_tick(limits: Limits) -> float:
    """Seconds between two looks at the connections' deadlines."""
    return max(0.05, min(1.0, limits.heartbeat / 4, limits.handshake_timeout / 4))


def check_deadlines(connections: Iterable[Connection], limits: Limits, now: float) -> None:
    """Close a connection that did not say hello in time, or has been silent for the idle
    timeout; ping one silent for a heartbeat (never before hello). Cut one whose client has
    taken nothing of what it was sent for `unread_timeout` (waiting for its answer or not)."""
    # (Run over every connection a few times a second: the limits read once, and the clock's
    # comparisons made before the link is asked.)
    handshake_timeout, idle_timeout, heartbeat, unread_timeout = (
        limits.handshake_timeout,
        limits.idle_timeout,
        limits.heartbeat,
        limits.unread_timeout,
    )
    for conn in connections:
        if conn.closing:
            continue
        unread = conn.unread_for(now)
        if unread > unread_timeout:
            log.warning(
                "connection %s dropped: it took none of %d bytes for %.0f s",
                conn.peer,
                conn.unsent(),
                unread,
            )
            conn.abort()  # (it reads nothing: a last word would only wait with the rest)
            continue
        if conn.busy:
            continue
        if now - conn.opened > handshake_timeout and not conn.welcomed:
            conn.error(p.HANDSHAKE_TIMEOUT, "no hello: the handshake took too long")
            continue
        silent = now - conn.last_received
        if silent > idle_timeout:
            log.info("connection #%d: idle for %.0f s", conn.number, silent)
            conn.error(p.IDLE_TIMEOUT, f"nothing received for {silent:.0f} s")
        elif silent > heartbeat and now - conn.last_ping > heartbeat:
            ping = conn.link.ping()  # None before the welcome: the handshake timeout governs
            if ping is not None:
                conn.last_ping = now
                conn.send(ping)
