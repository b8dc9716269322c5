"""A large terminal (160x50) used: bigger cards, each player's last move beside their name, the
last discards with who threw them. 80x24 is drawn as before (the snapshots say so). The real
`tonk-client` on a pseudo-terminal, at a practice table dealt from the stacked deck."""

from __future__ import annotations

from pathlib import Path

from clientkit import practice_command
from ptyterm import Term


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
        assert "drew a card, discarded K♣" in bot  # (the stacked deck: the bot plays so)
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
