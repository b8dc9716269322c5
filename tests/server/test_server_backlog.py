"""The listening socket's queue: a crowd of players connecting at the same moment, while the
server is busy, is let in whole, none refused or left to the kernel's retries."""

from __future__ import annotations

import asyncio
import resource
import select
import socket
import time
from pathlib import Path

import pytest
from netclient import NetClient, start_server
from tonk.server.app import listen_backlog
from tonk.shared.wire import protocol as p

CROWD = 1000


def test_the_backlog_follows_max_connections_within_what_the_system_allows() -> None:
    assert listen_backlog(5000) == 5000
    assert listen_backlog(16) == 128  # never below a queue that a few players fill
    assert listen_backlog(10**9) == 65535  # what listen() takes


@pytest.mark.slow
async def test_a_thousand_connections_at_once_while_the_server_is_busy_all_get_in(
    tmp_path: Path,
) -> None:
    somaxconn = Path("/proc/sys/net/core/somaxconn")
    if somaxconn.exists() and int(somaxconn.read_text()) < CROWD:
        pytest.skip(f"the system caps a listening queue at {somaxconn.read_text().strip()}")
    # Both ends of every connection are open files of this process.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * CROWD + 256
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the open-file limit is {hard}: {wanted} are needed (ulimit -Hn)")
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    try:
        await crowd_connects(tmp_path)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def crowd_connects(tmp_path: Path) -> None:
    changes = {"max_connections": 2 * CROWD, "max_per_address": 2 * CROWD}
    async with start_server(tmp_path, limit_changes=changes) as server:
        # The event loop does not run while the crowd connects (the server accepts nobody):
        # every handshake the kernel completes waits in the listening socket's queue. One it
        # has no room for is dropped, left to the client's retry a second later (or reset).
        sockets = [socket.socket() for _ in range(CROWD)]
        try:
            for sock in sockets:
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.1", server.port))
            poll = select.poll()
            for sock in sockets:
                poll.register(sock, select.POLLOUT)
            connected: set[int] = set()
            deadline = time.monotonic() + 0.5  # well before the first SYN is sent again (1 s)
            while len(connected) < CROWD and time.monotonic() < deadline:
                for fd, _ in poll.poll(50):
                    connected.add(fd)
                    poll.unregister(fd)
            errors = [s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) for s in sockets]
            assert len(connected) == CROWD, f"{CROWD - len(connected)} waited for a retry"
            assert not any(errors), sorted(set(errors))
            # Now the server runs: every one of them is served.
            clients = []
            for sock in sockets:
                sock.setblocking(True)
                reader, writer = await asyncio.open_connection(sock=sock)
                clients.append(NetClient(reader, writer))
            welcomes = await asyncio.gather(
                *(client.hello(f"P{n}") for n, client in enumerate(clients))
            )
            assert all(w["type"] == p.WELCOME for w in welcomes)
            assert len(server.connections) == CROWD
            for client in clients:
                client.writer.close()
        finally:
            for sock in sockets:
                sock.close()
