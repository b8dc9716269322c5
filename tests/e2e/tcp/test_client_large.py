"""A large terminal (160x50) used: bigger cards, each player's last move beside their name, the
last discards fanned with who threw them. At 80x24 the players are listed and the cards are
smaller (the snapshots say so). The real `tonk-client` on a pseudo-terminal, at a practice
table dealt from the stacked deck."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clientkit import practice_command, start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server
from tonk.client.widgets.seats import places
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e


def env(tmp_path: Path) -> dict[str, str]:
    return {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")}


def table_rows(screen: str) -> list[str]:
    """The table's rows of a large screen: without the top line, nor the ledger and the log at
    their right (an empty row for the top line, so that the rows keep their numbers)."""
    lines = screen.splitlines()
    right = lines[1].find("╭─ Ledger") if len(lines) > 1 else -1
    return ["", *(row[:right] if right > 0 else row for row in lines[1:])]


def pile_fanned(screen: str, fan: str, who: str) -> bool:
    """Whether the discard pile is drawn fanned as `fan` says, oldest first (`9♣ 5♠ K♣`: the
    cards' labels at the top of their faces, side by side), with who threw each (`up You
    Ada`) under the cards, each word under its card."""
    rows = table_rows(screen)
    labels = r"\s+│".join(re.escape(card) for card in fan.split())
    faces = next((n for n, row in enumerate(rows) if re.search(f"│{labels}\\s+│", row)), None)
    if faces is None:
        return False
    columns = [rows[faces].index(f"│{card}") for card in fan.split()]
    words = list(zip(who.split(), columns, strict=True))
    return any(
        all(row[column + 1 :].startswith(word) for word, column in words)
        for row in rows[faces + 1 :]
    )


async def test_a_large_terminal_has_big_cards_the_players_around_the_table_and_the_pile(
    tmp_path: Path,
) -> None:
    term = Term(160, 50)
    try:
        term.start(practice_command(), env(tmp_path))
        # A card of 7 columns and 5 rows.
        await term.wait_for_all("Your turn: d draw", "│5♠   │", "│  ♠  │", "│   5♠│")
        await term.wait_until(lambda s: pile_fanned(s, "9♣", "up"), "the up card fanned")
        term.write("dx")  # draw the 8s, discard the card under the cursor (the 5s)
        # The bot's turn, then ours: each last move is under its player's name. The one other
        # player sits across, above the stock: her name, her cards face down, her last move
        # (the stacked deck: the bot plays so). You at the bottom of the table, above your
        # hand.

        def placed(screen: str) -> bool:
            rows = table_rows(screen)
            names = [n for n, row in enumerate(rows) if "Ada (bot)" in row]
            stock = [n for n, row in enumerate(rows) if "Stock:" in row]
            hand = [n for n, row in enumerate(rows) if "Your hand ·" in row]
            if not names or not stock or not hand or names[0] + 2 >= len(rows):
                return False
            ada, hand_title = names[0], hand[0]
            return (
                ada < stock[0]
                and "▒ ▒ ▒ ▒ ▒  5 cards" in rows[ada + 1]
                and "drew, discarded K♣" in rows[ada + 2]
                and "Tester (you)" in rows[hand_title - 3]
                and "drew 8♠, discarded 5♠" in rows[hand_title - 2]
            )

        screen = await term.wait_until(
            lambda s: (
                "Your turn: d draw" in s and pile_fanned(s, "9♣ 5♠ K♣", "up You Ada") and placed(s)
            ),
            "the bot's turn done, each move under its player's name",
        )
        assert "Players" not in screen  # (they sit around the table instead)
        # Made small, the table is drawn as at 80x24: the players listed, small cards in the
        # hand, the pile not fanned (no room for who threw each).
        term.resize(80, 24)
        await term.wait_until(
            lambda s: "│  ♠  │" not in s and "╭───╮" in s and not pile_fanned(s, "K♣", "Ada"),
            "small cards",
        )
        await term.wait_for_all("Players", "Ada (bot) D 5 cards", "Stock: ", "Discard: K♣")
    finally:
        term.close()


async def test_three_others_sit_at_your_left_across_and_at_your_right_in_the_order_of_play(
    tmp_path: Path,
) -> None:
    term = Term(160, 50)
    try:
        term.start(
            [command_path("tonk-client"), "--name", "Tester", "--bots", "3", "--seed", "11"],
            env(tmp_path),
        )
        screen = await term.wait_until(
            lambda s: "Stock:" in s and s.count("▒  ") == 3 and "Tester (you)" in s,
            "the three others' cards face down",
        )
        rows = table_rows(screen)

        def where(text: str) -> tuple[int, int]:
            return next((n, row.index(text)) for n, row in enumerate(rows) if text in row)

        stock_row, stock_column = where("Stock:")
        # Ada plays after you: at your left; Bix across; Cleo, who plays before you, at your
        # right; each with their cards face down.
        ada_row, ada_column = where("Ada (bot)")
        assert ada_row < stock_row and ada_column < stock_column
        assert where("Bix (bot)")[0] < ada_row
        assert where("Cleo (bot)")[0] == ada_row and where("Cleo (bot)")[1] > stock_column
        assert len(re.findall(r"\d cards?\b", rows[ada_row + 1])) == 2  # (six fit too)
        assert "(you)" in rows[where("Your hand")[0] - 2]
    finally:
        term.close()


async def test_with_ascii_and_no_colour_the_large_table_is_as_readable(tmp_path: Path) -> None:
    term = Term(160, 50)
    try:
        term.start(practice_command("--ascii"), {**env(tmp_path), "NO_COLOR": "1"})
        screen = await term.wait_for_all(
            "Your turn: d draw", "|5S   |", "|  S  |", "|   5S|", "+-----+", "Discard: 9C"
        )
        await term.wait_until(lambda s: "|9C " in s and "|####" in s, "the stock and discard")
        assert "╭" not in screen and "♠" not in screen and "▒" not in screen
    finally:
        term.close()


async def test_a_spectator_on_a_large_terminal_reads_each_last_turn_under_the_name(
    tmp_path: Path,
) -> None:
    """Each player's last turn is under their name at their place (the table seen from the
    first seat's side): the hand panel does not list it again."""
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
            # Bob across, his move under his name; Alice's side at the bottom, above the hand
            # panel: she deals, and has not played.

            def placed(screen: str) -> bool:
                rows = table_rows(screen)

                def first(text: str) -> int:
                    return next((n for n, row in enumerate(rows) if text in row), -1)

                bob, alice = first("Bob"), first("Alice D")
                stock, hand = first("Stock:"), first("You are watching")
                return (
                    0 < bob < stock < alice < hand
                    and "5 cards" in rows[bob + 1]
                    and "drew, discarded 5♠" in rows[bob + 2]
                    and "5 cards" in rows[alice + 1]
                )

            # (The log's line may be written a moment after the table's rows.)
            screen = await term.wait_until(
                lambda s: placed(s) and "Bob drew, discarded 5♠" in s,
                "each player in their place, the log",
            )
            assert "each player's last turn" not in screen
            assert screen.count("drew, discarded 5♠") == 2  # under the name, the log
        finally:
            term.close()
            await alice.close()
            await bob.close()


def test_the_places_follow_the_order_of_play_from_the_bottom_seat() -> None:
    assert places([0, 1], 0) == (0, {"across-1": 1})
    assert places([0, 1, 2], 1) == (1, {"left": 2, "right": 0})
    assert places([0, 1, 2, 3, 4], 3) == (
        3,
        {"left": 4, "across-1": 0, "across-2": 1, "right": 2},
    )
    # Someone watching sees the table from the first seat's side; nobody seated, no places.
    assert places([1, 2], None) == (1, {"across-1": 2})
    assert places([], None) == (None, {})
