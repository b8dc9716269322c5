"""The load generator's two baselines (bench/load.py, flat out): a bare asyncio + msgpack echo
server, the ceiling for this machine and this Python, and a fan-out server that sends each
action's frames to a table's four connections with no game and no disk, with the clients that
drive them."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from load_driver import drive, quiet_collector, split, summarize

#: The command line that serves the baselines in a process of their own (`echo-server`,
#: `fanout-server`).
LOAD_PY = Path(__file__).resolve().with_name("load.py")

# -- the echo side ------------------------------------------------------------------------------


def take_frames(buffer: bytearray, data: bytes) -> list[Any]:
    """Append `data` to `buffer` and take out every whole frame in it, decoded."""
    buffer += data
    messages = []
    while len(buffer) >= 4:
        size = int.from_bytes(buffer[:4], "big")
        if len(buffer) < 4 + size:
            break
        messages.append(msgpack.unpackb(bytes(buffer[4 : 4 + size])))
        del buffer[: 4 + size]
    return messages


class EchoServerProtocol(asyncio.Protocol):
    """Bare echo: each frame is decoded and the same map sent back, framed the same way."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        for message in take_frames(self.buffer, data):
            payload = msgpack.packb(message)
            self.transport.write(len(payload).to_bytes(4, "big") + payload)


async def _serve(protocol: Callable[[], asyncio.Protocol], what: str) -> None:
    """Serve `protocol` on a free loopback port until killed; the first line out names the
    port (`WHAT listening on 127.0.0.1:PORT`), for the driver to read."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(protocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"{what} listening on 127.0.0.1:{port}", flush=True)
    await server.serve_forever()


def echo_server_main() -> None:
    lk.raise_nofile()
    asyncio.run(_serve(EchoServerProtocol, "echo"))


class EchoClient(asyncio.Protocol):
    """One actor: sends a request the size of an action, waits for the echo, sends again."""

    def __init__(self, stats: lk.Stats) -> None:
        self.stats = stats
        self.buffer = bytearray()
        payload = msgpack.packb({"type": "discard", "card": "10s"})
        self.frame = len(payload).to_bytes(4, "big") + payload
        self.sent_at = 0.0
        self.running = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def go(self) -> None:
        self.sent_at = time.monotonic()
        self.transport.write(self.frame)

    def data_received(self, data: bytes) -> None:
        for _ in take_frames(self.buffer, data):
            now = time.monotonic()
            start, end = self.stats.window
            if start <= self.sent_at < end:
                self.stats.latencies.append(now - self.sent_at)
                self.stats.actions += 1
            if self.running:
                self.go()


async def measure_actors(
    clients: Sequence[EchoClient | FanoutClient], stats: lk.Stats, commands: Any, results: Any
) -> None:
    """Wait for the window, measure the process's CPU over it, then stop the actors and report
    (the echo and fan-out generators)."""
    loop = asyncio.get_running_loop()
    _, start, end = await loop.run_in_executor(None, commands.get)
    stats.window = (start, end)
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    cpu0 = time.process_time()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    cpu = time.process_time() - cpu0
    for client in clients:
        client.running = False
    await asyncio.sleep(0.5)
    for client in clients:
        client.transport.close()
    results.put(
        (
            "done",
            {
                "latencies": stats.latencies,
                "actions": stats.actions,
                "actions_total": stats.actions,
                "hands": 0,
                "errors": {},
                "cpu": cpu,
            },
        )
    )


def echo_worker(port: int, actors: int, commands: Any, results: Any) -> None:
    lk.raise_nofile()
    asyncio.run(_echo_worker(port, actors, commands, results))


async def _echo_worker(port: int, actors: int, commands: Any, results: Any) -> None:
    loop = asyncio.get_running_loop()
    stats = lk.Stats()
    clients = []
    for _ in range(actors):
        _, client = await loop.create_connection(lambda: EchoClient(stats), "127.0.0.1", port)
        clients.append(client)
    for client in clients:
        client.go()
    quiet_collector()
    results.put(("ready", os.getpid()))
    await measure_actors(clients, stats, commands, results)


# -- the fan-out side: the I/O a tonk action needs, and nothing else ---------------------------


@functools.cache
def fanout_padding(size: int) -> int:
    """How many padding characters make a fanout_payload frame about `size` bytes."""
    pad = 0
    for _ in range(3):  # the string's header grows with it: settle in a few steps
        pad = max(0, pad + size - len(fanout_payload(0, 0, 0, pad)))
    return pad


def fanout_payload(seat: int, turn: int, number: int, pad: int) -> bytes:
    """A frame shaped like an update (whose turn it is, a number, `pad` characters of padding)."""
    message = {
        "type": "update",
        "from": number,
        "events": [{"kind": "discard", "seat": seat, "card": "10s"}],
        "view": {"turn": turn, "pad": "x" * pad},
    }
    payload = msgpack.packb(message)
    return len(payload).to_bytes(4, "big") + payload


class FanoutTable:
    """The four connections of one table, and how many actions it has had."""

    def __init__(self) -> None:
        self.seats: list[FanoutServerProtocol] = []
        self.actions = 0


class FanoutServerProtocol(asyncio.Protocol):
    """One seat of a table of four. The first frame says which ({"table": t, "seat": s}); after
    it each frame is an action: it is decoded, the table's turn moves on every second action (a
    draw and a discard), and one frame of about `size` bytes is encoded and written to each of
    the table's four connections, as tonk-server sends each seat its view. No game, no disk."""

    tables: ClassVar[dict[int, FanoutTable]] = {}
    size = 600

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = bytearray()
        self.table: FanoutTable | None = None
        self.seat = 0

    def data_received(self, data: bytes) -> None:
        for message in take_frames(self.buffer, data):
            table = self.table
            if table is None:
                table = self.table = self.tables.setdefault(message["table"], FanoutTable())
                self.seat = message["seat"]
                table.seats.append(self)
                continue
            table.actions += 1
            turn = (table.actions // 2) % 4
            frame = fanout_payload(self.seat, turn, table.actions, fanout_padding(self.size))
            for seat in table.seats:
                seat.transport.write(frame)


def fanout_server_main(size: int) -> None:
    lk.raise_nofile()
    FanoutServerProtocol.size = size
    asyncio.run(_serve(FanoutServerProtocol, "fan-out"))


class FanoutClient(asyncio.Protocol):
    """One seat: decodes every frame it is sent; acts (a frame the size of an action) when a
    frame says it is its turn, and measures from its action to the next frame it receives."""

    def __init__(self, stats: lk.Stats, table: int, seat: int) -> None:
        self.stats = stats
        self.table = table
        self.seat = seat
        self.buffer = bytearray()
        payload = msgpack.packb({"type": "discard", "card": "10s"})
        self.frame = len(payload).to_bytes(4, "big") + payload
        self.sent_at: float | None = None
        self.running = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        join = msgpack.packb({"table": self.table, "seat": self.seat})
        transport.write(len(join).to_bytes(4, "big") + join)

    def go(self) -> None:
        self.sent_at = time.monotonic()
        self.transport.write(self.frame)

    def data_received(self, data: bytes) -> None:
        for message in take_frames(self.buffer, data):
            sent = self.sent_at
            if sent is not None:
                self.sent_at = None
                start, end = self.stats.window
                if start <= sent < end:
                    self.stats.latencies.append(time.monotonic() - sent)
                    self.stats.actions += 1
            if self.running and message["view"]["turn"] == self.seat:
                self.go()


def _same(client: FanoutClient) -> FanoutClient:
    return client


def fanout_worker(port: int, first: int, count: int, commands: Any, results: Any) -> None:
    lk.raise_nofile()
    asyncio.run(_fanout_worker(port, first, count, commands, results))


async def _fanout_worker(port: int, first: int, count: int, commands: Any, results: Any) -> None:
    loop = asyncio.get_running_loop()
    stats = lk.Stats()
    tables = []
    for table in range(first, first + count):
        seats = []
        for seat in range(4):
            client = FanoutClient(stats, table, seat)
            await loop.create_connection(functools.partial(_same, client), "127.0.0.1", port)
            seats.append(client)
        tables.append(seats)
    await asyncio.sleep(0.5)  # every join read by the server
    for seats in tables:
        seats[0].go()
    quiet_collector()
    results.put(("ready", os.getpid()))
    await measure_actors([client for seats in tables for client in seats], stats, commands, results)


def run_echo(actors: int, seconds: float, procs: int, workdir: Path) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, str(LOAD_PY), "echo-server"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    try:
        shares = [(port, count) for _, count in split(actors, min(procs, actors))]
        result = drive(echo_worker, shares, seconds, 1.0, server_pid=proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    return summarize(result, actors, seconds)


def run_fanout(tables: int, seconds: float, procs: int, workdir: Path, size: int) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, str(LOAD_PY), "fanout-server", "--fanout-bytes", str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    try:
        shares = [(port, first, count) for first, count in split(tables, min(procs, tables))]
        result = drive(fanout_worker, shares, seconds, 1.0, server_pid=proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    out = summarize(result, tables, seconds)
    out["frame_size"] = size
    return out
