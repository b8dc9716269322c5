"""The server as an object: `TonkServer(config)`, `await start()`, `port`, `await close()`.

It accepts connections, runs the handshake and the lobby, and hands table requests to the
tables. Runnable embedded (the client's practice table, tests) or from `tonk-server`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import socket
import time
from collections.abc import Callable

from tonk.shared.bots.bots import BOT_STRATEGIES
from tonk.shared.game.words import plural
from tonk.shared.wire import link as ln
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

from .config import MAX_BACKLOG, MIN_BACKLOG, Limits, ServerConfig, listen_backlog
from .connection import Connection, unlink_transport
from .doors.door_names import DoorNames
from .doors.door_starts import AppStarts
from .errors import RequestError
from .memory import Trimmer
from .requests import Requests
from .store import ports
from .store import store as st
from .store.paths import default_db_path
from .store.standings import StandingsReader
from .tables.host import HostedTable
from .tables.lobby import Lobby
from .tables.rematch import open_rematch
from .tables.seating import Seating
from .tables.table import Table, TableConfig
from .tables.timekeeping import CLOCK_TICK, LostTime, check_deadlines, housekeeping_tick

# (The configuration is config.py's; its names are here too, where the server is.)
__all__ = [
    "MAX_BACKLOG",
    "MIN_BACKLOG",
    "SERVER_NAME",
    "Limits",
    "ServerConfig",
    "TonkServer",
    "default_db_path",
    "goodbye",
    "listen_backlog",
]

log = logging.getLogger("tonk.server")

SERVER_NAME = "tonk-server 0.1.0"


class TonkServer:
    """The whole server. `await start()` binds and loads the database; `await close()` says
    goodbye to every client, finishes the writes and closes."""

    def __init__(self, config: ServerConfig) -> None:
        if config.autoplay_strategy not in BOT_STRATEGIES:
            raise ValueError(f"unknown autoplay strategy {config.autoplay_strategy!r}")
        self.config = config
        self.store = st.Store(config.db_path)
        self.tables: dict[int, Table] = {}
        self.lobby = Lobby(self, config.lobby_interval)
        self.connections: set[Connection] = set()
        self.seating: Seating[Table] = Seating()  # who is at which table, in which seat
        self.trimmer = Trimmer()  # memory given back after a crowd of connections is gone
        self.requests = Requests(self)
        # (shared by every link)
        self._welcome_limits = config.limits.to_wire(config.grace, config.idle_turn)
        self.door_names = DoorNames()  # names claimed over SSH, kept from the TCP side too
        self.app_starts = AppStarts(config.limits.door_starting)  # the doors' apps starting
        # (One bound method for every link not opened by the SSH door, not a closure each.)
        self._check_plain_name = self._check_name
        self._per_address: dict[str, int] = {}
        self._server: asyncio.Server | None = None
        self._next_table = 1
        self._next_conn = 1
        self._tasks: set[asyncio.Task[None]] = set()
        self._housekeeper: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self.port = 0
        #: Why the database cannot be written now (every open table is paused), or None.
        self.storage_fault: str | None = None
        self.time = LostTime(0.0)  # time the server did not run (see `catch_up`)
        self._clock: asyncio.Task[None] | None = None
        self._remembered_port: int | None = None  # the port kept in the database, if any
        #: The worker thread where slow bots decide (`Bot.slow`, see `Table.decide`), off the
        #: event loop. One: under the GIL more threads add no speed, only more threads for the
        #: event loop to wait behind for its turn (measured in BENCHMARKS.md).
        self.thinking = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tonk-bots")
        #: The standings across nights, read in a thread of their own on a read-only connection.
        self.standings = StandingsReader(config.db_path)

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # The clock first: the tables restored below look at it from their first step.
        self.time = LostTime(loop.time())
        self._clock = asyncio.create_task(self._watch_clock(), name="clock")
        self.store.watch(loop, self._storage_changed)
        try:
            saved = await asyncio.to_thread(self.store.open, self.config.ledger_hands)
        except BaseException:
            self._clock.cancel()
            raise
        self._next_table = await asyncio.to_thread(self.store.max_table_id) + 1
        self.door_names.load(*await asyncio.to_thread(self.store.door_players))
        for data in saved:
            try:
                table = Table(
                    self,
                    data.id,
                    data.name,
                    TableConfig.from_dict(data.config),
                    data.created,
                )
                table.restore(data)
            except Exception:
                log.exception("table %d could not be restored; it is left out", data.id)
                continue
            self.tables[table.id] = table
            self.lobby.changed(table.id)
            table.begin()
        if saved:
            log.info("restored %s from %s", plural(len(self.tables), "table"), self.config.db_path)
        self._server = await self._listen()
        sockets = self._server.sockets
        self.port = sockets[0].getsockname()[1] if sockets else self.config.port
        kept: dict[str, str] = {}
        if self.port != self._remembered_port:
            kept[ports.PORT] = str(self.port)
        if await asyncio.to_thread(self.store.setting, ports.HOST) != self.config.host:
            kept[ports.HOST] = self.config.host  # (for tonk-server invite)
        if kept:
            await ports.keep(self.store, kept)
        self._housekeeper = asyncio.create_task(self._housekeep(), name="housekeeping")

    async def _listen(self) -> asyncio.Server:
        """Listen on the configured port; with port 0, on the port this database's server
        listened on last (where its players' clients look for it after a restart), or a free
        one the first time or if that one is taken now."""
        host = self.config.host
        backlog = listen_backlog(self.config.limits.max_connections)

        async def listen(port: int) -> asyncio.Server:
            return await asyncio.start_server(self._on_connect, host, port, backlog=backlog)

        server, self._remembered_port = await ports.listen_kept(
            self.store, ports.PORT, self.config.port, listen, "the server"
        )
        return server

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    async def serve_forever(self) -> None:
        """Run until `close()` (started first if need be)."""
        if self._server is None:
            await self.start()
        await self._closed.wait()

    async def close(self, message: str = "the server is shutting down") -> None:
        """Stop: no new connections; every client gets `goodbye`; requests being handled
        finish; every queued write reaches the disk; then everything is closed."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        log.info("shutting down")
        if self._server is not None:
            self._server.close()
        if self._housekeeper is not None:
            self._housekeeper.cancel()
        self.lobby.close()
        if self._clock is not None:
            self._clock.cancel()
        for table in list(self.tables.values()):
            await table.stop()
        # Not waited for: a decision still running finishes by itself, unheeded.
        self.thinking.shutdown(wait=False, cancel_futures=True)
        self.standings.close()
        self.requests.coach.close()
        for conn in list(self.connections):
            conn.close(goodbye(message))
            conn.reader.feed_eof()  # the reading loop ends after the request in hand
        if self._tasks:
            _, late = await asyncio.wait(list(self._tasks), timeout=3)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(3):
                await asyncio.gather(*(conn.closed.wait() for conn in self.connections))
        for conn in list(self.connections):
            conn.abort()
        await self.store.close()
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1):
                    await self._server.wait_closed()
        self._closed.set()
        log.info("stopped")

    async def __aenter__(self) -> TonkServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def door_seat(self, conn: Connection, table_id: int, *, left: bool) -> None:
        """A player who came in through the SSH door sat (or sat again) at a table, or left
        it: kept so that their next session takes the seat back (the key is their proof)."""
        if conn.door_name is None:
            return
        seat = st.SavedDoorSeat(table_id, left, time.time())
        written = self.store.write([self.door_names.remember_seat(conn.door_name, seat)])
        written.add_done_callback(_log_failed_write)

    def forget_table(self, table: HostedTable) -> None:
        """A table that is over and has nobody at it leaves the lobby (not the database)."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
            self.lobby.changed(table.id)
            if table.task is not None and table.task is not asyncio.current_task():
                table.task.cancel()

    async def open_rematch(self, table: Table, answer: Connection | None) -> None:
        await open_rematch(self, table, answer)

    def open_tables(self, address: str | None = None) -> int:
        """Tables waiting or playing; with `address`, only those created from it (kept
        counted as tables change, not counted again on every request)."""
        return self.lobby.open_tables(address)

    def _storage_changed(self, reason: str | None) -> None:
        """The store met a storage fault (`reason`), or it is over (None): every open table
        is paused, or carries on; each is told once (the store logged it once)."""
        if reason is not None:
            self.storage_fault = reason
            for table in list(self.tables.values()):
                table.store.pause(reason)
            return
        self.storage_fault = None
        for table in list(self.tables.values()):
            table.unpause()

    def require_storage(self) -> None:
        """Refuse at once a request that must be saved while the database cannot be written
        (it would wait for the fault to end)."""
        if self.storage_fault is not None:
            raise RequestError(
                p.STORAGE_ERROR,
                f"the server cannot save anything now ({self.storage_fault}); nothing was "
                "changed: try again when play carries on",
            )

    # -- time the server lost -------------------------------------------------------------------

    async def _watch_clock(self) -> None:
        while True:
            await asyncio.sleep(CLOCK_TICK)
            self.catch_up()

    def catch_up(self, now: float | None = None) -> None:
        """Called before anything is decided by the clock (timers, idle checks, the rate
        limit): if the server has not run for a while, the time it lost is nobody's. Every
        deadline moves on by as much (turn timers, grace periods, idle and handshake timeouts),
        and what the clients sent meanwhile is judged by when it arrived, not by when it is
        read."""
        stall = self.time.look(asyncio.get_running_loop().time() if now is None else now)
        if stall is not None:
            since, lost = stall
            for table in list(self.tables.values()):
                table.shift(lost)
            for conn in list(self.connections):
                conn.stalled(since, lost)

    @property
    def stalls(self) -> int:
        return self.time.stalls

    @property
    def lost(self) -> float:
        """Seconds the server lost to stalls, in all."""
        return self.time.lost

    # -- connections --------------------------------------------------------------------------

    async def open_door_link(
        self, name: str, address: str, door: str, *, player: bool = True
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection for a player a door has identified (by key, or by browser): the
        client's end of a socket pair whose server end is served like any connection, except
        that its hello may use `name` even though that name is claimed, and it counts against
        `address` (the SSH client's, the browser's) in the per-address limits, and the log
        names it by `door` (`127.0.0.1 (web door)`). `player`
        False: a door's watcher (the web door's television page), who holds no seat through
        the door, and whose hello may say `name` whoever has claimed it (a watcher needs no
        name of its own: no player's claim can stop the television page)."""
        ours, theirs = socket.socketpair()
        try:
            reader, writer = await asyncio.open_connection(sock=ours)
        except BaseException:
            ours.close()
            theirs.close()
            raise
        task = asyncio.create_task(
            self._on_connect(
                reader,
                writer,
                door_name=name if player else None,
                watcher_name=None if player else name,
                address=address,
                door=door,
            ),
            name=f"door-link-{name}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            return await asyncio.open_connection(sock=theirs)
        except BaseException:
            theirs.close()
            raise

    async def _on_connect(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        door_name: str | None = None,
        watcher_name: str | None = None,
        address: str | None = None,
        door: str = "",
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        limits = self.config.limits
        conn = Connection(
            reader,
            writer,
            number=self._next_conn,
            link=ln.ServerLink(
                server=SERVER_NAME,
                limits=self._welcome_limits,
                dev=self.config.dev,
                check_name=self._name_checker(door_name, watcher_name),
            ),
            places=self.seating.places,
            max_queue=limits.queue,
            rate=limits.messages_per_second,
            burst=limits.burst,
            max_frame=limits.max_frame,
            max_bytes=limits.queue_bytes,
            page_rate=limits.pages_per_second,
            page_burst=limits.page_burst,
        )
        self._next_conn += 1
        if address is not None:
            conn.address, conn.peer = address, f"{address} ({door})"
        conn.door_name = door_name
        try:
            if self._closing:
                conn.close(goodbye("the server is shutting down"))
                return
            if len(self.connections) >= limits.max_connections:
                conn.error(p.TOO_MANY_CONNECTIONS, "the server has too many connections")
                return
            if self._per_address.get(conn.address, 0) >= limits.max_per_address:
                conn.error(p.TOO_MANY_CONNECTIONS, "too many connections from your address")
                return
            self.connections.add(conn)
            self._per_address[conn.address] = self._per_address.get(conn.address, 0) + 1
            log.info("connection #%d from %s", conn.number, conn.peer)
            with contextlib.suppress(asyncio.CancelledError):
                await conn.serve(
                    self.requests.handle, self.read_time, self.lobby.follow, self.lobby.welcome
                )
        finally:
            self._tasks.discard(task)
            if conn in self.connections:
                await self._lost(conn)
            await conn.linger()
            await conn.closed.wait()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            unlink_transport(writer)

    def read_time(self) -> float:
        """The time a client's message is read: the loop's, once the time the server lost (if
        it did) is caught up."""
        now = asyncio.get_running_loop().time()
        if self.time.late(now):
            self.catch_up(now)
        return now

    async def _lost(self, conn: Connection) -> None:
        self.connections.discard(conn)
        self.trimmer.closed(asyncio.get_running_loop().time())
        self.lobby.members.discard(conn)
        count = self._per_address.get(conn.address, 1) - 1
        if count > 0:
            self._per_address[conn.address] = count
        else:
            self._per_address.pop(conn.address, None)
        table = self.seating.table_of(conn)
        if table is not None and not self._closing:
            try:
                await table.detach(conn, leaving=False)
            except Exception:
                log.exception("table %d: error detaching connection #%d", table.id, conn.number)
        if not conn.closing:
            conn.close()
        log.info("connection #%d closed (%s)", conn.number, conn.name or "no name")

    async def _housekeep(self) -> None:
        """Handshake deadlines, heartbeats and idle timeouts, checked a few times a second; the
        memory of a crowd of connections gone given back."""
        limits = self.config.limits
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(housekeeping_tick(limits))
            self.catch_up()
            now = loop.time()
            check_deadlines(list(self.connections), limits, now)
            if self.trimmer.due(now):
                self.trimmer.trim()

    # -- requests -----------------------------------------------------------------------------

    def _name_checker(
        self, door_name: str | None, watcher_name: str | None
    ) -> Callable[[str], str | None]:
        """How a connection's hello name is checked: as anyone's, or as a door's player's
        (who may say their claimed name), or as a door's watcher's (who may say the name it
        was opened with, claimed or not)."""
        if watcher_name is not None:
            return lambda name: None if name == watcher_name else self._check_name(name)
        if door_name is not None:
            return lambda name: self._check_name(name, door_name)
        return self._check_plain_name

    def _check_name(self, name: str, door_name: str | None = None) -> str | None:
        """Why `name` may not be said in hello (None: it may), by the server's limits and the
        names claimed at the SSH door (the door's own connection for that player may)."""
        limit = self.config.limits.max_name
        if not p.is_printable_text(name) or len(name) > limit:
            return f"a name is printable text of 1 to {limit} characters"
        claim = self.door_names.owner(name)
        if claim is not None and door_name != claim.name:
            door = "web page from their browser" if claim.by_browser else "SSH door with their key"
            return (
                f"the name {claim.name} belongs to a player who comes in through this server's "
                f"{door}: choose another name"
            )
        return None

    def new_table_id(self) -> int:
        table_id = self._next_table
        self._next_table += 1
        return table_id

    def add_table(self, table: Table, *, listed: bool = True) -> None:
        """A table just created: counted among the open tables at once, and running; in the
        lobby's next change at once, or (`listed=False`) once its creator has sat down, so that
        the lobby never shows it empty in between."""
        self.tables[table.id] = table
        if listed:
            self.lobby.changed(table.id)
        table.begin()


def goodbye(message: str) -> m.Goodbye:
    """What every connection is sent when the server stops: the reason as a code (the only
    one is `server_shutting_down`), and words for a person."""
    return m.Goodbye(p.SERVER_SHUTTING_DOWN, message)


def _log_failed_write(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a door seat was not saved: %s", future.exception())
