"""The end of a session in the real client on 80x24 pseudo-terminals against a real
tonk-server: the final standings on top at once with the settling up, and `r` on both
players' clients starting the rematch with both seated in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clientkit import deck_text
from netclient import NetClient, one_hand_table
from ptyterm import Term
from termkit import command_path, tonk_server
from test_server_play import TWO_SEAT_DECK
from tonk.client.cli import build_parser, config_from_args

pytestmark = pytest.mark.e2e


def client(tmp_path: Path, port: int, name: str) -> Term:
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", name],
        {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / name)},
    )
    return term


async def sit_down(tmp_path: Path, port: int, terms: list[Term]) -> list[Term]:
    """Ann and Bob each start a client and sit at the lobby's one table (kept in `terms`)."""
    for name in ("Ann", "Bob"):
        term = client(tmp_path, port, name)
        terms.append(term)
        await term.wait_for("Kitchen")
        term.keys("Enter")
    return terms


async def last_hand_window(term: Term, number: int) -> None:
    """The session's last hand's window: its title, the players' cards, and the way on to
    the final standings; enter takes it."""
    texts = (f"Hand {number} is over", "Player", "The session is over. enter: the final standings")

    def shown(screen: str) -> bool:
        # The top line, under the window, says it is the last hand: on one row, or on the
        # row below where its words leave no room. (The window may be drawn a moment before
        # the line: while the player is away, the turn timer playing for them, the line is
        # that notice alone until the session's end replaces it.)
        return all(text in screen for text in texts) and "last hand" in "\n".join(
            screen.splitlines()[:3]
        )

    await term.wait_until(shown, "the last hand's window, and 'last hand' on the top line")
    term.keys("Enter")


def rematch_dealt(screen: str) -> bool:
    """The rematch's first hand: its cards under a top line that no longer says the session
    is over, or, where its shuffled deal (a rematch's deck is never a test's) ended it on the
    deal, its window saying so (1 CI run in some hundreds). (The hand before's window was
    closed for the standings; the log may say how that hand ended, the window's title not.)"""
    top = screen.splitlines()[0]
    playing = "The session is over" not in top and "Your hand" in screen
    return playing or ("Hand 1 is over" in screen and "tonked on the deal" in screen)


async def test_a_short_session_ends_on_the_standings_and_r_starts_the_rematch(
    tmp_path: Path,
) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "0") as port:
        first = await one_hand_table(port)
        terms: list[Term] = []
        try:
            ann, bob = await sit_down(tmp_path, port, terms)
            for term in terms:
                # The last hand's window first, its cards shown; enter: the final standings.
                await last_hand_window(term, 1)
                screen = await term.wait_for_all(
                    "Kitchen: the session is over",
                    "Settle up:",
                    "1 hand played. Hand 1:",
                    "r: rematch",
                    "l: history",
                )
                # Nothing promises a next deal.
                assert "next deal" not in screen
            ann.keys("r")
            await ann.wait_for("You said yes; waiting for Bob")
            await bob.wait_for("Ann: yes")
            bob.keys("r")
            for term in terms:
                await term.wait_gone("the session is over")
                await term.wait_until(rematch_dealt, "the rematch's hand")
            # Both are seated at the new table, their tokens for it kept on disk.
            for name in ("Ann", "Bob"):
                seats = json.loads((tmp_path / name / "tonk" / "seats.json").read_text())
                held = seats["servers"][f"127.0.0.1:{port}"][name]
                assert list(held) == [str(first + 1)]
            # The rematch's one hand ends too: its standings add the two sessions up.
            for term in terms:
                await last_hand_window(term, 1)
                await term.wait_for_all("the session is over", "2 sessions", "together")
        finally:
            for term in terms:
                term.close()


async def test_a_friend_played_for_meanwhile_is_awaited_by_the_rematch_not_left(
    tmp_path: Path,
) -> None:
    """Bob's link dropped and Ann had his seat played for at once (f): his grace still runs
    at the session's end, so the rematch waits for his answer."""
    with tonk_server(tmp_path, "--grace", "120", "--bot-pause", "0") as port:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table(name="Kitchen", seats=2, deck=TWO_SEAT_DECK, dealer=0, hands=1)
        ann = Term(80, 24)
        try:
            command = [command_path("tonk-client"), f"127.0.0.1:{port}", "--no-confirm-drop"]
            ann.start(
                [*command, "--name", "Ann"],
                {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "Ann")},
            )
            await ann.wait_for("Kitchen")
            ann.keys("Enter")
            await ann.wait_for("Your turn: d draw")
            await bob.close()
            await ann.wait_for("Bob lost the connection")
            ann.keys("f")
            await ann.wait_for("away, played for")
            ann.keys("k")  # 28 against Bob's 36: the one hand, and the session, end
            await last_hand_window(ann, 1)
            await ann.wait_for_all("Kitchen: the session is over", "r: rematch")
            ann.keys("r")
            await ann.wait_for_all("You said yes; waiting for Bob", "Bob: away, not answered yet")
        finally:
            ann.close()


async def test_the_practice_table_offers_a_rematch_against_the_same_bots(tmp_path: Path) -> None:
    term = Term(80, 24)
    term.start(
        [
            command_path("tonk-client"),
            "--name",
            "Tester",
            "--bots",
            "1",
            "--hands",
            "1",
            "--bot-pause",
            "0",
            "--deck",
            deck_text(),
            "--dealer",
            "1",
        ],
        {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    try:
        await term.wait_for("Your turn")
        term.keys("k")  # drop with 36 against the bot's 35: caught
        await term.wait_for("Drop with 36?")
        term.keys("k")
        await last_hand_window(term, 1)
        await term.wait_for_all(
            "Practice: the session is over", "Settle up:", "Tester", "r: rematch", "enter: done"
        )
        term.keys("r")  # the bot needs no answer: it starts at once
        await term.wait_gone("the session is over")

        await term.wait_until(
            lambda screen: "Ada (bot)" in screen and rematch_dealt(screen),
            "the rematch's hand against Ada",
        )
    finally:
        term.close()


async def test_a_server_restart_during_the_wait_keeps_the_answers(tmp_path: Path) -> None:
    terms: list[Term] = []
    try:
        with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "0") as port:
            await one_hand_table(port)
            ann, bob = await sit_down(tmp_path, port, terms)
            for term in terms:
                await last_hand_window(term, 1)
                await term.wait_for("Settle up:")
            ann.keys("r")
            await bob.wait_for("Ann: yes")
        # The same command again (the same --db, the same port): both clients are back at
        # the finished table by themselves, the offer and Ann's yes with them.
        with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "0") as again:
            assert again == port
            await ann.wait_for("Connected again")
            await bob.wait_for("Connected again")
            await bob.wait_for_all("Ann: yes", "Bob (you): not answered yet", "r: rematch")
            bob.keys("r")
            for term in terms:
                await term.wait_gone("the session is over")
                await term.wait_until(rematch_dealt, "the rematch's hand")
    finally:
        for term in terms:
            term.close()


async def test_a_client_started_again_during_the_wait_is_back_on_the_offer(tmp_path: Path) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "0") as port:
        await one_hand_table(port)
        terms: list[Term] = []
        try:
            ann, bob = await sit_down(tmp_path, port, terms)
            for term in terms:
                await last_hand_window(term, 1)
                await term.wait_for("Settle up:")
            ann.keys("r")
            # Bob's terminal goes (his SSH session died); his client started again takes
            # his seat back with the token it kept, and shows the offer to answer.
            bob.close()
            bob = client(tmp_path, port, "Bob")
            terms.append(bob)
            # The last hand's result too, though its end came before he was back.
            await bob.wait_for_all(
                "Kitchen: the session is over",
                "Ann: yes",
                "r: rematch",
                "1 hand played. Hand 1: ",
                "pays",
            )
            bob.keys("r")
            for term in (ann, bob):
                await term.wait_gone("the session is over")
                await term.wait_for("Your hand")
        finally:
            for term in terms:
                term.close()


def test_the_practice_table_s_session_length_is_a_number_of_hands() -> None:
    parser = build_parser()
    assert config_from_args(parser.parse_args(["--hands", "3"]), {}).hands == 3
    assert config_from_args(parser.parse_args([]), {}).hands is None
    with pytest.raises(ValueError, match="--hands takes 1 to 100000 hands"):
        config_from_args(parser.parse_args(["--hands", "0"]), {})
