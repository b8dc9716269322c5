"""The web door, measured from outside: a real `tonk-server --web-port 0`, and websocket
clients that do what the page does (a name chosen with the form, the cookie, the websocket).

    python bench/web_door.py --sessions 10

- handshake to lobby: from opening the websocket to the lobby drawn in the terminal's bytes
  that come back, each session alone (p50, p99 over the sessions);
- memory a session adds: each session's child process (the table app), with N sessions in
  the lobby at once, as PSS and USS from /proc/PID/smaps_rollup (RSS counts the pages the
  children share in each of them), and its RSS for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROLLUP = re.compile(r"^(Rss|Pss|Private_Clean|Private_Dirty):\s+(\d+) kB", re.M)


def memory_kib(pid: int) -> dict[str, int]:
    """A process's Rss, Pss and Uss (its private pages), in KiB."""
    text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    found = {name: int(value) for name, value in ROLLUP.findall(text)}
    return {
        "rss": found["Rss"],
        "pss": found["Pss"],
        "uss": found["Private_Clean"] + found["Private_Dirty"],
    }


def children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


async def open_session(url: str, name: str) -> tuple[aiohttp.ClientSession, object, float]:
    """A browser's session: the name, then the websocket until the lobby is drawn."""
    client = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    response = await client.post(
        url + "/", data={"name": name}, headers={"Origin": url}, allow_redirects=False
    )
    assert response.status == 303, await response.text()
    started = time.perf_counter()
    socket = await client.ws_connect(url + "/ws?width=100&height=30", headers={"Origin": url})
    seen = b""
    async with asyncio.timeout(60):
        while b"lobby" not in seen:
            message = await socket.receive()
            if message.type != aiohttp.WSMsgType.BINARY:
                raise AssertionError(f"the session ended: {seen[-500:]!r}")
            seen += message.data
    return client, socket, time.perf_counter() - started


async def run(sessions: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("tonk-server")),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--db",
                f"{directory}/bench.sqlite3",
                "--web-port",
                "0",
                "--limit",
                f"web_per_address={sessions + 1}",
                "--log-level",
                "warning",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            server.stdout.readline()
            port = server.stdout.readline().strip().rsplit(":", 1)[1]
            url = f"http://127.0.0.1:{port}"
            alone = []
            for n in range(sessions):
                client, socket, took = await open_session(url, f"alone{n}")
                alone.append(took)
                await socket.close()  # type: ignore[attr-defined]
                await client.close()
            await asyncio.sleep(2)
            opened = [await open_session(url, f"player{n}") for n in range(sessions)]
            await asyncio.sleep(2)
            kids = children(server.pid)
            figures = [memory_kib(pid) for pid in kids]
            ordered = sorted(alone)
            print(f"sessions: {sessions} (children measured: {len(kids)})")
            print(
                f"handshake to lobby, alone: p50 {statistics.median(ordered) * 1000:.0f} ms, "
                f"p99 {ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000:.0f} ms"
            )
            for kind in ("pss", "uss", "rss"):
                values = [f[kind] / 1024 for f in figures]
                print(
                    f"per session in the lobby, {kind.upper()}: {statistics.median(values):.1f} MiB"
                )
            for client, socket, _ in opened:
                await socket.close()  # type: ignore[attr-defined]
                await client.close()
        finally:
            server.terminate()
            server.wait(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.sessions))


if __name__ == "__main__":
    main()
