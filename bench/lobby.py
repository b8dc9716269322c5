"""The lobby under load: N tables playing, and M lobby connections asking for pages of the
table list and receiving its changes as fast as the server's limits let them.

    python bench/lobby.py --tables 1000 --lobby 200 --seconds 20 --write BENCHMARKS.md

One real `tonk-server` (a child process, a fresh SQLite file, the documented limits but for
the connection and table counts that one address needs here). Three kinds of clients, each in
generator processes of their own (bench/loadkit.py's bot clients over TCP):

- the tables: N tables of four `easy` bots acting 0.5-1.5 s after their turn comes, as people
  play (bench/load.py's paced mode); latency is from writing an action to the arrival of that
  connection's next `update`;
- a few honest tables (`--honest`, 4) whose bots act 10 ms after their turn comes, so that
  updates stream without pause: the gap between two updates of one hand that seat 0 receives
  shows any stall of the server at once;
- the lobby: M connections, each keeping two `list_tables` requests in flight (a new one as
  each answer comes, paging through the whole list over and over), and receiving every `lobby`
  message of changes. They read frames but decode only their first bytes (to count them), so
  that the machine's CPU goes to the server rather than to them.

The run has three windows of `--seconds` each: without the lobby connections, with them, and
without them again (they close). What the tables measured in each window is compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load_driver
import loadkit as lk
from tonk.server.app import ServerConfig
from tonk.shared.wire import protocol as p

HONEST_PACE = (0.01, 0.01)
TABLES_HEAD = b"\xa4type\xa6tables"
LOBBY_HEAD = b"\xa4type\xa5lobby"
WINDOWS = ("before", "lobby", "after")

#: (time an action was sent, its latency) and (time an update came, gap since the last one of
#: its hand), as this generator process measured them.
SAMPLES: list[tuple[float, float]] = []
GAPS: list[tuple[float, float]] = []


class TimedBot(lk.BotClient):
    """A bot client that keeps when each action was sent, with its latency (the paced
    tables' only: the honest tables are measured by their gaps)."""

    timed = True

    def updated(self, message: dict[str, Any]) -> None:
        sent = self.sent_at
        now = time.monotonic()
        super().updated(message)
        if sent is not None and self.timed:
            SAMPLES.append((sent, now - sent))


def gap_tracker() -> Any:
    last: dict[str, float] = {}

    def seen(client: lk.BotClient, message: dict[str, Any]) -> None:
        now = time.monotonic()
        hand = f"{message['table']}:{message['hand']}"
        before = last.get(hand)
        if before is not None:
            GAPS.append((now, now - before))
        last.clear()
        last[hand] = now

    return seen


async def seat_table(
    port: int, index: int, stats: lk.Stats, pace: tuple[float, float], seed: int, honest: bool
) -> list[lk.BotClient]:
    kind = "honest" if honest else "load"
    clients = await load_driver.seat_table(port, index, stats, pace, seed, TimedBot, kind)
    if honest:
        for client in clients:
            client.timed = False  # type: ignore[attr-defined]
        clients[0].on_update = gap_tracker()
    return clients


def table_worker(
    port: int, first: int, count: int, honest: bool, seed: int, commands: Any, results: Any
) -> None:
    lk.raise_nofile()
    asyncio.run(_table_worker(port, first, count, honest, seed, commands, results))


async def _table_worker(
    port: int, first: int, count: int, honest: bool, seed: int, commands: Any, results: Any
) -> None:
    loop = asyncio.get_running_loop()
    stats = lk.Stats()
    gate = asyncio.Semaphore(load_driver.SETUP_CONCURRENCY)
    pace = HONEST_PACE if honest else load_driver.PACE

    async def one(index: int) -> list[lk.BotClient]:
        async with gate:
            return await seat_table(port, index, stats, pace, seed, honest)

    tables = await asyncio.gather(*(one(first + i) for i in range(count)))
    load_driver.quiet_collector()
    results.put(("ready", os.getpid()))
    command = await loop.run_in_executor(None, commands.get)
    assert command == "stop"
    for clients in tables:
        for client in clients:
            client.close()
    results.put(("done", {"samples": SAMPLES, "gaps": GAPS, "errors": stats.errors}))


class LobbyClient(asyncio.Protocol):
    """One connection in the lobby: two list_tables always in flight, paging through the list
    (`after` in steps of a page: the table ids of a fresh server are 1, 2, ...)."""

    def __init__(self, name: str, tables: int, counts: dict[str, list[float]]) -> None:
        self.name = name
        self.tables = tables
        self.counts = counts
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.after = 0
        self.welcomed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        hello = {"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": self.name}
        transport.write(p.encode(hello, p.MAX_CLIENT_FRAME))

    def ask(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        message = {"type": p.LIST_TABLES, "after": self.after, "id": 1}
        self.after = self.after + p.PAGE_SIZE if self.after + p.PAGE_SIZE < self.tables else 0
        self.transport.write(p.encode(message, p.MAX_CLIENT_FRAME))

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        now = time.monotonic()
        self.counts["bytes"].append(now)
        self.counts["byte_sizes"].append(len(data))
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big")
            if len(buffer) < 4 + size:
                break
            # Only the type is read (the map's first key): 1 byte of map header, "type".
            head = bytes(buffer[5:17])
            payload_end = bytes(buffer[4 + size - 12 : 4 + size])
            small = bytes(buffer[4 : 4 + size]) if size < 4096 else b""
            del buffer[: 4 + size]
            if head == TABLES_HEAD:
                if b"reply_to" in payload_end:
                    self.counts["answers"].append(now)
                    self.ask()
                else:
                    self.counts["arrival"].append(now)
            elif head.startswith(LOBBY_HEAD):
                self.counts["changes"].append(now)
            elif small:
                self.other(p.decode_payload(small), now)

    def other(self, message: dict[str, Any], now: float) -> None:
        kind = message["type"]
        if kind == p.WELCOME:
            self.welcomed = True
            self.ask()
            self.ask()
        elif kind == p.PING and self.transport is not None:
            reply = {"type": p.PONG, **({"n": message["n"]} if "n" in message else {})}
            self.transport.write(p.encode(reply, p.MAX_CLIENT_FRAME))
        elif kind == p.ERROR:
            self.counts["errors"].append(now)


def lobby_worker(port: int, connections: int, tables: int, commands: Any, results: Any) -> None:
    lk.raise_nofile()
    asyncio.run(_lobby_worker(port, connections, tables, commands, results))


async def _lobby_worker(
    port: int, connections: int, tables: int, commands: Any, results: Any
) -> None:
    loop = asyncio.get_running_loop()
    counts: dict[str, list[float]] = {
        k: [] for k in ("bytes", "byte_sizes", "answers", "arrival", "changes", "errors")
    }
    clients = []
    for i in range(connections):
        client = LobbyClient(f"lobby{i}", tables, counts)
        await loop.create_connection(lambda client=client: client, "127.0.0.1", port)  # type: ignore[misc]
        clients.append(client)
    load_driver.quiet_collector()
    results.put(("ready", os.getpid()))
    began, cpu = time.monotonic(), time.process_time()
    command = await loop.run_in_executor(None, commands.get)
    assert command == "stop"
    cpu_percent = 100 * (time.process_time() - cpu) / (time.monotonic() - began)
    for client in clients:
        if client.transport is not None:
            client.transport.close()
    welcomed = sum(c.welcomed for c in clients)
    results.put(("done", {"counts": counts, "welcomed": welcomed, "cpu_percent": cpu_percent}))


def start(target: Any, args: tuple[Any, ...], results: Any) -> tuple[Any, Any]:
    ctx = mp.get_context("spawn")
    commands = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, commands, results), daemon=True)
    proc.start()
    return proc, commands


def wait_ready(results: Any, count: int, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    ready = 0
    while ready < count:
        kind, _ = results.get(timeout=max(1.0, deadline - time.monotonic()))
        if kind == "ready":
            ready += 1


def window(server: lk.ServerProcess, seconds: float) -> dict[str, float]:
    """Wait out one window; the server's CPU over it."""
    start = time.monotonic()
    cpu0 = lk.cpu_seconds(server.pid), *lk.thread_cpu_seconds(server.pid)
    time.sleep(seconds)
    cpu1 = lk.cpu_seconds(server.pid), *lk.thread_cpu_seconds(server.pid)
    total, loop_cpu, store = (b - a for a, b in zip(cpu0, cpu1, strict=True))
    return {
        "start": start,
        "end": start + seconds,
        "server_cpu_percent": 100 * total / seconds,
        "server_loop_cpu_percent": 100 * loop_cpu / seconds,
        "server_store_cpu_percent": 100 * store / seconds,
    }


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    tables, honest, lobby = args.tables, args.honest, args.lobby
    connections = 4 * (tables + honest) + lobby + 100
    limits = {
        "max_connections": connections,
        "max_per_address": connections,
        "max_tables": tables + honest + 10,
        "max_tables_per_address": tables + honest + 10,
    }
    server = lk.start_server(
        workdir / "tonk.db", limits, ["--log-level", "warning"], log=workdir / "server.log"
    )
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs: list[tuple[Any, Any]] = []
    try:
        shares = load_driver.split(tables, min(args.procs, tables))
        for first, count in shares:
            procs.append(start(table_worker, (server.port, first, count, False, 1), results))
        procs.append(start(table_worker, (server.port, 100_000, honest, True, 2), results))
        wait_ready(results, len(procs))
        rss = lk.rss_kib(server.pid)
        time.sleep(args.warmup)
        windows: dict[str, dict[str, float]] = {}
        windows["before"] = window(server, args.seconds)
        lobby_proc = start(lobby_worker, (server.port, lobby, tables), results)
        wait_ready(results, 1)
        time.sleep(1.0)  # every lobby connection welcomed and sent its first page
        windows["lobby"] = window(server, args.seconds)
        lobby_proc[1].put("stop")
        lobby_data: dict[str, Any] = {}
        while not lobby_data:
            kind, data = results.get(timeout=120)
            if kind == "done":
                lobby_data = data
        lobby_proc[0].join(10)
        time.sleep(1.0)
        windows["after"] = window(server, args.seconds)
        for _, commands in procs:
            commands.put("stop")
        samples: list[tuple[float, float]] = []
        gaps: list[tuple[float, float]] = []
        errors: dict[str, int] = {}
        done = 0
        while done < len(procs):
            kind, data = results.get(timeout=120)
            if kind != "done":
                continue
            done += 1
            samples += data["samples"]
            gaps += data["gaps"]
            for code, n in data["errors"].items():
                errors[code] = errors.get(code, 0) + n
        for proc, _ in procs:
            proc.join(10)
    finally:
        code = server.stop()
    report: dict[str, Any] = {
        "tables": tables,
        "honest": honest,
        "lobby": lobby,
        "seconds": args.seconds,
        "server_exit": code,
        "server_rss_mib": rss / 1024,
        "errors": errors,
        "lobby_welcomed": lobby_data["welcomed"],
        "lobby_generator_cpu_percent": lobby_data["cpu_percent"],
        "windows": {},
    }
    counts = lobby_data["counts"]
    for name, w in windows.items():
        start_, end = w["start"], w["end"]
        inside = sorted(lat for sent, lat in samples if start_ <= sent < end)
        gap = sorted(g for at, g in gaps if start_ <= at < end)
        entry: dict[str, Any] = {
            **{k: v for k, v in w.items() if k.endswith("percent")},
            "actions_per_second": len(inside) / args.seconds,
            "latency_ms": lk.latency_summary(inside),
            "gap_ms": lk.latency_summary(gap),
        }
        if name == "lobby":

            def rate(key: str, start_: float = start_, end: float = end) -> float:
                return sum(start_ <= t < end for t in counts[key]) / args.seconds

            received = sum(
                size
                for t, size in zip(counts["bytes"], counts["byte_sizes"], strict=True)
                if start_ <= t < end
            )
            entry["lobby_pages_per_second"] = rate("answers")
            entry["lobby_changes_per_second"] = rate("changes")
            entry["lobby_mib_per_second"] = received / args.seconds / 2**20
            entry["lobby_errors"] = len(counts["errors"])
        report["windows"][name] = entry
    return report


def describe(report: dict[str, Any]) -> str:
    lines = []
    for name, w in report["windows"].items():
        lat, gap = w["latency_ms"], w["gap_ms"]
        text = (
            f"{name}: {w['actions_per_second']:,.0f} actions/s, latency p50 {lat['p50']:.1f} "
            f"p99 {lat['p99']:.1f} max {lat['max']:.1f} ms; honest gaps ({gap['count']:,}) "
            f"p99 {gap['p99']:.1f} "
            f"max {gap['max']:.1f} ms; server CPU {w['server_cpu_percent']:.0f}% "
            f"(loop {w['server_loop_cpu_percent']:.0f}%)"
        )
        if "lobby_pages_per_second" in w:
            text += (
                f"; lobby: {w['lobby_pages_per_second']:,.0f} pages/s, "
                f"{w['lobby_changes_per_second']:,.0f} change messages/s, "
                f"{w['lobby_mib_per_second']:.1f} MiB/s, {w['lobby_errors']} errors"
            )
        lines.append(text)
    return "\n".join(lines)


def section(report: dict[str, Any], command: str) -> str:
    windows = report["windows"]
    before, lobby = windows["before"], windows["lobby"]
    after = windows["after"]
    ratio = lobby["latency_ms"]["p99"] / before["latency_ms"]["p99"]
    ratio_after = lobby["latency_ms"]["p99"] / after["latency_ms"]["p99"]
    gap_max = lobby["gap_ms"]["max"]
    rows = []
    for name, label in zip(
        WINDOWS, ("without the lobby", "with the lobby load", "without it again"), strict=True
    ):
        w = windows[name]
        lat, gap = w["latency_ms"], w["gap_ms"]
        rows.append(
            f"| {label} | {w['actions_per_second']:,.0f} | {lat['p50']:.1f} ms | "
            f"{lat['p99']:.1f} ms | {lat['max']:.0f} ms | {gap['p99']:.1f} ms | "
            f"{gap['max']:.1f} ms | {w['server_cpu_percent']:.0f}% "
            f"({w['server_loop_cpu_percent']:.0f}% loop) |"
        )
    return "\n".join(
        [
            f"Measured {report['date']} on {report['machine']}; load average "
            f"{report['load_before']} before the run, {report['load_after']} after it. The "
            "machine was shared with other work while this was measured, and the generator "
            "processes run on the same cores as the server.",
            "",
            f"{report['tables']:,} tables of four `easy` bots playing at a person's pace (each "
            "seat acts 0.5-1.5 s after its turn comes), "
            f"{report['honest']} honest tables whose bots act 10 ms after their turn comes (so "
            "that their updates stream without pause: the gap between two updates of a hand "
            "that seat 0 receives shows any stall), and "
            f"{report['lobby']} lobby connections that each keep two `list_tables` in flight "
            "(paging through the whole list, over and over) and receive every `lobby` message: "
            "as fast as the server's documented limits let them (pages are paced at "
            f"`pages_per_second` {report['pages_per_second']:g} after a `page_burst` of "
            f"{report['page_burst']:g}; changes come at most every `lobby_interval`, "
            f"{report['lobby_interval']:g} s). Only the connection and table counts are "
            "raised, since every client comes from 127.0.0.1. Three windows of "
            f"{report['seconds']:g} s in one run: before the lobby connections come, while "
            "they ask, and after they have gone. Latency: from writing an action to the "
            "arrival of that connection's next `update` (the paced tables).",
            "",
            *lk.reproduce(command),
            ""
            if "--write" in command
            else "\n(the section written from that run's output: `python bench/lobby.py "
            "--from-json OUTPUT --write BENCHMARKS.md`)\n",
            "| window | actions/s | p50 | p99 | max | honest gap p99 | honest gap max "
            "| server CPU |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"The lobby connections were sent {lobby['lobby_pages_per_second']:,.0f} pages a "
            f"second in all ({lobby['lobby_pages_per_second'] / report['lobby']:.1f} each) and "
            f"{lobby['lobby_changes_per_second']:,.0f} `lobby` messages a second "
            f"({lobby['lobby_changes_per_second'] / report['lobby']:.1f} each), "
            f"{lobby['lobby_mib_per_second']:.1f} MiB/s; errors: {lobby['lobby_errors']} "
            f"(table clients: {sum(report['errors'].values())}). Reading that took the lobby "
            f"connections' generator process {report['lobby_generator_cpu_percent']:.0f}% of a "
            "core, on the same machine.",
            "",
            "Targets, with the lobby load: the honest tables' longest gap between updates "
            f"under 100 ms: **{gap_max:.0f} ms, {'met' if gap_max < 100 else 'not met'}** "
            f"(without the lobby load: {before['gap_ms']['max']:.0f} ms before, "
            f"{after['gap_ms']['max']:.0f} ms after); p99 latency within 2x of the run "
            f"without it: **{ratio:.2f}x, {'met' if ratio <= 2 else 'not met'}** "
            f"({ratio_after:.2f}x of the window after).",
            "",
            ANALYSIS,
        ]
    )


#: What the figures say; kept with the generator so that `--write` keeps it.
ANALYSIS = """\
**What a lobby request costs now.** Before the live lobby, `list_tables` built every table's
summary and packed the whole list on every request, in the event loop: about 4.5 ms at 300
tables and 9 ms at 600 (issue 10's figures); connections that each stayed under every limit (24
from one address asking 15 times a second at 300 tables) froze every table for 6 s. Now each
table's summary is packed once per change (`server/tables/lobby.py`), a page is at most 100 packed
summaries joined (found by bisecting the ids; the same page is kept until a summary changes),
and the changes of each `lobby_interval` are packed into one message written alike to every
connection in the lobby: the server's work grows with the changes and the connections, not with
requests times tables. The table limits are counted as tables change, not over every table on
each `create_table`. A test (`tests/server/test_server_lobby.py`) holds that no request builds a
summary and that a change builds one for the lobby, however many connections ask or listen.

**Reading the figures.** The machine is two cores shared with other people's work, and the
tables' 4,000 clients, the honest tables and the lobby connections run on the same cores as the
server: the windows without the lobby load move as much from one to the next as the window with
it does, and their longest gaps, over 100 ms at times, come with them. The server's own CPU is
the steadier figure. An earlier full run the same day, with pages paced at 5 a second and a
load average of 8 to 13 from other work, measured p99 228 ms before, 663 ms with the lobby load
(58 MiB/s of pages) and 528 ms after it, with the server's CPU 29%, 26% and 22%: the latency
followed the machine, not the server's work; pages are now paced at 2 a second (the lobby is
pushed, so a client pages only on arriving, 20 pages at once).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--honest", type=int, default=4)
    parser.add_argument("--lobby", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each window")
    parser.add_argument("--procs", type=int, default=2, help="generator processes for tables")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--write", type=Path, help="replace the '## Lobby' section of this file")
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="FILE",
        help="measure nothing: write the section (--write) from the output of a --json run",
    )
    args = parser.parse_args(argv)
    if args.from_json:
        if not args.write:
            parser.error("--from-json needs --write")
        text = args.from_json.read_text()
        saved = json.loads(text[text.index("\n{") + 1 :] if not text.startswith("{") else text)
        lk.write_section(args.write, "## Lobby", section(saved, saved["command"]))
        return 0
    lk.raise_nofile()
    command = "python bench/lobby.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    load_before = lk.load_average()
    with tempfile.TemporaryDirectory(prefix="tonk-lobby-") as tmp:
        report = run(args, Path(tmp))
    defaults = ServerConfig()
    report.update(
        pages_per_second=defaults.limits.pages_per_second,
        page_burst=defaults.limits.page_burst,
        lobby_interval=defaults.lobby_interval,
        command=command,
        machine=lk.machine(),
        date=time.strftime("%Y-%m-%d"),
        load_before=load_before,
        load_after=lk.load_average(),
    )
    print(describe(report), flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    if args.write:
        lk.write_section(args.write, "## Lobby", section(report, command))
    return 0 if report["server_exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
