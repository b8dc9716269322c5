"""The load generator's baseline (bench/load.py, flat out): a bare asyncio + msgpack echo
server, the ceiling for this machine and this Python, with the clients that drive it. (The
fan-out server, the I/O of an action alone, retired with issue 34: BENCHMARKS.md, "Server: what
the figures say".)"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from load_driver import drive, quiet_collector, split, summarize

#: The command line that serves the echo in a process of its own (`echo-server`).
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
    clients: Sequence[EchoClient], stats: lk.Stats, commands: Any, results: Any
) -> None:
    """Wait for the window, measure the process's CPU over it, then stop the actors and report
    (the echo's generators)."""
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
