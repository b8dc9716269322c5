"""What the door benchmarks share (bench/door_sessions.py, bench/door_attack.py): an asyncssh
session on a pty, a `tonk-server` with its SSH door, the paced game benchmark run while
sessions press keys, and a process's memory as RSS, PSS and USS.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncssh
import load_driver
import loadkit as lk

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


def children_rss_kib(pid: int) -> int:
    total = 0
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    for child in children:
        with contextlib.suppress(OSError, ValueError):
            total += lk.rss_kib(int(child)) + children_rss_kib(int(child))
    return total


class Session:
    """One asyncssh session on a pty. What it receives is searched as bytes, not drawn: a
    terminal emulator in Python (pyte) for 20 sessions made this measuring process the
    slowest part of the measurement."""

    def __init__(
        self, port: int, name: str, address: str | None = None, command: str | None = None
    ) -> None:
        self.port = port
        self.name = name
        self.address = address  # the client's own (a loopback one: 127.0.0.N), if given
        self.command = command  # what the guest typed after the host (None: the lobby)
        self.conn: asyncssh.SSHClientConnection | None = None
        self.process: asyncssh.SSHClientProcess[bytes] | None = None
        self.received = bytearray()  # since the last `mark`
        self.first_byte: float | None = None
        self.changed = asyncio.Event()
        self.reader: asyncio.Task[None] | None = None

    async def open(self, marker: bytes = b"playing as", timeout: float = 60) -> float:
        """Connect and wait for the lobby (or `marker`); returns the seconds that took."""
        started = time.perf_counter()
        self.conn = await asyncssh.connect(
            "127.0.0.1",
            self.port,
            username=self.name,
            client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
            known_hosts=None,
            agent_path=None,
            config=None,
            local_addr=(self.address, 0) if self.address else None,
        )
        self.process = await self.conn.create_process(
            self.command, term_type="xterm-256color", term_size=(100, 30), encoding=None
        )
        self.mark()
        self.reader = asyncio.create_task(self._read())
        await self.wait(marker, timeout)
        took = time.perf_counter() - started
        await asyncio.sleep(0.5)  # the rest of the first screen
        return took

    def mark(self) -> None:
        self.received.clear()
        self.first_byte = None

    async def _read(self) -> None:
        assert self.process is not None
        while True:
            data = await self.process.stdout.read(65536)
            if not data:
                return
            if self.first_byte is None:
                self.first_byte = time.perf_counter()
            self.received += data
            self.changed.set()

    async def wait(self, marker: bytes, timeout: float = 60) -> None:
        async with asyncio.timeout(timeout):
            while marker not in self.received:
                self.changed.clear()
                await self.changed.wait()

    async def key_to_screen(self) -> tuple[float, float]:
        """(seconds from `?` to the help screen's heading "Keys" received, and from `?` again
        to the first byte of the lobby drawn again)."""
        assert self.process is not None
        self.mark()
        started = time.perf_counter()
        self.process.stdin.write(b"?")
        await self.wait(b"Keys")
        opened = time.perf_counter() - started
        await asyncio.sleep(0.3)  # the rest of the help screen
        self.mark()
        started = time.perf_counter()
        self.process.stdin.write(b"?")
        async with asyncio.timeout(60):
            while self.first_byte is None:
                self.changed.clear()
                await self.changed.wait()
        closed = self.first_byte - started
        await asyncio.sleep(0.3)
        return opened, closed

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            with contextlib.suppress(Exception):
                await self.conn.wait_closed()
        if self.reader is not None:
            self.reader.cancel()


def start(
    workdir: Path, tables: int, program: list[str] | None = None
) -> tuple[lk.ServerProcess, int]:
    """`tonk-server --ssh-port 0` (`program`: another checkout's, e.g. its Python with `-m
    tonk.server`) and its door's port."""
    run = Path(tempfile.mkdtemp(prefix="door-", dir=workdir))
    limits = load_driver.server_limits(max(tables, 1), False)
    limits.update({"ssh_sessions": 200, "ssh_per_address": 200, "ssh_unauthenticated": 200})
    server = lk.start_server(
        run / "tonk.db",
        limits,
        ["--log-level", "warning", "--ssh-port", "0"],
        log=run / "server.log",
        program=program,
    )
    assert server.proc.stdout is not None
    line = server.proc.stdout.readline()
    match = re.search(r"ssh on .*:(\d+) \(", line)
    if match is None:
        server.stop()
        raise RuntimeError(f"no ssh line: {line!r}")
    return server, int(match.group(1))


def rss(server: lk.ServerProcess) -> int:
    return lk.rss_kib(server.pid) + children_rss_kib(server.pid)


async def paced_with(
    server: lk.ServerProcess, sessions: list[Session], args: argparse.Namespace
) -> dict[str, Any]:
    """The paced benchmark against `server` while `sessions` press keys all along."""
    shares = [
        (server.port, first, count, load_driver.PACE, 1)
        for first, count in load_driver.split(args.tables, min(2, args.tables))
    ]
    stop = asyncio.Event()
    pressed: list[float] = []

    async def press(session: Session) -> None:
        while not stop.is_set():
            await asyncio.sleep(random.uniform(0.5, 1.0))
            pressed.extend(await session.key_to_screen())

    pressing = [asyncio.create_task(press(s)) for s in sessions]
    try:
        result = await asyncio.to_thread(
            load_driver.drive,
            load_driver.tonk_worker,
            shares,
            args.seconds,
            args.warmup,
            None,
            600,
            server.pid,
        )
    finally:
        stop.set()
        await asyncio.gather(*pressing, return_exceptions=True)
    summary_ = load_driver.summarize(result, args.tables, args.seconds)
    summary_["keys_meanwhile"] = lk.latency_summary(pressed)
    return summary_
