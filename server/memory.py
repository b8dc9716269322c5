"""Memory given back to the system after a crowd of connections is gone. What the
connections freed goes back to the allocators, which keep it for the next allocations rather
than return it. Once enough connections have closed and none for a moment (a crowd of clients
that never read, dropped together), `malloc_trim(0)` hands glibc's free pages back
(docs/benchmarks-journal.md, "Memory after lobby clients that never read"); elsewhere than
glibc, nothing is done. Python's own small-object allocator keeps what it keeps: see there."""

from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Callable

log = logging.getLogger("tonk.server")

#: Connections closed since the last trim that make a crowd worth a trim.
TRIM_AFTER = 256
#: Seconds with no connection closed before the trim: not in the middle of the crowd's end.
QUIET = 1.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, from the C library this process runs on, or None where it has
    none (musl, macOS)."""
    try:
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


class Trimmer:
    """Counts the connections closed; says when the memory they freed is to be given back."""

    __slots__ = ("_closed", "_last_closed", "_trim", "trims")

    def __init__(self) -> None:
        self._closed = 0
        self._last_closed = 0.0
        self._trim = _malloc_trim()
        self.trims = 0

    def closed(self, now: float) -> None:
        """A connection closed at loop time `now`."""
        self._closed += 1
        self._last_closed = now

    def due(self, now: float) -> bool:
        return (
            self._trim is not None
            and self._closed >= TRIM_AFTER
            and now - self._last_closed >= QUIET
        )

    def trim(self) -> None:
        """Give glibc's free pages back to the system (a few milliseconds)."""
        assert self._trim is not None
        closed, self._closed = self._closed, 0
        started = time.perf_counter()
        self._trim(0)
        self.trims += 1
        log.info(
            "%d connections closed: free memory given back in %.0f ms",
            closed,
            (time.perf_counter() - started) * 1000,
        )
