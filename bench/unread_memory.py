"""The server's memory before, during and after a crowd of lobby clients that never read.

Each client says hello, asks for the table list `--pages` times and reads nothing; the server
drops each once it has taken nothing for `unread_timeout` (10 s). Measured: the server's RSS
before the crowd, at its peak, and once every client is dropped (its open files back to where
they were) and the server has been quiet a moment.

Two ways: against a real `tonk-server` child process (RSS only), and `--in-process`, the
server run in this process with the clients in threads, where what Python holds (tracemalloc)
and what C code holds from glibc's malloc (mallinfo2) are read beside the RSS.

    python bench/unread_memory.py --clients 4000 --rounds 2 [--in-process] [--json]

BENCHMARKS.md, "Memory after lobby clients that never read", has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import socket
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadkit import raise_nofile, rss_kib, start_server
from tonk.shared.wire import protocol as p


@dataclass
class Figures:
    """MiB of the server's RSS before the crowds, and at the peak and after each crowd."""

    before: float
    peaks: list[float] = field(default_factory=list)
    afters: list[float] = field(default_factory=list)
    dropped_in: list[float] = field(default_factory=list)  # s from the last connected
    trims: list[str] = field(default_factory=list)  # the server's log lines of its trims
    # In-process only: MiB traced by tracemalloc, and what glibc's malloc has handed out.
    traced: dict[str, float] = field(default_factory=dict)
    malloc: dict[str, float] = field(default_factory=dict)
    trimmed: float | None = None  # RSS after this process's own malloc_trim(0)


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def mallinfo_mib() -> float:
    """What glibc's malloc has handed out and not had back (uordblks + hblkhd), in MiB."""

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

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20


def crowd(port: int, clients: int, pages: int, rcvbuf: int) -> list[socket.socket]:
    """`clients` connections that say hello, ask for `pages` pages and never read."""
    hello = {"type": "hello", "version": p.PROTOCOL_VERSION}
    asks = p.encode({"type": "list_tables"}) * pages
    socks = []
    for number in range(clients):
        sock = socket.socket()
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.connect(("127.0.0.1", port))
        sock.sendall(p.encode({**hello, "name": f"U{number}"}) + asks)
        socks.append(sock)
    return socks


def host_tables(port: int, tables: int) -> None:
    """A host's tables, nobody seated (they stay for the server's --grace), each named at the
    longest, so that a page of the list is large."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(p.encode({"type": "hello", "version": p.PROTOCOL_VERSION, "name": "Host"}))
    decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
    made = 0
    for number in range(tables):
        name = f"{number:04d} " + "n" * 27
        sock.sendall(p.encode({"type": "create_table", "name": name, "sit": False}))
    while made < tables:
        decoder.feed(sock.recv(65536))
        for message in decoder.messages():
            if message["type"] == "error":
                raise RuntimeError(message)
            if message["type"] == "table":
                made += 1
    sock.close()


class Sampler(threading.Thread):
    """The RSS of `pid` every 20 ms; the highest seen."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_kib(self.pid))
            time.sleep(0.02)


def wait_dropped(left: Callable[[], int], clients: list[socket.socket], timeout: float) -> float:
    """Seconds until `left()` (the clients the server still holds) is 0."""
    start = time.monotonic()
    while left() > 0:
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"{left()} clients not dropped in {timeout} s")
        time.sleep(0.05)
    for sock in clients:
        sock.close()
    return time.monotonic() - start


def limits(args: argparse.Namespace) -> dict[str, float]:
    return {
        "max_connections": args.clients + 100,
        "max_per_address": args.clients + 100,
        "max_tables": args.tables + 10,
        "max_tables_per_address": args.tables + 10,
        "unread_timeout": args.unread_timeout,
        "handshake_timeout": 120,
        "messages_per_second": 100_000,
        "burst": 100_000,
    }


def run_child(args: argparse.Namespace) -> Figures:
    """Rounds of the crowd against a `tonk-server` child process."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        server = start_server(
            Path(tmp) / "tonk.db",
            limits(args),
            ["--grace", "3600", "--log-level", "info", "--no-announce"],
            log=log,
        )
        try:
            host_tables(server.port, args.tables)
            time.sleep(1.0)
            files = open_files(server.pid)
            figures = Figures(rss_kib(server.pid) / 1024)
            for _ in range(args.rounds):
                sampler = Sampler(server.pid)
                sampler.start()
                clients = crowd(server.port, args.clients, args.pages, args.rcvbuf)
                figures.dropped_in.append(
                    wait_dropped(lambda: open_files(server.pid) - files, clients, args.drop_timeout)
                )
                time.sleep(args.settle)
                sampler.stop.set()
                sampler.join()
                figures.peaks.append(sampler.peak / 1024)
                figures.afters.append(rss_kib(server.pid) / 1024)
            figures.trims = [
                line.split(" INFO ", 1)[-1]
                for line in log.read_text().splitlines()
                if "given back" in line
            ]
            return figures
        finally:
            server.stop()


def run_in_process(args: argparse.Namespace) -> Figures:
    """One crowd against a server in this process (its event loop in the main thread), the
    clients in a thread: what Python (tracemalloc) and glibc (mallinfo2) hold beside the RSS.
    The RSS counts the clients' side too."""
    from tonk.server.app import Limits, ServerConfig, TonkServer

    async def main(tmp: Path) -> Figures:
        defaults = Limits()
        values = {k: type(getattr(defaults, k))(v) for k, v in limits(args).items()}
        config = ServerConfig(
            host="127.0.0.1",
            port=0,
            db_path=tmp / "tonk.db",
            grace=3600.0,
            limits=replace(defaults, **values),
        )
        server = TonkServer(config)
        await server.start()
        pid = os.getpid()
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, host_tables, int(server.port), args.tables)
            await asyncio.sleep(1.0)
            tracemalloc.start()
            figures = Figures(rss_kib(pid) / 1024)
            figures.traced["before"] = tracemalloc.get_traced_memory()[0] / 2**20
            figures.malloc["before"] = mallinfo_mib()
            sampler = Sampler(pid)
            sampler.start()
            clients = await loop.run_in_executor(
                None, crowd, int(server.port), args.clients, args.pages, args.rcvbuf
            )
            figures.dropped_in.append(
                await loop.run_in_executor(
                    None, wait_dropped, lambda: len(server.connections), clients, args.drop_timeout
                )
            )
            del clients
            await asyncio.sleep(args.settle)
            sampler.stop.set()
            sampler.join()
            traced_after, traced_peak = tracemalloc.get_traced_memory()
            figures.traced |= {"peak": traced_peak / 2**20, "after": traced_after / 2**20}
            if args.top:
                stats = tracemalloc.take_snapshot().statistics("lineno")
                for stat in stats[: args.top]:
                    print(f"{stat.size / 1024:.0f} KiB in {stat.count} blocks")
                    for line in stat.traceback.format()[-2:]:
                        print("   ", line)
                sys._debugmallocstats()
            tracemalloc.stop()
            figures.peaks.append(sampler.peak / 1024)
            figures.afters.append(rss_kib(pid) / 1024)
            figures.malloc["after"] = mallinfo_mib()
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            figures.trimmed = rss_kib(pid) / 1024
            return figures
        finally:
            await server.close()

    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(main(Path(tmp)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4000)
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--pages", type=int, default=15, help="pages each client asks for")
    parser.add_argument("--rcvbuf", type=int, default=4096, help="clients' SO_RCVBUF (0: Linux's)")
    parser.add_argument("--rounds", type=int, default=2, help="crowds, one after the other")
    parser.add_argument("--unread-timeout", type=float, default=10.0)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after each drop")
    parser.add_argument("--drop-timeout", type=float, default=180.0)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--top", type=int, default=0, help="in-process: what is left, by site")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    raise_nofile(args.clients * 2 + 1000)
    figures = run_in_process(args) if args.in_process else run_child(args)
    print(json.dumps(asdict(figures)) if args.json else figures)


if __name__ == "__main__":
    main()
