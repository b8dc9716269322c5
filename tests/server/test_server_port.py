"""A server asked for any free port (0) keeps the port it got in its database and listens on
it again when started with the same database: its players' clients keep trying that address."""

from __future__ import annotations

import logging
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
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with start_server(tmp_path) as server:
        first = server.port
    # The server's logger itself (a practice table run earlier in this process may have
    # stopped it passing records up to the root logger).
    logger = logging.getLogger("tonk.server")
    logger.addHandler(caplog.handler)
    try:
        with socket.socket() as squatter:
            squatter.bind(("127.0.0.1", first))
            squatter.listen()
            with caplog.at_level(logging.WARNING, logger="tonk.server"):
                async with start_server(tmp_path) as server:
                    second = server.port
                    assert second not in (0, first)
    finally:
        logger.removeHandler(caplog.handler)
    assert f"port {first}" in caplog.text and "free port instead" in caplog.text
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
