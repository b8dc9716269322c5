"""Keys as a terminal delivers them: several in one read (typed fast, pasted, bunched by SSH)
are each handled in order, and the end-of-hand window never holds up the next hand. The real
`tonk-client` on a pseudo-terminal; each burst is written to it in one write."""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from clientkit import practice_command, start_kitchen
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, ssh_command, sshd, tonk_server
from tonk.client.keys import key_name

pytestmark = pytest.mark.e2e


def client_env(tmp_path: Path) -> dict[str, str]:
    return {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")}


def practice(term: Term, tmp_path: Path) -> None:
    term.start(practice_command(), client_env(tmp_path))


async def test_keys_written_in_one_burst_are_each_handled_in_order(
    tmp_path: Path, term: Term
) -> None:
    practice(term, tmp_path)
    await term.wait_for("Your turn: d draw")

    # Draw, select cards 1 to 3, spread them: the spread key comes before the draw is
    # answered, and after the keys that selected.
    term.write("d123s")
    screen = await term.wait_for_all("1 Your run", "│ 5♠│ 6♠│ 7♠│", "You drew 8♠")
    assert "Select the cards" not in screen and "Not allowed" not in screen

    # Select the 8s, hit, and choose spread 2 in the window the h opened: there is no
    # spread 2, and it says so; escape cancels, with the 8s still selected.
    term.write("1h2")
    await term.wait_for("There is no spread 2")
    term.keys("Escape")
    await term.wait_gone("onto which spread?")
    # Hit again and choose spread 1, in one write.
    term.write("h1")
    screen = await term.wait_for_all("│ 5♠│ 6♠│ 7♠│ 8♠│", "hit 8♠ on your own")
    assert "Select the one card" not in screen and "onto which spread?" not in screen

    term.write("x")  # the 9h, under the cursor
    await term.wait_for("discarded 9♥")

    # The bot plays; then draw and discard in one write: the discard waits for the draw.
    await term.wait_for("Your turn: d draw")
    term.write("dx")
    # (A turn is one line of the log: "You drew 4♣, discarded 9♦".)
    screen = await term.wait_until(
        lambda s: s.count("You drew") == 2 and re.search(r"You drew \S+, discarded", s),
        "the second turn's draw and discard",
        limit=30,
    )
    assert "Not allowed" not in screen

    # The chat line takes what is typed after c, however fast, and the key after enter
    # is a table key again.
    term.write("chi all\ro")
    screen = await term.wait_for("<Tester> hi all")
    await term.wait_for("by rank (o)")


async def draw_and_spread_three(term: Term, tmp_path: Path) -> None:
    """The practice table: draw the 8♠, spread 5♠ 6♠ 7♠ (keeping 8♠ 9♥ 9♦)."""
    practice(term, tmp_path)
    await term.wait_for("Your turn: d draw")
    term.write("d123s")
    await term.wait_for_all("1 Your run", "│ 5♠│ 6♠│ 7♠│")


async def test_h_hits_with_the_card_under_the_cursor_and_a_selection_ends_with_the_turn(
    tmp_path: Path, term: Term
) -> None:
    await draw_and_spread_three(term, tmp_path)
    # Nothing selected, the cursor (home) on the 8♠ drawn: the top line offers to hit with
    # it, and h does, as x would discard it.
    term.keys("Home")
    await term.wait_for("x discard 8♠ · h hit")
    term.write("h")
    await term.wait_for("onto which spread?")
    term.write("1")
    screen = await term.wait_for_all("│ 5♠│ 6♠│ 7♠│ 8♠│", "hit 8♠ on your own")
    assert "Select the one card" not in screen

    # The 9♦ selected, the 9♥ discarded: the turn is over, and so is the selection. At the
    # next turn, s has nothing to spread (not a spread of the 9♦ left raised).
    term.write("2")
    term.keys("Home")
    term.write("x")
    await term.wait_for("discarded 9♥")
    await term.wait_for("Your turn: d draw")
    term.write("d")
    await term.wait_for("Your turn: x discard")
    term.write("s")
    screen = await term.wait_for("Select the cards of the")  # the notice wraps
    assert "Not allowed" not in screen


async def test_the_end_of_hand_window_names_everyone_sorts_the_hands_and_lists_the_spreads(
    tmp_path: Path, term: Term
) -> None:
    await draw_and_spread_three(term, tmp_path)
    term.keys("Home")
    term.write("x")  # the 8♠
    await term.wait_for("Your turn: d draw")
    term.write("kk")  # drop, and yes
    # The player by name, as the rest of the table shows it, marked as you; every hand
    # shown by suit, as the table shows yours; the spreads laid that hand.
    screen = await term.wait_for_all(
        "Hand 1 is over", "Spreads:", "pays", "Tester (you)", "Tester dropped with", "J♥ 3♦ Q♦ 2♣"
    )
    assert "You dropped" not in screen and "You pay" not in screen
    spreads = r"Spreads: 1 Tester's run: 5♠ 6♠ 7♠ 8♠ +\+8♠ Ada \(bot\)"
    await term.wait_until(lambda s: re.search(spreads, s) is not None, "the spreads laid")


async def test_a_burst_of_keys_over_ssh_is_handled_in_order(tmp_path: Path, term: Term) -> None:
    """The same burst through a real SSH session, which carries keys typed fast together."""
    with sshd(tmp_path) as (ssh_port, key):
        state = f"XDG_STATE_HOME={tmp_path / 'remote-state'}"
        remote = shlex.join(["env", "LANG=C.UTF-8", state, *practice_command()])
        term.start(ssh_command(ssh_port, key, remote), client_env(tmp_path))
        await term.wait_for("Your turn: d draw")
        term.write("d123s")
        screen = await term.wait_for_all("1 Your run", "│ 5♠│ 6♠│ 7♠│", "You drew 8♠")
        assert "Select the cards" not in screen


async def test_keys_pasted_at_the_table_are_played_in_order(tmp_path: Path, term: Term) -> None:
    """A terminal sends a paste between bracketed-paste marks, which Textual hands on as one
    Paste event: at the table, it is the keys it holds."""
    practice(term, tmp_path)
    await term.wait_for("Your turn: d draw")
    term.write("\x1b[200~d123s\x1b[201~")
    await term.wait_for_all("1 Your run", "│ 5♠│ 6♠│ 7♠│", "You drew 8♠")


async def test_a_key_that_means_nothing_here_says_so(tmp_path: Path, term: Term) -> None:
    practice(term, tmp_path)
    await term.wait_for("Your turn: d draw")
    term.write("z")
    await term.wait_for("z is not a key here")
    term.write("D")  # caps lock on
    await term.wait_for("caps")  # "D is not a key here: is caps lock on? ...", wrapped


@asynccontextmanager
async def first_hand_ended(
    term: Term, tmp_path: Path, next_hand_delay: str, keys: str = "kk"
) -> AsyncIterator[None]:
    """A tonk-server (the next hand dealt `next_hand_delay` seconds after one ends) where Alice
    has created the Kitchen. The client on `term` takes the other seat from the lobby and
    drops at once (36 against Alice's 35: caught), which ends the hand; `keys` are written
    in one write (k asks, k drops). Alice leaves after."""
    with tonk_server(tmp_path, "--next-hand-delay", next_hand_delay) as port:
        alice = await NetClient.connect(port, "Alice")
        try:
            await start_kitchen(alice)
            term.start(
                [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"],
                client_env(tmp_path),
            )
            await term.wait_for("Kitchen")
            term.keys("Enter")
            await term.wait_for("Your turn: d draw")
            term.write(keys)
            await term.wait_for("Hand 1 is over")
            yield
        finally:
            await alice.close()


async def test_the_end_of_hand_window_closes_when_the_next_hand_is_dealt(
    tmp_path: Path, term: Term
) -> None:
    async with first_hand_ended(term, tmp_path, next_hand_delay="2"):
        # Nothing pressed: the next deal takes the window away.
        screen = await term.wait_gone("Hand 1 is over")
        assert "hand 2" in screen
        assert "Your hand" in screen and "Ledger" in screen


async def test_a_game_key_pressed_over_the_end_of_hand_window_goes_to_the_table(
    tmp_path: Path, term: Term
) -> None:
    async with first_hand_ended(term, tmp_path, next_hand_delay="600"):
        term.write("o")  # show the hand by rank
        await term.wait_gone("Hand 1 is over")
        await term.wait_for("by rank (o)")


async def test_a_key_typed_before_the_hand_ended_leaves_the_window_up(
    tmp_path: Path, term: Term
) -> None:
    """ "kkx" in one write: the x waits for the drop to be answered, and the drop ended the
    hand, so the x is for a hand that is over: it says so, and the window stays."""
    async with first_hand_ended(term, tmp_path, next_hand_delay="600", keys="kkx"):
        await term.wait_for_all("The hand was over before x", "Hand 1 is over")


def test_a_pasted_character_is_named_as_textual_names_its_key() -> None:
    named = {c: key_name(c) for c in "a1Z?,/@ $-"}
    assert named == {
        "a": "a",
        "1": "1",
        "Z": "Z",
        "?": "question_mark",
        ",": "comma",
        "/": "slash",
        "@": "at",
        " ": "space",
        "$": "dollar_sign",
        "-": "minus",
    }
