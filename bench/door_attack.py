"""The SSH door under attack, measured against a real `tonk-server --ssh-port 0` with
asyncssh clients in this process, and the paced game benchmark (bench/load.py's paced mode)
alongside where the tables' latency is the question:

- `flood`: sessions writing letters, or one bracketed paste, as fast as the channel takes
  them, all through the paced benchmark's window: the tables' latency, the server's CPU, and
  the memory of the server with its children (the sessions' apps) before and after;
- `logins`: logins that close without opening a session, `--concurrency` at a time, in
  rounds 5 s apart, then as many as can be made for `--seconds`: the server's memory after
  each round, and 35 s after the last (past `ssh_login_timeout`), and its CPU;
- `crowd`: `--guests` guests logging in at once (each from an address of its own, to the
  lobby, and staying) one second into the paced benchmark's window: the tables' latency, and
  how long the guests took.

    python bench/door_attack.py crowd --guests 50 --tables 100
    python bench/door_attack.py logins --tree ../other-checkout   # another version's server

`--tree DIR` runs DIR's server (`DIR/.venv/bin/python -m tonk.server`): the figures
before a change, from a checkout of the commit before it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncssh

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doorkit
import load_driver
import loadkit as lk

FLOODS = {
    "letters": b"abcdefghijklmnopqrstuvwxyz" * 2521,
    "paste": b"x" * 65536,
}


def program(tree: Path | None) -> list[str]:
    """The door server to run: this checkout's, or `tree`'s."""
    if tree is None:
        return [sys.executable, "-m", "tonk.server"]
    python = tree / ".venv" / "bin" / "python"
    return [str(python), "-m", "tonk.server"]


def start(args: argparse.Namespace, workdir: Path) -> tuple[lk.ServerProcess, int]:
    return doorkit.start(workdir, args.tables, program(args.tree))


async def paced_during(
    server: lk.ServerProcess, args: argparse.Namespace, attack: Any
) -> dict[str, Any]:
    """The paced benchmark's window, with `attack()` started one second into it (and
    cancelled at its end, if it is still going)."""
    loop = asyncio.get_running_loop()
    window = asyncio.Event()
    shares = [
        (server.port, first, count, load_driver.PACE, 1)
        for first, count in load_driver.split(args.tables, min(2, args.tables))
    ]

    def on_ready(pids: list[int]) -> dict[str, Any]:
        loop.call_soon_threadsafe(window.set)
        return {}

    driving = asyncio.ensure_future(
        asyncio.to_thread(
            load_driver.drive,
            load_driver.tonk_worker,
            shares,
            args.seconds,
            args.warmup,
            on_ready,
            600,
            server.pid,
        )
    )
    await window.wait()
    await asyncio.sleep(1.2)
    attacking = asyncio.ensure_future(attack())
    result = await driving
    attacking.cancel()
    extra: Any = {}
    with contextlib.suppress(asyncio.CancelledError):
        extra = await attacking
    summary = load_driver.summarize(result, args.tables, args.seconds)
    summary.update(extra if isinstance(extra, dict) else {})
    return summary


async def flood(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server, port = start(args, workdir)
    sessions = [doorkit.Session(port, f"f{n}") for n in range(args.sessions)]
    closed: dict[str, float] = {}
    try:
        for session in sessions:
            await session.open()
        rss_before = doorkit.rss(server)

        async def one(session: doorkit.Session) -> None:
            assert session.process is not None
            started = time.perf_counter()
            data = FLOODS[args.kind]
            try:
                if args.kind == "paste":
                    session.process.stdin.write(b"\x1b[200~")
                while not session.process.stdin.is_closing():
                    session.process.stdin.write(data)
                    await session.process.stdin.drain()
            except (OSError, asyncssh.Error):
                pass
            closed[session.name] = time.perf_counter() - started

        async def attack() -> dict[str, Any]:
            tasks = [asyncio.ensure_future(one(s)) for s in sessions]
            try:
                await asyncio.gather(*tasks)
                await asyncio.sleep(3600)
            finally:
                for task in tasks:
                    task.cancel()
            return {}

        result = await paced_during(server, args, attack)
        result["rss_before_mib"] = rss_before / 1024
        result["rss_end_mib"] = doorkit.rss(server) / 1024
        await asyncio.sleep(10)
        result["rss_10s_later_mib"] = doorkit.rss(server) / 1024
        result["closed_after_s"] = sorted(closed.values())
    finally:
        for session in sessions:
            await session.close()
        server.stop()
    return result


async def login_once(port: int, key: asyncssh.SSHKey, name: str) -> None:
    conn = await asyncssh.connect(
        "127.0.0.1",
        port,
        username=name,
        client_keys=[key],
        known_hosts=None,
        agent_path=None,
        config=None,
    )
    conn.close()
    await conn.wait_closed()


async def logins(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server, port = start(args, workdir)
    keys = [asyncssh.generate_private_key("ssh-ed25519") for _ in range(args.concurrency)]
    result: dict[str, Any] = {"rounds_mib": []}

    async def many(count: int | None, seconds: float | None) -> int:
        done = 0
        end = time.perf_counter() + (seconds or 1e9)

        async def worker(n: int) -> None:
            nonlocal done
            while time.perf_counter() < end and (count is None or done < count):
                done += 1
                with contextlib.suppress(OSError, asyncssh.Error):
                    await login_once(port, keys[n], f"l{n}")

        await asyncio.gather(*(worker(n) for n in range(args.concurrency)))
        return done

    try:
        await asyncio.sleep(1.0)
        result["rss_start_mib"] = lk.rss_kib(server.pid) / 1024
        for _ in range(args.rounds):
            await many(args.per_round, None)
            result["rounds_mib"].append(lk.rss_kib(server.pid) / 1024)
            await asyncio.sleep(5)
        cpu = lk.cpu_seconds(server.pid)
        started = time.perf_counter()
        result["flood_logins"] = await many(None, args.seconds)
        took = time.perf_counter() - started
        result["flood_cpu_percent"] = 100 * (lk.cpu_seconds(server.pid) - cpu) / took
        result["flood_end_mib"] = lk.rss_kib(server.pid) / 1024
        await asyncio.sleep(35)
        result["flood_35s_later_mib"] = lk.rss_kib(server.pid) / 1024
    finally:
        server.stop()
    return result


async def crowd(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server, port = start(args, workdir)
    # Each from an address of its own, as guests on a network are.
    guests = [doorkit.Session(port, f"g{n}", f"127.0.1.{1 + n}") for n in range(args.guests)]
    took: list[float] = []
    try:

        async def attack() -> dict[str, Any]:
            async def one(guest: doorkit.Session) -> None:
                took.append(await guest.open())

            failed = await asyncio.gather(*(one(g) for g in guests), return_exceptions=True)
            return {"failures": sorted({repr(f) for f in failed if f is not None})}

        result = await paced_during(server, args, attack)
        result["guests_in_the_window"] = len(took)
        result["all_in_s"] = max(took) if took and len(took) == len(guests) else None
        result["guest_to_lobby"] = lk.latency_summary(took)
    finally:
        for guest in guests:
            await guest.close()
        server.stop()
    return result


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tonk-attack-") as tmp:
        measure = {"flood": flood, "logins": logins, "crowd": crowd}[args.what]
        return await measure(args, Path(tmp))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("flood", "logins", "crowd"))
    parser.add_argument("--tree", type=Path, help="run this checkout's server instead")
    parser.add_argument("--tables", type=int, default=100, help="paced benchmark tables")
    parser.add_argument("--seconds", type=float, default=30.0, help="the window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--sessions", type=int, default=4, help="flood: sessions flooding")
    parser.add_argument("--kind", choices=tuple(FLOODS), default="letters", help="flood: what")
    parser.add_argument("--concurrency", type=int, default=8, help="logins: at a time")
    parser.add_argument("--rounds", type=int, default=4, help="logins: rounds")
    parser.add_argument("--per-round", type=int, default=500, help="logins: logins a round")
    parser.add_argument("--guests", type=int, default=50, help="crowd: guests at once")
    parser.add_argument("--json", type=Path, help="save the result as JSON here")
    args = parser.parse_args(argv)
    random.seed(1)
    lk.raise_nofile()
    report = {
        "command": "python bench/door_attack.py " + " ".join(argv or sys.argv[1:]),
        "machine": lk.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_before": lk.load_average(),
        "result": asyncio.run(main_async(args)),
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
