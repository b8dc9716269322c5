"""Waiting for a friend, on the real `tonk-client` on a pseudo-terminal at 80x24 against a real
`tonk-server` subprocess: the countdown of a seat whose player lost the connection, `f` to have
it played for now, the away banner and any key bringing the player back, the bell once a turn
left waiting (and none with --no-bell), "while you were away" after a new process, and taking a
bot's seat as a spectator or from the lobby."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from netclient import NetClient
from ptyterm import Term
from termkit import command_path, tonk_server
from test_client_seats import client_env
from test_server_play import TWO_SEAT_DECK

pytestmark = pytest.mark.e2e

#: An OSC sequence (a title, a colour query) ends with BEL too: not the bell.
_OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def bells(raw: bytes) -> int:
    """How many times the terminal bell was rung in `raw` (BEL bytes outside OSC strings)."""
    return _OSC.sub(b"", raw).count(b"\x07")


def client(tmp_path: Path, port: int, name: str, *options: str) -> Term:
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", name, *options],
        client_env(tmp_path),
    )
    return term


async def sit_at_friday(term: Term) -> None:
    """From the lobby, the Friday table's seat (its only line)."""
    await term.wait_for("Friday")
    term.keys("Enter")
    await term.wait_for("Your hand")


async def test_the_countdown_of_a_lost_player_and_f_to_play_for_them_now(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--grace", "120", "--bot-pause", "0") as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(name="Friday", seats=2, deck=TWO_SEAT_DECK, dealer=0)
        tester = client(tmp_path, port, "Tester")
        try:
            await sit_at_friday(tester)
            await tester.wait_for("hand 1")
            await bob.close()  # Bob, the table's creator, loses the connection
            screen = await tester.wait_for_all("Bob lost the connection:", "played for in 1:")
            first = re.search(r"played for in (\d):(\d\d)", screen)
            assert first is not None
            # The client counts down by itself, from the time left the server sent once.
            start = int(first.group(1)) * 60 + int(first.group(2))

            def lower(screen: str) -> bool:
                found = re.search(r"played for in (\d):(\d\d)", screen)
                return found is not None and int(found.group(1)) * 60 + int(found.group(2)) < start

            await tester.wait_until(lower, "the countdown going down")
            # With the creator gone, Tester's is the one vote there is: a majority.
            tester.keys("f")
            await tester.wait_for_all("majority", "away, played for")
            await tester.wait_gone("played for in")
        finally:
            tester.close()


async def test_away_after_a_missed_turn_the_bell_and_any_key_back(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0") as port:
        bob = await NetClient.connect(port, "Bob")
        # A 4 s turn timer: the bell rings once 2 s into a turn nobody touches.
        await bob.create_table(name="Friday", seats=2, deck=TWO_SEAT_DECK, dealer=0, turn_timer=4)
        tester = client(tmp_path, port, "Tester")
        try:
            await sit_at_friday(tester)  # the table is full: Tester plays first
            await tester.wait_for("Your turn")
            before = bells(tester.raw())
            await tester.wait_until(lambda _: bells(tester.raw()) > before, "the bell")
            # The turn runs out: played for, and the screen says so and how to come back.
            await tester.wait_for("Press any key to come back")
            assert bells(tester.raw()) == before + 1  # once a turn
            screen = tester.screen()
            assert "You are away, played for. Press any key" in screen
            tester.keys("o")  # any key, not only b
            await tester.wait_gone("Press any key to come back")
            await tester.wait_for("While you were away")
        finally:
            tester.close()
            await bob.close()


async def test_no_bell_with_no_bell(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0") as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(name="Friday", seats=2, deck=TWO_SEAT_DECK, dealer=0, turn_timer=4)
        tester = client(tmp_path, port, "Tester", "--no-bell")
        try:
            await sit_at_friday(tester)
            await tester.wait_for("Your turn")
            # Past the time the bell would have rung: the turn ran out, and still no bell.
            await tester.wait_for("Press any key to come back")
            assert bells(tester.raw()) == 0
        finally:
            tester.close()
            await bob.close()


async def test_back_from_a_new_process_says_what_happened_while_away(tmp_path: Path) -> None:
    with tonk_server(
        tmp_path, "--grace", "1", "--bot-pause", "0", "--next-hand-delay", "600"
    ) as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(name="Friday", seats=2, deck=TWO_SEAT_DECK, dealer=0)
        tester = client(tmp_path, port, "Tester")
        try:
            await sit_at_friday(tester)
            await tester.wait_for("Your turn")
        finally:
            tester.close()  # the terminal goes, mid-turn
        # Past the grace, Tester's turn is played for them.
        await bob.expect("update", lambda m: m["view"]["turn"] == 0, timeout=30)
        tester = client(tmp_path, port, "Tester")
        try:
            # (the log's lines wrap at its width)
            screen = await tester.wait_for_all(
                "While you were away: 1 turn", "Played for you: drew"
            )
            # The moves made for Tester read as made for them, not as their own.
            assert "You drew" not in screen and "You took" not in screen
        finally:
            tester.close()
            await bob.close()


async def take_a_bots_seat(tmp_path: Path, *keys: str) -> None:
    """Bob plays with a bot; Tester, in the lobby, presses `keys` (each followed by what it
    brings up) and then sits in the bot's seat as Bob's hand ends."""
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "1") as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(
            "easy", name="Friday", seats=2, deck=TWO_SEAT_DECK, dealer=0, open_bot_seats=True
        )
        await bob.expect("update")
        tester = client(tmp_path, port, "Tester")
        try:
            await tester.wait_for("Friday")
            for key, shown in zip(keys[::2], keys[1::2], strict=True):
                tester.keys(key)
                await tester.wait_for(shown)
            # Watching until the hand ends, told the seat is theirs then.
            await tester.wait_for("Ada (bot)'s seat is yours")
            await bob.play_until(lambda m: m["type"] == "hand_end", timeout=60)
            screen = await tester.wait_for("(you)")
            assert "Watching" not in screen
            await tester.wait_for("hand 2")
        finally:
            tester.close()
            await bob.close()


async def test_a_spectator_takes_a_bots_seat_with_t(tmp_path: Path) -> None:
    await take_a_bots_seat(tmp_path, "w", "You are watching this table", "t", "You take Ada")


async def test_enter_on_a_full_table_where_a_bot_plays_offers_its_seat(tmp_path: Path) -> None:
    await take_a_bots_seat(tmp_path, "Enter", "Take a bot's seat?", "y", "You are watching")
