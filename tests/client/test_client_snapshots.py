"""Snapshots of the lobby, the table mid-hand, the end-of-hand modal and the help, at 80x24
and 120x40, from stacked decks so they never change by chance.

Regenerate with `pytest tests/client/test_client_snapshots.py --snapshot-update`, then look at the
SVGs in tests/client/__snapshots__ before committing them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clientkit import joined_app, my_turn, practice_app, screen_shown, table_state, wait_for
from netclient import NetClient
from netclient import test_config as server_config
from textual.pilot import Pilot
from tonk.client.dialogs import EndOfHandModal, HelpScreen
from tonk.client.screens import LobbyScreen
from tonk.server.app import TonkServer

SIZES = [(80, 24), (120, 40)]
Snap = Callable[..., bool]


async def _your_turn(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: my_turn(app), "your first turn")  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_the_table_mid_hand(snap_compare: Snap, size: tuple[int, int]) -> None:
    app = practice_app(bots=2)

    async def play(pilot: Pilot[Any]) -> None:
        await _your_turn(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: len(table_state(app).view.hand) == 6, "the draw")  # type: ignore[union-attr]
        await pilot.press("1", "2", "3", "s")
        await wait_for(pilot, lambda: table_state(app).view.spreads, "the spread")  # type: ignore[union-attr]
        await pilot.press("right", "space")

    assert snap_compare(app, terminal_size=size, run_before=play)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_the_end_of_hand_modal(snap_compare: Snap, size: tuple[int, int]) -> None:
    app = practice_app(bots=2)

    async def drop(pilot: Pilot[Any]) -> None:
        await _your_turn(pilot)
        await pilot.press("k", "k")  # k asks first; k again drops
        await screen_shown(pilot, EndOfHandModal, "the modal")

    assert snap_compare(app, terminal_size=size, run_before=drop)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_the_help(snap_compare: Snap, size: tuple[int, int]) -> None:
    app = practice_app(bots=1, rules="speno")

    async def help_(pilot: Pilot[Any]) -> None:
        await _your_turn(pilot)
        await pilot.press("question_mark")
        await screen_shown(pilot, HelpScreen, "the help")

    assert snap_compare(app, terminal_size=size, run_before=help_)


@pytest.fixture(scope="module")
def lobby_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A server in its own thread and event loop (snap_compare runs the App in another),
    with three tables set up by other players."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    path = Path(tmp_path_factory.mktemp("lobby"))

    def run(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(30)

    server = TonkServer(server_config(path))
    run(server.start())
    clients: list[NetClient] = []

    async def setup() -> None:
        for name, table in (
            (
                "Croaker",
                {
                    "name": "Friday night",
                    "rules": {"preset": "speno"},
                    "stake": 5,
                    "unit": "cents",
                    "seats": 3,
                },
            ),
            (
                "Goblin",
                {
                    "name": "Hit and hold",
                    "rules": {"preset": "pagat", "hit_lock": 1},
                    "seats": 4,
                    "turn_timer": 30,
                },
            ),
            ("Elmo", {"name": "Quick", "seats": 2, "seed": 5, "hands": 10, "bot_pause": 10}),
        ):
            client = await NetClient.connect(server.port, name)
            clients.append(client)
            await client.send({"type": "create_table", **table})
            await client.expect("seated")
        await clients[2].send({"type": "add_bot"})
        await clients[2].expect("update")

    run(setup())
    try:
        yield server.port
    finally:
        for client in clients:
            run(client.close())
        run(server.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_the_lobby(
    snap_compare: Snap, size: tuple[int, int], lobby_server: int, tmp_path: Path
) -> None:
    app = joined_app(lobby_server, tmp_path / "state", name="Tester")

    async def listed(pilot: Pilot[Any]) -> None:
        await screen_shown(pilot, LobbyScreen, "the lobby")
        await wait_for(pilot, lambda: len(app.lobby.tables) == 3, "three tables")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=listed)
