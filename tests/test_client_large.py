"""A large terminal (160x50) used: bigger cards, each player's last move beside their name, the
last discards with who threw them. 80x24 is drawn as before (the snapshots say so). The real
`tonk-client` on a pseudo-terminal, at a practice table dealt from the stacked deck."""

from __future__ import annotations

from pathlib import Path

from clientkit import practice_command, start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server
from tonk.shared import protocol as p


def env(tmp_path: Path) -> dict[str, str]:
    return {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")}


async def test_a_large_terminal_has_big_cards_moves_beside_names_and_the_pile(
    tmp_path: Path,
) -> None:
    term = Term(160, 50)
    try:
        term.start(practice_command(), env(tmp_path))
        # A card of 7 columns and 5 rows.
        await term.wait_for_all("Your turn: d draw", "│5♠   │", "│  ♠  │", "│   5♠│", "9♣ up card")
        term.write("dx")  # draw the 8s, discard the card under the cursor (the 5s)
        # The bot's turn, then ours: each last move is beside its player's name.
        screen = await term.wait_until(
            lambda s: (
                "Your turn: d draw" in s
                and "discarded K♣" in s
                and "Pile, newest first: K♣ Ada (bot) · 5♠ You · 9♣ up card" in s
            ),
            "the bot's turn done",
        )
        players = [row for row in screen.splitlines() if "Tester" in row and "(you)" in row]
        assert players and "drew 8♠, discarded 5♠" in players[0]
        bot = next(row for row in screen.splitlines() if "Ada (bot)" in row and "card" in row)
        assert "drew, discarded K♣" in bot  # (the stacked deck: the bot plays so)
        # Made small, the table is drawn as at 80x24: small cards, no pile line.
        term.resize(80, 24)
        screen = await term.wait_gone("Pile, newest first")
        await term.wait_until(lambda s: "│  ♠  │" not in s and "╭───╮" in s, "small cards")
    finally:
        term.close()


async def test_with_ascii_and_no_colour_the_large_table_is_as_readable(tmp_path: Path) -> None:
    term = Term(160, 50)
    try:
        term.start(practice_command("--ascii"), {**env(tmp_path), "NO_COLOR": "1"})
        screen = await term.wait_for_all(
            "Your turn: d draw", "|5S   |", "|  S  |", "|   5S|", "+-----+", "9C up card"
        )
        assert "╭" not in screen and "♠" not in screen
    finally:
        term.close()


async def test_a_spectator_on_a_large_terminal_reads_each_last_turn_beside_the_name(
    tmp_path: Path,
) -> None:
    """Each player's last turn is beside their name: the hand panel does not list it again."""
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        alice, bob = await NetClient.connect(port, "Alice"), await NetClient.connect(port, "Bob")
        term = Term(160, 50)
        try:
            await start_kitchen(alice)
            await bob.send({"type": p.SIT, "table": 1})
            await bob.expect(p.SEATED)
            term.start(
                [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Cy"], env(tmp_path)
            )
            await term.wait_for("Kitchen")
            term.keys("w")
            await term.wait_for("You are watching this table.")
            await bob.send({"type": p.DRAW_STOCK})
            await bob.send({"type": p.DISCARD, "card": "5s"})
            screen = await term.wait_for("drew, discarded 5♠")
            bob_row = next(row for row in screen.splitlines() if "Bob" in row and "cards" in row)
            assert "drew, discarded 5♠" in bob_row
            assert "each player's last turn" not in screen
            assert screen.count("drew, discarded 5♠") == 2  # beside the name, the log
        finally:
            term.close()
            await alice.close()
            await bob.close()
