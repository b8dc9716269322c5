"""The server's memory after many connections opened and closed: is what it keeps held by
something (it would grow with every round) or kept by the allocator (it stays level)?

    python bench/conn_memory.py [--connections 5000] [--at-once 1000] [--rounds 4] [--write]

Two measures. `tonk-server` as a child process: its RSS before, and after each round of
`--connections` connections (at most `--at-once` open together, from several loopback addresses;
each says hello, asks for the table list and closes). Then the same rounds against a server in
this process: Python objects by type and the bytes tracemalloc sees allocated, before and after,
and the RSS after glibc's malloc_trim(0) gives back what it can. `--write` puts the figures in
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import ctypes
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from loadkit import machine, raise_nofile, rss_kib, start_server, write_section
from tonk.shared.wire import protocol as p

ADDRESS_SHARE = 60  # connections from one loopback address (the default limit is 64)


async def visit(port: int, number: int) -> None:
    """Connect from 127.0.0.N, say hello, ask for the tables, close."""
    source = f"127.0.{1 + number // ADDRESS_SHARE // 250}.{2 + number // ADDRESS_SHARE % 250}"
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        writer.write(p.encode({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "m"}))
        writer.write(p.encode({"type": p.LIST_TABLES}))
        await writer.drain()
        decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
        while True:
            data = await reader.read(65536)
            if not data:
                raise RuntimeError("closed before the table list")
            decoder.feed(data)
            messages = list(decoder.messages())
            errors = [m for m in messages if m["type"] == p.ERROR]
            if errors:
                raise RuntimeError(f"refused: {errors[0]}")
            if any(m["type"] == p.TABLES for m in messages):
                break
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


FAILED: collections.Counter[str] = collections.Counter()


async def one_round(port: int, connections: int, at_once: int) -> None:
    """`connections` visits, `at_once` at a time (a failed one is counted in FAILED)."""
    for start in range(0, connections, at_once):
        end = min(connections, start + at_once)
        results = await asyncio.gather(
            *(visit(port, n) for n in range(start, end)), return_exceptions=True
        )
        FAILED.update(repr(r) for r in results if r is not None)
        await asyncio.sleep(0.05)  # the server closes its side of the last batch


async def child_process(args: argparse.Namespace, db: Path) -> list[float]:
    """RSS (MiB) of a `tonk-server` child: before, then after each round."""
    limits: dict[str, float] = {"max_per_address": ADDRESS_SHARE + 4, "max_connections": 5000}
    server = start_server(db, limits, ["--log-level", "warning"])
    try:
        await asyncio.sleep(1)
        out = [rss_kib(server.pid) / 1024]
        for _ in range(args.rounds):
            await one_round(server.port, args.connections, args.at_once)
            await asyncio.sleep(3)  # closing connections linger up to 2 s
            out.append(rss_kib(server.pid) / 1024)
        return out
    finally:
        server.stop()


def own_rss() -> float:
    return rss_kib(os.getpid()) / 1024


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_in_use() -> float:
    """MiB that C code (the interpreter, SQLite, ...) holds from glibc's malloc, -1 where
    mallinfo2 is missing."""
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return -1.0
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    return float(info.uordblks + info.hblkhd) / 2**20


def census() -> collections.Counter[str]:
    gc.collect()
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


async def in_process(args: argparse.Namespace, db: Path) -> dict[str, object]:
    """The same rounds against a server in this process, traced."""
    from tonk.server.app import Limits, ServerConfig, TonkServer

    limits = Limits(max_per_address=ADDRESS_SHARE + 4, max_connections=5000)
    server = TonkServer(ServerConfig(host="127.0.0.1", port=0, db_path=db, limits=limits))
    await server.start()
    try:
        await one_round(server.port, args.at_once, args.at_once)  # the loop's own tables grow
        await asyncio.sleep(3)
        before = census()
        c_before = malloc_in_use()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(args.rounds):
            await one_round(server.port, args.connections, args.at_once)
        await asyncio.sleep(3)
        after = census()
        kept = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
        c_after = malloc_in_use()
        grown = {k: after[k] - before[k] for k in after if after[k] - before[k] > 0}
        rss = own_rss()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        return {
            "connections": len(server.connections),
            "objects_grown": sum(grown.values()),
            "objects_by_type": dict(sorted(grown.items(), key=lambda kv: -kv[1])[:5]),
            "traced_kib": kept / 1024,
            "malloc_before": c_before,
            "malloc_after": c_after,
            "rss": rss,
            "rss_trimmed": own_rss(),
        }
    finally:
        await server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--at-once", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md")
    args = parser.parse_args()
    raise_nofile(args.at_once * 2 + 1000)
    with tempfile.TemporaryDirectory() as tmp:
        child = asyncio.run(child_process(args, Path(tmp) / "child.db"))
        traced = asyncio.run(in_process(args, Path(tmp) / "traced.db"))
    rounds = ", ".join(f"{mib:.1f}" for mib in child[1:])
    if FAILED:
        print(f"visits that failed: {dict(FAILED)}")
    print(f"tonk-server RSS: {child[0]:.1f} MiB before; after each round: {rounds} MiB")
    print(
        f"in process, after {args.rounds} rounds: {traced['connections']} connections, "
        f"{traced['objects_grown']} more Python objects {traced['objects_by_type']}, "
        f"{traced['traced_kib']:.0f} KiB still allocated of what was allocated since; "
        f"glibc malloc in use {traced['malloc_before']:.2f} -> {traced['malloc_after']:.2f} MiB; "
        f"RSS {traced['rss']:.1f} MiB, {traced['rss_trimmed']:.1f} MiB after malloc_trim(0)"
    )
    if args.write:
        body = f"""Reproduce: `python bench/conn_memory.py --connections {args.connections} \\
--at-once {args.at_once} --rounds {args.rounds} --write` ({machine()}, {time.strftime("%Y-%m-%d")}).

Rounds of {args.connections:,} connections, at most {args.at_once:,} open together; each says
hello, asks for the table list and closes.

| | MiB |
|---|---|
| `tonk-server` RSS before | {child[0]:.1f} |
{chr(10).join(f"| after round {n} | {mib:.1f} |" for n, mib in enumerate(child[1:], 1))}

The same rounds against a server in the benchmark's own process: afterwards
{traced["connections"]} connections are left, {traced["objects_grown"]} more Python objects exist
than before the rounds, and {traced["traced_kib"]:.0f} KiB of what was allocated during them is
still allocated (the tables of sets and dicts that grew to hold {args.at_once:,} connections at
once and do not shrink); what C code holds from glibc's malloc went from
{traced["malloc_before"]:.2f} to {traced["malloc_after"]:.2f} MiB; glibc's `malloc_trim(0)` takes
that process from {traced["rss"]:.1f} to {traced["rss_trimmed"]:.1f} MiB.

**Which it is: the allocator, not something held.** The RSS rises in the first round (while
connections come and go, their objects and buffers are allocated and freed by the thousand),
then moves by a few MiB from round to round, up or down, and from run to run: it follows when
the garbage collector runs (`tonk-server` collects its oldest objects rarely, see
`GC_THRESHOLDS`; each closed connection leaves a few objects in reference cycles, about 28,000
for 5,000 connections, freed at the next full collection) and what the allocators keep, not the
number of connections served. What is still allocated after the rounds is the decisive figure:
no object, no Python allocation and no C allocation grows with the connections. The memory is
freed to Python's and C's allocators, which keep it for the next
connections rather than give it back to the system (pymalloc returns a 256 KiB arena only once
every object in it is freed, and glibc keeps freed heap below its top). So nothing needed
fixing; a server that must give it back after a burst could call `malloc_trim(0)`, which returns
only part of it.
"""
        path = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"
        write_section(path, "## Memory after many connections", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
