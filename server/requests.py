"""The requests of a connection in the lobby or at a table (after the handshake, which is
tonk.shared.wire.link's): answered here, or handed to the table they are for."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeAlias, TypeVar, get_args

from tonk.shared.game.session import creators_stake
from tonk.shared.game.words import amount_text
from tonk.shared.wire import link as ln
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.handlers import Handlers

from . import coach
from .connection import Connection
from .errors import RequestError
from .store import history
from .store import store as st
from .store.standings import BadPeriod, StandingsReader, period_of
from .tables.host import TableHost
from .tables.lobby import Lobby
from .tables.seating import Seating
from .tables.table import CLOSED, FINISHED, Table
from .tables.table_options import given, table_config

log = logging.getLogger("tonk.server")


class RequestHost(TableHost, Protocol):
    """What requests ask of the server (TonkServer is one)."""

    @property
    def tables(self) -> Mapping[int, Table]: ...

    @property
    def seating(self) -> Seating[Table]: ...

    @property
    def lobby(self) -> Lobby: ...

    def require_storage(self) -> None: ...

    def open_tables(self, address: str | None = None) -> int: ...

    def new_table_id(self) -> int: ...

    def add_table(self, table: Table, *, listed: bool = True) -> None: ...

    @property
    def standings(self) -> StandingsReader: ...


_M = TypeVar("_M", bound=m.ClientMessage)
#: A handler: a method of Requests that answers its message, or refuses it with RequestError;
#: what it gives is awaited.
Handler: TypeAlias = Callable[["Requests", Connection, _M], Awaitable[None]]

#: The handler of each request (the methods of Requests marked `@handles`).
HANDLERS: Handlers[m.ClientMessage, Handler[Any]] = Handlers("handlers")


def handles(*kinds: type[_M]) -> Callable[[Handler[_M]], Handler[_M]]:
    """Mark a method of Requests the handler of the messages of `kinds` (one handler each;
    the method's message is of those kinds, as mypy checks)."""

    def mark(handler: Handler[_M]) -> Handler[_M]:
        HANDLERS.add(kinds, handler)
        return handler

    return mark


class Requests:
    """Every request of a welcomed connection but hello, ping, pong and bye (the link's):
    each message type has its handler, a method marked `@handles`."""

    def __init__(self, host: RequestHost) -> None:
        self.host = host
        self.history_readers = asyncio.Semaphore(history.READERS)
        self.coach = coach.Coach(host.config.coach, host.config.coach_in_thread)

    def _table(self, table_id: int, returning: bool = False, watching: bool = False) -> Table:
        """The open table `table_id`; `returning` (taking a seat back): a finished one too
        while its rematch offer waits for its players; `watching`: any finished one the
        lobby lists (somebody is still at it)."""
        table = self.host.tables.get(table_id)
        if (
            table is None
            or table.state == CLOSED
            or (table.state == FINISHED and not watching and not (returning and table.returnable()))
        ):
            raise RequestError(p.NO_SUCH_TABLE, f"there is no open table {table_id}")
        return table

    def _in_lobby(self, conn: Connection) -> None:
        if self.host.seating.table_of(conn) is not None:
            raise RequestError(p.ALREADY_AT_TABLE, "you are at a table already: leave it first")

    def _at_table(self, conn: Connection) -> Table:
        table = self.host.seating.table_of(conn)
        if table is None:
            raise RequestError(p.NOT_AT_TABLE, "you are not at a table")
        return table

    def _at(self, conn: Connection, table_id: int) -> Table:
        """The table `table_id`, which the connection is at (seated or watching)."""
        table = self.host.seating.table_of(conn)
        if table is None or table.id != table_id:
            raise RequestError(p.NOT_AT_TABLE, f"you are not at table {table_id}", "table")
        return table

    async def handle(
        self, conn: Connection, message: m.ClientMessage, reply_to: int | None
    ) -> None:
        """Answer `message` (its `id`: `reply_to`) with its handler (`@handles`), or hand it
        to the table it is for; a refusal (RequestError), or a failure, is answered with an
        error."""
        conn.request_id = reply_to
        try:
            handler = HANDLERS.get(type(message))
            if handler is None:  # pragma: no cover - the link answers every other type
                raise RequestError(p.INTERNAL_ERROR, f"no handler for {message.TYPE}")
            await handler(self, conn, message)
        except RequestError as exc:
            conn.error(exc.code, exc.message, reply_to=reply_to, detail=exc.detail)
        except Exception:
            log.exception("connection #%d: error handling %s", conn.number, message.TYPE)
            conn.error(p.INTERNAL_ERROR, "the server failed to do that", reply_to=reply_to)
        finally:
            conn.request_id = None

    # -- the handlers: each answers its messages; RequestError if refused ---------------------

    @handles(*get_args(m.ActionRequest))
    def _action(self, conn: Connection, message: m.ActionRequest) -> Awaitable[None]:
        # The table's coroutine, handed on: one coroutine fewer on every action.
        return self._at_table(conn).play.act(conn, message)

    @handles(m.ListTables)
    async def _list_tables(self, conn: Connection, message: m.ListTables) -> None:
        await self.host.lobby.pace(conn)
        after = message.after or 0
        limit = p.PAGE_SIZE if message.limit is None else message.limit
        conn.send_frame(self.host.lobby.page(after, limit, conn.request_id))

    @handles(m.CreateTable)
    async def _create(self, conn: Connection, message: m.CreateTable) -> None:
        self._in_lobby(conn)
        self.host.require_storage()
        await self._create_table(conn, message)

    @handles(m.Sit)
    async def _sit(self, conn: Connection, message: m.Sit) -> None:
        self._in_lobby(conn)
        self.host.require_storage()
        await self._table(message.table).seats.sit(conn, given(message.seat), message.stake)

    @handles(m.Resume)
    async def _resume(self, conn: Connection, message: m.Resume) -> None:
        # Resuming the seat this connection holds sends the whole view again (a client that
        # missed an update does this); the table checks the token is that seat's.
        at = self.host.seating.table_of(conn)
        if at is None or at.id != message.table or self.host.seating.seat_of(conn) is None:
            self._in_lobby(conn)
        await self._table(message.table, returning=True).seats.resume(conn, message.token)

    @handles(m.Watch)
    async def _watch(self, conn: Connection, message: m.Watch) -> None:
        # Likewise watching again the table this connection watches.
        at = self.host.seating.table_of(conn)
        if at is None or at.id != message.table or self.host.seating.seat_of(conn) is not None:
            self._in_lobby(conn)
        await self._table(message.table, watching=True).seats.watch(conn)

    @handles(m.Leave)
    async def _leave(self, conn: Connection, message: m.Leave) -> None:
        table = self._at_table(conn)
        seated = self.host.seating.seat_of(conn) is not None
        await table.detach(conn, leaving=True)
        if seated:
            self.host.door_seat(conn, table.id, left=True)
        conn.reply(m.Left(table.id))

    @handles(m.AddBot)
    async def _add_bot(self, conn: Connection, message: m.AddBot) -> None:
        self.host.require_storage()
        strategy = message.strategy or "easy"
        seat = given(message.seat)
        await self._at_table(conn).seats.add_bot(conn, strategy, seat, message.stake)

    @handles(m.RemoveBot)
    async def _remove_bot(self, conn: Connection, message: m.RemoveBot) -> None:
        self.host.require_storage()
        await self._at_table(conn).seats.remove_bot(conn, message.seat)

    @handles(m.Start)
    async def _start(self, conn: Connection, message: m.Start) -> None:
        self.host.require_storage()
        await self._at_table(conn).seats.start(conn)

    @handles(m.Chat)
    async def _chat(self, conn: Connection, message: m.Chat) -> None:
        await self._at_table(conn).seats.chat(conn, message.text)

    @handles(m.DealValue)
    async def _deal_value(self, conn: Connection, message: m.DealValue) -> None:
        self._at(conn, message.table).play.take_value(conn, message)

    @handles(m.Back)
    async def _back(self, conn: Connection, message: m.Back) -> None:
        await self._at_table(conn).seats.back(conn)

    @handles(m.History)
    async def _history(self, conn: Connection, message: m.History) -> None:
        table = self._at(conn, message.table)
        limit = p.HISTORY_PAGE if message.limit is None else message.limit
        conn.send(
            await history.history_page(
                self.history_readers,
                self.host.store.path,
                table.id,
                table.config.unit,
                message.before,
                limit,
                conn.request_id,
            )
        )

    @handles(m.HistoryHand)
    async def _history_hand(self, conn: Connection, message: m.HistoryHand) -> None:
        table = self._at(conn, message.table)
        # As the player seated here saw the hand, if they sat in it; a spectator (who could
        # give any name) as a spectator saw it.
        seated = self.host.seating.seat_of(conn) is not None
        conn.send(
            await history.history_hand(
                self.history_readers,
                self.host.store.path,
                table.id,
                message.hand,
                conn.name if seated else None,
                message.start or 0,
                conn.request_id,
            )
        )

    @handles(m.CoachRequest)
    async def _coach(self, conn: Connection, message: m.CoachRequest) -> None:
        table = self._at(conn, message.table)
        seat = self.host.seating.seat_of(conn)
        conn.send(
            await coach.answer(
                self.coach,
                self.history_readers,
                self.host.store.path,
                table,
                seat,
                conn.name,
                message,
                conn.request_id,
            )
        )

    @handles(m.Rematch)
    async def _rematch(self, conn: Connection, message: m.Rematch) -> None:
        self.host.require_storage()
        await self._at_table(conn).rematch.answer(conn, message.answer)

    @handles(m.PlayForNow)
    async def _play_for_now(self, conn: Connection, message: m.PlayForNow) -> None:
        await self._at_table(conn).away.play_for_now(conn, message.seat)

    @handles(m.TakeBotSeat)
    async def _take_bot_seat(self, conn: Connection, message: m.TakeBotSeat) -> None:
        # From the lobby, or watching that same table.
        at = self.host.seating.table_of(conn)
        if at is None or at.id != message.table or self.host.seating.seat_of(conn) is not None:
            self._in_lobby(conn)
        self.host.require_storage()
        await self._table(message.table).away.take_bot_seat(conn, message.seat)

    @handles(m.SeatToBot)
    async def _seat_to_bot(self, conn: Connection, message: m.SeatToBot) -> None:
        self.host.require_storage()
        await self._at_table(conn).away.seat_to_bot(conn, message.seat)

    @handles(m.StandingsRequest)
    async def _standings(self, conn: Connection, message: m.StandingsRequest) -> None:
        """The standings across nights, in the lobby or at a table (read off the loop)."""
        try:
            period = period_of(message.period)
        except BadPeriod as exc:
            raise RequestError(p.BAD_VALUE, str(exc), "period") from None
        try:
            answer = await self.host.standings.read(period)
        except sqlite3.Error as exc:
            log.error("standings: the database could not be read: %s", exc)
            raise RequestError(
                p.STORAGE_ERROR, "the server could not read the standings just now; try again"
            ) from None
        conn.reply(answer)

    async def _create_table(self, conn: Connection, message: m.CreateTable) -> None:
        name = message.name.strip()
        limit = self.host.config.limits.max_table_name
        if not p.is_printable_text(name) or len(name) > limit:
            raise RequestError(
                p.BAD_TABLE, f"name: a table name is printable, 1 to {limit} characters", "name"
            )
        config = table_config(self.host.config, message)
        if self.host.open_tables() >= self.host.config.limits.max_tables:
            raise RequestError(p.TOO_MANY_TABLES, "the server has as many tables as it allows")
        if self.host.open_tables(conn.address) >= self.host.config.limits.max_tables_per_address:
            raise RequestError(
                p.TOO_MANY_TABLES, "your address has opened as many tables as the server allows"
            )
        table_id = self.host.new_table_id()
        created = time.time()
        try:
            await self.host.store.write(
                [st.insert_table(table_id, name, config.to_dict(), created, None)]
            )
        except st.StoreError:
            raise RequestError(p.STORAGE_ERROR, "the server could not save the table") from None
        table = Table(self.host, table_id, name, config, created)
        table.creator_address = conn.address
        sits = message.sit is not False
        self.host.add_table(table, listed=not sits)
        log.info(
            "table %d created by %s: %r, %s, %d seats, stake %s",
            table_id,
            conn.name,
            name,
            config.rules.name,
            config.seats,
            amount_text(config.stake, config.unit),
        )
        if sits:
            try:
                await table.seats.sit(conn, 0, creators_stake(config.rules, message.stake))
            except BaseException:
                table.broadcast_table()  # listed as it is, the creator refused a seat
                raise
        else:
            conn.reply(m.TableMessage(table.summary()))


#: Every message a client may send has one handler: here, or the link's (TypeError at import).
HANDLERS.check(m.CLIENT_TYPES.values(), elsewhere=ln.LINK_MESSAGES)
