"""The load generator's driver: tonk-server in a child process, generator processes of bot
clients seated four to a table, and a measuring window run across them all (bench/load.py)."""

from __future__ import annotations

import asyncio
import gc
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from tonk.shared.wire import protocol as p

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
    port: int,
    index: int,
    stats: lk.Stats,
    pace: tuple[float, float] | None,
    seed: int,
) -> list[lk.BotClient]:
    """Four bot clients at one new table: the first creates it, three sit; it starts by itself.
    The table is named `load {index}` (`load 7`); its players `t7s0` to `t7s3`."""
    rng = random.Random(seed * 1_000_003 + index)
    clients = []
    for seat in range(4):
        name = f"t{index}s{seat}"
        rng_seat = random.Random(rng.random())
        clients.append(await lk.BotClient.connect(port, name, stats, rng_seat, pace))
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

        def on_ready(pids: list[int]) -> dict[str, Any]:
            return {"rss_after": lk.rss_kib(server.pid)}

        shares = [
            (server.port, first, count, pace, seed)
            for first, count in split(tables, min(procs, tables))
        ]
        result = drive(tonk_worker, shares, seconds, warmup, on_ready, server_pid=server.pid)
        result["rss_end"] = lk.rss_kib(server.pid)
        result["rss_before"] = rss_before
    finally:
        code = server.stop()
    result["server_exit"] = code
    return summarize(result, tables, seconds)


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
