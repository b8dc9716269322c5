"""The log after a reconnect holds what the player saw before, even in a client started again
(the terminal closed and opened again): the client keeps its seat's log on disk, and the hand
the server sends again is not logged twice. The real `tonk-client` on pseudo-terminals against
a real `tonk-server`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clientkit import start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server

pytestmark = pytest.mark.e2e


def client(tmp_path: Path, port: int, state: str = "state") -> Term:
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"],
        {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / state)},
    )
    return term


async def test_a_client_started_again_at_its_seat_shows_the_log_it_had(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        alice = await NetClient.connect(port, "Alice")
        terms: list[Term] = []
        try:
            await start_kitchen(alice)
            tester = client(tmp_path, port)
            terms.append(tester)
            await tester.wait_for("Kitchen")
            tester.keys("Enter")
            await tester.wait_for("Your turn: d draw")
            tester.write("dx")
            await tester.wait_for("You drew 8♠, discarded")
            await alice.send({"type": "chat", "text": "tea?"})
            await tester.wait_for("<Alice> tea?")
            tester.write("c")
            await tester.wait_for("Say something")
            tester.write("yes\r")
            await tester.wait_for("<Tester> yes")

            # The terminal goes; a new client takes the seat back, with the log as it was.
            tester.close()
            tester = client(tmp_path, port)
            terms.append(tester)
            screen = await tester.wait_for_all(
                "hand 1", "<Alice> tea?", "<Tester> yes", "You drew 8♠, discarded", "Back at table"
            )
            # The hand the server sent again was not logged a second time.
            assert screen.count("Your hand: ") == 1 and screen.count("You drew 8♠") == 1
            assert screen.count("Hand 1:") == 1
            # The same log on the next moves: Alice's turn is logged once, as it comes.
            await alice.send({"type": "draw_stock"})
            screen = await tester.wait_for("Alice drew")
            assert screen.count("Alice drew") == 1

            # Kept in one file for the seat, private to the user (it holds the hand seen).
            kept = list((tmp_path / "state" / "tonk" / "logs").glob("*.json"))
            lines = [line["text"] for line in json.loads(kept[0].read_text())["lines"]]
            assert len(kept) == 1 and any("tea?" in line for line in lines)
            assert kept[0].stat().st_mode & 0o777 == 0o600
            assert kept[0].parent.stat().st_mode & 0o777 == 0o700
        finally:
            for term in terms:
                term.close()
            await alice.close()
