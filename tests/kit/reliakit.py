"""Helpers for the reliability tests: the real `tonk-server` as a subprocess that can be killed,
a bot table that keeps playing while a test misbehaves, and an exact audit of a table's ledger
against the database and the hand records in it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netclient import NetClient, ServerClosed
from termkit import loopback_args
from tonk.server.app import TonkServer
from tonk.server.commands import audit
from tonk.shared.wire import protocol as p


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def server_command() -> list[str]:
    script = shutil.which("tonk-server")
    return [script] if script else [sys.executable, "-m", "tonk.server"]


def fast_server_args(db: Path, port: int = 0) -> list[str]:
    """`tonk-server` on 127.0.0.1 (`port` 0: a free one) with the database `db`, dealing the
    next hand and moving its bots at once, watched or not."""
    return [
        *server_command(),
        *loopback_args(db, port),
        "--next-hand-delay",
        "0",
        "--bot-pause",
        "0",
        "--watched-pace",
        "0",
    ]


@dataclass
class ServerProcess:
    """A running `tonk-server`; `kill()` is SIGKILL: no goodbye, no last write."""

    proc: asyncio.subprocess.Process
    port: int
    stderr: list[str] = field(default_factory=list)

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()

    async def wait(self) -> int:
        return await self.proc.wait()


@contextlib.asynccontextmanager
async def server_process(
    db: Path, *extra: str, port: int = 0, dev: bool = True
) -> AsyncIterator[ServerProcess]:
    """`tonk-server` on 127.0.0.1 with `db`, fast bots and deals; killed at the end if still
    running."""
    args = [
        *fast_server_args(db, port),
        # Test clients play as fast as they can: far above a person's rate.
        "--limit",
        "messages_per_second=10000",
        "--limit",
        "burst=10000",
        *(["--dev"] if dev else []),
        *extra,
    ]
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    server = ServerProcess(proc, 0)

    async def drain_stderr() -> None:
        assert proc.stderr is not None
        async for line in proc.stderr:
            server.stderr.append(line.decode(errors="replace"))

    reading = asyncio.create_task(drain_stderr())
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        assert line.startswith("tonk-server listening on 127.0.0.1:"), (line, server.stderr)
        server.port = int(line.strip().rsplit(":", 1)[1])
        yield server
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
        await proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(reading, 5)


# -- the ledger, audited ----------------------------------------------------------------------


def ledger_problems(
    db: Path, table: int, hand_ends: list[dict[str, Any]] | None = None
) -> list[str]:
    """Everything wrong with a table's ledger in `db` (what `tonk-server audit` checks: the
    balances against the payments, each settled hand replayed against its settlement), and
    `hand_end` messages (as a client received them) that disagree with what was stored."""
    with audit.read_only(db) as conn:  # one snapshot: the server may commit between SELECTs
        out = audit.table_problems(conn, table)
        payments: dict[int, list[list[Any]]] = {}
        for hand, payer, payee, amount in conn.execute(
            "SELECT hand, payer, payee, amount FROM payments WHERE table_id = ? ORDER BY rowid",
            (table,),
        ):
            payments.setdefault(hand, []).append([payer, payee, amount])
    for message in hand_ends or []:
        number = message["hand"]
        if [list(x) for x in message["payments"]] != payments.get(number, []):
            out.append(f"hand_end {number}: payments {message['payments']} not as stored")
        upto: dict[str, int] = {}
        for n in sorted(payments):
            if n > number:
                break
            for payer, payee, amount in payments[n]:
                upto[payer] = upto.get(payer, 0) - amount
                upto[payee] = upto.get(payee, 0) + amount
        told = {k: v for k, v in message["balances"].items() if v}
        if told != {k: v for k, v in upto.items() if v}:
            out.append(f"hand_end {number}: balances {message['balances']} != stored {upto}")
    return out


# -- two players, one action at a time -------------------------------------------------------


def hand_events(client: NetClient, hand: int) -> list[dict[str, Any]]:
    """The events of `hand` as `client` pieced them together from its updates (checking the
    numbering: each update starts where the last one ended, or at 0 for a full resend)."""
    events: list[dict[str, Any]] = []
    for message in client.received:
        if message["type"] != p.UPDATE or message["hand"] != hand:
            continue
        if message["from"] == 0:
            events = list(message["events"])
        else:
            assert message["from"] == len(events), (message["from"], len(events))
            events.extend(message["events"])
        assert message["view"]["event_count"] == len(events)
    return events


def last_view(client: NetClient) -> dict[str, Any]:
    return next(m for m in reversed(client.received) if m["type"] == p.UPDATE)["view"]


async def act_once(players: list[NetClient]) -> dict[str, Any]:
    """The player whose turn it is plays one action (never a drop); returns once every player
    has the update showing it: the acknowledgement."""
    count = last_view(players[0])["event_count"]
    assert all(last_view(c)["event_count"] == count for c in players)
    actors = [c for c in players if c.view_fresh and c.seat_view().my_turn]
    assert len(actors) == 1, "exactly one player's turn"
    assert await actors[0].play_turn_if_mine()
    for client in players:
        await client.expect(p.UPDATE, lambda m: m["view"]["event_count"] > count)
    return last_view(actors[0])


async def take_seats_back(
    port: int, table: int, before: list[NetClient]
) -> tuple[list[NetClient], list[dict[str, Any]]]:
    """New connections resume each seat with its token; returns them and their full views."""
    again = []
    fulls = []
    for old in before:
        assert old.name is not None and old.token is not None
        client = await NetClient.connect(port, old.name)
        seated = await client.request(
            {"type": "resume", "table": table, "token": old.token}, p.SEATED
        )
        assert seated["seat"] == old.seat
        fulls.append(await client.expect(p.UPDATE))
        client.token, client.seat = old.token, old.seat
        client.received = [*old.received, *client.received]  # one history per seat
        again.append(client)
    return again, fulls


# -- a table that keeps playing ---------------------------------------------------------------


class LiveClient(NetClient):
    """A client that answers the server's pings at once and, once `pump()`ed, reads all the
    time in the background (so heartbeats and short idle timeouts never drop it)."""

    pumping: asyncio.Task[None] | None = None

    def _note(self, message: dict[str, Any]) -> None:
        super()._note(message)
        if message["type"] == p.PING:
            pong: dict[str, Any] = {"type": p.PONG}
            if "n" in message:
                pong["n"] = message["n"]
            self.writer.write(p.encode(pong))

    def pump(self) -> None:
        async def read_forever() -> None:
            with contextlib.suppress(ServerClosed, ConnectionError, OSError):
                while True:
                    await self._read_more(3600)

        self.pumping = asyncio.create_task(read_forever())

    async def unpump(self) -> None:
        if self.pumping is not None:
            self.pumping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.pumping
            self.pumping = None


@dataclass
class PlayingTable:
    table: int
    watcher: NetClient
    host: NetClient


async def start_playing_table(
    port: int, name: str = "busy", seed: int = 1, live: bool = False
) -> PlayingTable:
    """A table of two bots and a host whose seat is played for it (it left), watched. A
    `live` watcher answers pings and reads in the background from then on."""
    host = await NetClient.connect(port, f"Host-{name}")
    table = await host.create_table(None, "sharp", name=name, seats=3, seed=seed)
    await host.request({"type": "leave"}, p.LEFT)
    watcher = await (LiveClient if live else NetClient).connect(port, f"Watcher-{name}")
    await watcher.request({"type": "watch", "table": table}, p.WATCHING)
    await watcher.expect(p.HAND_END, timeout=20)
    if isinstance(watcher, LiveClient):
        watcher.pump()
    return PlayingTable(table, watcher, host)


def last_hand_end(client: NetClient) -> int:
    return max((m["hand"] for m in client.received if m["type"] == p.HAND_END), default=0)


async def check_still_playing(
    playing: PlayingTable, db: Path, hands: int = 2, since: int | None = None
) -> None:
    """The table played `hands` more hands (after hand `since`, by default the last one its
    watcher saw), its watcher got no error, and its ledger is exact."""
    watcher = playing.watcher
    before = last_hand_end(watcher) if since is None else since
    if isinstance(watcher, LiveClient) and watcher.pumping is not None:
        await wait_until(lambda: last_hand_end(watcher) >= before + hands, "more hands", 30)
        await watcher.unpump()
    else:
        await watcher.expect(p.HAND_END, lambda m: m["hand"] >= before + hands, timeout=30)
    assert not [m for m in watcher.received if m["type"] == p.ERROR]
    hand_ends = [m for m in watcher.received if m["type"] == p.HAND_END]
    assert ledger_problems(db, playing.table, hand_ends) == []


@contextlib.asynccontextmanager
async def table_keeps_playing(server: TonkServer, hands: int = 2) -> AsyncIterator[PlayingTable]:
    """Around a test's misbehaviour: a bot table plays before, during and `hands` after it,
    with an exact ledger."""
    playing = await start_playing_table(server.port, live=True)
    yield playing
    await check_still_playing(playing, server.config.db_path, hands)


async def wait_until(predicate: Any, what: str, limit: float = 20.0) -> None:
    """Poll `predicate()` until true; the limit only stops a hung test."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + limit
    while not predicate():
        if loop.time() > give_up:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.01)
