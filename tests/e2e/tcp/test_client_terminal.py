"""What the real `tonk-client` writes to a real pseudo-terminal: only ASCII under --ascii, no
colour code under NO_COLOR, notices that hide nothing needed to play, a key line right at once
after the terminal grows back from too small, and a start-up error on one line."""

from __future__ import annotations

import re
import signal
import socket
from pathlib import Path

import pytest
from clientkit import deck_text
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, mouse_modes_left_on, tonk_server
from test_server_play import TWO_SEAT_DECK

pytestmark = pytest.mark.e2e

#: An SGR sequence (`ESC [ ... m`) and the parameters in it that set a colour: 30-39, 40-49,
#: 90-97, 100-107 (38 and 48 start 256-colour and 24-bit colours).
SGR = re.compile(rb"\x1b\[([0-9;:]*)m")
COLOUR = re.compile(r"^(3[0-9]|4[0-9]|9[0-7]|10[0-7])$")


def practice(*extra: str) -> list[str]:
    """A practice table against one bot, dealt so that you play first holding 5s 6s 7s 9h
    9d and draw the 8s."""
    return [
        command_path("tonk-client"),
        "--name",
        "Tess",
        "--bots",
        "1",
        "--bot-pause",
        "0",
        "--seed",
        "1",
        "--deck",
        deck_text(dealer=1),
        "--dealer",
        "1",
        *extra,
    ]


ENV = {"LANG": "C.UTF-8", "TERM": "xterm-256color"}


def colour_codes(raw: bytes) -> list[bytes]:
    return [
        match.group(0)
        for match in SGR.finditer(raw)
        if any(COLOUR.match(part) for part in match.group(1).decode().replace(":", ";").split(";"))
    ]


async def play_a_little(term: Term, reason: str = "is not a spread") -> None:
    """Draw, try a spread that is none (refused: the server's `reason` is shown), chat a word
    that is not ASCII, open and close the help, and leave."""
    await term.wait_for("Your turn: d draw")
    term.keys("d")
    await term.wait_for("4*")
    term.keys("1", "4", "s")
    await term.wait_for(reason)
    term.keys("c")
    term.keys("hé", "Enter")
    await term.wait_for("<Tess> h")
    term.keys("?")
    await term.wait_for("escape: close")
    term.keys("Escape")
    await term.wait_gone("escape: close")


async def test_ascii_writes_only_ascii_and_reasons_show_cards_as_the_table_does(term: Term) -> None:
    term.start(practice("--ascii"), ENV)
    # The server's reason names the cards as the table shows them here: 5S 8S.
    await play_a_little(term, "5S 8S is not a spread")
    term.keys("q", "y")
    assert await term.wait_exit() == 0
    raw = term.raw()
    assert len(raw) > 10_000
    strays = sorted({chr(b) for b in raw if b >= 0x80})
    assert raw.isascii(), f"{len(strays)} byte values above 127 written"


async def test_reasons_show_cards_with_suit_symbols_as_the_table_does(term: Term) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")
    term.keys("d")
    await term.wait_for("4*")
    term.keys("1", "4", "s")
    screen = await term.wait_for("5♠ 8♠ is not a spread")
    assert "5s 8s" not in screen


async def test_no_color_writes_no_colour_codes_at_all(term: Term) -> None:
    term.start(practice(), {**ENV, "NO_COLOR": "1"})
    await play_a_little(term)
    term.keys("q", "y")
    assert await term.wait_exit() == 0
    raw = term.raw()
    assert SGR.search(raw)  # bold, reverse and dim are still written
    found = colour_codes(raw)
    assert found == [], sorted(set(found))[:10]


async def test_notices_hide_nothing_needed_to_play_at_80x24(term: Term) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")
    term.keys("d")
    # The 8s just drawn, the hand's fourth card, and the row of numbers under the six cards
    # drawn whole (the screen is read as the terminal gets it, so a row can be half-drawn).
    whole_hand = re.compile(r"\^1\^ +2 +3 +4\* +5 +6 ")
    before = await term.wait_until(lambda screen: whole_hand.search(screen), "the hand drawn")
    assert "You are not away" not in before
    rows_before = before.splitlines()
    term.keys("b")  # not away: a notice says so

    def left_column_whole(screen: str) -> bool:
        rows = screen.splitlines()
        return "You are not away" in screen and [row[:48] for row in rows] == [
            row[:48] for row in rows_before
        ]

    during = await term.wait_until(left_column_whole, "the notice beside the whole table")
    rows_during = during.splitlines()
    # The status line, the players, the table and your hand (the left column), and the
    # keys are all as they were, whole.
    assert rows_during[0] == rows_before[0]
    assert [row[:48] for row in rows_during] == [row[:48] for row in rows_before]
    assert rows_during[-1] == rows_before[-1]
    # And the newest lines of the log, at its bottom.
    assert rows_during[-8:-1] == rows_before[-8:-1]


def bold(term: Term, x: int, y: int) -> bool:
    with term._lock:
        return bool(term._screen.buffer[y][x].bold)


async def test_the_key_line_is_right_at_once_after_growing_back_from_too_small(term: Term) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")
    await term.wait_until(lambda _: bold(term, 0, 22), "d open on the key line")
    term.resize(60, 20)
    await term.wait_for("Terminal too small: 60x20")
    term.resize(80, 24)
    await term.wait_gone("Terminal too small")
    # d (draw) is open: shown bold on the key line, without anything else happening.
    await term.wait_until(lambda _: bold(term, 0, 22), "d open on the key line", limit=10)
    assert term.screen().splitlines()[22].startswith("d Draw p Pick up"), term.screen()


async def test_a_terminal_resized_and_back_at_once_is_drawn_again_whole(term: Term) -> None:
    """A phone turned and back, a window dragged out and back: two resizes in a moment, the
    size at the end the one before. A terminal that reflows its lines has moved what the
    client drew, so the client draws every row again, though the size it lays out at is
    the same (the web door's phone once kept stale rows above the table and blank rows for
    its buttons)."""
    term.start(practice(), ENV)
    drawn = ("Your turn: d draw", "No spreads on the table.", "Up card: 9♣", "? Help")
    shown = await term.wait_for_all(*drawn)
    # (Forgotten first: what the client draws after the resizes is all the screen shows.)
    term.forget_the_screen()
    term.resize(100, 30)
    term.resize(80, 24)
    # Every row back as it was (the clock in the top line aside), with nothing else happening.
    again = await term.wait_for_all(*drawn, "Your hand", limit=10)
    assert len(again.splitlines()) == len(shown.splitlines()) == 24
    assert again.splitlines()[2:] == shown.splitlines()[2:], again


#: Every key a player at the table has on the key bar (the move keys greyed or not).
PLAYER_KEYS = (
    "d Draw", "p Pick up", "s Spread", "h Hit", "x Discard", "k Drop",
    "o Sort", "c Chat", "? Help", "q Leave", "l History",
)  # fmt: skip


def key_bar(screen: str) -> list[str]:
    """The key bar's rows: the last two, below the panels' bottom borders."""
    rows = screen.splitlines()
    bottom = max(i for i, row in enumerate(rows) if row.startswith("╰"))
    return rows[bottom + 1 :]


async def test_at_80_columns_no_key_leaves_the_key_bar(term: Term, tmp_path: Path) -> None:
    term.start(practice(), ENV)
    screen = await term.wait_for_all("Your turn: d draw", "Help")
    bar = " ".join(key_bar(screen))
    assert [key for key in PLAYER_KEYS if key not in bar] == [], key_bar(screen)
    term.keys("q", "y")
    assert await term.wait_exit() == 0
    # With f shown (a friend lost the connection), every key still there, f's whole.
    with tonk_server(tmp_path, "--grace", "120") as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(name="Kitchen", seats=2, deck=TWO_SEAT_DECK, dealer=0)
        ann = Term(80, 24)
        try:
            ann.start([command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Ann"], ENV)
            await ann.wait_for("Kitchen")
            ann.keys("Enter")
            await ann.wait_for("Your turn: d draw")
            await bob.close()
            screen = await ann.wait_for_all("f Don't wait ", "Help")
            bar = " ".join(key_bar(screen))
            assert [key for key in PLAYER_KEYS if key not in bar] == [], key_bar(screen)
        finally:
            ann.close()


async def test_a_start_up_error_is_one_line(term: Term) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    term.start([command_path("tonk-client"), f"127.0.0.1:{port}"], ENV)
    assert await term.wait_exit() == 1
    text = term.raw().decode()
    line = f"tonk-client: connection to 127.0.0.1:{port} refused: is tonk-server running"
    assert f"{line} there on that port?" in text, text[-400:]


async def test_a_client_on_a_test_terminal_keeps_its_files_in_the_terminals_own_folder(
    term: Term,
) -> None:
    # The test names no state folder: the client's name lock lands below the terminal's own
    # temporary home, never in the tester's real one.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    term.start([command_path("tonk-client"), f"127.0.0.1:{port}"], ENV)
    assert await term.wait_exit() == 1
    locks = list((term.home / ".local" / "state" / "tonk").glob("playing-*.lock"))
    assert locks, sorted(str(p.relative_to(term.home)) for p in term.home.rglob("*"))


@pytest.mark.parametrize("ending", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
async def test_a_practice_client_whose_terminal_is_closed_removes_its_files(
    term: Term, tmp_path: Path, ending: signal.Signals
) -> None:
    # TMPDIR: where this client's practice database goes, watched by this test alone.
    term.start(practice(), {**ENV, "TMPDIR": str(tmp_path)})
    await term.wait_for("Your turn: d draw")
    assert [p.name[:14] for p in tmp_path.iterdir()] == ["tonk-practice-"]
    # The terminal window closed (SIGHUP), or `kill`, `timeout` or a script ends it (SIGTERM).
    term.process.kill(ending)
    assert await term.wait_exit() == 0
    assert list(tmp_path.iterdir()) == []


def hand_rows(screen: str) -> list[str]:
    """The rows of the hand panel (between its title and its bottom border)."""
    rows = screen.splitlines()
    top = next(i for i, row in enumerate(rows) if "Your hand · count" in row)
    return rows[top + 1 : top + 6]


async def test_a_player_at_the_table_sees_the_log_the_selection_g_and_the_drop_question(
    term: Term,
) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")
    term.keys("g")  # the game is under way: g says so
    await term.wait_for("The game has started.")
    term.keys("d")
    await term.wait_for("4*")
    # A spread that is none: refused, and the two cards stay selected (raised).
    term.keys("1", "4", "s")
    screen = await term.wait_for("is not a spread")
    raised = next(row for row in hand_rows(screen) if "5♠" in row)
    assert "8♠" in raised and "6♠" not in raised, "\n".join(hand_rows(screen))
    term.keys("1", "4")  # unselected again
    # Turns until the log is more than full (a turn is a line): its newest line is at its
    # bottom.
    for _ in range(14):
        term.keys("x")
        screen = await term.wait_until(
            lambda s: "Your turn: d draw" in s or "is over" in s, "our turn or the end"
        )
        if "is over" in screen:
            term.keys("Enter")
            await term.wait_for("Your turn: d draw")
        term.keys("d")
        await term.wait_for("Your turn: x discard")
    screen = term.screen()
    rows = screen.splitlines()
    log_rows = [row[49:79] for row in rows[1:23]]
    assert not any("┄" in row for row in log_rows)  # no rule: it does not wrap around
    # Full to its last row (above its bottom border), our draw just now the newest line.
    assert rows[21][49:79].strip(), "\n".join(log_rows)
    assert "You drew" in "\n".join(log_rows[-3:]), "\n".join(log_rows)
    term.keys("x")
    await term.wait_until(lambda s: "Your turn: d draw" in s or "is over" in s, "a turn")
    if "is over" in term.screen():
        term.keys("Enter")
        await term.wait_for("Your turn: d draw")
    # k asks first; escape keeps playing; k and k again drops.
    term.keys("k")
    await term.wait_for("Drop with")
    term.keys("Escape")
    await term.wait_gone("Drop with")
    assert "Your turn: d draw" in term.screen()
    term.keys("k")
    await term.wait_for("Drop with")
    term.keys("k")
    await term.wait_for("is over")


async def test_the_terminal_reports_clicks_only_and_a_click_on_the_key_bar_plays(
    term: Term,
) -> None:
    # Any-motion reporting left on by a link that dropped makes the player's shell print
    # control characters at every move of the mouse: the client asks for clicks only.
    term.start(practice(), ENV)
    screen = await term.wait_for_all("Your turn: d draw", "d Draw")  # the key bar drawn too
    assert mouse_modes_left_on(term.raw()) == {1000, 1006}
    # A click still plays: "d Draw" on the key bar (the last row), pressed and released.
    rows = screen.splitlines()
    y = next(i for i, row in enumerate(rows) if "d Draw" in row)
    column = rows[y].index("Draw") + 1
    for action in "Mm":
        term.write(f"\x1b[<0;{column};{y + 1}{action}")
    await term.wait_for("Your turn: x discard")
    term.write("\x11")  # ctrl+q: the client ends, and turns the mouse off as it goes
    await term.wait_exit()
    assert mouse_modes_left_on(term.raw()) == set()


async def test_a_new_notice_replaces_the_last_and_the_log_scrolls_back(term: Term) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")
    # Two keys that mean nothing: the second's notice takes the first's place.
    term.write("z")
    await term.wait_for("z is not a key here")
    term.write("y")
    screen = await term.wait_for("y is not a key here")
    assert "z is not a key here" not in screen

    # More chat than the log holds: page up shows the start, and the border says how many
    # lines are below; page down comes back to the newest.
    for n in range(1, 15):
        term.write(f"cline {n}\r")
        await term.wait_for(f"<Tess> line {n}")
    screen = await term.wait_for("pgup: earlier")
    assert "At table Practice." not in screen
    term.keys("PageUp")
    await term.wait_for("newer: pgdn")
    term.keys("PageUp")
    screen = await term.wait_for("At table Practice.")
    assert "<Tess> line 14" not in screen
    term.keys("PageDown")
    term.keys("PageDown")
    term.keys("PageDown")
    screen = await term.wait_for_all("<Tess> line 14", "pgup: earlier")
    assert "newer: pgdn" not in screen


async def test_every_named_key_at_the_table_acts_or_says_why_not(term: Term) -> None:
    term.start(practice(), ENV)
    await term.wait_for("Your turn: d draw")

    def raised(card: str) -> bool:
        """A raised (selected) card's face is a row above the others' (the hand's row 1)."""
        return card in hand_rows(term.screen())[1]

    # Enter means nothing at the table: it says so.
    term.keys("Enter")
    await term.wait_for("Enter is not a key here")
    # Tab moves the cursor as right does; up raises the card under it, down lowers it.
    term.keys("Tab", "Up")
    await term.wait_until(lambda s: " ^2^" in s and raised("6♠"), "6♠ under the cursor, raised")
    assert not raised("5♠")
    term.keys("Down")
    await term.wait_until(lambda s: not raised("6♠"), "6♠ lowered")
    # Escape lowers every selected card; with none selected it says so.
    term.keys("Up", "Tab", "Up")
    await term.wait_until(lambda s: raised("6♠") and raised("7♠"), "6♠ and 7♠ raised")
    term.keys("Escape")
    await term.wait_until(lambda s: not raised("6♠") and not raised("7♠"), "all lowered")
    term.keys("Escape")
    await term.wait_for("No card is selected.")
    # In the chat line, escape cancels the chat, and selects nothing away.
    term.keys("Up", "c")  # the 7♠ raised, then the chat line
    await term.wait_for("Say something")
    term.keys("Escape")
    await term.wait_gone("Say something")
    assert raised("7♠")


async def test_a_long_name_is_shown_whole_where_there_is_room_and_cut_with_an_ellipsis(
    term: Term,
) -> None:
    term.start(
        # (dealt from a seed: a random deal may end in a tonk before your first turn, and the
        # ledger then holds what it paid)
        [
            *(command_path("tonk-client"), "--name", "Bartholomew Longnameson"),
            *("--bots", "3", "--seed", "1"),
        ],
        ENV,
    )
    screen = await term.wait_for_all("Your turn: d draw", "Cleo (bot)", "Bartholom")
    rows = screen.splitlines()
    players = rows[2:6]
    # The players panel has room: the whole name, the bots' names in the same column.
    assert "Bartholomew Longnameson" in players[0], "\n".join(players)
    assert players[0].index(" card") == players[1].index(" card"), "\n".join(players)
    # The ledger has not: cut, and an ellipsis says so.
    ledger = rows[2][48:]
    assert re.search(r"│ Bartholom\w*… +0", ledger), ledger
