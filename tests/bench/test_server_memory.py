"""The memory of clients that never read comes back once they are dropped: each dropped
connection is freed at once (no reference cycle left for the collector's rare full
collection), and after a crowd of them the server gives the memory they freed back to the
system, so that crowd after crowd its RSS does not grow (bench/unread_memory.py measures it
against a real `tonk-server` process)."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import subprocess
import sys

import pytest
from checkout import ROOT
from netclient import NetClient, start_server
from tonk.server.connection import Connection
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


@pytest.mark.slow
@pytest.mark.e2e
def test_a_real_servers_memory_comes_back_after_crowds_that_never_read(tmp_path):
    bench = ROOT / "bench" / "unread_memory.py"
    options = "--clients 1000 --tables 100 --rounds 2 --unread-timeout 1 --settle 6 --json"
    run = subprocess.run(
        [sys.executable, str(bench), *options.split()],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    figures = json.loads(run.stdout.splitlines()[-1])
    before, peaks, afters = figures["before"], figures["peaks"], figures["afters"]
    rise = peaks[0] - before
    assert rise > 4, figures  # (the crowd is big enough to measure)
    # Generous bounds: some of each crowd's memory is given back (none was: the RSS stayed at
    # the peak), and the second crowd reuses what the first left rather than adding as much
    # again (it added it all: every dropped connection was held by a reference cycle).
    for peak, after in zip(peaks, afters, strict=True):
        assert after < peak - 0.1 * rise, figures
    assert afters[1] < afters[0] + 0.5 * rise, figures
