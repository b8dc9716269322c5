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
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from tonk.shared import protocol as p
from tonk.shared.bots import BOT_STRATEGIES
from tonk.shared.cards import CardError, parse_cards, validate_deck
from tonk.shared.rules import PRESETS, HouseRules, RulesError
from tonk.shared.session import SessionError, check_fixed_dealer, check_players, creators_stake
from tonk.shared.words import plural

from . import store as st
from .connection import Connection
from .door_names import DoorNames
from .lobby import Lobby
from .paths import default_db_path
from .table import CLOSED, FINISHED, RequestError, Table, TableConfig

log = logging.getLogger("tonk.server")

SERVER_NAME = "tonk-server 0.1.0"
#: Seconds between looks at the clock, to notice the server did not run (see `catch_up`).
CLOCK_TICK = 0.1
#: A look at the clock this late means the server lost the time: it was stopped (SIGSTOP, a
#: paused virtual machine, a suspended laptop) or too busy to run.
STALL = 0.5
#: The listening socket's queue is never shorter than this (asyncio's default is 100)...
MIN_BACKLOG = 128
#: ...nor longer than listen() takes (the system caps it further: net.core.somaxconn).
MAX_BACKLOG = 65535


def listen_backlog(max_connections: int) -> int:
    """How many connections the kernel may hold, handshake done, for the server to accept:
    as many as may be connected, so that a crowd arriving at once while the server is busy
    is let in whole instead of dropped (and left to the clients' retries, or reset)."""
    return max(MIN_BACKLOG, min(max_connections, MAX_BACKLOG))


@dataclass(frozen=True, slots=True)
class Limits:
    """What one client may ask of the server (PROTOCOL.md, "Limits")."""

    max_frame: int = p.MAX_CLIENT_FRAME  # bytes a client frame may hold
    max_connections: int = 5000  # connections in all
    max_per_address: int = 64  # connections from one IP address
    max_tables: int = 1000  # open (waiting or playing) tables
    max_tables_per_address: int = 32  # open tables created from one IP address
    messages_per_second: float = 20.0  # sustained rate per connection
    burst: float = 40.0  # messages a connection may send at once
    pages_per_second: float = 2.0  # `tables` pages sent to one connection, sustained
    page_burst: float = 20.0  # `tables` pages sent to one connection at once
    max_name: int = 24  # characters in a player's name
    max_table_name: int = 32  # characters in a table's name
    max_chat: int = 200  # characters in a chat line
    queue: int = 512  # frames waiting to go to one connection before it is dropped
    queue_bytes: int = 2 * 1024 * 1024  # bytes waiting to go to one connection, the same
    handshake_timeout: float = 10.0  # seconds to send hello
    heartbeat: float = 15.0  # seconds of silence before the server pings
    idle_timeout: float = 45.0  # seconds of silence before the server hangs up
    # The SSH door (tonk-server --ssh-port):
    ssh_sessions: int = 50  # SSH connections in all, each with one table session (a process)
    ssh_per_address: int = 8  # SSH connections from one IP address
    ssh_auth_attempts: int = 6  # keys refused on one SSH connection before it is closed
    # seconds from connecting to being let in, and then to asking for a session (ssh -N asks none)
    ssh_login_timeout: float = 30.0
    ssh_idle_timeout: float = 1800.0  # seconds without a key pressed before a session ends

    def to_wire(self, grace: float) -> dict[str, Any]:
        return {
            "max_frame": self.max_frame,
            "max_server_frame": p.MAX_SERVER_FRAME,
            "max_name": self.max_name,
            "max_chat": self.max_chat,
            "max_table_name": self.max_table_name,
            "messages_per_second": self.messages_per_second,
            "burst": self.burst,
            "pages_per_second": self.pages_per_second,
            "page_burst": self.page_burst,
            "heartbeat": self.heartbeat,
            "idle_timeout": self.idle_timeout,
            "grace": grace,
        }

    def with_option(self, text: str) -> Limits:
        """This with one `NAME=VALUE` changed (the `--limit` option)."""
        name, sep, value = text.partition("=")
        kinds = {f.name: f.type for f in fields(self)}
        if not sep or name not in kinds:
            raise ValueError(f"--limit takes NAME=VALUE; the names are {', '.join(kinds)}")
        try:
            number: Any = int(value) if kinds[name] == "int" else float(value)
        except ValueError:
            raise ValueError(f"--limit {name} takes a number, not {value!r}") from None
        if number <= 0:
            raise ValueError(f"--limit {name} must be above 0")
        return replace(self, **{name: number})


@dataclass(slots=True)
class ServerConfig:
    """Everything `tonk-server` can be told. Defaults are a LAN server's."""

    host: str = "0.0.0.0"
    port: int = 7777  # 0: where this database's server listened last, or any free port
    db_path: Path = field(default_factory=default_db_path)
    default_rules: HouseRules = PRESETS["classic"]
    dev: bool = False  # allow fixed seeds and deck orders (never on a real server)
    limits: Limits = field(default_factory=Limits)
    grace: float = 120.0  # seconds a disconnected player keeps their seat before autoplay
    bot_pause: float = 0.8  # default seconds a bot thinks before each action
    next_hand_delay: float = 3.0  # seconds between a hand's end and the next deal
    autoplay_strategy: str = "easy"  # the bot that plays for an absent player
    ledger_hands: int = p.LEDGER_HANDS  # each table's newest settled hands kept in memory
    lobby_interval: float = 0.25  # seconds between two `lobby` messages to a connection
    # Seconds a session in play goes on with none of its players connected (everybody left
    # or lost the link) before it ends; no hand is dealt meanwhile.
    abandoned_after: float = 600.0


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
        self.door_names = DoorNames()  # names claimed over SSH, kept from the TCP side too
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
        self._alive = 0.0  # loop time the server was last seen running
        self._clock: asyncio.Task[None] | None = None
        self.stalls = 0
        self.lost = 0.0  # seconds lost to stalls in all
        self._remembered_port: int | None = None  # the port kept in the database, if any
        #: The worker thread where slow bots decide (`Bot.slow`, see `Table.decide`), off the
        #: event loop. One: under the GIL more threads add no speed, only more threads for the
        #: event loop to wait behind for its turn (measured in BENCHMARKS.md).
        self.thinking = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tonk-bots")

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        # The clock first: the tables restored below look at it from their first step.
        self._alive = loop.time()
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
        if self.port != self._remembered_port:
            try:
                await self.store.write([st.put_setting("port", str(self.port))])
            except st.StoreError as exc:
                log.warning("could not keep the port in the database: %s", exc)
        self._housekeeper = asyncio.create_task(self._housekeep(), name="housekeeping")

    async def _listen(self) -> asyncio.Server:
        """Listen on the configured port; with port 0, on the port this database's server
        listened on last (where its players' clients look for it after a restart), or a free
        one the first time or if that one is taken now."""
        host, port = self.config.host, self.config.port
        backlog = listen_backlog(self.config.limits.max_connections)
        remembered = await asyncio.to_thread(self.store.setting, "port")
        if remembered is not None and remembered.isdigit() and 0 < int(remembered) < 65536:
            self._remembered_port = int(remembered)
            if port == 0:
                try:
                    return await asyncio.start_server(
                        self._on_connect, host, self._remembered_port, backlog=backlog
                    )
                except OSError as exc:
                    log.warning(
                        "port %d, where the server of %s listened before, cannot be used "
                        "(%s): listening on a free port instead; players must be told it",
                        self._remembered_port,
                        self.config.db_path,
                        exc.strerror or exc,
                    )
        return await asyncio.start_server(self._on_connect, host, port, backlog=backlog)

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

    def forget_table(self, table: Table) -> None:
        """A table that is over and has nobody at it leaves the lobby (not the database)."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
            self.lobby.changed(table.id)
            if table.task is not None and table.task is not asyncio.current_task():
                table.task.cancel()

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
                table.pause(reason)
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
        if now is None:
            now = asyncio.get_running_loop().time()
        gap = now - self._alive
        self._alive = now
        if gap <= STALL:
            return
        lost = gap - CLOCK_TICK
        since = now - lost
        self.stalls += 1
        self.lost += lost
        log.log(
            logging.WARNING if lost >= 1.0 else logging.INFO,
            "the server did not run for %.1f s: every deadline moves on by as much",
            lost,
        )
        for table in list(self.tables.values()):
            table.shift(lost)
        for conn in list(self.connections):
            conn.stalled(since, lost)

    # -- connections --------------------------------------------------------------------------

    async def open_door_link(
        self, name: str, address: str
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection for a player the SSH door has identified by key: the client's end of
        a socket pair whose server end is served like any connection, except that its hello
        may use `name` even though that name is claimed, and it counts against `address`
        (the SSH client's) in the per-address limits."""
        ours, theirs = socket.socketpair()
        try:
            reader, writer = await asyncio.open_connection(sock=ours)
        except BaseException:
            ours.close()
            theirs.close()
            raise
        task = asyncio.create_task(
            self._on_connect(reader, writer, door_name=name, address=address),
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
        address: str | None = None,
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        limits = self.config.limits
        conn = Connection(
            reader,
            writer,
            number=self._next_conn,
            max_queue=limits.queue,
            rate=limits.messages_per_second,
            burst=limits.burst,
            max_bytes=limits.queue_bytes,
            page_rate=limits.pages_per_second,
            page_burst=limits.page_burst,
        )
        self._next_conn += 1
        if address is not None:
            conn.address, conn.peer = address, f"{address} (ssh)"
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
                await self._serve(conn)
        finally:
            self._tasks.discard(task)
            if conn in self.connections:
                await self._lost(conn)
            await conn.linger()

    async def _serve(self, conn: Connection) -> None:
        decoder = p.FrameDecoder(self.config.limits.max_frame)
        loop = asyncio.get_running_loop()
        try:
            while not conn.closing:
                data = await conn.reader.read(65536)
                conn.fed += len(data)
                if not data:
                    if decoder.buffered:
                        # The client shut its side inside a frame; it may still read.
                        raise p.ProtocolError(
                            p.BAD_FRAME, "the connection ended in the middle of a frame"
                        )
                    break
                decoder.feed(data)
                for message in decoder.messages():
                    # Only whole messages count as signs of life: a frame trickled in a
                    # byte at a time does not keep a connection open.
                    now = loop.time()
                    if now - self._alive > STALL:
                        self.catch_up(now)
                    conn.last_received = now
                    end = conn.fed - decoder.buffered
                    out_of_range: p.OutOfRange | None = None
                    try:
                        p.validate_client(message)  # ProtocolError (fatal): handled below
                    except p.OutOfRange as exc:
                        out_of_range = exc
                    # Every whole message counts against the rate limit, hello included; the
                    # rate is judged by when each message arrived (after a stall, not when it
                    # could be read).
                    if not conn.take_token(conn.arrival(end, now)):
                        conn.error(
                            p.RATE_LIMITED,
                            "too many messages: the limit is "
                            f"{self.config.limits.messages_per_second:g} a second",
                        )
                        return
                    conn.busy = True
                    try:
                        if out_of_range is None:
                            await self._dispatch(conn, message)
                        else:
                            self._refuse(conn, message, out_of_range)
                    finally:
                        conn.busy = False
                    # Nothing was read from it while the request was handled (a write that
                    # waits for the storage may take long): its silence counts from now.
                    conn.last_received = loop.time()
                    conn.handled = end
                    if conn.is_closing():
                        return
                    if self.lobby.follow(conn):
                        # In the lobby now (welcomed, or left its table): the list, then
                        # its changes.
                        await self.lobby.welcome(conn)
        except p.ProtocolError as exc:
            log.info("connection #%d: %s: %s", conn.number, exc.code, exc.message)
            conn.error(exc.code, exc.message)
        except (ConnectionError, OSError):
            pass

    async def _lost(self, conn: Connection) -> None:
        self.connections.discard(conn)
        self.lobby.members.discard(conn)
        count = self._per_address.get(conn.address, 1) - 1
        if count > 0:
            self._per_address[conn.address] = count
        else:
            self._per_address.pop(conn.address, None)
        table = conn.table
        if table is not None and not self._closing:
            try:
                await table.detach(conn, leaving=False)
            except Exception:
                log.exception("table %d: error detaching connection #%d", table.id, conn.number)
        if not conn.closing:
            conn.close()
        log.info("connection #%d closed (%s)", conn.number, conn.name or "no name")

    async def _housekeep(self) -> None:
        """Handshake deadlines, heartbeats and idle timeouts, checked a few times a second."""
        limits = self.config.limits
        tick = max(0.05, min(1.0, limits.heartbeat / 4, limits.handshake_timeout / 4))
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(tick)
            self.catch_up()
            now = loop.time()
            for conn in list(self.connections):
                if conn.closing or conn.busy:
                    continue
                if not conn.welcomed and now - conn.opened > limits.handshake_timeout:
                    conn.error(p.HANDSHAKE_TIMEOUT, "no hello: the handshake took too long")
                    continue
                silent = now - conn.last_received
                if silent > limits.idle_timeout:
                    log.info("connection #%d: idle for %.0f s", conn.number, silent)
                    conn.error(p.IDLE_TIMEOUT, f"nothing received for {silent:.0f} s")
                elif (
                    conn.welcomed  # never before hello: the handshake timeout governs that
                    and silent > limits.heartbeat
                    and now - conn.last_ping > limits.heartbeat
                ):
                    conn.pings += 1
                    conn.last_ping = now
                    conn.send({"type": p.PING, "n": conn.pings})

    # -- requests -----------------------------------------------------------------------------

    def _refuse(self, conn: Connection, message: dict[str, Any], exc: p.OutOfRange) -> None:
        """A message whose only fault is a value out of its range: a non-fatal error naming
        the field (`detail`) and its range; in the handshake, the handshake's fatal error."""
        kind = message["type"]
        if kind == p.HELLO or not conn.welcomed:
            if kind != p.HELLO or conn.welcomed:
                self._hello_first(conn)
            elif message["version"] != p.PROTOCOL_VERSION:
                # A client of another version is told that first, whatever else is wrong.
                self._version_mismatch(conn, message["version"])
            else:
                conn.error(exc.code, exc.message, detail=exc.field, fatal=True)
            return
        conn.error(exc.code, exc.message, reply_to=p.valid_id(message), detail=exc.field)

    def _hello_first(self, conn: Connection) -> None:
        if conn.welcomed:
            conn.error(p.HELLO_FIRST, "hello was already said")
        else:
            conn.error(p.HELLO_FIRST, "send hello first")

    def _version_mismatch(self, conn: Connection, version: int) -> None:
        age = "an older" if version < p.PROTOCOL_VERSION else "a newer"
        conn.error(
            p.VERSION_MISMATCH,
            f"this server speaks tonk protocol version {p.PROTOCOL_VERSION}, and your client "
            f"speaks version {version}, {age} one: use a client of version "
            f"{p.PROTOCOL_VERSION}",
            version=p.PROTOCOL_VERSION,
        )

    async def _dispatch(self, conn: Connection, message: dict[str, Any]) -> None:
        kind = message["type"]
        reply_to = p.valid_id(message)
        if not conn.welcomed:
            if kind != p.HELLO:
                self._hello_first(conn)
                return
            self._hello(conn, message, reply_to)
            return
        conn.request_id = reply_to
        try:
            await self._request(conn, kind, message, reply_to)
        except RequestError as exc:
            conn.error(exc.code, exc.message, reply_to=reply_to, detail=exc.detail)
        except Exception:
            log.exception("connection #%d: error handling %s", conn.number, kind)
            conn.error(p.INTERNAL_ERROR, "the server failed to do that", reply_to=reply_to)
        finally:
            conn.request_id = None

    def _hello(self, conn: Connection, message: dict[str, Any], reply_to: int | None) -> None:
        version = message["version"]
        if version != p.PROTOCOL_VERSION:
            self._version_mismatch(conn, version)
            return
        name = message["name"].strip()
        limit = self.config.limits.max_name
        if not p.is_printable_text(name) or len(name) > limit:
            conn.error(
                p.BAD_NAME, f"a name is printable text of 1 to {limit} characters", fatal=True
            )
            return
        claim = self.door_names.owner(name)
        if claim is not None and conn.door_name != claim.name:
            conn.error(
                p.BAD_NAME,
                f"the name {claim.name} belongs to a player who comes in through this server's "
                "SSH door with their key: choose another name",
                fatal=True,
            )
            return
        conn.name = name
        conn.welcomed = True
        log.info("connection #%d is %s", conn.number, name)
        welcome = {
            "type": p.WELCOME,
            "version": p.PROTOCOL_VERSION,
            "server": SERVER_NAME,
            "name": name,
            "limits": self.config.limits.to_wire(self.config.grace),
            "dev": self.config.dev,
        }
        if reply_to is not None:
            welcome["reply_to"] = reply_to
        conn.send(welcome)

    def _table(self, table_id: int) -> Table:
        table = self.tables.get(table_id)
        if table is None or table.state in (FINISHED, CLOSED):
            raise RequestError(p.NO_SUCH_TABLE, f"there is no open table {table_id}")
        return table

    def _in_lobby(self, conn: Connection) -> None:
        if conn.table is not None:
            raise RequestError(p.ALREADY_AT_TABLE, "you are at a table already: leave it first")

    def _at_table(self, conn: Connection) -> Table:
        if conn.table is None:
            raise RequestError(p.NOT_AT_TABLE, "you are not at a table")
        return conn.table

    async def _request(
        self, conn: Connection, kind: str, message: dict[str, Any], reply_to: int | None
    ) -> None:
        if kind in p.ACTION_TYPES:
            await self._at_table(conn).act(conn, message)
        elif kind == p.PING:
            conn.reply({"type": p.PONG, **({"n": message["n"]} if "n" in message else {})})
        elif kind == p.PONG:
            pass
        elif kind == p.LIST_TABLES:
            await self.lobby.pace(conn)
            conn.send_frame(
                self.lobby.page(
                    message.get("after", 0), message.get("limit", p.PAGE_SIZE), reply_to
                )
            )
        elif kind == p.CREATE_TABLE:
            self._in_lobby(conn)
            self.require_storage()
            await self._create_table(conn, message)
        elif kind == p.SIT:
            self._in_lobby(conn)
            self.require_storage()
            await self._table(message["table"]).sit(conn, message.get("seat"), message.get("stake"))
        elif kind == p.RESUME:
            # Resuming the seat this connection holds sends the whole view again (a client
            # that missed an update does this); the table checks the token is that seat's.
            if conn.table is None or conn.table.id != message["table"] or conn.seat is None:
                self._in_lobby(conn)
            await self._table(message["table"]).resume(conn, message["token"])
        elif kind == p.WATCH:
            # Likewise watching again the table this connection watches.
            if conn.table is None or conn.table.id != message["table"] or conn.seat is not None:
                self._in_lobby(conn)
            await self._table(message["table"]).watch(conn)
        elif kind == p.LEAVE:
            table = self._at_table(conn)
            seated = conn.seat is not None
            await table.detach(conn, leaving=True)
            if seated:
                self.door_seat(conn, table.id, left=True)
            conn.reply({"type": p.LEFT, "table": table.id})
        elif kind == p.ADD_BOT:
            self.require_storage()
            await self._at_table(conn).add_bot(
                conn, message.get("strategy", "easy"), message.get("seat"), message.get("stake")
            )
        elif kind == p.REMOVE_BOT:
            self.require_storage()
            await self._at_table(conn).remove_bot(conn, message["seat"])
        elif kind == p.START:
            self.require_storage()
            await self._at_table(conn).start(conn)
        elif kind == p.CHAT:
            await self._at_table(conn).chat(conn, message["text"])
        elif kind == p.BACK:
            await self._at_table(conn).back(conn)
        elif kind == p.BYE:
            conn.close()
        elif kind == p.HELLO:
            self._hello_first(conn)
        else:  # pragma: no cover - the validator knows every type
            raise RequestError(p.INTERNAL_ERROR, f"no handler for {kind}")

    def table_config(self, message: dict[str, Any]) -> TableConfig:
        """The table options of a create_table message, checked; RequestError if not allowed."""
        dev_fields = [k for k in ("seed", "deck", "dealer") if k in message]
        if dev_fields and not self.config.dev:
            raise RequestError(
                p.DEV_ONLY,
                f"{', '.join(dev_fields)} may be set only on a server started with --dev",
            )
        raw_rules = message.get("rules")
        try:
            if raw_rules is None:
                rules = self.config.default_rules
            elif "preset" in raw_rules:
                rules = HouseRules.from_dict(raw_rules)
            else:
                rules = self.config.default_rules.with_options(raw_rules)
        except RulesError as exc:
            raise RequestError(p.BAD_RULES, str(exc)) from None
        seats = message.get("seats") or rules.players
        try:
            check_players(rules, seats)
        except SessionError as exc:
            raise RequestError.refused(exc) from None
        unit = message.get("unit", "chips")
        if unit and not p.is_printable_text(unit):
            raise RequestError(p.BAD_TABLE, "unit: the stake's unit must be printable", "unit")
        deck = message.get("deck")
        if deck is not None:
            try:
                validate_deck(parse_cards(deck))
            except CardError as exc:
                raise RequestError(p.BAD_TABLE, f"deck: {exc}", "deck") from None
        dealer = message.get("dealer")
        try:
            check_fixed_dealer(dealer, seats)
        except SessionError as exc:
            raise RequestError.refused(exc) from None
        timer = message.get("turn_timer") or None
        return TableConfig(
            rules=rules,
            stake=message.get("stake", 1),
            unit=unit,
            seats=seats,
            turn_timer=timer,
            hands=message.get("hands"),
            minutes=message.get("minutes") or None,
            bot_pause=message.get("bot_pause", self.config.bot_pause),
            seed=message.get("seed"),
            deck=deck,
            dealer=dealer,
        )

    async def _create_table(self, conn: Connection, message: dict[str, Any]) -> None:
        name = message["name"].strip()
        limit = self.config.limits.max_table_name
        if not p.is_printable_text(name) or len(name) > limit:
            raise RequestError(
                p.BAD_TABLE, f"name: a table name is printable, 1 to {limit} characters", "name"
            )
        config = self.table_config(message)
        if self.open_tables() >= self.config.limits.max_tables:
            raise RequestError(p.TOO_MANY_TABLES, "the server has as many tables as it allows")
        if self.open_tables(conn.address) >= self.config.limits.max_tables_per_address:
            raise RequestError(
                p.TOO_MANY_TABLES, "your address has opened as many tables as the server allows"
            )
        table_id = self._next_table
        self._next_table += 1
        created = time.time()
        try:
            await self.store.write(
                [st.insert_table(table_id, name, config.to_dict(), created, None)]
            )
        except st.StoreError:
            raise RequestError(p.STORAGE_ERROR, "the server could not save the table") from None
        table = Table(self, table_id, name, config, created)
        table.creator_address = conn.address
        self.tables[table_id] = table
        self.lobby.changed(table_id)  # (counted among the open tables at once)
        table.begin()
        log.info(
            "table %d created by %s: %r, %s, %d seats, stake %d %s",
            table_id,
            conn.name,
            name,
            config.rules.name,
            config.seats,
            config.stake,
            config.unit,
        )
        if message.get("sit", True):
            await table.sit(conn, 0, creators_stake(config.rules, message.get("stake")))
        else:
            conn.reply({"type": p.TABLE, "table": table.summary()})


def goodbye(message: str) -> dict[str, Any]:
    """What every connection is sent when the server stops: the reason as a code (the only
    one is `server_shutting_down`), and words for a person."""
    return {"type": p.GOODBYE, "reason": p.SERVER_SHUTTING_DOWN, "message": message}


def _log_failed_write(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a door seat was not saved: %s", future.exception())
