"""Load generator for tonk-server: N tables of 4 bot clients over TCP, in processes of their own.

    python bench/load.py paced --tables 1000 --seconds 60
    python bench/load.py flat --tables 100 --seconds 20
    python bench/load.py all --write BENCHMARKS.md      # both, with the default sizes
    python bench/load.py all --repeat 3 --tables 1000,2000 --flat-tables 10,100,400 \
        --baseline "python bench/run_tree.py /tmp/before" --write BENCHMARKS.md

`--repeat N` runs each measurement N times and keeps the median; `--baseline CMD` measures
another server command too (runs alternate), e.g. an older tonk-server from a source tree with
bench/run_tree.py; `--profile DIR` samples the server and the first generator with py-spy
(`pip install py-spy`) during each window, as collapsed stacks.

The server is a real `tonk-server` child process (`--port 0`, a fresh SQLite file in a temporary
directory, `--log-level warning`) with these limits raised so that one machine can play every
table from one address: `max_connections`, `max_per_address`, `max_tables`, and (flat out only)
`messages_per_second`/`burst`, since a seat acting the moment its turn comes may exceed the
default 20 a second. Every action is still written to SQLite (WAL, synchronous=FULL) before
anybody is told of it.

The clients run in `--procs` generator processes (one asyncio loop each); every seat is an
`easy` bot (tonk.shared.bots) choosing from the view it receives. Reported:

- actions per second (answered actions, counted by the time they were sent, inside the window);
- latency: from writing an action to the arrival of the acting connection's next `update`;
- server memory per table: the server's VmRSS after every table is seated and playing, less
  its VmRSS before the first connection, divided by the tables;
- CPU seconds used in the window by the server and by the generators (the machine may have
  fewer cores than the processes: they compete).

Modes:

- paced: each seat acts a uniformly drawn 0.5 to 1.5 s after its turn comes (and again after
  each of its actions while its turn goes on), as people play. Target: p99 < 50 ms at 1,000
  tables.
- flat: every seat acts the moment its turn comes; then, in the same run, a bare asyncio +
  msgpack echo server (same framing: one request, one reply) in its own process is driven by as
  many concurrent actors (one per table) from as many generator processes: the ceiling for this
  machine and this Python. Target: actions/s >= 25% of the echo's round trips/s. Then a
  fan-out bound: a bare asyncio + msgpack server that, for each action, writes one frame of
  tonk-server's mean frame size to each of the table's four connections (the I/O the protocol
  asks of every action, with no game and nothing written to disk), driven by tables of four
  clients that only read and decode.

`--json` prints the report as JSON; `--from-json FILE --write BENCHMARKS.md` writes the section
again from a saved report without measuring. `bench/send_cost.py` measures what one loopback
`send` costs the sender.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import multiprocessing as mp
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from tonk.shared import protocol as p

PACE = (0.5, 1.5)
SETUP_CONCURRENCY = 25  # tables being set up at once in one generator process


def quiet_collector() -> None:
    """Keep the generator's own garbage collections out of the latencies it measures: the
    clients set up so far are long-lived (frozen out of the collector), and the young
    generation is collected less often (as tonk-server itself does)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 5, 10)


# -- the tonk side ------------------------------------------------------------------------------


async def seat_table(
    port: int, index: int, stats: lk.Stats, pace: tuple[float, float] | None, seed: int
) -> list[lk.BotClient]:
    """Four bot clients at one new table: the first creates it, three sit; it starts by itself."""
    rng = random.Random(seed * 1_000_003 + index)
    clients = []
    for seat in range(4):
        clients.append(
            await lk.BotClient.connect(
                port, f"t{index}s{seat}", stats, random.Random(rng.random()), pace
            )
        )
    creator = clients[0]
    creator.track_hands = True
    seated = await creator.request(
        {"type": p.CREATE_TABLE, "name": f"load {index}", "seats": 4}, p.SEATED
    )
    for client in clients[1:]:
        await client.request({"type": p.SIT, "table": seated["table"]}, p.SEATED)
    return clients


def tonk_worker(
    port: int,
    first: int,
    count: int,
    pace: tuple[float, float] | None,
    seed: int,
    commands: Any,
    results: Any,
) -> None:
    lk.raise_nofile()
    asyncio.run(_tonk_worker(port, first, count, pace, seed, commands, results))


async def _tonk_worker(
    port: int,
    first: int,
    count: int,
    pace: tuple[float, float] | None,
    seed: int,
    commands: Any,
    results: Any,
) -> None:
    loop = asyncio.get_running_loop()
    stats = lk.Stats()
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)

    async def one(index: int) -> list[lk.BotClient]:
        async with gate:
            return await seat_table(port, index, stats, pace, seed)

    tables = await asyncio.gather(*(one(first + i) for i in range(count)))
    quiet_collector()
    results.put(("ready", os.getpid()))
    command, start, end = await loop.run_in_executor(None, commands.get)
    assert command == "go"
    stats.window = (start, end)
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    cpu0 = time.process_time()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    cpu = time.process_time() - cpu0
    await asyncio.sleep(1.0)  # answers to actions sent just before the end
    for clients in tables:
        for client in clients:
            client.close()
    results.put(
        (
            "done",
            {
                "latencies": stats.latencies,
                "actions": stats.actions,
                "actions_total": stats.actions_total,
                "hands": stats.hands,
                "errors": stats.errors,
                "cpu": cpu,
                "frames": stats.frames,
                "frame_bytes": stats.frame_bytes,
            },
        )
    )


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


async def _echo_server() -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(EchoServerProtocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"echo listening on 127.0.0.1:{port}", flush=True)
    await server.serve_forever()


def echo_server_main() -> None:
    lk.raise_nofile()
    asyncio.run(_echo_server())


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
    asyncio.run(_fanout_server())


async def _fanout_server() -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(FanoutServerProtocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"fan-out listening on 127.0.0.1:{port}", flush=True)
    await server.serve_forever()


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


# -- running a measurement ---------------------------------------------------------------------


def split(total: int, parts: int) -> list[tuple[int, int]]:
    """(first, count) for `parts` nearly equal shares of `total`."""
    out = []
    first = 0
    for i in range(parts):
        count = total // parts + (1 if i < total % parts else 0)
        if count:
            out.append((first, count))
        first += count
    return out


def drive(
    target: Any,
    shares: list[tuple[Any, ...]],
    seconds: float,
    warmup: float,
    on_ready: Any = None,
    setup_timeout: float = 600,
    server_pid: int | None = None,
) -> dict[str, Any]:
    """Start one generator process per share, wait until all are ready, run the window, and
    merge what they measured (with the server's CPU seconds over exactly the window)."""
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = []
    queues = []
    for share in shares:
        commands = ctx.Queue()
        proc = ctx.Process(target=target, args=(*share, commands, results), daemon=True)
        proc.start()
        procs.append(proc)
        queues.append(commands)
    pids: list[int] = []
    deadline = time.monotonic() + setup_timeout
    while len(pids) < len(procs):
        kind, pid = results.get(timeout=max(1.0, deadline - time.monotonic()))
        if kind == "ready":
            pids.append(pid)
    time.sleep(warmup)
    extra = on_ready(pids) if on_ready is not None else {}
    start = time.monotonic() + 0.2
    end = start + seconds
    for commands in queues:
        commands.put(("go", start, end))
    if server_pid is not None:
        time.sleep(max(0.0, start - time.monotonic()))
        cpu0 = lk.cpu_seconds(server_pid), *lk.thread_cpu_seconds(server_pid)
        time.sleep(max(0.0, end - time.monotonic()))
        cpu1 = lk.cpu_seconds(server_pid), *lk.thread_cpu_seconds(server_pid)
        extra["server_cpu"], extra["server_loop_cpu"], extra["server_store_cpu"] = (
            b - a for a, b in zip(cpu0, cpu1, strict=True)
        )
    merged: dict[str, Any] = {
        "latencies": [],
        "actions": 0,
        "actions_total": 0,
        "hands": 0,
        "errors": {},
        "generator_cpu": 0.0,
        "frames": 0,
        "frame_bytes": 0,
    }
    done = 0
    while done < len(procs):
        kind, data = results.get(timeout=seconds + 120)
        if kind != "done":
            continue
        done += 1
        merged["latencies"].extend(data["latencies"])
        merged["actions"] += data["actions"]
        merged["actions_total"] += data["actions_total"]
        merged["hands"] += data["hands"]
        merged["generator_cpu"] += data["cpu"]
        merged["frames"] += data.get("frames", 0)
        merged["frame_bytes"] += data.get("frame_bytes", 0)
        for code, n in data["errors"].items():
            merged["errors"][code] = merged["errors"].get(code, 0) + n
    for proc in procs:
        proc.join(10)
    merged["window"] = (start, end)
    merged.update(extra)
    return merged


def server_limits(tables: int, flat: bool) -> dict[str, float]:
    limits: dict[str, float] = {
        "max_connections": 4 * tables + 100,
        "max_per_address": 4 * tables + 100,
        "max_tables": tables + 10,
        "max_tables_per_address": tables + 10,
    }
    if flat:
        limits["messages_per_second"] = 100_000
        limits["burst"] = 100_000
    return limits


def run_tonk(
    tables: int,
    seconds: float,
    procs: int,
    pace: tuple[float, float] | None,
    seed: int,
    workdir: Path,
    warmup: float,
    profile: Path | None = None,
    program: list[str] | None = None,
) -> dict[str, Any]:
    flat = pace is None
    options = ["--log-level", "warning"]
    if flat:
        options += ["--next-hand-delay", "0"]
    run = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
    server = lk.start_server(
        run / "tonk.db",
        server_limits(tables, flat),
        options,
        log=run / "server.log",
        program=program,
    )
    try:
        time.sleep(0.5)
        rss_before = lk.rss_kib(server.pid)
        spies: list[subprocess.Popen[bytes]] = []

        def on_ready(pids: list[int]) -> dict[str, Any]:
            if profile is not None:
                profile.mkdir(parents=True, exist_ok=True)
                name = "flat" if flat else "paced"
                spies.append(lk.py_spy(server.pid, profile / f"server-{name}.txt", seconds))
                spies.append(lk.py_spy(pids[0], profile / f"generator-{name}.txt", seconds))
            return {"rss_after": lk.rss_kib(server.pid)}

        shares = [
            (server.port, first, count, pace, seed)
            for first, count in split(tables, min(procs, tables))
        ]
        result = drive(tonk_worker, shares, seconds, warmup, on_ready, server_pid=server.pid)
        result["rss_end"] = lk.rss_kib(server.pid)
        result["rss_before"] = rss_before
        for spy in spies:
            spy.wait(60)
    finally:
        code = server.stop()
    result["server_exit"] = code
    return summarize(result, tables, seconds)


def run_echo(actors: int, seconds: float, procs: int, workdir: Path) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "echo-server"], stdout=subprocess.PIPE, text=True
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
        [sys.executable, __file__, "fanout-server", "--fanout-bytes", str(size)],
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


def summarize(result: dict[str, Any], tables: int, seconds: float) -> dict[str, Any]:
    out = {
        "tables": tables,
        "seconds": seconds,
        "actions": result["actions"],
        "actions_per_second": result["actions"] / seconds,
        "latency_ms": lk.latency_summary(result["latencies"]),
        "hands": result["hands"],
        "errors": result["errors"],
        "server_cpu_percent": 100 * result["server_cpu"] / seconds,
        "generator_cpu_percent": 100 * result["generator_cpu"] / seconds,
    }
    if result["frames"]:
        out["mean_frame_bytes"] = result["frame_bytes"] / result["frames"]
    if "server_loop_cpu" in result:
        out["server_loop_cpu_percent"] = 100 * result["server_loop_cpu"] / seconds
        out["server_store_cpu_percent"] = 100 * result["server_store_cpu"] / seconds
    if "rss_before" in result:
        out["rss_before_mib"] = result["rss_before"] / 1024
        out["rss_after_mib"] = result["rss_after"] / 1024
        out["rss_end_mib"] = result["rss_end"] / 1024
        out["kib_per_table"] = (result["rss_after"] - result["rss_before"]) / tables
        out["server_exit"] = result["server_exit"]
    return out


# -- reporting ---------------------------------------------------------------------------------


def describe(name: str, r: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    text = (
        f"{name}: {r['tables']} tables, {r['actions_per_second']:,.0f} actions/s "
        f"({r['actions']:,} in {r['seconds']:g} s); latency p50 {lat['p50']:.1f} ms, "
        f"p90 {lat['p90']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms; "
        f"server CPU {r['server_cpu_percent']:.0f}%, generators {r['generator_cpu_percent']:.0f}%"
    )
    if "server_loop_cpu_percent" in r:
        text += (
            f" (server event loop {r['server_loop_cpu_percent']:.0f}%, "
            f"store thread {r['server_store_cpu_percent']:.0f}%)"
        )
    if "mean_frame_bytes" in r:
        text += f"; {r['mean_frame_bytes']:.0f} B a frame received on average"
    if "kib_per_table" in r:
        text += (
            f"; server RSS {r['rss_before_mib']:.1f} -> {r['rss_after_mib']:.1f} MiB "
            f"({r['kib_per_table']:.0f} KiB per table), {r['rss_end_mib']:.1f} MiB at the end"
        )
    if r["errors"]:
        text += f"; errors {r['errors']}"
    return text


def _paced_row(label: str, r: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    return (
        f"| {label} | {r['tables']:,} | {4 * r['tables']:,} | {r['actions_per_second']:,.0f} | "
        f"{lat['p50']:.1f} ms | {lat['p90']:.1f} ms | {lat['p99']:.1f} ms | {lat['max']:.0f} ms | "
        f"{r['kib_per_table']:.0f} KiB ({r['rss_before_mib']:.0f} -> {r['rss_after_mib']:.0f} "
        f"MiB) | {r['server_cpu_percent']:.0f}% | {sum(r['errors'].values())} |"
    )


def _flat_row(label: str, r: dict[str, Any], echo: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    runs = ", ".join(f"{x:,.0f}" for x in r.get("all_runs", []))
    loop = r.get("server_loop_cpu_percent")
    cpu = f"{r['server_cpu_percent']:.0f}%"
    if loop is not None:
        cpu += f" ({loop:.0f}% loop, {r['server_store_cpu_percent']:.0f}% store)"
    per_action = "-"
    if r["actions_per_second"]:
        # CPU time per answered action: less at the mercy of other work than the rate.
        per_action = f"{r['server_cpu_percent'] * 1e4 / r['actions_per_second']:.0f} µs"
        if loop is not None:
            per_action += f" ({loop * 1e4 / r['actions_per_second']:.0f} µs loop)"
    return (
        f"| {label} | {r['actions_per_second']:,.0f} ({runs}) | "
        f"{100 * r['actions_per_second'] / echo['actions_per_second']:.1f}% | "
        f"{lat['p50']:.1f} ms | {lat['p99']:.1f} ms | {cpu} | {per_action} | "
        f"{r['generator_cpu_percent']:.0f}% |"
    )


def machine_cpu_per_action(r: dict[str, Any]) -> float:
    """Microseconds of CPU, the server's and the generators' together, per action."""
    cpu = float(r["server_cpu_percent"] + r["generator_cpu_percent"])
    return cpu * 1e4 / float(r["actions_per_second"])


def budget_table(sizes: list[dict[str, Any]], cpus: int) -> list[str]:
    """What the machine can spend on an action at the target rate, against what tonk spends
    and what the protocol's I/O alone costs (server and clients share the machine's cores)."""
    lines = [
        f"**The machine's CPU per action** (server and generators together; they share its "
        f"{cpus} cores). At the target rate the machine has {cpus} cores / the rate to spend on "
        "each action:",
        "",
        "| tables | target: 25% of the ceiling | CPU per action the machine has at the target "
        "| tonk now | the fan-out bound (the I/O alone) |",
        "|---|---|---|---|---|",
    ]
    for size in sizes:
        target = size["echo"]["actions_per_second"] / 4
        lines.append(
            f"| {size['tables']} | {target:,.0f} actions/s | {cpus * 1e6 / target:.0f} µs | "
            f"{machine_cpu_per_action(size['flat']):.0f} µs | "
            f"{machine_cpu_per_action(size['fanout']):.0f} µs |"
        )
    return [*lines, ""]


def _fanout_row(r: dict[str, Any], echo: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    runs = ", ".join(f"{x:,.0f}" for x in r.get("all_runs", []))
    return (
        f"| bare asyncio + msgpack fan-out (the I/O bound: one {r['frame_size']}-byte frame to "
        f"each of the 4 seats; no game, no disk) | {r['actions_per_second']:,.0f} ({runs}) | "
        f"{100 * r['actions_per_second'] / echo['actions_per_second']:.1f}% | "
        f"{lat['p50']:.1f} ms | {lat['p99']:.1f} ms | {r['server_cpu_percent']:.0f}% | "
        f"{r['server_cpu_percent'] * 1e4 / r['actions_per_second']:.0f} µs | "
        f"{r['generator_cpu_percent']:.0f}% |"
    )


#: How to measure the server as it was before the latest work on it (commit 949a682).
BASELINE = """\
`--baseline` measures another server command in alternation with this one. The "before" rows
are tonk-server as it was before the latest work on its speed (commit 949a682, `server/` and
`shared/` from then), run from a source tree (the rows of the round before that, against commit
7f964b3, are in this file's history):

```
mkdir -p /tmp/before/tonk && git archive 949a682 server shared | tar -x -C /tmp/before/tonk
```
"""

#: What the figures say; kept with the generator so that `--write` keeps it.
ANALYSIS = """\
**What was changed in the server, and why** (profiles under load with py-spy, `--profile DIR`;
`perf` and `strace` for the kernel's share). Each change was kept only if it paid in runs
alternating with the server before it.

- The frames of one change are put together from parts packed once (`server/updates.py`): the
  events, the view's shared fields and the rules are packed once per change, and only a seat's
  own cards and private events differ between its frame and the next; byte for byte what
  packing each seat's whole message gives (a test holds them together over bot hands of every
  preset). Cards become text through a table made once. Four frames after a discard: 9.7 µs.
- A new database gets 1 KiB pages (a commit writes every page it changed, and under load each
  table's action changes a page of its own in an index), with the WAL checkpointed every 4 MiB
  as SQLite does by default with 4 KiB pages; statement journals stay in memory
  (`temp_store=MEMORY`: a batch's multi-row insert spilled its undo pages to a new temporary
  file on most commits). Every commit is still synced in full (`synchronous=FULL`) before anybody
  is told of the action; the writer thread's CPU per action went from about 25 to 16 µs.
- Less per action in the event loop: the table keeps its loop (`asyncio.get_running_loop()` is
  a system call in 3.11), a store write hands back its future, one clock read per message. (The
  figures above were measured with records' JSON written by CPython's internal C encoder, since
  taken out: an undocumented interface, for about 1 µs an action.)
- Before that (the round against commit 7f964b3): frames go straight to a socket that keeps up
  instead of waking a writer task per frame; the store merges a batch's inserts and wakes the
  loop once per batch; `tonk-server` collects the young generation of objects less often (`gc`
  thresholds 20,000, 5, 10: with the defaults a full collection of the 630,000 objects of 2,000
  tables stopped every table for 200-400 ms every few seconds, which was the paced p99).

**Paced** is met with room to spare: at 1,000 tables the server's event loop is busy about a
fifth of the time, at 2,000 about a third.

**Flat out is not met, and no server can meet it on this machine.** The fan-out row is a bare
asyncio + msgpack server that does only the I/O the protocol asks of every action (issue 3: a
view to each connection at the table after every change): it reads the action and writes one
ready-made frame, of tonk's mean size, to each of the table's four connections; no game, no
views to build, nothing written. Its clients only read and decode. It reaches 28-47% of the
echo ceiling, and it uses both cores to do it: the server and the generators share the
machine, and each `send` carries the kernel's loopback work for the receiver, about 12 µs of
the sender's CPU for a 360-byte frame to a client asleep in `epoll` and 5 µs to one that is
busy (`python bench/send_cost.py`). The table above turns this into CPU per action: at 25% of
the ceiling the machine has 66-94 µs for each action, the protocol's I/O alone takes 48-57 µs
of it, which leaves 17-46 µs for everything else: the game core, four views, the durable
commit (the writer thread alone spends about 16 µs an action, the `fdatasync` about 120 µs a
commit) and the bots' choices. tonk spends 171-213 µs in all. Another process for tables
would not change the sum on two cores; another event loop implementation would not change the
kernel's share. The target needs to be restated (for example against the fan-out bound, or as
a rate on a machine with cores to spare for the clients) before it can be met.
"""


def section(report: dict[str, Any], command: str) -> str:
    repeat = report.get("repeat", 1)
    lines = [
        f"Measured {report['date']} on {report['machine']}; load average "
        f"{report['load_before']} before the run. The machine was shared with other work "
        "while this was measured (other engineers' builds and tests), and the generator "
        "processes run on the same two cores as the server, so they compete with it for CPU. "
        + (
            f"Each figure is the median of {repeat} runs (runs alternate between servers)."
            if repeat > 1
            else ""
        ),
        "",
        "The server is a real `tonk-server --host 127.0.0.1 --port 0 --db FRESH.db "
        "--log-level warning` child process, with `--limit max_connections=` and "
        "`--limit max_per_address=` 4 x tables + 100, `--limit max_tables=` and "
        "`--limit max_tables_per_address=` tables + 10 (every client comes from 127.0.0.1; "
        "a server without a limit is run without it); flat out also `--next-hand-delay 0` and "
        "`--limit messages_per_second=100000 --limit burst=100000` (a seat acting the moment "
        "its turn comes may send more than the default 20 a second). Every seat is an `easy` "
        "bot (`tonk.shared.bots`) in a generator process, choosing from the views it is sent; "
        "latency is from writing an action to the arrival of that connection's next `update`; "
        "memory per table is the server's VmRSS with every table seated and playing, less its "
        "VmRSS before the first connection, over the tables.",
        "",
        "Reproduce (from the repository, after `pip install -e '.[test]'`):",
        "",
        "```",
        command,
        "```",
        "",
    ]
    if any(
        "baseline_paced" in x or "baseline_flat" in x
        for x in report.get("paced_sizes", []) + report.get("flat_sizes", [])
    ):
        lines += [BASELINE]
    paced_sizes = report.get("paced_sizes", [])
    head = (
        "| server | tables | connections | actions/s | p50 | p90 | p99 | max "
        "| server RSS per table | server CPU | errors |"
    )
    if paced_sizes:
        lines += [
            f"**Paced** (each seat acts 0.5-1.5 s after its turn comes, and again after each of "
            f"its actions while its turn lasts; {report['procs']} generator processes; "
            f"{paced_sizes[0]['paced']['seconds']:g} s windows; the median run by p99):",
            "",
            head,
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for size in paced_sizes:
            if "baseline_paced" in size:
                lines.append(_paced_row("before", size["baseline_paced"]))
            lines.append(_paced_row("now", size["paced"]))
        met = any(
            size["tables"] >= 1000 and size["paced"]["latency_ms"]["p99"] < 50
            for size in paced_sizes
        )
        lines += [
            "",
            f"Target p99 < 50 ms at 1,000 tables: **{'met' if met else 'not met'}**.",
            "",
        ]
    sizes = report.get("flat_sizes", [])
    if sizes:
        lines += [
            "**Flat out** (every seat acts the moment its turn comes, so there are as many "
            "actions in flight as tables; the echo ceiling is driven with as many concurrent "
            f"actors; {report['procs']} generator processes; {sizes[0]['flat']['seconds']:g} s "
            "windows; round trips/s with every run's figure in brackets; tonk-server commits "
            "every action to SQLite before it answers):",
            "",
            "| tables = actors | server | round trips/s | of the ceiling | p50 | p99 | server CPU "
            "| server CPU per round trip | generator CPU |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for size in sizes:
            echo = size["echo"]
            elat = echo["latency_ms"]
            eruns = ", ".join(f"{x:,.0f}" for x in echo.get("all_runs", []))
            if "baseline_flat" in size:
                lines.append(
                    f"| {size['tables']} | "
                    + _flat_row("tonk-server before", size["baseline_flat"], echo)[2:]
                )
            lines += [
                f"| {size['tables']} | " + _flat_row("tonk-server now", size["flat"], echo)[2:],
                f"| {size['tables']} | bare asyncio + msgpack echo (the ceiling) | "
                f"{echo['actions_per_second']:,.0f} ({eruns}) | 100% | {elat['p50']:.1f} ms | "
                f"{elat['p99']:.1f} ms | {echo['server_cpu_percent']:.0f}% | "
                f"{echo['server_cpu_percent'] * 1e4 / echo['actions_per_second']:.0f} µs | "
                f"{echo['generator_cpu_percent']:.0f}% |",
            ]
            if "fanout" in size:
                lines.append(f"| {size['tables']} | " + _fanout_row(size["fanout"], echo)[2:])
        best = max(size["share_percent"] for size in sizes)
        lines += [
            "",
            f"Best share of the ceiling: **{best:.1f}%** (target 25%: "
            f"**{'met' if best >= 25 else 'not met'}**).",
            "",
        ]
        if all("fanout" in size for size in sizes):
            bound = max(size["fanout_share_percent"] for size in sizes)
            lines += [
                "The fan-out bound (the I/O of a tonk action and nothing else) reaches at most "
                f"**{bound:.1f}%** of the ceiling.",
                "",
                *budget_table(sizes, report.get("cpus", 2)),
            ]
    lines += [ANALYSIS]
    return "\n".join(lines)


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The run with the median `key` (the lower middle one for an even count), with every
    run's value of it attached."""
    ordered = sorted(runs, key=lambda r: lr_value(r, key))
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["all_runs"] = [lr_value(r, key) for r in runs]
    return chosen


def lr_value(run: dict[str, Any], key: str) -> float:
    return float(run["latency_ms"]["p99"] if key == "p99" else run[key])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["paced", "flat", "all", "echo-server", "fanout-server"])
    parser.add_argument(
        "--tables",
        type=lambda text: [int(x) for x in text.split(",")],
        help="paced: 1000 (several separated by commas: 1000,2000); flat: 100",
    )
    parser.add_argument(
        "--flat-tables",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[100],
        help="flat out in 'all': tables (= concurrent actors), several separated by commas",
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each window")
    parser.add_argument("--procs", type=int, default=2, help="generator processes")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the median is kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--baseline",
        help="also measure this server command (e.g. an older tonk-server), alternating runs",
    )
    parser.add_argument(
        "--fanout-bytes",
        type=int,
        help="flat: the fan-out server's frame size (default: the mean frame tonk-server sent)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="FILE",
        help="measure nothing: write the section (--write) from a report saved with --json",
    )
    parser.add_argument(
        "--profile", type=Path, help="py-spy the server during each window into this folder"
    )
    parser.add_argument("--write", type=Path, help="replace the '## Server' section of this file")
    args = parser.parse_args(argv)
    if args.mode == "echo-server":
        echo_server_main()
        return 0
    if args.mode == "fanout-server":
        fanout_server_main(args.fanout_bytes or 600)
        return 0
    if args.from_json:
        if not args.write:
            parser.error("--from-json needs --write")
        saved = json.loads(args.from_json.read_text())
        lk.write_section(args.write, "## Server", section(saved, saved["command"]))
        return 0
    lk.raise_nofile()
    command = "python bench/load.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    report: dict[str, Any] = {
        "command": command,
        "machine": lk.machine(),
        "date": time.strftime("%Y-%m-%d"),
        "load_before": lk.load_average(),
        "procs": args.procs,
        "repeat": args.repeat,
        "cpus": os.cpu_count() or 1,
    }
    baseline = args.baseline.split() if args.baseline else None
    programs: list[tuple[str, list[str] | None]] = [("", None)]
    if baseline:
        programs = [("baseline_", baseline), ("", None)]
    with tempfile.TemporaryDirectory(prefix="tonk-load-") as tmp:
        workdir = Path(tmp)
        if args.mode in ("paced", "all"):
            report["paced_sizes"] = []
            for tables in args.tables or [1000]:
                runs: dict[str, list[dict[str, Any]]] = {prefix: [] for prefix, _ in programs}
                for _ in range(args.repeat):
                    for prefix, program in programs:
                        result = run_tonk(
                            tables,
                            args.seconds,
                            args.procs,
                            PACE,
                            args.seed,
                            workdir,
                            args.warmup,
                            args.profile,
                            program,
                        )
                        print(describe(f"{prefix}paced", result), flush=True)
                        runs[prefix].append(result)
                size: dict[str, Any] = {"tables": tables}
                for prefix, found in runs.items():
                    size[f"{prefix}paced"] = median_run(found, "p99")
                report["paced_sizes"].append(size)
        if args.mode in ("flat", "all"):
            sizes = args.tables if args.mode == "flat" and args.tables else args.flat_tables
            report["flat_sizes"] = []
            for tables in sizes:
                runs = {prefix: [] for prefix, _ in programs}
                echoes = []
                fanouts = []
                for _ in range(args.repeat):
                    for prefix, program in programs:
                        result = run_tonk(
                            tables,
                            args.seconds,
                            args.procs,
                            None,
                            args.seed,
                            workdir,
                            args.warmup,
                            args.profile,
                            program,
                        )
                        print(describe(f"{prefix}flat out", result), flush=True)
                        runs[prefix].append(result)
                    echo = run_echo(tables, args.seconds, args.procs, workdir)
                    print(describe("echo ceiling", echo), flush=True)
                    echoes.append(echo)
                    frame = args.fanout_bytes or round(runs[""][-1].get("mean_frame_bytes", 600))
                    fanout = run_fanout(tables, args.seconds, args.procs, workdir, frame)
                    print(describe(f"fan-out bound ({frame} B frames)", fanout), flush=True)
                    fanouts.append(fanout)
                size = {"tables": tables}
                size["echo"] = median_run(echoes, "actions_per_second")
                size["fanout"] = median_run(fanouts, "actions_per_second")
                fanout_share = (
                    100 * size["fanout"]["actions_per_second"] / size["echo"]["actions_per_second"]
                )
                size["fanout_share_percent"] = fanout_share
                print(f"{tables} tables: the fan-out bound is {fanout_share:.1f}% of the ceiling")
                for prefix, found in runs.items():
                    size[f"{prefix}flat"] = median_run(found, "actions_per_second")
                    share = (
                        100
                        * size[f"{prefix}flat"]["actions_per_second"]
                        / size["echo"]["actions_per_second"]
                    )
                    size[f"{prefix}share_percent"] = share
                    print(f"{tables} tables: {prefix}flat out is {share:.1f}% of the echo ceiling")
                report["flat_sizes"].append(size)
    if args.json:
        print(json.dumps(report, indent=2))
    if args.write:
        lk.write_section(args.write, "## Server", section(report, command))
    ran = [size["paced"] for size in report.get("paced_sizes", [])]
    ran += [size["flat"] for size in report.get("flat_sizes", [])]
    failed = any(r["server_exit"] != 0 for r in ran)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
