"""A small protocol client for tests (server and client alike): real TCP, real frames.

async with start_server(tmp_path) as server:
    alice = await NetClient.connect(server.port, "Alice")
    await alice.send({"type": "create_table", "name": "t"})
    seated = await alice.expect("seated")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tonk.server.app import Limits, ServerConfig, TonkServer
from tonk.shared.game.view import SeatView
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request

TIMEOUT = 10.0
#: The answers that carry the `reply_to` of the request they answer.
ANSWERS = frozenset({p.SEATED, p.WATCHING, p.LEFT, p.TABLES, p.REMATCH_STATUS})
_request_ids = itertools.count(1_000_000)


def test_config(tmp_path: Path, **overrides: Any) -> ServerConfig:
    """A config for a loopback test server: free port, a db in tmp_path, fast bots."""
    limits = overrides.pop("limits", None) or Limits()
    limit_changes = {
        "messages_per_second": 10_000.0,
        "burst": 10_000.0,
        "pages_per_second": 10_000.0,
        "page_burst": 10_000.0,
    }
    limit_changes.update(overrides.pop("limit_changes", {}))
    base = ServerConfig(
        host="127.0.0.1",
        port=0,
        db_path=tmp_path / "tonk.db",
        dev=True,
        limits=replace(limits, **limit_changes),
        grace=120.0,
        bot_pause=0.0,
        next_hand_delay=0.0,
        # (no wait for the players' values before a deal: these clients send none; a test of
        # the deal anyone can check sets one)
        deal_wait=0.0,
        watched_pace=0.0,
    )
    for key, value in overrides.items():
        setattr(base, key, value)
    return base


@contextlib.asynccontextmanager
async def start_server(tmp_path: Path, **overrides: Any) -> AsyncIterator[TonkServer]:
    server = TonkServer(test_config(tmp_path, **overrides))
    await server.start()
    try:
        yield server
    finally:
        await server.close()


class ServerClosed(Exception):
    """The server closed the connection while a message was awaited."""


class NetClient:
    """One connection. Every message received is kept in `received` (in order)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
        self.received: list[dict[str, Any]] = []
        self.frames: list[bytes] = []  # every raw frame payload, for leak checks
        self._pending: list[dict[str, Any]] = []
        self.eof = False
        self.name: str | None = None
        self.token: str | None = None
        self.seat: int | None = None
        self.table: int | None = None
        self.view: dict[str, Any] | None = None
        self.view_fresh = False  # no action sent since `view` arrived

    @classmethod
    async def connect(
        cls, port: int, name: str | None = None, *, host: str = "127.0.0.1"
    ) -> NetClient:
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        if name is not None:
            await client.hello(name)
        return client

    async def hello(self, name: str, version: int = p.PROTOCOL_VERSION) -> dict[str, Any]:
        await self.send({"type": p.HELLO, "version": version, "name": name})
        welcome = await self.expect(p.WELCOME)
        self.name = welcome["name"]
        return welcome

    async def send(self, message: dict[str, Any]) -> None:
        self.writer.write(p.encode(message, p.MAX_SERVER_FRAME))
        await self.writer.drain()

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def _read_more(self, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            data = await self.reader.read(65536)
        if not data:
            self.eof = True
            raise ServerClosed("the server closed the connection")
        self.decoder.feed(data)
        for message in self.decoder.messages():
            self._note(message)
            self.received.append(message)
            self._pending.append(message)

    def _note(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == p.SEATED:
            self.token, self.seat, self.table = message["token"], message["seat"], message["table"]
        elif kind == p.WATCHING:
            self.table, self.seat = message["table"], None
        elif kind == p.UPDATE:
            self.view = message["view"]
            self.view_fresh = True
        elif kind == p.TABLE and self.token is not None:
            # seats are renumbered at the start: follow our name
            for player in message["table"]["players"]:
                if player["name"] == self.name and player["kind"] == "human":
                    self.seat = player["seat"]

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message not yet taken."""
        while not self._pending:
            await self._read_more(timeout)
        return self._pending.pop(0)

    async def expect(
        self,
        kind: str,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        timeout: float = TIMEOUT,
    ) -> dict[str, Any]:
        """Skip messages until one of `kind` (matching `predicate`) arrives; return it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for i, message in enumerate(self._pending):
                if message["type"] == kind and (predicate is None or predicate(message)):
                    del self._pending[: i + 1]
                    return message
            self._pending.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no {kind} message in {timeout} s")
            await self._read_more(left)

    async def expect_error(self, code: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        error = await self.expect(p.ERROR, timeout=timeout)
        assert error["code"] == code, error
        return error

    async def expect_closed(self, timeout: float = TIMEOUT) -> None:
        """Read (keeping what arrives) until the server closes the connection."""
        with contextlib.suppress(ServerClosed, ConnectionError):
            while True:
                await self._read_more(timeout)
        assert self.eof or self.reader.at_eof()

    async def request(self, message: dict[str, Any], reply: str) -> dict[str, Any]:
        """Send `message` and wait for `reply` (or fail on an error answering it). A reply
        that carries `reply_to` must answer this message (the request is given an `id`): a
        `tables` the lobby sent by itself is not the answer to a `list_tables`."""
        if reply in ANSWERS and "id" not in message:
            message = {**message, "id": next(_request_ids)}
        wanted = message.get("id") if reply in ANSWERS else None
        await self.send(message)
        while True:
            answer = await self.recv()
            if answer["type"] == reply and (wanted is None or answer.get("reply_to") == wanted):
                return answer
            if answer["type"] == p.ERROR:
                raise AssertionError(f"{message['type']} refused: {answer}")

    async def create_table(self, *bots: str | None, **table: Any) -> int:
        """Create the table `table` describes (sitting at it), then add a bot of each strategy
        in `bots` (None: the server's default, sent without a strategy); the table's id."""
        seated = await self.request({"type": p.CREATE_TABLE, **table}, p.SEATED)
        for strategy in bots:
            add: dict[str, Any] = {"type": p.ADD_BOT}
            if strategy is not None:
                add["strategy"] = strategy
            await self.send(add)
        return int(seated["table"])

    def seat_view(self) -> SeatView:
        assert self.view is not None
        return SeatView.from_dict(self.view)

    async def play_turn_if_mine(self) -> bool:
        """If the latest view says it is our turn, play one legal action (never drop). Returns
        whether an action was sent."""
        if self.view is None or not self.view_fresh:
            return False
        view = self.seat_view()
        if not view.my_turn:
            return False
        legal = view.legal()
        actions = legal.actions(view.turn)
        choice = next((a for a in actions if a.kind in ("spread", "hit")), None)
        if choice is None:
            choice = next((a for a in actions if a.kind == "draw_stock"), None)
        if choice is None:
            choice = next(a for a in actions if a.kind != "drop")
        data = action_request(choice).to_wire()
        self.view_fresh = False
        await self.send(data)
        return True

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
            await self.writer.wait_closed()

    async def play_until(
        self, stop: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """Read messages, playing a legal action whenever it is our turn, until one satisfies
        `stop`; return it. Errors from the server fail the test."""
        async with asyncio.timeout(timeout):
            await self.play_turn_if_mine()
            while True:
                message = await self.recv(timeout)
                if message["type"] == p.ERROR:
                    raise AssertionError(f"{self.name}: {message}")
                if stop(message):
                    return message
                if message["type"] == p.UPDATE:
                    await self.play_turn_if_mine()


async def one_hand_table(port: int, name: str = "Kitchen", seats: int = 2) -> int:
    """A table nobody sits at yet for a session of one hand whose every turn is played for
    its player a moment after it comes (the turn timer): it ends with no key pressed. Its id."""
    host = await NetClient.connect(port, "Host")
    try:
        await host.send(
            {
                "type": p.CREATE_TABLE,
                "name": name,
                "seats": seats,
                "hands": 1,
                "turn_timer": 0.2,
                "sit": False,
            }
        )
        return int((await host.expect(p.TABLE))["table"]["id"])
    finally:
        await host.close()


#: Every word that names a card: a rank (`A`, `2` to `10`, `J`, `Q`, `K`) and a suit letter.
CARD_WORDS = frozenset(
    rank + suit
    for rank in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    for suit in "shdc"
)


def cards_in(value: Any) -> set[str]:
    """Every card named anywhere in a decoded message (strings like "10s 8d", at any depth)."""
    found: set[str] = set()
    _add_cards((value,), found)
    return found


def _add_cards(items: Iterable[Any], found: set[str]) -> None:
    """Add the cards named in `items` (and in the dicts' values and lists among them) to
    `found`: one set for the whole walk, not a new one at every level."""
    for item in items:
        if isinstance(item, str):
            for word in item.split():
                if word in CARD_WORDS:
                    found.add(word)
        elif isinstance(item, dict):
            _add_cards(item.values(), found)
        elif isinstance(item, list):
            _add_cards(item, found)
