"""What an evening at the table showed, each fixed and tried on a real terminal: the real
`tonk-client` on pseudo-terminals against a real `tonk-server`."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from clientkit import practice_command, start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server
from tonk.client.tokens import SeatRecord, SeatTokens

pytestmark = pytest.mark.e2e


def client(term: Term, tmp_path: Path, port: int, *extra: str) -> None:
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester", *extra],
        {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")},
    )


async def test_enter_for_the_window_that_closed_at_the_deal_is_let_go(
    tmp_path: Path, term: Term
) -> None:
    """The end-of-hand window closes by itself at the next deal; the enter pressed to close
    it a moment later is not told it is no key here (nor escape that no card is raised)."""
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "1") as port:
        alice = await NetClient.connect(port, "Alice")
        try:
            await start_kitchen(alice)
            client(term, tmp_path, port, "--no-confirm-drop")
            await term.wait_for("Kitchen")
            term.keys("Enter")
            await term.wait_for("Your turn: d draw")
            term.write("k")  # 36 against Alice's 35: caught
            await term.wait_for("Hand 1 is over")
            await term.wait_for_all("hand 2", "Your hand ·")  # the deal closed it
            term.keys("Enter")
            term.keys("Escape")
            await asyncio.sleep(1.0)  # (time for a notice to be drawn)
            screen = term.screen()
            assert "not a key here" not in screen and "No card is selected" not in screen
            # Later, enter means nothing at the table again, and says so.
            await asyncio.sleep(3.0)
            term.keys("Enter")
            await term.wait_for("Enter is not a key here")
        finally:
            await alice.close()


async def test_a_move_key_off_turn_says_whose_turn_it_is_before_the_cards(
    tmp_path: Path, term: Term
) -> None:
    """s (spread) or h (hit) pressed in another player's turn says whose turn it is, not that
    no card is selected, or that two are."""
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        alice = await NetClient.connect(port, "Alice")
        try:
            await start_kitchen(alice)
            client(term, tmp_path, port)
            await term.wait_for("Kitchen")
            term.keys("Enter")
            await term.wait_for("Your turn: d draw")
            term.write("dx")  # our turn done: Alice's now
            await term.wait_for("Alice to play")
            term.write("s")
            await term.wait_for_all("Not allowed", "It is Alice's turn")  # (the notice wraps)
            assert "Select the cards" not in term.screen()
            await term.wait_gone("It is Alice's turn")
            term.write("12h")  # two cards raised, then h (the keys are taken in order)
            screen = await term.wait_for_all("Not allowed", "It is Alice's turn")
            assert "cards are selected" not in screen
        finally:
            await alice.close()


async def test_a_seat_whose_table_closed_meanwhile_is_said_in_a_players_words(
    tmp_path: Path, term: Term
) -> None:
    """Coming back to a seat whose table has closed since (its session ended while the
    terminal was closed) says so, not the server's "no open table 42"."""
    with tonk_server(tmp_path) as port:
        state = tmp_path / "state" / "tonk"
        SeatTokens(state).remember(f"127.0.0.1:{port}", SeatRecord(42, "old-token", "Tester"))
        client(term, tmp_path, port)
        await term.wait_for_all("playing as Tester", "closed since: its")  # (the notice wraps)
        assert "no open table" not in term.screen()
        assert SeatTokens(state).seats(f"127.0.0.1:{port}") == []  # forgotten


async def test_a_waiting_tables_status_line_keeps_its_name_at_80x24(
    tmp_path: Path, term: Term
) -> None:
    """The line at the top of a table waiting for players says which table it is: the rules and
    the stake give way to the message first, the name stays."""
    with tonk_server(tmp_path, "--bot-pause", "0") as port:
        alice = await NetClient.connect(port, "Alice")
        try:
            await alice.create_table(name="Friday Night", seats=3)
            client(term, tmp_path, port)
            await term.wait_for("Friday Night")
            term.keys("Enter")
            await term.wait_until(
                lambda s: (
                    "Waiting: 1 of 3 seats open. The creator may start it sooner." in s
                    and s.splitlines()[0].rstrip().endswith("Friday Night")
                ),
                "the waiting line with the table's name",
            )
        finally:
            await alice.close()


async def test_a_turns_log_line_fits_one_row_at_80x24(tmp_path: Path, term: Term) -> None:
    """A turn's moves read in one row of the log at 80x24: a draw from the stock is "drew"
    (the card unseen), the discard after it; your own draw names its card."""
    term.start(practice_command(), {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "s")})
    await term.wait_for("Your turn: d draw")
    term.write("dx")  # draw the 8s, discard the card under the cursor (the 5s)
    # (each found within one row of the screen)
    await term.wait_for_all("You drew 8♠, discarded 5♠", "Ada drew, discarded")
    # The whole line in one row of the log's column, between its borders.
    await term.wait_until(
        lambda s: re.search(r"│ Ada drew, discarded K♣ *│", s) is not None, "Ada's line whole"
    )


async def test_a_card_taken_from_the_pile_is_said_in_one_row_at_80x24(
    tmp_path: Path, term: Term
) -> None:
    term.start(practice_command(), {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "s")})
    await term.wait_for("Your turn: d draw")
    term.write("p")  # the up card, 9c
    await term.wait_for("Your turn: x discard")
    term.write("x")  # the card under the cursor (the 5s)
    await term.wait_for("You took 9♣, discarded 5♠")  # (found within one row)
