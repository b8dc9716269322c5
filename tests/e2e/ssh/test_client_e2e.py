"""End to end: the real `tonk-client` command on a real pseudo-terminal against a real
`tonk-server` subprocess, typed into and read as a player would; then the same through a real
SSH session to an sshd the test starts itself on loopback."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from clientkit import start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, ssh_command, sshd, tonk_server

pytestmark = pytest.mark.e2e


async def play_a_hand(term: Term, port: int) -> None:
    """The kitchen hand (`kitchen_hand`), then back to the table, to the lobby, and out."""
    alice = await NetClient.connect(port, "Alice")
    try:
        await kitchen_hand(term, alice)
        term.keys("Enter")
        await term.wait_for_all("Ledger (chips)", "+1")
        await leave_and_quit(term)
    finally:
        await alice.close()


async def leave_and_quit(term: Term) -> None:
    """No hand in play: q leaves for the lobby at once, and q there quits."""
    term.keys("q")
    await term.wait_for("playing as Tester")
    term.keys("q")
    assert await term.wait_exit() == 0
    assert "Traceback" not in term.screen()


async def kitchen_hand(term: Term, alice: NetClient) -> None:
    """Alice (a scripted protocol client) creates a two-seat table dealt from a stacked deck;
    the client in term takes the other seat from the lobby and plays the hand to its end with
    keys: draw, spread a run, hit it, discard, and on its next turn drop and win, up to the
    end-of-hand window. The hand is shown by suit: 5s 6s 7s 8s 9h 9d once the 8s is drawn."""
    await start_kitchen(alice)

    # (A screen is drawn in more than one write: the title may come a moment after the list.)
    await term.wait_for_all(
        "Kitchen", "tonk · lobby · 127.0.0.1 · playing as Tester", "1/2", "waiting"
    )
    term.keys("Enter")  # take the seat: the table is full and starts

    # Your hand, boxed, and Alice deals (a screen is drawn in more than one write).
    await term.wait_for_all("Your turn: d draw", "│ 5♠│", "│ 9♦│", "Alice", "D 5 cards")
    term.keys("d")
    # The card just drawn is marked.
    await term.wait_for_all("You drew 8♠", "Your turn: x discard 5♠ · s spread", "4*")
    term.keys("1", "2", "3", "s")
    await term.wait_for_all("1 Your run", "│ 5♠│ 6♠│ 7♠│")
    term.keys("1", "h")  # the 8s, first of 8s 9h 9d
    await term.wait_for("onto which spread?")
    term.keys("1")
    await term.wait_for_all("hit 8♠ on your own run", "│ 5♠│ 6♠│ 7♠│ 8♠│")
    term.keys("x")  # the cursor stays first: on the 9h now
    await term.wait_for_all("discarded 9♥", "count 9")

    # Alice draws and throws the king.
    await alice.expect(
        "update", lambda m: m["view"]["turn"] == alice.seat and m["view"]["phase"] == "start"
    )
    await alice.send({"type": "draw_stock"})
    await alice.expect("update", lambda m: m["view"]["phase"] == "play")
    await alice.send({"type": "discard", "card": "Kc"})

    await term.wait_for("Alice drew, discarded")
    await term.wait_for("Your turn: d draw")
    term.keys("k")
    await term.wait_for("Drop with 9?")
    term.keys("k")
    # (The end-of-hand window names everybody as the table does; the log says "You".)
    await term.wait_for_all(
        "Hand 1 is over", "Tester dropped with 9 and won.", "Alice pays Tester 1 chip"
    )


def client_env(tmp_path: Path) -> dict[str, str]:
    return {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state"), "TERM": "xterm-256color"}


async def test_a_hand_in_term_against_a_tonk_server(tmp_path: Path, term: Term) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        client = [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"]
        term.start(client, client_env(tmp_path))
        await play_a_hand(term, port)


async def test_the_same_hand_over_ssh(tmp_path: Path, term: Term) -> None:
    with (
        tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port,
        sshd(tmp_path) as (ssh_port, key),
    ):
        remote = shlex.join(
            [
                "env",
                "LANG=C.UTF-8",
                f"XDG_STATE_HOME={tmp_path / 'remote-state'}",
                command_path("tonk-client"),
                f"127.0.0.1:{port}",
                "--name",
                "Tester",
            ]
        )
        term.start(ssh_command(ssh_port, key, remote), client_env(tmp_path))
        await play_a_hand(term, port)
