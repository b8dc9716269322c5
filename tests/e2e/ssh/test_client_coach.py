"""The coach in the client, on a real terminal: `c` in a hand's replay asks for the expert's
view of your move from the step shown and shows the answer under the log (and says so on a
step where the move was not yours); `e` at a practice table asks before the move. The real
`tonk-client` against a real `tonk-server` at 80x24, then the same through the SSH door."""

from __future__ import annotations

from pathlib import Path

import pytest
from netclient import NetClient
from ptyterm import Term
from sshkit import DoorServer, SSHTerminal, make_key
from termkit import command_path, tonk_server
from test_client_e2e import client_env, kitchen_hand, leave_and_quit

pytestmark = pytest.mark.e2e

LEFT, END, ESCAPE = b"\x1b[D", b"\x1b[F", b"\x1b"


async def test_the_coach_in_a_hands_replay_in_term(tmp_path: Path, term: Term) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        client = [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"]
        term.start(client, client_env(tmp_path))
        alice = await NetClient.connect(port, "Alice")
        try:
            await kitchen_hand(term, alice)
            await term.wait_for("l: history")
            term.keys("l")
            await term.wait_for("enter: replay the hand")
            term.keys("Enter")
            await term.wait_for_all("Step 1 of 8, the deal: your turn", "c: coach")
            # Your draw from the deal: the expert's view of it, with what each choice made.
            term.keys("c")
            answer = await term.wait_for_all(
                "The coach: ", "On average a hand, in stakes:", "draw from the stock", "drop"
            )
            assert "The expert would have" in answer or "Here the expert would" in answer
            # Alice's turn: not a move of yours, and nothing is asked.
            term.keys("Right", "Right", "Right", "Right")
            await term.wait_for("Step 5 of 8: Alice's turn")
            term.keys("c")
            await term.wait_for("The coach looks at your own moves")
            term.keys("Left", "Left", "Left", "Left")
            await term.wait_for_all("Step 1 of 8, the deal", "The coach: ")
            term.keys("Escape")
            await term.wait_for("the session's hands")
            term.keys("Escape")
            await term.wait_gone("the session's hands")
            await leave_and_quit(term)
        finally:
            await alice.close()


def test_a_hint_at_the_practice_table_and_the_coach_in_the_replay_through_the_door(
    door: DoorServer, tmp_path: Path
) -> None:
    """A guest at the door's practice table (every other seat a bot) asks for a hint on their
    first turn, then drops, and asks the coach about that drop in the hand's replay."""
    key = make_key(tmp_path, "cal_key")
    term = SSHTerminal(door.port, key, "cal", "practice", cols=80, rows=24)
    try:
        term.wait_for(r"Your turn: d draw", timeout=60)
        term.press(b"e")
        term.wait_for(r"The coach", timeout=60)
        term.wait_for(r"The expert would")
        term.press(b"k")
        term.wait_for(r"Drop with \d+\?")
        term.press(b"k")
        term.wait_for(r"Hand 1 is over")
        term.press(b"l")
        term.wait_for(r"the session's hands \(1\)")
        term.wait_for(r"Settle up now: ")
        term.press(b"\r")
        first = term.wait_for(r"Step 1 of (\d+), the deal: ")
        steps = int(first.group(1))
        term.wait_for(r"Your hand: \S")
        term.press(END)
        term.wait_for(rf"Step {steps} of {steps}: the hand is over")
        term.press(LEFT)  # the drop's step
        term.wait_for(rf"Step {steps - 1} of {steps}(, the deal)?: your turn")
        term.press(b"c")
        term.wait_for(r"The coach: ", timeout=60)
        term.wait_for(r"On average a hand")
        term.press(ESCAPE)
        term.wait_for(r"enter: replay the hand")  # (the hint's note may cover the title)
        term.press(ESCAPE)
        term.pump(0.5)
        assert "Traceback" not in term.text()
    finally:
        term.kill()


async def test_a_hint_at_a_practice_table_in_term(tmp_path: Path, term: Term) -> None:
    """The practice table's own server (embedded in the client) answers the hint too."""
    client = [command_path("tonk-client"), "--name", "Tester", "--bots", "1", "--bot-pause", "0"]
    term.start(client, client_env(tmp_path))
    await term.wait_for("Your turn: d draw", limit=60)
    term.keys("e")
    # (All three waited for: a terminal may be sent the window's rows in more than one write.
    # The deal is not stacked, so where the answer wraps depends on its words: one word.)
    await term.wait_for_all("The coach", "The expert would", "average", limit=60)
