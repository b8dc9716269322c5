"""The memory of clients that never read comes back once they are dropped: each dropped
connection is freed at once (no reference cycle left for the collector's rare full
collection), and after a crowd of them the server gives the memory they freed back to the
system, so that crowd after crowd its RSS does not grow (against a real `tonk-server`
process, the last test)."""

from __future__ import annotations

import asyncio
import gc
import os
import re
import resource
import socket
from pathlib import Path

import pytest
from netclient import NetClient, start_server
from reliakit import server_process
from tonk.server.connection import Connection
from tonk.server.memory import TRIM_AFTER
from tonk.shared.wire import protocol as p


def connections_alive() -> int:
    return sum(1 for thing in gc.get_objects() if isinstance(thing, Connection))


async def test_clients_dropped_for_reading_nothing_are_freed_without_the_collector(tmp_path):
    limits = {"unread_timeout": 0.5, "max_tables": 100, "max_tables_per_address": 100}
    async with start_server(tmp_path, limit_changes=limits) as server:
        host = await NetClient.connect(server.port, "Host")
        for number in range(40):  # a first page of some 40 KB
            await host.request(
                {"type": "create_table", "name": f"{number:02d} " + "n" * 29, "sit": False},
                p.TABLE,
            )
        await host.close()
        gc.collect()
        gc.disable()  # what is left is left for the collector: none of it may be a connection
        silent = []
        try:
            hello = {"type": "hello", "version": p.PROTOCOL_VERSION}
            for number in range(30):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(("127.0.0.1", server.port))
                sock.sendall(p.encode({**hello, "name": f"S{number}"}))
                sock.sendall(p.encode({"type": "list_tables"}) * 15)
                silent.append(sock)
            loop = asyncio.get_running_loop()
            give_up = loop.time() + 30
            while loop.time() < give_up and (server.connections or connections_alive()):
                await asyncio.sleep(0.05)
            assert not server.connections
            assert connections_alive() == 0
        finally:
            gc.enable()
            for sock in silent:
                sock.close()


def rss_mib(pid: int) -> float:
    """The resident set of process `pid` (VmRSS), in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.findall(r"^VmRSS:\s+(\d+) kB", status, re.M)[0]) / 1024


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


LIST = {"type": "list_tables"}
TRIMMED = re.compile(r"(\d+) connections closed: free memory given back")


def crowd(port: int, clients: int) -> list[socket.socket]:
    """`clients` connections that say hello, ask for 15 pages of tables and never read."""
    hello = {"type": "hello", "version": p.PROTOCOL_VERSION}
    socks = []
    for number in range(clients):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(p.encode({**hello, "name": f"U{number}"}) + p.encode(LIST) * 15)
        socks.append(sock)
    return socks


def trimmed(log: list[str]) -> int:
    """The connections the server has said it gave the memory of back, in all."""
    return sum(int(found) for line in log for found in TRIMMED.findall(line))


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_real_servers_memory_comes_back_after_crowds_that_never_read(tmp_path):
    # (what unread_memory.py of bench/ measured before it retired: the journal, "Scripts retired")
    clients, tables = 1000, 100
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * clients)), hard))
    limits = {
        "max_connections": clients + 100,
        "max_per_address": clients + 100,
        "max_tables": tables + 10,
        "max_tables_per_address": tables + 10,
        "unread_timeout": 1,
        "handshake_timeout": 120,
    }
    options = [f"--limit={name}={value}" for name, value in limits.items()]
    extra = ("--grace", "3600", "--log-level", "info", "--no-announce", *options)
    async with server_process(tmp_path / "tonk.db", *extra) as server:
        pid = server.proc.pid
        files = open_files(pid)
        host = await NetClient.connect(server.port, "Host")
        for number in range(tables):  # pages of long names: every client's answer is large
            name = f"{number:04d} " + "n" * 27
            await host.request({"type": "create_table", "name": name, "sit": False}, p.TABLE)
        await host.close()
        loop = asyncio.get_running_loop()
        give_up = loop.time() + 30
        while open_files(pid) > files and loop.time() < give_up:  # (the host's connection gone)
            await asyncio.sleep(0.05)
        before = rss_mib(pid)
        peaks: list[float] = []
        afters: list[float] = []
        for round_ in (1, 2):
            socks = await asyncio.to_thread(crowd, server.port, clients)
            peak = rss_mib(pid)
            give_up = loop.time() + 180
            while open_files(pid) > files and loop.time() < give_up:  # every client dropped
                peak = max(peak, rss_mib(pid))
                await asyncio.sleep(0.02)
            for sock in socks:
                sock.close()
            assert open_files(pid) <= files, "the clients that never read were not dropped"
            # The server says when it has given the crowd's memory back: wait for that, until
            # fewer than TRIM_AFTER closed connections (which start no trim) are left untold,
            # should a trim have come in the middle of the crowd.
            closed = round_ * clients + 1  # (the host's connection too)
            while closed - trimmed(server.stderr) >= TRIM_AFTER:
                assert loop.time() < give_up, server.stderr[-5:]
                await asyncio.sleep(0.05)
            peaks.append(peak)
            afters.append(rss_mib(pid))
    figures = {"before": before, "peaks": peaks, "afters": afters}
    rise = peaks[0] - before
    assert rise > 4, figures  # (the crowd is big enough to measure)
    # Generous bounds: some of the first crowd's memory is given back (none was: the RSS
    # stayed at the peak), and the second crowd reuses what the first left rather than adding
    # as much again (it added it all: every dropped connection was held by a reference cycle),
    # so that the server ends below the first crowd's peak. (The second crowd's own peak may
    # rise little over what the first left, 2.4 MiB in one run: not a rise to give back.)
    assert afters[0] < peaks[0] - 0.1 * rise, figures
    assert afters[1] < afters[0] + 0.5 * rise, figures
    assert afters[1] < peaks[0] - 0.1 * rise, figures
