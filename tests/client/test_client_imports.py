"""What a client process loads: a client for another host, and an SSH door session's app, do
not load the server (its store, tables and lobby); only a practice table does. Nor do they
load the hand engine and the bots' search: a client is told the table, it does not play it."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest


def server_modules_loaded_by(statement: str, package: str = "tonk.server") -> list[str]:
    """The modules of `package` a fresh interpreter has loaded after `statement`."""
    probe = (
        f"{statement}\nimport sys\n"
        f"print(sorted(m for m in sys.modules if m.startswith({package!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    names: list[str] = ast.literal_eval(out.stdout)
    return names


@pytest.mark.parametrize(
    "module", ["tonk.client.app", "tonk.client.cli", "tonk.client.door.door_child"]
)
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
    assert "tonk.server.embedded" in loaded and "tonk.server.store.store" in loaded


@pytest.mark.parametrize(
    "module", ["tonk.client.app", "tonk.client.cli", "tonk.client.door.door_child"]
)
def test_a_client_loads_neither_the_hand_engine_nor_the_bots_search(module: str) -> None:
    loaded = server_modules_loaded_by(f"import {module}", "tonk.shared")
    assert (
        "tonk.shared.game.view" in loaded and "tonk.shared.bots.bots" in loaded
    )  # (the probe works)
    assert not {
        "tonk.shared.game.hand",
        "tonk.shared.game.session",
        "tonk.shared.bots.sharp",
    } & set(loaded)
    assert "tonk.shared.bots.expert" not in loaded


def test_the_bot_registry_makes_each_strategy_and_gives_its_class_when_asked() -> None:
    loaded = server_modules_loaded_by(
        "import random\n"
        "from tonk.shared.bots.bots import BOT_STRATEGIES, SharpBot, make_bot\n"
        "bots = [make_bot(name, random.Random(1)) for name in BOT_STRATEGIES]\n"
        "assert [bot.strategy for bot in bots] == list(BOT_STRATEGIES)\n"
        "assert isinstance(bots[1], SharpBot) and type(bots[1]) is SharpBot",
        "tonk.shared",
    )
    assert "tonk.shared.bots.expert" in loaded and "tonk.shared.game.hand" in loaded
