"""Looking back, on a real terminal: the real `tonk-client` at 80x24 against a real
`tonk-server`, a hand played with keys, then `l` in the end-of-hand window: the session's hands,
the one hand opened and stepped through back and forth, and `l` at the table again; then the
same through the SSH door."""

from __future__ import annotations

from pathlib import Path

import pytest
from clientkit import in_the_lobby, joined_app, wait_for
from historykit import play_hand, scripted
from netclient import NetClient, start_server
from ptyterm import Term
from sshkit import DoorServer, SSHTerminal, make_key
from termkit import command_path, tonk_server
from test_client_e2e import client_env, kitchen_hand, leave_and_quit
from textual.widgets import Label
from tonk.client.dialogs import HandReplayScreen, HistoryScreen
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e


async def play_and_look_back(term: Term, port: int) -> None:
    """The kitchen hand of tests/e2e/ssh/test_client_e2e.py (draw, spread, hit, discard; Alice draws
    and throws; drop and win), then its history."""
    alice = await NetClient.connect(port, "Alice")
    try:
        await kitchen_hand(term, alice)
        await term.wait_for("l: history")

        # `l` in the end-of-hand window: the session's hands, and the ledger settled up.
        term.keys("l")
        listed = await term.wait_for_all(
            "Kitchen: the session's hands (1)",
            "Hand 1  Alice dealt  You dropped with 9 and won.",
            "Alice pays you 1 chip",
            "Settle up now: Alice pays Tester 1 chip.",
            "enter: replay the hand",
        )
        assert "Balances: Tester +1  Alice -1" in listed
        # Enter opens the hand at the deal, as Tester saw it: Tester's own cards only.
        term.keys("Enter")
        deal = await term.wait_for_all(
            "Hand 1, as you saw it",
            "Step 1 of 8, the deal: your turn",
            "Your hand: 5♠ 6♠ 7♠ 9♥ 9♦",
            "Alice (deals): 5 cards",
            "left/right: step back/on",
        )
        assert "K♣" not in deal  # Alice's cards are hers
        term.keys("Right")
        await term.wait_for_all("Step 2 of 8", "You drew 8♠", "Your hand: 5♠ 6♠ 7♠ 9♥ 9♦ 8♠")
        term.keys("End")
        end = await term.wait_for_all(
            "Step 8 of 8: the hand is over",
            "You dropped with 9 and won.",
            "Alice: Q♦ J♥ 2♣ 3♦ 4♣ (count 29)",  # what the drop revealed
            "Alice drew, discarded K♣",
            "Alice pays you 1 chip.",
        )
        assert "Discard: K♣ (2 under it)" in end
        term.keys("Left")
        before = await term.wait_for("Step 7 of 8: your turn")
        assert "4♣" not in before  # the card Alice drew is hers until the drop shows it
        term.keys("Home")
        await term.wait_for("Step 1 of 8, the deal")
        term.keys("Escape")
        await term.wait_for("Kitchen: the session's hands (1)")
        # Back to the table: the history took the end-of-hand window's place.
        term.keys("Escape")
        back = await term.wait_for_all("Ledger (chips)", "+1")
        assert "Hand 1 is over" not in back
        # `l` at the table opens it again; escape goes back to the table.
        term.keys("l")
        await term.wait_for("Kitchen: the session's hands (1)")
        term.keys("Escape")
        await term.wait_gone("the session's hands")
        await leave_and_quit(term)
    finally:
        await alice.close()


async def test_looking_back_at_a_hand_in_term(tmp_path: Path, term: Term) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        client = [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"]
        term.start(client, client_env(tmp_path))
        await play_and_look_back(term, port)


RIGHT, LEFT, HOME, END, ESCAPE = b"\x1b[C", b"\x1b[D", b"\x1b[H", b"\x1b[F", b"\x1b"


def test_looking_back_through_the_ssh_door(door: DoorServer, tmp_path: Path) -> None:
    """A guest at the door's practice table drops on their first turn, opens the history
    with `l`, replays the hand to its end and back, and leaves: all at 80x24 over ssh."""
    key = make_key(tmp_path, "bea_key")
    term = SSHTerminal(door.port, key, "bea", "practice", cols=80, rows=24)
    try:
        term.wait_for(r"Your turn: d draw", timeout=60)
        term.press(b"k")
        term.wait_for(r"Drop with \d+\?")
        term.press(b"k")
        term.wait_for(r"Hand 1 is over")
        term.press(b"l")
        term.wait_for(r"bea's practice: the session's hands \(1\)")
        term.wait_for(r"Hand 1  .+ dealt  You dropped with \d+ and (won|were)")
        term.wait_for(r"Settle up now: ")
        term.press(b"\r")
        term.wait_for(r"Hand 1, as you saw it")
        first = term.wait_for(r"Step 1 of (\d+), the deal: ")
        steps = first.group(1)
        term.wait_for(r"Your hand: \S")
        term.press(END)
        term.wait_for(rf"Step {steps} of {steps}: the hand is over")
        term.wait_for(r"You dropped with \d+")
        term.press(LEFT)
        term.wait_for(rf"Step {int(steps) - 1} of {steps}")
        term.press(HOME)
        term.wait_for(rf"Step 1 of {steps}, the deal")
        term.press(RIGHT)
        term.wait_for(rf"Step 2 of {steps}")
        term.press(ESCAPE)
        term.wait_for(r"the session's hands")
        term.press(ESCAPE)
        term.pump(0.5)
        assert "Traceback" not in term.text()
    finally:
        term.kill()


async def test_a_spectators_replay_gathers_every_page_of_a_long_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand longer than one answer (the server's answers cut to 10 steps here): the client
    asks for the rest and opens the replay with every step, as a spectator saw them."""
    monkeypatch.setattr(p, "HISTORY_STEPS", 10)
    hand = scripted("classic", "stock_out")
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        await play_hand(server, "classic", hand)
        app = joined_app(server.port, tmp_path / "state", name="Watcher")
        async with in_the_lobby(app) as pilot:
            await wait_for(pilot, lambda: bool(app.tables), "the table in the lobby")
            await pilot.press("w")
            await wait_for(pilot, lambda: app.current_mode == "table", "watching the table")
            await pilot.press("l")
            await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen), "the history")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, HandReplayScreen), "the replay")
            replay = app.screen
            assert isinstance(replay, HandReplayScreen)
            steps = replay.replayed.steps
            assert len(steps) == len(hand.actions) + 1 > 10
            assert replay.replayed.seat is None
            # No coach offered: a spectator made no move to ask about.
            hint = str(replay.query(Label).last().render())
            assert "escape: back" in hint and "c: coach" not in hint
            await pilot.press("c")
            assert app.screen is replay and not replay.advice and replay.asked is None
            assert [s.view.event_count for s in steps] == sorted(
                {s.view.event_count for s in steps}
            )
            assert not any(step.view.hand for step in steps)
            await pilot.press("end")
            assert replay.at == len(steps) - 1
            await pilot.press("left", "left", "right")
            assert replay.at == len(steps) - 2
            await pilot.press("home", "left")
            assert replay.at == 0
