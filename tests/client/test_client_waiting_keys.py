"""The keys for a friend who lost the connection, through the client app against a real
server: the creator's `f` has the seat played for at once and `a` gives an absent player's seat
to a bot; with the creator gone `f` is a vote; and the countdown as the players panel draws it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from clientkit import (
    at_the_table,
    joined_app,
    running,
    screen_shown,
    table_request,
    table_state,
    wait_for,
)
from netclient import NetClient, start_server
from textual.widgets import Static
from tonk.client.dialogs import ConfirmModal
from tonk.client.model.state import PlayerInfo, TableState
from tonk.client.widgets import player_lines
from tonk.shared.game.rules import HouseRules


def player_named(app, name):
    state = table_state(app)
    if state is None:
        return None
    return next((player for player in state.players if player.name == name), None)


async def test_the_creator_plays_for_a_lost_seat_with_f_and_gives_one_to_a_bot_with_a(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path, grace=120.0) as server:
        # The app creates the table (so it is its creator) for three; Alice and Bob fill it.
        app = joined_app(server.port, tmp_path / "state", table=table_request(bots=0, seats=3))
        alice = await NetClient.connect(server.port, "Alice")
        bob = await NetClient.connect(server.port, "Bob")
        async with at_the_table(app) as pilot:
            screen = app.table_screen
            table_id = int(table_state(app).table_id)  # type: ignore[union-attr]
            assert screen.check_action("play_for_now", ()) is False  # nobody is lost yet
            await alice.request({"type": "sit", "table": table_id}, "seated")
            await bob.request({"type": "sit", "table": table_id}, "seated")
            await wait_for(pilot, lambda: table_state(app).playing, "the start")  # type: ignore[union-attr]

            await bob.close()
            await wait_for(
                pilot,
                lambda: (p := player_named(app, "Bob")) is not None and p.played_for_at is not None,
                "Bob's countdown",
            )
            assert screen.check_action("play_for_now", ()) is True
            await pilot.press("f")
            await wait_for(
                pilot,
                lambda: player_named(app, "Bob").away,
                "Bob's seat played for",  # type: ignore[union-attr]
            )

            await pilot.press("a")  # the first absent seat: Bob's; it asks first
            await screen_shown(pilot, ConfirmModal, "the question")
            assert "token" not in str(app.screen.query_one("#question", Static).render())
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: (
                    player_named(app, "Bob") is None
                    and any(p.bot for p in table_state(app).players)
                ),  # type: ignore[union-attr]
                "Bob's seat given to a bot",
            )
            # Alice is here: `a` has nobody to give, and says so.
            assert screen.check_action("seat_to_bot", ()) is False
            await pilot.press("a")
            await pilot.pause()
            assert player_named(app, "Alice") is not None
        await alice.close()


@pytest.mark.slow
async def test_with_the_creator_gone_f_is_a_vote_and_says_so(tmp_path: Path) -> None:
    async with start_server(tmp_path, grace=120.0) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table_id = await alice.create_table(name="Four", seats=4)
        app = joined_app(server.port, tmp_path / "state")
        async with running(app, lambda: app.lobby.tables, "the table in the lobby") as pilot:
            await pilot.press("enter")
            await wait_for(pilot, lambda: table_state(app) is not None, "our seat")
            bob = await NetClient.connect(server.port, "Bob")
            carol = await NetClient.connect(server.port, "Carol")
            await bob.request({"type": "sit", "table": table_id}, "seated")
            await carol.request({"type": "sit", "table": table_id}, "seated")
            await wait_for(pilot, lambda: table_state(app).playing, "the start")  # type: ignore[union-attr]
            await alice.close()  # the creator loses the connection
            await wait_for(
                pilot,
                lambda: (
                    (p := player_named(app, "Alice")) is not None and p.played_for_at is not None
                ),
                "Alice's countdown",
            )
            notes: list[str] = []
            app.table_screen.notify = lambda message, **_: notes.append(message)  # type: ignore[method-assign]
            await pilot.press("f")
            await wait_for(pilot, lambda: player_named(app, "Alice").votes, "our vote")  # type: ignore[union-attr]
            assert notes[-1] == "You voted to play for Alice now: 1 of the 2 votes needed."
            assert player_named(app, "Tester").name in player_named(app, "Alice").votes  # type: ignore[union-attr]
            await pilot.press("f")
            await pilot.pause()
            assert notes[-1] == "You have voted to play for Alice now: the others' votes decide."
            await bob.send({"type": "play_for_now", "seat": 0})
            await wait_for(pilot, lambda: player_named(app, "Alice").away, "Alice played for")  # type: ignore[union-attr]
            # Our notice of "1 of the 2 votes" is replaced by the outcome.
            await wait_for(
                pilot,
                lambda: notes[-1] == "The vote passed: Alice's seat is played for now.",
                "the vote's outcome",
            )
            await bob.close()
            await carol.close()


def test_the_countdown_and_the_votes_as_the_players_panel_draws_them() -> None:
    players = (
        PlayerInfo(0, "Ann"),
        PlayerInfo(1, "Bob", connected=False, played_for_at=1000.0 + 107, votes=("Ann",)),
        PlayerInfo(2, "Cy"),
    )
    state = TableState("1", "t", HouseRules(), 1, "chips", 0, players, playing=True)
    wide = [line.plain for line in player_lines(state, now=1000.0, width=80)]
    assert wide[2:4] == [
        "  Bob lost the connection: played for in 1:47",
        "    voted to play for now: Ann",
    ]
    narrow = [line.plain for line in player_lines(state, now=1000.0, width=44)]
    assert narrow[2:4] == ["  Bob lost the connection:", "    played for in 1:47"]
    waiting = replace(state, playing=False)
    assert "seat given up in 0:07" in player_lines(waiting, now=1100.0, width=80)[2].plain
