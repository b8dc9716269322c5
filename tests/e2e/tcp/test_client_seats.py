"""Seats kept across what happens on a Friday night: two players under one computer account
(one home directory, one state directory), and a server restarted with the same database.
The real `tonk-client` on pseudo-terminals against a real `tonk-server` subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server

pytestmark = pytest.mark.e2e


def client_env(tmp_path: Path) -> dict[str, str]:
    """Every client in a test shares one state directory, as players of one account do."""
    return {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")}


def client(tmp_path: Path, port: int, name: str) -> Term:
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", name],
        client_env(tmp_path),
    )
    return term


async def create_kitchen(alice: NetClient, seats: int) -> int:
    await alice.send({"type": "create_table", "name": "Kitchen", "seats": seats, "seed": 3})
    seated = await alice.expect("seated")
    return int(seated["table"])


async def take_the_seat(term: Term) -> None:
    """From the lobby, the Kitchen's seat (its only line)."""
    await term.wait_for("Kitchen")
    term.keys("Enter")
    await term.wait_for("Your hand")


async def test_two_players_of_one_account_each_take_their_own_seat_back(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        alice = await NetClient.connect(port, "Alice")
        terms: list[Term] = []
        try:
            table = await create_kitchen(alice, seats=3)
            ada = client(tmp_path, port, "Ada")
            terms.append(ada)
            await take_the_seat(ada)
            bob = client(tmp_path, port, "Bob")
            terms.append(bob)
            await take_the_seat(bob)  # the table is full: the game starts
            await ada.wait_for("hand 1")

            # Ada's terminal goes (her SSH session died); started again, she is back in
            # her own seat, not in the lobby.
            ada.close()
            ada = client(tmp_path, port, "Ada")
            terms.append(ada)
            screen = await ada.wait_for_all("hand 1", "Your hand")
            assert "playing as" not in screen

            # She leaves for the lobby (a hand is being played: it asks first); the lobby
            # says the seat is hers, and enter takes it back.
            ada.keys("q")
            await ada.wait_for("Leave this table?")
            ada.keys("y")
            await ada.wait_for_all("playing as Ada", "your seat")
            ada.keys("Enter")
            screen = await ada.wait_for_all("hand 1", "Your hand")
            assert "watch, or resume" not in screen

            # Both tokens are on disk, one per player.
            seats = json.loads((tmp_path / "state" / "tonk" / "seats.json").read_text())
            held = seats["servers"][f"127.0.0.1:{port}"]
            assert set(held) == {"Ada", "Bob"}
            assert held["Ada"][str(table)]["token"] != held["Bob"][str(table)]["token"]
        finally:
            for term in terms:
                term.close()
            await alice.close()


async def test_a_restarted_server_is_found_again_and_seats_survive(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        alice = await NetClient.connect(port, "Alice")
        await create_kitchen(alice, seats=2)
        tester = client(tmp_path, port, "Tester")
        try:
            await take_the_seat(tester)
            await tester.wait_for("hand 1")
        except BaseException:
            tester.close()
            raise
        finally:
            await alice.close()
    try:
        await tester.wait_for("Connection lost: reconnecting")
        # The same command again (--port 0, the same --db): the same port.
        with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as again:
            assert again == port
            # The client that kept trying is back at its seat by itself.
            await tester.wait_gone("reconnecting")
            await tester.wait_for_all("hand 1", "Your hand")
            # And a client started afresh takes the seat back with the token it saved.
            tester.close()
            tester = client(tmp_path, port, "Tester")
            screen = await tester.wait_for_all("hand 1", "Your hand")
            assert "playing as" not in screen
    finally:
        tester.close()


async def test_a_started_table_where_you_hold_no_seat_says_what_you_can_do(
    tmp_path: Path,
) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0") as port:
        alice = await NetClient.connect(port, "Alice")
        carol = await NetClient.connect(port, "Carol")
        tester = client(tmp_path, port, "Tester")
        try:
            table = await create_kitchen(alice, seats=2)
            await carol.request({"type": "sit", "table": table}, "seated")  # it starts
            # The lobby keeps itself up to date ("playing as Tester" is in its title).
            await tester.wait_until(
                lambda screen: re.search(r"Kitchen .* 2/2 +playing", screen) is not None,
                "Kitchen playing",
            )
            tester.keys("Enter")
            # (The notice is narrow: its words wrap.)
            screen = await tester.wait_for_all("started", "watches")
            assert "resume your seat" not in screen
            tester.keys("w")
            await tester.wait_for("Watching")
        finally:
            tester.close()
            await alice.close()
            await carol.close()


async def test_a_spectator_sees_only_the_keys_it_has_and_each_players_last_turn(
    tmp_path: Path,
) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0.3", "--next-hand-delay", "600") as port:
        alice = await NetClient.connect(port, "Alice")
        cy: Term | None = None
        try:
            await create_kitchen(alice, seats=3)
            await alice.send({"type": "add_bot", "strategy": "easy"})
            await alice.send({"type": "add_bot", "strategy": "easy"})  # full: it starts
            cy = client(tmp_path, port, "Cy")
            await cy.wait_for("Kitchen")
            cy.keys("w")

            # (Seed 3's cut has a bot play before Alice, who never moves.) Once a bot has
            # played, the spectator's hand panel lists each player's last turn.
            def panel(screen: str) -> str:
                rows = screen.splitlines()
                top = next((i for i, row in enumerate(rows) if "Watching · each" in row), None)
                return "" if top is None else "\n".join(rows[top + 1 : top + 6])

            # (Waited for whole: the panel's title may be drawn before its rows.)
            screen = await cy.wait_until(
                lambda s: (
                    "You are watching this table." in panel(s)
                    and re.search(r"(Ada|Bix) (drew|picked up|took)", panel(s)) is not None
                    and "Chat" in s.splitlines()[-1]
                ),
                "a turn to show",
                limit=30,
            )
            rows = screen.splitlines()
            # Only a spectator's keys: no moves, no sort.
            bar = rows[-1]
            assert "Chat" in bar and "Draw" not in bar and "Sort" not in bar, bar
        finally:
            if cy is not None:
                cy.close()
            await alice.close()
