"""A server asked for any free port (0) keeps the port it got in its database and listens on
it again when started with the same database: its players' clients keep trying that address."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from netclient import NetClient, start_server


async def test_port_0_is_the_port_the_database_was_served_on_last(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        first = server.port
        assert first != 0
    async with start_server(tmp_path) as server:
        assert server.port == first
        client = await NetClient.connect(server.port, "Ann")
        await client.close()
    # Another database, another free port: nothing is shared between databases.
    other = tmp_path / "other"
    other.mkdir()
    async with start_server(other) as server:
        assert server.port != first


async def test_a_remembered_port_taken_meanwhile_gives_a_free_one_and_says_so(
    tmp_path: Path, server_log: pytest.LogCaptureFixture
) -> None:
    async with start_server(tmp_path) as server:
        first = server.port
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", first))
        squatter.listen()
        async with start_server(tmp_path) as server:
            second = server.port
            assert second not in (0, first)
    assert f"port {first}" in server_log.text and "free port instead" in server_log.text
    # Kept from then on: the next start takes the new one.
    async with start_server(tmp_path) as server:
        assert server.port == second


async def test_an_explicit_port_is_used_and_kept_for_port_0_after(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        first = server.port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        wanted = probe.getsockname()[1]
    async with start_server(tmp_path, port=wanted) as server:
        assert server.port == wanted != first
    async with start_server(tmp_path) as server:
        assert server.port == wanted  # the port the database was served on last
