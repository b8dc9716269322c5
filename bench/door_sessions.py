"""What a door session costs: its memory and its start, through both doors of a real
`tonk-server --ssh-port 0 --web-port 0` (this tree's, or another's with `--tonk-server`, to
measure before and after on the same machine).

    python bench/door_sessions.py --json after.json
    python bench/door_sessions.py --tonk-server BEFORE/.venv/bin/tonk-server --json before.json

- handshake to lobby: from opening the TCP connection (SSH: handshake, key, pty, shell; web:
  the websocket, after the name form) to the lobby drawn, each session alone (`--alone` of
  them, p50, with the CPU time the SSH session's process took to get there, which a busy
  machine changes less) and `--at-once` SSH sessions arriving together (p50, p99);
- memory a session adds: with `--sessions` SSH sessions in the lobby, then as many at a
  practice table (three bots playing), then as many web sessions in the lobby: each session's
  process as PSS (its share of the pages it shares), USS (its private pages) and RSS, from
  /proc/PID/smaps_rollup (medians); the template's own, where there is one;
- everything at once: `--tables` paced tables (bench/load.py's paced mode: 4 bot clients
  each over TCP, acting 0.5-1.5 s after their turn) alone, then with `--many` door sessions
  (half SSH, half web, in the lobby): the PSS of the server and all its processes added up,
  and the paced tables' latency each time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load_driver
import loadkit as lk
from doorkit import Session, memory_kib, paced_with

TEMPLATE_NAME = "tonk-template"


def descendants(pid: int) -> list[int]:
    found = []
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found


def name_of(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/comm").read_text().strip()
    return ""


def sessions_of(server: int) -> list[int]:
    """The server's door sessions' processes (its descendants but the template)."""
    return [pid for pid in descendants(server) if name_of(pid) != TEMPLATE_NAME]


def template_of(server: int) -> int | None:
    found = [pid for pid in descendants(server) if name_of(pid) == TEMPLATE_NAME]
    return found[0] if found else None


class WebSession:
    """A browser's session, as the page does it: the name form, its cookie, the websocket."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        self.client: aiohttp.ClientSession | None = None
        self.socket: aiohttp.ClientWebSocketResponse | None = None
        self.reader: asyncio.Task[None] | None = None

    async def open(self) -> float:
        self.client = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        headers = {"Origin": self.url}
        response = await self.client.post(
            self.url + "/", data={"name": self.name}, headers=headers, allow_redirects=False
        )
        assert response.status == 303, await response.text()
        started = time.perf_counter()
        self.socket = await self.client.ws_connect(
            self.url + "/ws?width=100&height=30", headers=headers
        )
        seen = b""
        async with asyncio.timeout(600):
            while b"lobby" not in seen:
                message = await self.socket.receive()
                if message.type != aiohttp.WSMsgType.BINARY:
                    raise AssertionError(f"the session ended: {seen[-500:]!r}")
                seen += message.data
        took = time.perf_counter() - started
        socket = self.socket

        async def drain() -> None:  # the page reads all it is sent
            with contextlib.suppress(Exception):
                async for _ in socket:
                    pass

        self.reader = asyncio.create_task(drain())
        return took

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()
        if self.client is not None:
            await self.client.close()
        if self.reader is not None:
            self.reader.cancel()


class Server:
    """tonk-server with both doors, in a directory of its own."""

    def __init__(self, program: str, workdir: Path, tables: int, sessions: int) -> None:
        run = Path(tempfile.mkdtemp(dir=workdir))
        limits = load_driver.server_limits(max(tables, 1), False)
        limits.update(
            {
                "ssh_sessions": sessions + 10,
                "ssh_per_address": sessions + 10,
                "web_sessions": sessions + 10,
                "web_per_address": sessions + 10,
            }
        )
        self.log = run / "server.log"
        self.process = lk.start_server(
            run / "tonk.db",
            limits,
            ["--log-level", "warning", "--ssh-port", "0", "--web-port", "0"],
            log=self.log,
            program=[program],
        )
        assert self.process.proc.stdout is not None
        ssh = self.process.proc.stdout.readline()
        web = self.process.proc.stdout.readline()
        found_ssh = re.search(r"ssh on .*:(\d+) \(", ssh)
        found_web = re.search(r"web on .*:(\d+)$", web.strip())
        if found_ssh is None or found_web is None:
            self.process.stop()
            raise RuntimeError(f"no door lines: {ssh!r} {web!r}")
        self.ssh_port = int(found_ssh.group(1))
        self.url = f"http://127.0.0.1:{found_web.group(1)}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        self.process.stop()


def medians(pids: list[int]) -> dict[str, float]:
    figures = [memory_kib(pid) for pid in pids]
    return {
        kind: statistics.median(f[kind] for f in figures) / 1024 for kind in ("pss", "uss", "rss")
    } | {"count": len(figures)}


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def starts_and_memory(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server = Server(args.tonk_server, workdir, 0, 2 * max(args.sessions, args.at_once))
    result: dict[str, Any] = {}
    try:
        await settle(3)  # the template's own start
        alone, cpu = [], []
        for n in range(args.alone):
            session = Session(server.ssh_port, f"alone{n}")
            alone.append(await session.open(b"playing as"))
            cpu += [lk.cpu_seconds(pid) for pid in sessions_of(server.pid)]
            await session.close()
            await settle(0.5)
        result["ssh_alone"] = lk.latency_summary(alone)
        result["ssh_alone_cpu"] = lk.latency_summary(cpu)  # the session's process's, to the lobby
        web_alone = []
        for n in range(args.alone):
            web = WebSession(server.url, f"webalone{n}")
            web_alone.append(await web.open())
            await web.close()
            await settle(0.5)
        result["web_alone"] = lk.latency_summary(web_alone)
        await settle(2)
        crowd = [Session(server.ssh_port, f"crowd{n}") for n in range(args.at_once)]
        took = await asyncio.gather(
            *(s.open(b"playing as", args.patience) for s in crowd), return_exceptions=True
        )
        arrived = [t for t in took if isinstance(t, float)]
        result["ssh_at_once"] = lk.latency_summary(arrived) if arrived else {"count": 0}
        result["ssh_at_once"]["not_in_time"] = len(took) - len(arrived)
        await asyncio.gather(*(s.close() for s in crowd))
        await settle(3)
        for label, make, marker in (
            ("ssh_lobby", lambda n: Session(server.ssh_port, f"lobby{n}"), b"playing as"),
            (
                "ssh_table",
                lambda n: Session(server.ssh_port, f"table{n}", command="practice"),
                b"practice",
            ),
        ):
            sessions = [make(n) for n in range(args.sessions)]
            for s in sessions:
                await s.open(marker, args.patience)
            await settle(5)  # (at a table: hands being played meanwhile)
            result[label] = medians(sessions_of(server.pid))
            await asyncio.gather(*(s.close() for s in sessions))
            await settle(3)
        webs = [WebSession(server.url, f"web{n}") for n in range(args.sessions)]
        for w in webs:
            await w.open()
        await settle(5)
        result["web_lobby"] = medians(sessions_of(server.pid))
        template = template_of(server.pid)
        result["template"] = memory_kib(template) if template else None
        result["server"] = memory_kib(server.pid)
        await asyncio.gather(*(w.close() for w in webs))
    finally:
        server.stop()
    return result


async def everything_at_once(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server = Server(args.tonk_server, workdir, 2 * args.tables, args.many)  # two runs of them
    result: dict[str, Any] = {}
    opened: list[Session | WebSession] = []
    try:
        await settle(3)
        result["paced_alone"] = await paced_with(server.process, [], args)  # no session
        for n in range(args.many // 2):
            ssh = Session(server.ssh_port, f"s{n}")
            await ssh.open(b"playing as", args.patience)
            opened.append(ssh)
            web = WebSession(server.url, f"w{n}")
            await web.open()
            opened.append(web)
        memory: dict[str, Any] = {}

        async def measure_meanwhile() -> None:
            await asyncio.sleep(args.warmup + args.seconds / 2)
            pids = [server.pid, *descendants(server.pid)]
            figures = {pid: memory_kib(pid) for pid in pids}
            memory["processes"] = len(pids)
            memory["pss_total_mib"] = sum(f["pss"] for f in figures.values()) / 1024
            memory["rss_total_mib"] = sum(f["rss"] for f in figures.values()) / 1024
            memory["server_pss_mib"] = figures[server.pid]["pss"] / 1024

        measuring = asyncio.create_task(measure_meanwhile())
        result["paced"] = await paced_with(server.process, [], args)
        await measuring
        result["memory"] = memory
        result["sessions"] = len(sessions_of(server.pid))
    finally:
        for session in opened:
            with contextlib.suppress(Exception):
                await session.close()
        server.stop()
    return result


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "command": "python bench/door_sessions.py " + " ".join(sys.argv[1:]),
        "tonk_server": args.tonk_server,
        "machine": lk.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_before": lk.load_average(),
    }
    with tempfile.TemporaryDirectory(prefix="tonk-doors-") as tmp:
        workdir = Path(tmp)
        if args.sessions:
            report["sessions"] = await starts_and_memory(args, workdir)
            print(json.dumps(report["sessions"], indent=1), flush=True)
        if args.many:
            report["many"] = await everything_at_once(args, workdir)
            print(json.dumps(report["many"], indent=1), flush=True)
    report["load_after"] = lk.load_average()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = str(Path(sys.executable).with_name("tonk-server"))
    parser.add_argument("--tonk-server", default=default, help="the tonk-server to measure")
    parser.add_argument("--alone", type=int, default=10, help="sessions opened one at a time")
    parser.add_argument("--at-once", type=int, default=20, help="SSH sessions arriving together")
    parser.add_argument("--sessions", type=int, default=10, help="sessions for the memory")
    parser.add_argument("--many", type=int, default=50, help="door sessions with the tables")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument(
        "--patience", type=float, default=120.0, help="seconds a session may take to arrive"
    )
    parser.add_argument("--json", type=Path, help="save the report as JSON here")
    args = parser.parse_args(argv)
    lk.raise_nofile()
    report = asyncio.run(main_async(args))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
