"""The table drawn with cards at every size, and laid out upright on a narrow terminal: the
real `tonk-client` on a pseudo-terminal read through a terminal emulator, at a practice table
dealt from the stacked deck (you hold 5♠ 6♠ 7♠ 9♥ 9♦ and draw the 8♠)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from clientkit import practice_command
from ptyterm import Term
from termkit import command_path, tonk_server

pytestmark = pytest.mark.e2e


@contextlib.contextmanager
def client(tmp_path: Path, size: tuple[int, int], *options: str) -> Iterator[Term]:
    """`tonk-client` on a terminal of `size`: the stacked practice table, or with `options`
    as they say; closed after the test."""
    term = Term(*size)
    try:
        argv = [command_path("tonk-client"), *options] if options else practice_command()
        term.start(argv, {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")})
        yield term
    finally:
        term.close()


#: One card's label at the top of its face, at any size (`│ 5♠│`, `│5♠   │`), side by side.
def faces(*cards: str) -> str:
    return "│" + "│".join(f" ?{re.escape(card)} *" for card in cards) + "│"


def spread_drawn(screen: str, cards: str, title: str, hits: dict[str, str]) -> bool:
    """Whether a spread is drawn as cards: `title` over a row of the cards' faces side by
    side (`cards`, in order), and under each card in `hits` who hit it (`+You`), under the
    card's own face."""
    rows = screen.splitlines()
    shown = cards.split()
    pattern = faces(*shown)
    found = [(n, m) for n, row in enumerate(rows) if (m := re.search(pattern, row)) is not None]
    for n, match in found:
        above = rows[max(0, n - 3) : n]
        if not any(title in row for row in above):
            continue
        edges = [match.start() + i for i, ch in enumerate(match.group()) if ch == "│"]
        marked = all(
            any(row[edges[shown.index(card)] + 1 :].startswith(who) for row in rows[n + 1 :])
            for card, who in hits.items()
        )
        if marked:
            return True
    return False


async def play_a_spread_and_a_hit(term: Term) -> str:
    """Draw the 8♠, spread 5♠ 6♠ 7♠, hit the 8♠ onto it: the screen once it shows them."""
    await term.wait_for("Your turn: d draw")
    term.write("d123s")
    await term.wait_until(
        lambda s: spread_drawn(s, "5♠ 6♠ 7♠", "1 Your run", {}), "the spread as cards"
    )
    term.write("1h")
    await term.wait_for("onto which spread?")
    term.write("1")
    return await term.wait_until(
        lambda s: spread_drawn(s, "5♠ 6♠ 7♠ 8♠", "1 Your run", {"8♠": "+You"}),
        "the spread as cards, the 8♠ marked as hit by you",
    )


@pytest.mark.parametrize("size", [(40, 30), (80, 24), (140, 44), (200, 60)], ids=str)
async def test_a_spread_laid_and_hit_shows_as_cards_at_every_size(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    with client(tmp_path, size) as term:
        screen = await play_a_spread_and_a_hit(term)
        # The stock as a card back beside its count; the discard pile's words beside it.
        assert "▒▒▒│" in screen and re.search(r"Stock: \d+", screen)
        assert "Terminal too small" not in screen


async def test_the_discard_pile_is_fanned_with_who_threw_each_where_there_is_room(
    tmp_path: Path,
) -> None:
    with client(tmp_path, (100, 30)) as term:
        await term.wait_for("Your turn: d draw")
        term.write("dx")  # draw the 8♠, discard the 5♠; the bot draws and throws the K♣
        screen = await term.wait_until(
            lambda s: re.search(faces("9♣", "5♠", "K♣"), s) is not None,
            "the up card, your discard and the bot's side by side",
        )
        rows = screen.splitlines()
        n, match = next((n, m) for n, row in enumerate(rows) if (m := re.search(faces("9♣"), row)))
        edges = [match.start() + i for i, ch in enumerate(match.group()) if ch == "│"]
        # Under each card who threw it: the up card, you, the bot.
        words = next(row for row in rows[n + 1 :] if re.search(r"up +You +Ada", row))
        assert [words.index(w, edges[0]) for w in ("up", "You", "Ada")] == [
            edges[0] + 1,
            edges[0] + 1 + (edges[1] - edges[0]),
            edges[0] + 1 + 2 * (edges[1] - edges[0]),
        ]
        assert "Discard: K♣" in screen and "3 in the pile" in screen


async def test_a_narrow_terminal_stacks_the_panels_and_cuts_nothing(tmp_path: Path) -> None:
    with client(tmp_path, (40, 30)) as term:
        await term.wait_for("Your turn: d draw")
        term.write("d")
        screen = await term.wait_until(
            lambda s: "Your turn: x discard" in s and "8♠│" in s, "the 8♠ drawn, in the hand"
        )
        rows = screen.splitlines()

        def row_of(text: str) -> int:
            return next(n for n, row in enumerate(rows) if text in row)

        # Top to bottom: the top line, the players with their balances, the table, the
        # hand, the keys; no ledger and (30 rows) no log beside or under them.
        assert (
            row_of("Your turn")
            < row_of("Players · balance (chips)")
            < row_of("Table")
            < row_of("Your hand")
            < row_of("d Draw")
        )
        assert "Ledger" not in screen and "Log and chat" not in screen
        assert re.search(r"Tester +\d+ cards? \(you\) +0 │", screen)
        # Nothing cut: the top line's message whole (on more than one row), the hand's six
        # cards in one row, every key there is on the key bar's two rows.
        assert "…" not in screen
        assert "Your turn: x discard 5♠ · s spread" in screen
        assert re.search(r"│ 5♠│ │ 6♠│ │ 7♠│ │ 8♠│ │ 9♥│ │ 9♦│", screen)
        keys = rows[-2] + " " + rows[-1]
        for key in ("d Draw", "x Discard", "s Spread", "h Hit", "k Drop", "? Help", "q Leave"):
            assert key in keys, keys
        # Grown to 80 columns, the ledger and the log are beside the table again.
        term.resize(80, 30)
        await term.wait_for_all("Ledger", "Log and chat", "You drew 8♠")


def panel_rows(screen: str, title: str) -> list[str]:
    """The rows inside the panel titled `title` (between its border's top and foot); none
    where it is not drawn whole."""
    rows = screen.splitlines()
    top = next((n for n, row in enumerate(rows) if f"╭─ {title}" in row), len(rows))
    foot = next((n for n in range(top + 1, len(rows)) if rows[n].startswith("╰")), top)
    return [row.strip("│ ") for row in rows[top + 1 : foot]]


def mostly_empty(screen: str, title: str) -> bool:
    """Whether half the rows inside the panel `title` or more are blank (or it is not
    drawn)."""
    rows = panel_rows(screen, title)
    return not rows or 2 * sum(1 for row in rows if not row) >= len(rows)


@pytest.mark.parametrize("size", [(40, 50), (40, 35)], ids=str)
async def test_an_upright_phone_s_table_is_as_tall_as_its_cards_and_the_log_takes_the_rest(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 40x50 and 40x35 (phones held upright: 390x844, 360x640) the table's panel is not
    left half empty below its cards: it is as tall as they are, and grows as spreads are
    laid; the log takes the rows left under the hand."""
    with client(tmp_path, size) as term:
        # (The panel is laid out once before its cards say how tall they are: one frame
        # shows it a row high. What a player is left looking at is the frame after.)
        screen = await term.wait_until(
            lambda s: (
                "Your turn: d draw" in s
                and "▒▒▒│" in s
                and "Log and chat" in s
                and not mostly_empty(s, "Table")
            ),
            "a table panel filled by its cards, the stock among them",
        )
        rows = screen.splitlines()
        assert [n for n, row in enumerate(rows) if "╭─ Log and chat" in row] > [
            n for n, row in enumerate(rows) if "╭─ Your hand" in row
        ]
        await play_a_spread_and_a_hit(term)
        screen = await term.wait_until(
            lambda s: (
                spread_drawn(s, "5♠ 6♠ 7♠ 8♠", "1 Your run", {"8♠": "+You"})
                and not mostly_empty(s, "Table")
            ),
            "the spread as cards in a table panel filled by its cards",
        )
        assert "Log and chat" in screen and "Terminal too small" not in screen


async def test_a_narrow_top_line_breaks_between_the_moves_not_inside_one(
    tmp_path: Path,
) -> None:
    with client(tmp_path, (45, 30)) as term:
        screen = await term.wait_for("Your turn: d draw")
        top = screen.splitlines()[:4]
        for move in ("Your turn: d draw", "p pick up 9♣", "k drop at 36"):
            assert any(move in row for row in top), top
        assert any("Practice · classic · 1 chip · hand 1" in row for row in top), top


async def test_five_seats_at_80x24_show_the_pile_as_cards_over_no_spreads(
    tmp_path: Path,
) -> None:
    options = ["--name", "Tester", "--bots", "4", "--rules", "speno", "--seed", "11"]
    with client(tmp_path, (80, 24), *options) as term:
        # Five players listed leave the table five rows: before any spread, the pile's cards
        # (a card back, the discard, who threw it) over "No spreads on the table.", not a
        # line of text over empty rows.
        screen = await term.wait_until(
            lambda s: (
                "Dot (bot)" in s
                and "No spreads on the table." in s
                and "▒▒▒" in s
                and re.search(r"Stock: \d+", s) is not None
            ),
            "the table laid out for five",
        )
        assert re.search(r"Stock: \d+   Discard: ", screen) is None  # (not the line of text)
        assert "Terminal too small" not in screen


async def test_the_end_of_hand_window_fits_a_narrow_terminal(tmp_path: Path) -> None:
    """Upright, each player's hand and result go under their name and numbers: nothing of
    the window is cut at 40 columns."""
    with client(tmp_path, (40, 30)) as term:
        await term.wait_for("Your turn: d draw")
        term.write("kk")  # drop at once, and yes
        rows = (r"Tester \(you\) +36 +[-+]\d+ +[-+]\d+ █", r"█   5♠ 6♠ 7♠ 9♥ 9♦  dropped")
        screen = await term.wait_until(
            lambda s: (
                all(text in s for text in ("Hand 1 is over", "This hand", "pays"))
                and all(re.search(row, s) for row in rows)
            ),
            "the window with Tester's numbers and hand under the name",
        )
        assert "…" not in screen
        # Turned wide while it is open, it lays its table out wide again.
        term.resize(80, 30)
        await term.wait_until(
            lambda s: re.search(r"Tester \(you\) +5♠ 6♠ 7♠ 9♥ 9♦ +36 +dropped", s) is not None,
            "the hand beside the name",
        )


async def test_the_create_table_form_upright_shows_every_field_whole(tmp_path: Path) -> None:
    """At 40 columns each of the form's labels is above its field, and every field shows its
    value whole: the bots' strategy, who may take a bot's seat, how the session ends and how
    many minutes, the Options example. Under 40 rows the form scrolls to the field a tab
    moves to, the Create button among them, and Enter there makes the table."""
    with (
        tonk_server(tmp_path, "--bot-pause", "0") as port,
        client(tmp_path, (40, 50), f"127.0.0.1:{port}", "--name", "Ann") as term,
    ):
        screen = await term.wait_for("No tables yet")
        # (An empty list is its header, and how to make a table is said right under it.)
        rows = screen.splitlines()
        header = next(n for n, row in enumerate(rows) if "No." in row and "Table" in row)
        assert "No tables yet: press n to create one." in rows[header + 1], rows
        term.keys("n")
        await term.wait_for("Create a table")
        term.keys(*["Tab"] * 10, "Enter")  # the session's end: its list opened
        await term.wait_for("after a number of minutes")
        term.keys("Down", "Down", "Enter", "Tab", "3", "0")
        screen = await term.wait_until(
            lambda s: re.search(r"█ 30 +█", s) is not None, "30 minutes typed"
        )
        rows = [row.strip("│█ ") for row in screen.splitlines()]
        for label, field in (
            ("Rules", "classic"),
            ("Options", "e.g. hit_lock=1 no_rediscard=true"),
            ("Seats, bots", "easy"),
            ("Turn timer (s)", "bot seats: kept"),
            ("Session ends", "after a number of minutes"),
        ):
            at = rows.index(label)
            assert field in rows[at + 1], (label, rows[at + 1])
        term.resize(40, 24)
        # A tab on, to the Create button: the form scrolls it into sight.
        term.keys("Tab")
        screen = await term.wait_until(
            lambda s: "Create   Cancel" in s and "Create a table" not in s,
            "the form scrolled to its buttons",
        )
        term.keys("Enter")
        await term.wait_for_all("Your hand", "Ann")
