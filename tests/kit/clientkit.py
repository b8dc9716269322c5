"""Helpers for the client's tests: stacked decks, a client App wired to a loopback server, and
waiting on the App without timed assertions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termkit import command_path
from textual import events
from textual.pilot import Pilot
from textual.screen import Screen
from tonk.client.app import ClientConfig, TonkApp
from tonk.client.connection import TableRequest
from tonk.client.keys import KeyedApp, key_name
from tonk.client.model.state import TableState
from tonk.client.screens import LobbyScreen
from tonk.client.text.render import CardStyle
from tonk.shared.game.cards import format_cards, parse_card, parse_cards, stacked_deck
from tonk.shared.wire import messages as m

if TYPE_CHECKING:
    from netclient import NetClient

# You sit in seat 0 and the bots after you; the last bot deals, so you play first.
#   you: 5s 6s 7s 9h 9d (count 36), each bot 35 (Kc Qd Jh 2c 3d, ...); up card 9c; you draw 8s.
MINE = "5s 6s 7s 9h 9d"
BOTS = "Kc Qd Jh 2c 3d"
HANDS = (MINE, BOTS, "Ks Qh Jd 2h 3c", "Kd Qs Jc 2s 3s", "Kh Qc Js 2d 3h")
UP = "9c"
STOCK = "8s 4c 10d 4d 10s 4h"


def deck_text(
    hands: list[str] | None = None, dealer: int = 1, up: str = UP, stock: str = STOCK
) -> str:
    """A stacked deck as the create_table `deck` field: 52 cards, top first; by default the
    hands above for `dealer + 1` players (the last seat deals)."""
    hands = hands or list(HANDS[: dealer + 1])
    order = stacked_deck(
        [parse_cards(h) for h in hands], dealer, parse_card(up), parse_cards(stock)
    )
    return format_cards(order)


def table_request(
    name: str = "Pilot",
    bots: int = 1,
    deck: str | None = None,
    dealer: int = 1,
    **fields: Any,
) -> TableRequest:
    """A table for you and `bots` bots, dealt from `deck` (the stacked default), bots with no
    thinking pause so the tests do not wait on them."""
    request: dict[str, Any] = {
        "seats": bots + 1,
        "deck": deck or deck_text(),
        "dealer": dealer,
        "bot_pause": 0,
        "seed": 11,
    }
    request.update(fields)
    return TableRequest(m.CreateTable(name, **request), bots=bots)


def joined_app(
    port: int,
    state_dir: Path,
    name: str = "Tester",
    table: TableRequest | None = None,
    style: CardStyle | None = None,
) -> TonkApp:
    """A client for the server on 127.0.0.1:`port`; with `table`, it creates and sits there."""
    return TonkApp(
        ClientConfig(
            name=name,
            host="127.0.0.1",
            port=port,
            state_dir=state_dir,
            table=table,
            style=style or CardStyle(),
        )
    )


def practice_app(name: str = "Tester", style: CardStyle | None = None, **options: Any) -> TonkApp:
    """A practice-table client (the embedded server) dealt from the stacked deck."""
    bots = options.pop("bots", 1)
    config = ClientConfig(
        name=name,
        style=style or CardStyle(),
        bots=bots,
        bot_strategies=options.pop("bot_strategies", ()),
        rules=options.pop("rules", "classic"),
        bot_pause=options.pop("bot_pause", 0.0),
        seed=options.pop("seed", 11),
        deck=options.pop("deck", deck_text(dealer=bots)),
        dealer=options.pop("dealer", bots),
        server_options=options.pop("server_options", {"next_hand_delay": 3600.0}),
    )
    assert not options, f"unknown options {options}"
    return TonkApp(config)


async def wait_for(
    pilot: Pilot[Any],
    predicate: Callable[[], object],
    what: str | Callable[[], str],
    limit: float = 30.0,
) -> None:
    """Let the App run until `predicate()` holds; fail saying `what` did not happen (`what()`
    where it is a function: what there was instead, read when the wait gave up). The limit
    only stops a hung test: nothing is asserted about how long it took."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + limit
    while not predicate():
        if loop.time() > give_up:
            said = what() if callable(what) else what
            raise AssertionError(f"gave up waiting for {said}")
        await pilot.pause(0.02)


def keys_handled(app: KeyedApp) -> bool:
    """No key waits or is being handled, nor a move for the server's answer: the App's own
    account of its keys, which it lets in one at a time."""
    return not (app._keys or app._key_busy or app._move_sent is not None)


async def type_text(pilot: Pilot[Any], text: str) -> None:
    """`text` typed a key at a time, each sent once the one before has been handled to its
    end (keys_handled): Pilot.press, less its wait after each key for the whole process to
    have been idle twice for 20 ms."""
    app = pilot.app
    assert isinstance(app, KeyedApp)
    for char in text:
        arrived = app.keys_arrived
        app.post_message(events.Key(key_name(char), char))
        await wait_for(
            pilot,
            lambda arrived=arrived: app.keys_arrived > arrived and keys_handled(app),
            f"{char!r} typed",
        )


def table_state(app: TonkApp) -> TableState | None:
    return app.table_screen.state


def my_turn(app: TonkApp) -> bool:
    state = app.table_screen.state
    return bool(state is not None and state.view is not None and state.view.my_turn)


def log_text(app: TonkApp) -> str:
    state = app.table_screen.state
    return "\n".join(line.text.plain for line in state.log) if state else ""


def hand_text(app: TonkApp) -> str:
    state = app.table_screen.state
    return format_cards(state.view.hand) if state and state.view else ""


async def start_kitchen(alice: NetClient) -> None:
    """Alice creates a two-seat table dealt from the stacked deck; she deals, so the other
    seat (5s 6s 7s 9h 9d, count 36) plays first; Alice holds Kc Qd Jh 2c 3d (35)."""
    await alice.send(
        {
            "type": "create_table",
            "name": "Kitchen",
            "seats": 2,
            "deck": deck_text([BOTS, MINE], dealer=0),
            "dealer": 0,
            "seed": 1,
        }
    )
    await alice.expect("seated")


@asynccontextmanager
async def running(
    app: TonkApp, until: Callable[[], object], what: str
) -> AsyncIterator[Pilot[None]]:
    """`app` run in an 80x24 terminal, from when `until()` holds (the test fails saying
    `what` did not happen if it never does)."""
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, until, what)
        yield pilot


def in_the_lobby(app: TonkApp) -> AbstractAsyncContextManager[Pilot[None]]:
    """`app` run in an 80x24 terminal, from when it shows the lobby."""
    return running(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby")


def at_my_turn(
    app: TonkApp, what: str = "your first turn"
) -> AbstractAsyncContextManager[Pilot[None]]:
    """`app` run in an 80x24 terminal, from when it is our turn."""
    return running(app, lambda: my_turn(app), what)


def at_the_table(app: TonkApp) -> AbstractAsyncContextManager[Pilot[None]]:
    """`app` run in an 80x24 terminal, from when it has a table's state."""
    return running(app, lambda: table_state(app) is not None, "the table")


async def screen_shown(pilot: Pilot[Any], screen: type[Screen[Any]], what: str) -> None:
    """Let the App run until its top screen is a `screen`; fail saying `what` was not shown."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen), what)


def practice_command(*extra: str) -> list[str]:
    """A practice table against one bot that moves at once, dealt from the stacked deck: you
    hold 5s 6s 7s 9h 9d (shown by suit) and play first; the stock starts 8s 4c. `extra`: more
    of tonk-client's options."""
    return [
        command_path("tonk-client"),
        "--name",
        "Tester",
        "--bots",
        "1",
        "--bot-pause",
        "0",
        "--seed",
        "11",
        "--deck",
        deck_text(dealer=1),
        "--dealer",
        "1",
        *extra,
    ]
