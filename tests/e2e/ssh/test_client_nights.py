"""The standings across nights on the client: lobby key `s` on the real `tonk-client` at 80x24
against a real `tonk-server`, each period by its key, and the same screen through the SSH door,
where the name a guest claimed is the one shown."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from pathlib import Path

import pytest
from ptyterm import Term
from standingskit import Seat, hand_ops, settlement, table_ops, write
from termkit import command_path, tonk_server
from test_client_e2e import client_env
from test_ssh_door import connect, new_key, running_door, screen_of, terminal
from textual.app import App
from textual.widgets import Static
from tonk.client.messages import Request
from tonk.client.screens import NightsScreen
from tonk.client.tablerequest import TableRequest
from tonk.server.store import store as st
from tonk.shared.game.settlement import Ending
from tonk.shared.game.standings import night_of
from tonk.shared.wire import messages as m

pytestmark = pytest.mark.e2e

LONG = ("Bartholomew Featherstonehaugh", "human")
PEOPLE: list[Seat] = [("Ann", "human"), LONG, ("Ada (bot)", "bot")]
DAY = 86_400.0


def hands(start: float) -> list[st.Op]:
    """Hands at one table: two tonight (Ann's drop wins; Bartholomew tonks out), one 10 nights
    ago (Ann's drop caught), and one in pennies at another table 100 nights ago."""
    dropped = settlement(Ending.DROP_WON, [0], [(1, 0, 1), (2, 0, 1)], 3, dropper=0)
    out = settlement(Ending.TONK_OUT, [1], [(0, 1, 2), (2, 1, 2)], 3)
    caught = settlement(Ending.DROP_CAUGHT, [1], [(0, 1, 2), (0, 2, 2)], 3, dropper=0)
    return [
        *table_ops(1, PEOPLE),
        *hand_ops(1, 1, PEOPLE, dropped, start),
        *hand_ops(1, 2, PEOPLE, out, start + 1),
        *hand_ops(1, 3, PEOPLE, caught, start - 10 * DAY),
        *table_ops(2, PEOPLE[:2], "pennies"),
        *hand_ops(
            2,
            1,
            PEOPLE[:2],
            settlement(Ending.STOCK_OUT, [0], [(1, 0, 5)], 2),
            start - 100 * DAY,
            "pennies",
        ),
    ]


def row_starts(screen: str, words: int) -> list[list[str]]:
    return [line.split()[:words] for line in screen.splitlines()]


async def test_s_in_the_lobby_shows_the_standings_for_each_period(
    tmp_path: Path, term: Term
) -> None:
    await write(tmp_path / "server.db", hands(time.time() - 2))
    with tonk_server(tmp_path) as port:
        term.start(
            [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", "Tester"],
            client_env(tmp_path),
        )
        await term.wait_for_all("tonk · lobby", "s Standings")
        term.keys("s")
        screen = await term.wait_for_all(
            "Tonight: the night of", "net in chips", "People", "Bots", "t Tonight", "a All time"
        )
        lines = screen.splitlines()
        # Bartholomew first (+3), his long name cut; Ann (0); the bot apart, below.
        people = lines.index(next(line for line in lines if line.strip() == "People"))
        tonight = night_of(dt.datetime.now())
        best = [str(tonight.day), f"{tonight:%b}", "+3"]
        assert lines[people + 3].split() == [
            *("Bartholomew", "F…", "2", "1", "0", "0", "1", "0", "+3"),
            *best,
            *best,
        ]
        assert lines[people + 4].split()[:8] == ["Ann", "2", "1", "1", "0", "0", "0", "0"]
        bots = lines.index(next(line for line in lines if line.strip() == "Bots"))
        assert bots > people + 4 and lines[bots + 3].split()[:9] == [
            *("Ada", "(bot)", "2", "0", "0", "0", "0", "0", "-3"),
        ]
        assert all(len(line) <= 80 for line in lines)

        term.keys("m")  # the last 30 nights: Ann's caught drop 10 nights ago
        await term.wait_until(
            lambda screen: (
                "Last 30 days:" in screen
                and ["Ann", "3", "1", "1", "1", "0", "0", "-4"] in row_starts(screen, 8)
            ),
            "Ann's last 30 nights",
        )

        term.keys("a")  # all time: the pennies, on a line of their own
        await term.wait_until(
            lambda screen: (
                "All time: every night" in screen
                and ["Ann", "4", "2", "1", "1", "0", "0", "-4"] in row_starts(screen, 8)
                and ["in", "pennies", "+5"] in row_starts(screen, 3)
            ),
            "Ann's nights of all time, and her pennies",
        )
        lines = term.screen().splitlines()
        ann_at = next(i for i, line in enumerate(lines) if line.startswith(" Ann"))
        assert lines[ann_at + 1].split()[:3] == ["in", "pennies", "+5"]

        term.keys("w")
        await term.wait_for("Last 7 days:")
        term.keys("Escape")
        await term.wait_for_all("tonk · lobby", "s Standings")
        term.keys("q")
        assert await term.wait_exit() == 0
        assert "Traceback" not in term.screen()


async def test_the_standings_over_the_ssh_door_show_the_name_the_guest_claimed(
    tmp_path: Path,
) -> None:
    await write(tmp_path / "door.sqlite3", hands(time.time() - 2))
    async with running_door(tmp_path) as (_server, door):
        conn, _ = await connect(door, "ann", new_key())
        async with conn:
            process = await terminal(conn, term_type="xterm-256color")
            await screen_of(process, "playing as ann")
            process.stdin.write(b"s")
            screen = await screen_of(process, "Bots")
            shown = "\n".join(screen.display)
            assert "Tonight: the night of" in shown
            rows = [line.split() for line in screen.display]
            # The hands "Ann" played are the key's that claimed "ann": shown as claimed.
            assert ["ann", "2", "1", "1", "0", "0", "0", "0"] in [row[:8] for row in rows]
            assert not [row for row in rows if row[:1] == ["Ann"]]
            process.stdin.write(b"\x1b")
            await asyncio.sleep(0.5)  # (escape alone, not the start of a key's sequence)
            process.stdin.write(b"q")
            await asyncio.wait_for(process.wait_closed(), 20)


async def test_a_refused_request_is_said_on_the_screen_and_r_asks_again() -> None:
    asked: list[m.ClientMessage] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(NightsScreen())

        def on_request(self, message: Request) -> None:
            assert not isinstance(message.message, TableRequest)
            asked.append(message.message)

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, NightsScreen)
        body = screen.query_one("#nights-body", Static)
        assert asked == [m.StandingsRequest("tonight")]
        screen.refused = "the server could not read the standings just now; try again"
        await pilot.pause()
        assert "did not answer (the server could not read" in str(body.render())
        assert "r asks again" in str(body.render())
        await pilot.press("r", "a")
        assert asked[1:] == [m.StandingsRequest("tonight"), m.StandingsRequest("all")]
        assert "All time: asking the server..." in str(body.render())
