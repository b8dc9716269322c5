"""The lobby: every open table's summary, packed once per change, and the connections in the
lobby. A connection arriving is sent a page of the list; after that, the changes, gathered into
one `lobby` message per interval that is packed once and sent alike to everybody in the lobby.

What a request costs does not grow with the number of tables: a page is at most PAGE_SIZE
summaries packed already (found by bisecting the sorted table ids), and pages are paced per
connection (`Limits.pages_per_second`, `page_burst`). A page and a `lobby` message are joined
from the packed summaries by `_speedups.tables_frame` and `lobby_frame`: the bytes
`protocol.encode` would make of the message, for a fortieth of the cost (a page of 100).
"""

from __future__ import annotations

import asyncio
import math
from bisect import bisect_right, insort
from collections import Counter

from tonk.shared import _speedups
from tonk.shared.wire import protocol as p

from ..connection import Connection
from .host import LobbyHost

#: Room kept in a frame for the envelope around the summaries (type, after, more, total, ...).
_ENVELOPE = 256
#: A page goes to a connection once its client has taken all but this many bytes of what it
#: was sent before: one that does not read is not sent page after page to hold for it (and is
#: dropped for not reading, `Limits.unread_timeout`).
_PAGE_SLACK = 64 * 1024
#: Seconds before the first look at whether it has, and at most between two looks (the wait
#: doubles from one look to the next: a client that reads is seen at once, one that does not
#: costs a look a second).
_TAKEN_POLL = (0.05, 1.0)


class Lobby:
    """The table list as the lobby sees it, and who is in the lobby."""

    def __init__(self, server: LobbyHost, interval: float) -> None:
        self.server = server
        self.interval = interval
        self.members: set[Connection] = set()
        self._ids: list[int] = []  # the listed tables, ascending
        self._packed: dict[int, bytes] = {}  # each listed table's summary, packed
        self._stale: set[int] = set()  # tables whose summary is to be packed again
        self._unsent: set[int] = set()  # tables changed since the last `lobby` message
        # The open tables (waiting or playing), each with the address it was created from,
        # and how many were created from each address: the table limits, counted by change.
        self._open: dict[int, str | None] = {}
        self._open_from: Counter[str] = Counter()
        self._timer: asyncio.TimerHandle | None = None
        self._last_sent = -math.inf

    @property
    def total(self) -> int:
        """Tables listed (as of the last change packed)."""
        return len(self._ids)

    # -- tables -------------------------------------------------------------------------------

    def changed(self, table_id: int) -> None:
        """Table `table_id` was created, changed, or is gone: it goes out with the next
        `lobby` message (at most one per interval)."""
        self._stale.add(table_id)
        self._unsent.add(table_id)
        if self._timer is None:
            loop = asyncio.get_running_loop()
            delay = max(0.0, self._last_sent + self.interval - loop.time())
            self._timer = loop.call_later(delay, self.flush)

    def _repack(self) -> None:
        if not self._stale:
            return
        tables = self.server.tables
        for table_id in self._stale:
            table = tables.get(table_id)
            if table_id in self._open:
                address = self._open.pop(table_id)
                if address is not None:
                    self._open_from[address] -= 1
                    if not self._open_from[address]:
                        del self._open_from[address]
            if table is not None and table.open:
                self._open[table_id] = table.creator_address
                if table.creator_address is not None:
                    self._open_from[table.creator_address] += 1
            if table is not None and table.listed:
                if table_id not in self._packed:
                    insort(self._ids, table_id)
                self._packed[table_id] = _speedups.packed(table.summary().to_wire())
            elif self._packed.pop(table_id, None) is not None:
                del self._ids[bisect_right(self._ids, table_id) - 1]
        self._stale.clear()

    def open_tables(self, address: str | None = None) -> int:
        """Tables waiting or playing; with `address`, only those created from it."""
        self._repack()
        return len(self._open) if address is None else self._open_from[address]

    def flush(self) -> None:
        """Send everybody in the lobby the tables changed since the last time, packed once."""
        self._timer = None
        self._last_sent = asyncio.get_running_loop().time()
        self._repack()
        if not self._unsent:
            return
        changed = sorted(self._unsent)
        self._unsent.clear()
        packed = self._packed
        frames = lobby_frames(
            [packed[t] for t in changed if t in packed], [t for t in changed if t not in packed]
        )
        for conn in list(self.members):
            if conn.table is not None or conn.closing:
                self.members.discard(conn)
                continue
            for frame in frames:
                conn.send_frame(frame)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- pages --------------------------------------------------------------------------------

    def page(self, after: int = 0, limit: int = p.PAGE_SIZE, reply_to: int | None = None) -> bytes:
        """The `tables` frame of the tables with ids above `after`, at most `limit` of them,
        in id order (fewer if they would not fit in a frame: `more` says there are others)."""
        self._repack()
        start = bisect_right(self._ids, after)
        budget = p.MAX_SERVER_FRAME - _ENVELOPE
        summaries: list[bytes] = []
        for table_id in self._ids[start : start + limit]:
            summary = self._packed[table_id]
            budget -= len(summary)
            if budget < 0:
                break
            summaries.append(summary)
        more = start + len(summaries) < len(self._ids)
        return _speedups.tables_frame(summaries, after, more, self.total, reply_to)

    # -- connections --------------------------------------------------------------------------

    def follow(self, conn: Connection) -> bool:
        """Note whether `conn` is in the lobby now; True if it has just arrived (it is to be
        sent the first page)."""
        here = (
            conn.place is None  # (first: false for every player at a table, on every message)
            and conn.welcomed
            and not conn.closing
            and conn in self.server.connections
        )
        if here and conn not in self.members:
            self.members.add(conn)
            return True
        if not here:
            self.members.discard(conn)
        return False

    async def welcome(self, conn: Connection) -> None:
        """`conn` has arrived in the lobby by its own request: its first page, paced."""
        await self.pace(conn)
        if conn in self.members and conn.table is None:
            conn.send_frame(self.page())

    def arrived(self, conn: Connection) -> None:
        """`conn` was sent back to the lobby by somebody else's doing (its table closed, its
        seat taken back elsewhere): its first page now (it still counts against its pace)."""
        if self.follow(conn):
            conn.take_page(asyncio.get_running_loop().time())
            conn.send_frame(self.page())

    async def pace(self, conn: Connection) -> None:
        """Wait until `conn` may be sent another page: its pace allows it, and its client has
        taken what it was sent before."""
        wait = conn.take_page(asyncio.get_running_loop().time())
        if wait > 0:
            await asyncio.sleep(wait)
        poll, longest = _TAKEN_POLL
        while not conn.closing and conn.unsent() > _PAGE_SLACK:
            await asyncio.sleep(poll)
            poll = min(longest, poll * 2)


def lobby_frames(summaries: list[bytes], removed: list[int]) -> list[bytes]:
    """`lobby` frames of these summaries and removed ids: one, unless they do not fit."""
    frames = []
    budget = p.MAX_SERVER_FRAME - _ENVELOPE - 10 * len(removed)
    chunk: list[bytes] = []
    size = 0
    for summary in summaries:
        if chunk and size + len(summary) > budget:
            frames.append(_speedups.lobby_frame(chunk, removed))
            chunk, size, removed = [], 0, []
        chunk.append(summary)
        size += len(summary)
    frames.append(_speedups.lobby_frame(chunk, removed))
    return frames
