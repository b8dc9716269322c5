"""How soon `tonk-client` lists a server on the LAN, and drops one that stops: a real
`tonk-server` announcing in one network namespace, the real `tonk-client` on a pseudo-terminal
in another, the two joined by a virtual Ethernet pair (tests/kit/netnskit.py; as root, with
iproute2: nothing reaches a real network).

    python bench/lan_discovery.py --runs 10

Each run starts a server (its announcement done first: the host started it before the friend
came), then the client with no address, and times from the client's spawn until its start
screen is drawn (`drawn`: the interpreter's start, Textual's) and until it shows the server
(`listed`: then the multicast query and the answer, the server's records resolved), then
from the server's SIGTERM until the row is gone (`gone`: its goodbye). The screen is read
every 50 ms. Medians are printed, with the least and greatest.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kit"))

from netnskit import Lan, NoNamespaces, made_lan
from ptyterm import Term
from termkit import command_path, stop_process

NAME = "Bench box"


def start_server(lan: Lan, folder: Path) -> subprocess.Popen[str]:
    """A server announcing in the server's namespace, once its log says it is announced."""
    log = folder / "server.log"
    server = subprocess.Popen(
        lan.run_in(
            lan.server,
            [
                command_path("tonk-server"),
                *("--port", "0", "--db", str(folder / "bench.db"), "--name", NAME),
            ],
        ),
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # noqa: SIM115
        text=True,
    )
    give_up = time.monotonic() + 30
    while "announced on the LAN" not in log.read_text():
        if server.poll() is not None or time.monotonic() > give_up:
            stop_process(server, 15)
            sys.exit(f"tonk-server did not announce itself:\n{log.read_text()}")
        time.sleep(0.05)
    return server


async def one_run(lan: Lan, folder: Path) -> tuple[float, float, float]:
    server = start_server(lan, folder)
    term = Term(80, 24)
    try:
        started = time.perf_counter()
        term.start(lan.run_in(lan.client, [command_path("tonk-client")]), {"LANG": "C.UTF-8"})
        await term.wait_for("Practice table")
        drawn = time.perf_counter() - started
        await term.wait_for(NAME)
        listed = time.perf_counter() - started
        stopping = time.perf_counter()
        server.terminate()
        await term.wait_gone(NAME)
        gone = time.perf_counter() - stopping
    finally:
        term.close()
        stop_process(server, 15)
    return drawn, listed, gone


def spread(values: list[float]) -> str:
    return (
        f"{statistics.median(values):.2f} s "
        f"({min(values):.2f} to {max(values):.2f}, {len(values)} runs)"
    )


async def main_async(runs: int) -> int:
    drawn: list[float] = []
    listed: list[float] = []
    gone: list[float] = []
    try:
        with made_lan() as lan, tempfile.TemporaryDirectory() as folder:
            for _ in range(runs):
                for times, value in zip(
                    (drawn, listed, gone), await one_run(lan, Path(folder)), strict=True
                ):
                    times.append(value)
    except NoNamespaces as exc:
        print(f"lan_discovery: {exc}", file=sys.stderr)
        return 2
    print(f"client start to start screen drawn: {spread(drawn)}")
    print(f"client start to server listed: {spread(listed)}")
    found = [b - a for a, b in zip(drawn, listed, strict=True)]
    print(f"start screen drawn to server listed: {spread(found)}")
    print(f"server stopped to row gone: {spread(gone)}")
    return 0


def txt_cost(tables: int) -> float:
    """Milliseconds the announcer's look at `tables` open tables of four (two people, two
    bots) takes: the TXT record built, as every 2 s (the median of 20 looks)."""
    from types import SimpleNamespace
    from typing import Any, cast

    from tonk.server.announce import Announcer

    seats = [
        SimpleNamespace(kind=kind, name=name)
        for kind, name in (("human", "Ann"), ("human", "Bo"), ("bot", "Ada"), ("bot", "Bix"))
    ]
    server = SimpleNamespace(
        tables={n: SimpleNamespace(open=True, seats=seats) for n in range(tables)}
    )
    announcer = Announcer(cast(Any, server), "bench", ["10.0.0.1"])
    times = []
    for _ in range(20):
        started = time.perf_counter()
        announcer.txt()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="servers started and found")
    parser.add_argument(
        "--txt-tables",
        type=int,
        metavar="N",
        help="instead: time the announcer's look at N open tables (the TXT record built)",
    )
    args = parser.parse_args(argv)
    if args.txt_tables is not None:
        print(f"TXT record of {args.txt_tables} tables: {txt_cost(args.txt_tables):.3f} ms")
        return 0
    return asyncio.run(main_async(args.runs))


if __name__ == "__main__":
    sys.exit(main())
