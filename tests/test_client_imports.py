"""What a client process loads: a client for another host, and an SSH door session's app, do
not load the server (its store, tables and lobby); only a practice table does."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest


def server_modules_loaded_by(statement: str) -> list[str]:
    """The tonk.server modules a fresh interpreter has loaded after `statement`."""
    probe = (
        f"{statement}\nimport sys\n"
        "print(sorted(m for m in sys.modules if m.startswith('tonk.server')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    names: list[str] = ast.literal_eval(out.stdout)
    return names


@pytest.mark.parametrize("module", ["tonk.client.app", "tonk.client.cli", "tonk.client.door_child"])
def test_a_client_loads_nothing_of_the_server_until_a_practice_table_is_asked_for(
    module: str,
) -> None:
    assert server_modules_loaded_by(f"import {module}") == []


def test_a_practice_table_loads_the_servers_embedded_entry_point() -> None:
    loaded = server_modules_loaded_by(
        "import asyncio\n"
        "from tonk.client.practice import start_practice_server\n"
        "async def main():\n"
        "    server = await start_practice_server()\n"
        "    await server.close()\n"
        "asyncio.run(main())"
    )
    assert "tonk.server.embedded" in loaded and "tonk.server.store" in loaded
