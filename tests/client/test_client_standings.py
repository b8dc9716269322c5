"""What the final standings say for every way a session ends (its hands, its time, every player
gone), across a chain of rematches, and as the rematch offer moves on: the screen's words, on
an 80x24 terminal (the main path runs on a real terminal in
tests/e2e/tcp/test_client_rematch.py)."""

from __future__ import annotations

import io
from typing import Any

from clientkit import wait_for
from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.app import App
from textual.widgets import Static
from tonk.client.dialogs import StandingsScreen
from tonk.client.messages import Request
from tonk.client.model.reports import RematchChanged, SessionEnded
from tonk.client.widgets.screenkeys import ScreenButtons, ScreenKeyBar
from tonk.shared.wire import messages as m

STANDINGS = (("Ann", 3), ("Ada (bot)", 0), ("Bob", -3))
LAST = ("Hand 4: Ann tonked out.", "Bob pays Ann 3 chips")


class Standings(App[None]):
    """The screen alone, the requests it posts kept."""

    def __init__(self, screen: StandingsScreen) -> None:
        super().__init__()
        self.standings = screen
        self.requests: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.standings)

    def on_request(self, message: Request) -> None:
        self.requests.append(message.message)


def ended(**fields: Any) -> SessionEnded:
    base: dict[str, Any] = {
        "table_name": "Friday",
        "hands": 4,
        "standings": STANDINGS,
        "unit": "chips",
        "table_id": 7,
        "settle_up": (("Bob", "Ann", 3),),
        "rematch": 120.0,
        "last_hand": LAST,
        "seated": True,
    }
    return SessionEnded(**{**base, **fields})


def text(app: Standings) -> str:
    """Every line the screen's texts and its table of standings show."""
    console = Console(width=76, record=True, file=io.StringIO())
    for widget in app.standings.query(Static):
        content = widget.content
        console.print(content if isinstance(content, Table | Text) else str(content))
    return console.export_text()


async def no_answer_asked(app: Standings, pilot: Any, words: str, said: str) -> None:
    """No `r` key shown, and `r` pressed asks nothing of the server but says why."""
    assert "r: rematch" not in words
    await pilot.press("r")
    await pilot.pause()
    assert app.requests == []
    assert any(said in n.message for n in app._notifications)


async def test_a_session_of_hands_shows_the_last_hand_the_settling_up_and_the_offer() -> None:
    app = Standings(StandingsScreen(ended(), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        words = text(app)
        assert "Friday: the session is over" in words
        assert "4 hands played. Hand 4: Ann tonked out. Bob pays Ann 3 chips." in words
        assert "Settle up: Bob pays Ann 3 chips." in words
        assert "Rematch? The same seats, rules and stakes: r says yes, n no" in words
        assert "r: rematch" in words
        await pilot.press("r")
        await pilot.press("n")
        assert app.requests == [m.Rematch(True), m.Rematch(False)]


async def test_the_last_hands_payments_are_one_sentence_you_in_lower_case_after_the_first() -> None:
    last = ("Hand 4: You dropped with 34.", "You pay Ann 2 chips", "You pay Bix (bot) 2 chips")
    app = Standings(StandingsScreen(ended(last_hand=last), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "You pay Ann 2 chips, you pay Bix (bot) 2 chips." in " ".join(text(app).split())


async def test_a_session_whose_time_is_up_says_so() -> None:
    app = Standings(StandingsScreen(ended(timed=True), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "Time is up: 4 hands played." in text(app)


async def test_a_session_every_player_left_offers_no_rematch() -> None:
    app = Standings(StandingsScreen(ended(abandoned=True, rematch=None), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        words = text(app)
        assert "Friday: the session is over: every player had left" in words
        assert "No rematch is offered: nobody is left to play it." in words
        await no_answer_asked(app, pilot, words, "No rematch is offered")


async def test_a_rematch_s_standings_add_up_the_sessions_with_their_settling_up() -> None:
    combined = (("Ann", 5), ("Ada (bot)", -1), ("Bob", -4))
    screen = StandingsScreen(
        ended(
            sessions=2,
            combined=combined,
            combined_settle_up=(("Bob", "Ann", 4), ("Ada (bot)", "Ann", 1)),
        ),
        "Bob",
    )
    app = Standings(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        words = text(app)
        assert "this session" in words and "2 sessions" in words
        assert "+5 chips" in words and "-4 chips" in words
        assert "The 2 sessions together: Bob pays Ann 4 chips, Ada (bot) pays Ann 1 chip." in words


async def test_the_offer_as_it_moves_on_who_said_yes_who_is_awaited_and_the_outcome() -> None:
    app = Standings(StandingsScreen(ended(), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        seats = (("Ann", "yes"), ("Ada (bot)", "bot"), ("Bob", "awaited"))
        app.standings.show_rematch(RematchChanged(7, seats, "waiting", 90.0, None))
        await pilot.pause()
        words = text(app)
        assert "Rematch? The same seats, rules and stakes: r says yes, n no (1:30 left)." in words
        assert "Ann: yes, Ada (bot): a bot, stays, Bob (you): not answered yet." in words
        seats = (("Ann", "yes"), ("Ada (bot)", "bot"), ("Bob", "no"))
        app.standings.show_rematch(RematchChanged(7, seats, "started", None, 8))
        await pilot.pause()
        words = text(app)
        assert "The rematch has started: Ann plays on." in words
        await no_answer_asked(app, pilot, words, "decided already")


async def test_a_called_off_offer_says_why() -> None:
    app = Standings(StandingsScreen(ended(), "Ann"))
    async with app.run_test(size=(80, 24)) as pilot:
        seats = (("Ann", "no"), ("Ada (bot)", "bot"), ("Bob", "late"))
        app.standings.show_rematch(RematchChanged(7, seats, "off", None, None))
        await pilot.pause()
        assert "The rematch is called off: nobody said yes." in text(app)


def bar_keys(app: Standings) -> list[str]:
    """The keys the screen's key bar offers (none where there is no bar: a touch screen's
    buttons)."""
    return [entry.key for bar in app.standings.query(ScreenKeyBar) for entry in bar.entries]


async def test_equal_balances_share_a_place_and_your_own_row_is_marked() -> None:
    tied = (("Ann", 3), ("Bob", 0), ("Ada (bot)", 0), ("Cy", -3))
    app = Standings(StandingsScreen(ended(standings=tied), "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = [line.split() for line in text(app).splitlines() if line[:3].strip()[:1].isdigit()]
        assert [row[:2] for row in rows if row[0].endswith(".")] == [
            ["1.", "Ann"],
            ["2.", "Bob"],
            ["2.", "Ada"],
            ["4.", "Cy"],
        ]
        assert "Bob (you)" in text(app)
        assert "Ann (you)" not in text(app)
        await wait_for(pilot, lambda: "l" in bar_keys(app), "the key bar")
        assert {"r", "n", "l"} <= set(bar_keys(app))


async def test_a_spectator_s_key_bar_offers_no_rematch_answer() -> None:
    app = Standings(StandingsScreen(ended(seated=False), "Zed"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "l" in bar_keys(app), "the key bar")
        assert "r" not in bar_keys(app) and "n" not in bar_keys(app)
        assert "(you)" not in text(app)
        await no_answer_asked(app, pilot, text(app), "You are watching")


class TouchStandings(Standings):
    """The screen on a touch screen (the web door's page on a phone)."""

    touch = True


async def test_on_a_touch_screen_the_standings_say_tap_and_answer_by_buttons() -> None:
    app = TouchStandings(StandingsScreen(ended(), "Bob"))
    async with app.run_test(size=(40, 30)) as pilot:
        await pilot.pause()
        words = text(app)
        assert "tap Rematch or No rematch" in words, words
        for key_words in ("r says yes", "r: rematch", "enter:", "q: quit"):
            assert key_words not in words, words
        assert not bar_keys(app)  # (no key bar: buttons)
        bar = app.standings.query_one(ScreenButtons)
        named = [entry.description for entry in bar.entries]
        assert named == ["Rematch", "No rematch", "History", "Back", "Quit"], named
        row, start, end = next((n, s, e) for n, s, e, key in bar._buttons if key == "r")
        await pilot.click(ScreenButtons, offset=((start + end) // 2, row * 3))
        await wait_for(pilot, lambda: app.requests == [m.Rematch(True)], "the rematch asked")
