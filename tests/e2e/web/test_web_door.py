"""The web door (`tonk-server --web-port`), from outside: a real `tonk-server`, a real browser
(headless Chromium, tapped by touch events) for the table app, and plain HTTP and websocket
clients for what a browser would not do (another site's page, too many sessions)."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import asyncssh
import pytest
from clientkit import deck_text
from netclient import NetClient
from termkit import command_path, tonk_server
from tonk.client.door.door_child import TYPING
from tonk.client.widgets import TooSmall
from tonk.shared.game import actions
from tonk.shared.game.cards import parse_card
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request
from webkit import (
    Browser,
    SharedBrowser,
    WebServer,
    create_a_table_by_taps,
    require_browser,
    tap_button,
    web_server,
)

pytestmark = pytest.mark.e2e


def client_session() -> aiohttp.ClientSession:
    """An HTTP client that keeps cookies as a browser does (for 127.0.0.1 too)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


def origin(server: WebServer) -> str:
    """The page's own origin, as a browser says it."""
    return server.url


async def claim_in_a_browser(
    session: aiohttp.ClientSession, server: WebServer, name: str
) -> aiohttp.ClientResponse:
    """What the name form sends (from the server's own page)."""
    return await session.post(
        server.url + "/",
        data={"name": name},
        headers={"Origin": origin(server)},
        allow_redirects=False,
    )


async def claim_by_playing(session: aiohttp.ClientSession, server: WebServer, name: str) -> int:
    """The name form, then the page's session (which claims the name), until its lobby is
    drawn: the form's answer's status (303: the name is claimed)."""
    status = (await claim_in_a_browser(session, server, name)).status
    if status == 303:
        async with session.ws_connect(
            server.url + "/ws?width=100&height=30", headers={"Origin": origin(server)}
        ) as socket:
            await terminal_text(socket, "lobby")
    return status


async def terminal_text(socket: aiohttp.ClientWebSocketResponse, *texts: str) -> str:
    """Read the terminal's bytes from a page's websocket until each of `texts` has come."""
    seen = ""
    async with asyncio.timeout(30):
        while not all(text in seen for text in texts):
            message = await socket.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                seen += message.data.decode("utf-8", "replace")
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                break
    missing = [text for text in texts if text not in seen]
    assert not missing, f"{missing!r} never came; the terminal got:\n{seen[-2000:]}"
    return seen


async def ssh_in(
    port: int, name: str, client: type[asyncssh.SSHClient]
) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClient]:
    """Log in at the SSH door as `name` with a new key."""
    return await asyncssh.create_connection(
        client,
        "127.0.0.1",
        port,
        username=name,
        client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        known_hosts=None,
        agent_path=None,
        config=None,
    )


def names_list(db: Path) -> str:
    done = subprocess.run(
        [command_path("tonk-server"), "names", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


# -- in a real browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[SharedBrowser]:
    """One Chromium for the tests in a browser (a second costs seconds to start), given to
    each as new: one tab, no cookie, the window the test's size."""
    require_browser()
    shared = SharedBrowser()
    try:
        yield shared
    finally:
        shared.close()


def play_a_hand_by_taps(browser: Browser) -> bool:
    """At the table, a hand by taps alone: Draw, a card, Discard, each button tapped on its
    top or bottom row, and the end of the hand closed by a tap. (The deal is not chosen: a
    hand can end before the player's discard, by a deal tonk or the bot going out; then the
    next hand is played, a few at most.) Whether a card was discarded by taps."""
    for _hand in range(5):
        tapped_a_card = False
        end = time.monotonic() + 240
        while True:
            shown = browser.screen()
            if "back to the table" in shown:
                break
            assert time.monotonic() < end, f"the hand never ended:\n{shown}"
            if "Your turn" in shown and "tap Draw" in shown:
                tap_button(browser, "Draw", -1)
                browser.wait_for_any("then Discard", "back to the table")
            elif "Your turn" in shown and "then Discard" in shown:
                column, row = browser.find_number_row()
                browser.tap(column, row)  # the first card: the cursor goes to it
                browser.wait_for_cursor_on(1)
                tapped_a_card = True
                tap_button(browser, "Discard", 1)
                browser.wait_gone("then Discard")
            else:
                time.sleep(0.2)
        browser.tap(10, 5)  # a tap anywhere closes the end of the hand
        browser.wait_gone("back to the table")
        if tapped_a_card:
            return True
    return False


def test_a_friend_plays_a_hand_in_the_browser_by_taps_and_comes_back(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    browser = chromium.fresh(1000, 700)
    with web_server(tmp_path) as server:
        browser.open(server.url + "/")
        browser.wait_for_page("Your name at the table")
        browser.choose_name("Ada")
        browser.wait_for("lobby", "playing as Ada")
        # The token is the browser's, out of the page's scripts' reach.
        cookie = browser.driver.get_cookie(f"tonk_{server.port}")
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert browser.js("return document.cookie") == ""
        # 80x24 fits the window, and the font was sized for it.
        cols, rows = browser.js("return [window.tonk.terminal.cols, window.tonk.terminal.rows]")
        assert cols >= 80 and rows >= 24

        create_a_table_by_taps(browser)
        assert play_a_hand_by_taps(browser)

        # A reload is a dropped link and a new session: back in the seat, not the lobby.
        browser.driver.refresh()
        browser.wait_for("Your hand", "Ada")
        assert "playing as Ada" not in browser.screen()

        # The television page: the table as a spectator sees it, and no key acts.
        browser.driver.switch_to.new_window("tab")
        browser.open(server.url + "/watch/1")
        watched = browser.wait_for("Ada", "Players")
        assert "Discard " not in watched and "Draw " not in watched  # no key bar
        browser.keys("q")
        time.sleep(1)
        assert "Players" in browser.screen() and "lobby" not in browser.screen()
        assert "a web browser" in names_list(server.db)


#: The windows the page is tried in: (width, height, a phone's or a tablet's screen).
WINDOWS = (
    (390, 844, True),
    (360, 640, True),
    (844, 390, True),
    (740, 360, True),
    (1920, 1080, False),
    (3840, 2160, False),
)
#: The least a finger's target may be, in CSS pixels, and the least size of text on a phone.
FINGER = 40
PHONE_TEXT = 14


def test_the_font_is_sized_for_each_window_and_the_layout_it_suits(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    """Held upright, a phone's page is sized for the portrait layout: about 40 columns of
    text at least 14 CSS px, a key (three rows) at least 40 px tall; sideways, a tablet, a
    laptop or a big screen: 80x24 at least, the app told the size (never "too small")."""
    # (A new name for each window, all from this machine's one address: more than the names
    # an address may claim in an hour by default.)
    limit = f"web_names_per_address={len(WINDOWS)}"
    with web_server(tmp_path, "--limit", limit) as server:
        for number, (width, height, phone) in enumerate(WINDOWS):
            browser = chromium.fresh(1000, 700)
            browser.screen_as(width, height, phone=phone)
            browser.open(server.url + "/")
            browser.choose_name(f"P{number}")
            browser.wait_for_any("lobby", "too small")
            cols, rows = browser.wait_fitted()
            size, cell_width, cell_height = browser.font()
            where = f"{width}x{height}: {cols}x{rows} cells at {size} px"
            if height > width:
                assert size >= PHONE_TEXT, where
                assert 40 <= cols <= 48, where
                assert 3 * cell_height >= FINGER, where
                assert cols >= TooSmall.MIN_WIDTH, where
                # The upright lobby: its buttons all there (none scrolled out of sight).
                shown = browser.wait_for("lobby", "New table", "Standings", "Help", "Quit")
                assert "too small" not in shown, where
            else:
                assert cols >= 80 and rows >= 24, where
                browser.wait_for("lobby", "No.")  # (the tables' numbers' column)
                assert "too small" not in browser.screen(), where
                assert size <= 18, where  # a big window gets more cells, not bigger ones
            assert cols * cell_width <= width and rows * cell_height <= height, where


# -- what a browser would not do ---------------------------------------------------------------


async def test_only_the_page_its_files_and_its_websocket_are_served(tmp_path: Path) -> None:
    with web_server(tmp_path) as server:
        async with client_session() as session:
            page = await session.get(server.url + "/")
            assert page.status == 200 and "Your name at the table" in await page.text()
            assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
            script = await session.get(server.url + "/static/textual.js")
            assert script.status == 200 and len(await script.read()) > 100_000
            for path in (
                "/static/",
                "/static/nothing.js",
                "/static/..%2Fweb_door.py",
                "/static/js/textual.js",
                "/etc/passwd",
                "/download/1",
                "/watch/99",
                "/watch/x",
                "/ws/",
            ):
                response = await session.get(server.url + path)
                assert response.status == 404, path
            # Another site's form is refused; this page's own is not.
            other = await session.post(
                server.url + "/",
                data={"name": "Eve"},
                headers={"Origin": "http://example.test"},
                allow_redirects=False,
            )
            assert other.status == 403
            own = await claim_in_a_browser(session, server, "Cy")
            assert own.status == 303
            cookie = own.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            # A websocket from another site's page (with the visitor's cookie) is refused...
            for headers in ({"Origin": "http://example.test"}, {}):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(server.url + "/ws", headers=headers)
                assert refused.value.status == 403
            # ...and this page's opens the table app.
            async with session.ws_connect(
                server.url + "/ws?width=100&height=30", headers={"Origin": origin(server)}
            ) as socket:
                await terminal_text(socket, "lobby", "Cy")
        # No cookie, no session.
        async with client_session() as stranger:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await stranger.ws_connect(server.url + "/ws", headers={"Origin": origin(server)})
            assert refused.value.status == 403


async def test_the_sessions_per_address_and_the_idle_time_are_limited(tmp_path: Path) -> None:
    with web_server(
        tmp_path, "--limit", "web_per_address=1", "--limit", "web_idle_timeout=3"
    ) as server:
        async with client_session() as session:
            await claim_in_a_browser(session, server, "Di")
            url = server.url + "/ws?width=100&height=30"
            headers = {"Origin": origin(server)}
            async with session.ws_connect(url, headers=headers) as first:
                await terminal_text(first, "lobby")
                async with session.ws_connect(url, headers=headers) as second:
                    await terminal_text(second, "too many web sessions from your address")
                # Nothing pressed for 3 s: the session ends, saying why.
                await terminal_text(first, "no key pressed or card tapped for 3 seconds")


async def test_the_log_names_the_door_a_browser_and_a_television_page_came_by(
    tmp_path: Path,
) -> None:
    with web_server(tmp_path) as server:
        ann = await NetClient.connect(server.tcp_port, "Ann")
        table = await ann.create_table(name="Friday", seats=3)
        async with client_session() as session:
            await claim_in_a_browser(session, server, "Di")
            headers = {"Origin": origin(server)}
            async with session.ws_connect(
                server.url + "/ws?width=100&height=30", headers=headers
            ) as page:
                await terminal_text(page, "lobby")
            async with session.ws_connect(
                f"{server.url}/watch/{table}/ws?width=100&height=30", headers=headers
            ) as television:
                await terminal_text(television, "Friday")
        await ann.close()
        froms = re.findall(r"connection #\d+ from (.*)", server.server_log())
        assert froms[1:] == ["127.0.0.1 (web door)", "127.0.0.1 (web door's television page)"]


async def test_the_doors_names_rules_hold_across_keys_browsers_and_tcp(tmp_path: Path) -> None:
    with web_server(tmp_path, "--ssh-port", "0") as server:
        ssh_port = int(server.lines[1].split()[3].rsplit(":", 1)[1])
        async with client_session() as session:
            assert await claim_by_playing(session, server, "Ada") == 303
        # A key cannot come in as a browser's name...
        banners: list[str] = []

        class Client(asyncssh.SSHClient):
            def auth_banner_received(self, msg: str, lang: str) -> None:
                banners.append(msg)

        with pytest.raises(asyncssh.PermissionDenied):
            await ssh_in(ssh_port, "ada", Client)
        assert any("comes in from a web browser" in b for b in banners), banners
        # ...nor tonk-client over TCP...
        client = await NetClient.connect(server.tcp_port)
        await client.send({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "ADA"})
        refused = await client.expect(p.ERROR)
        assert refused["code"] == p.BAD_NAME and "web page" in refused["message"]
        # ...and a browser cannot have a key's name.
        conn, _ = await ssh_in(ssh_port, "Bob", asyncssh.SSHClient)
        async with conn:  # a session claims the name (without a terminal: told so, closed)
            await asyncio.wait_for(conn.run(), 20)
        async with client_session() as session:
            taken = await claim_in_a_browser(session, server, "bob")
            assert taken.status == 400 and "with an SSH key" in await taken.text()
            # A name in use over TCP cannot be chosen in a browser while it is.
            eve = await NetClient.connect(server.tcp_port, "Eve")
            in_use = await claim_in_a_browser(session, server, "eve")
            assert in_use.status == 400 and "from tonk-client" in await in_use.text()
            eve.writer.close()
        listed = names_list(server.db)
        assert re.search(r"^Ada .* a web browser$", listed, re.M), listed
        assert re.search(r"^Bob .* key SHA256:", listed, re.M), listed
        # Released, the name is anybody's again: the browser that had it is asked for one.
        subprocess.run(
            [command_path("tonk-server"), "names", "release", "ada", "--db", str(server.db)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        async with client_session() as session:
            end = time.monotonic() + 20
            while (await claim_in_a_browser(session, server, "Ada")).status != 303:
                assert time.monotonic() < end, "the server never let go of the released name"
                await asyncio.sleep(0.5)


def test_web_port_0_is_the_port_the_database_was_served_on_last(tmp_path: Path) -> None:
    with web_server(tmp_path) as first:
        port = first.port
    with web_server(tmp_path) as second:
        assert second.port == port


def test_a_database_from_before_the_web_door_is_upgraded_and_its_key_claims_kept(
    tmp_path: Path,
) -> None:
    db = tmp_path / "web.sqlite3"
    with web_server(tmp_path):  # a database as this server makes it, then as an older one did
        pass
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE ssh_names DROP COLUMN token_hash")
        conn.execute(
            "INSERT INTO ssh_names VALUES ('ann', 'Ann', 'ssh-ed25519 AAAA', 'SHA256:old', 1.0)"
        )
    conn.close()
    assert re.search(r"^Ann .* key SHA256:old$", names_list(db), re.M)  # read as it is
    with web_server(tmp_path) as server:
        with sqlite3.connect(db) as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(ssh_names)")}
        conn.close()
        assert "token_hash" in columns
        assert "Ann" in names_list(server.db)
        taken = asyncio.run(_claim(server, "ann"))
        assert taken == 400
        assert asyncio.run(_claim(server, "Cy")) == 303
    assert re.search(r"^Cy .* a web browser$", names_list(db), re.M)


async def _claim(server: WebServer, name: str) -> int:
    async with client_session() as session:
        return await claim_by_playing(session, server, name)


def test_invite_gives_the_web_page_and_the_televisions_page_and_says_when_it_is_shut(
    tmp_path: Path,
) -> None:
    def invite() -> list[str]:
        said = subprocess.run(
            [command_path("tonk-server"), "invite", "--db", str(tmp_path / "web.sqlite3")],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert said.returncode == 0, said.stderr
        return said.stdout.splitlines()

    with web_server(tmp_path) as server:

        async def create() -> int:
            ann = await NetClient.connect(server.tcp_port, "Ann")
            table = await ann.create_table(name="Friday", seats=3)
            await ann.close()
            return table

        table = asyncio.run(create())
        lines = invite()
        page = f"http://127.0.0.1:{server.port}/"
        assert f"  {page}" in lines, lines
        assert (
            f"  {page}watch/{table}   (the table Friday on a television, watching only)" in lines
        ), lines
        assert not any("web door is not open" in line for line in lines), lines
    # Started again without --web-port: the page is told as the one it was, and how to open it.
    with tonk_server(tmp_path, db=tmp_path / "web.sqlite3"):
        lines = invite()
        shut = [line for line in lines if line.startswith("The web door is not open")]
        assert shut == [
            f"The web door is not open: the server runs without --web-port (it was on port "
            f"{server.port}; --web-port 0 opens it again):"
        ], lines


#: A card's face as the table writes it (10♥, K♠).
CARD_FACE = re.compile(r"(?:10|[2-9AJQK])[♠♥♦♣]")


def faces(screen: str) -> set[str]:
    return set(CARD_FACE.findall(screen))


def test_the_television_page_fills_a_big_screen_live_and_shows_no_hidden_card(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    """The first page lists the open tables with their television links; the television
    page is the table at about 80 columns whatever the screen's size (readable across a
    room), with no spectator's panel, live, and no card that is not on the table for all
    to see. (Ann, over TCP, plays against a bot from a stacked deck: she plays first.)"""
    from selenium.webdriver.common.by import By

    loop = asyncio.new_event_loop()
    browser = chromium.fresh(1000, 700)
    try:
        with web_server(tmp_path, "--dev") as server:
            ann = loop.run_until_complete(NetClient.connect(server.tcp_port, "Ann"))
            table = loop.run_until_complete(
                ann.create_table(None, name="Friday", seats=2, deck=deck_text(), dealer=1)
            )
            loop.run_until_complete(ann.expect(p.UPDATE))  # the deal
            browser.screen_as(1920, 1080, phone=False)
            browser.open(server.url + "/")
            browser.wait_for_page("on a television")
            link = browser.driver.find_element(By.LINK_TEXT, "on a television")
            assert link.get_attribute("href") == f"{server.url}/watch/{table}"
            assert f"{table} Friday" in browser.text()
            browser.tap_element(link)
            shown = browser.wait_for("Ann", "Players")
            sizes = {}
            for width, height in ((1920, 1080), (3840, 2160)):
                browser.screen_as(width, height, phone=False)
                cols, rows = browser.wait_fitted()
                font = browser.font()[0]
                assert 60 <= cols <= 100 and rows >= 24, (width, height, cols, rows)
                sizes[width] = font
                shown = browser.wait_drawn_whole()  # (the app told this size)
                assert "Ann" in shown and "Players" in shown
                assert "watching this table" not in shown  # no spectator's panel
                assert "too small" not in shown
                # Dealt, nothing played: the up card is the only card anybody may see.
                assert faces(shown) <= {"9♣"}, shown
            assert sizes[1920] >= 24 and sizes[3840] >= 2 * sizes[1920] - 1, sizes
            # Live: Ann draws the 8♠ and throws the 9♥; her hand is still hers alone.
            for action in (actions.DrawStock(0), actions.Discard(0, parse_card("9h"))):
                loop.run_until_complete(ann.send(action_request(action).to_wire()))
            shown = browser.wait_for("9♥")
            assert not faces(shown) & {"5♠", "6♠", "7♠", "8♠", "9♦"}, shown
            loop.run_until_complete(ann.close())
    finally:
        loop.close()


def keyboard_mode(browser: Browser) -> str:
    """What a phone's on-screen keyboard would do for the terminal's text box: "none" (it
    stays down), or "text"."""
    return str(browser.js("return window.tonk.terminal.textarea.getAttribute('inputmode')"))


def wait_for_keyboard(browser: Browser, mode: str) -> None:
    end = time.monotonic() + 20
    while keyboard_mode(browser) != mode:
        assert time.monotonic() < end, f"the keyboard never became {mode!r}"
        time.sleep(0.1)


def turn(browser: Browser, width: int, height: int) -> tuple[int, int]:
    """The phone turned to `width`x`height`: the page is refitted, and the app told its
    size: upright, the portrait layout's columns; sideways, the table at 80x24 at least."""
    browser.screen_as(width, height)
    cols, rows = browser.wait_fitted()
    if height > width:
        assert TooSmall.MIN_WIDTH <= cols <= 48, (cols, rows)
    else:
        assert cols >= 80 and rows >= 24, (cols, rows)
    browser.wait_for("Your hand")
    browser.wait_gone("too small")
    browser.wait_drawn_whole()  # (the app was told the size it ended at)
    return cols, rows


def tap_until_shown(browser: Browser, label: str, text: str) -> None:
    """A tap on the key bar's button `label` until `text` is shown (a tap that comes while the
    app lays a screen out for a new size is lost, as one while it starts can be)."""
    for _ in range(3):
        tap_button(browser, label)
        try:
            browser.wait_for(text, timeout=10)
            return
        except AssertionError:
            pass
    browser.wait_for(text)


def test_a_phone_plays_by_taps_turned_there_and_back_and_closes_every_window_by_a_tap(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    """A phone held sideways: a table made (the house rules looked at on the way), the
    phone turned upright and back three times, a hand played upright by taps alone, and help
    (listing taps, not keys), the history and a hand's replay each closed by a tap; its
    keyboard comes up only for the chat."""
    browser = chromium.fresh(1000, 700)
    with web_server(tmp_path) as server:
        browser.screen_as(844, 390)
        browser.open(server.url + "/")
        browser.choose_name("Ada")
        browser.wait_for("lobby", "playing as Ada")
        assert keyboard_mode(browser) == "none"
        # Upright in the lobby: its help and the standings across nights, each opened by its
        # button and closed by a tap.
        browser.screen_as(390, 844)
        browser.wait_fitted()
        tap_until_shown(browser, "Help", "Taps and buttons in the lobby")
        browser.tap_text(" Close ")
        browser.wait_gone("Taps and buttons")
        tap_until_shown(browser, "Standings", "standings across nights")
        tap_button(browser, "Back")
        browser.wait_for("lobby", "New table")
        browser.screen_as(844, 390)
        browser.wait_fitted()
        create_a_table_by_taps(browser, house_rules=True)
        assert keyboard_mode(browser) == "none"
        for _ in range(3):
            turn(browser, 390, 844)
            turn(browser, 844, 390)
        # The hand is played upright, text and targets a finger's size.
        turn(browser, 390, 844)
        size, _, cell_height = browser.font()
        assert size >= PHONE_TEXT and 3 * cell_height >= FINGER, (size, cell_height)
        shown = browser.wait_for("Your hand")
        assert "Terminal too small" not in shown

        tap_until_shown(browser, "Help", "Taps and buttons")
        # On a phone the help lists what to tap and the buttons, not the keys.
        shown = browser.wait_for("Taps and buttons", "a card", " Close ")
        assert "left right" not in shown and "Keys" not in shown, shown
        browser.tap_text(" Close ")
        browser.wait_gone("Taps and buttons")

        assert play_a_hand_by_taps(browser)
        turn(browser, 844, 390)  # (the history's button is in the wide key bar)

        tap_button(browser, "History", 1)
        browser.wait_for("the session's hands", "Back to the table")
        column, row = browser.find("Hand 1")
        browser.tap(column, row)
        browser.wait_for("as you saw it", " Close ")
        browser.tap_text(" Close ")
        browser.wait_gone("as you saw it")
        browser.tap_text("Back to the table")
        browser.wait_gone("the session's hands")

        # The keyboard: up for the chat line only, down again once it is sent.
        assert keyboard_mode(browser) == "none"
        tap_button(browser, "Chat")
        wait_for_keyboard(browser, "text")
        browser.keys("good game\n")
        browser.wait_for("good game")
        wait_for_keyboard(browser, "none")


async def whole_screens(socket: aiohttp.ClientWebSocketResponse, rows: int, count: int) -> str:
    """Read the terminal's bytes until the app has drawn `count` whole screens of `rows` rows
    (each row drawn again from its left edge, as Textual draws a whole screen); what came."""
    seen = ""
    screens, drawn = 0, set()
    async with asyncio.timeout(30):
        while screens < count:
            message = await socket.receive()
            assert message.type == aiohttp.WSMsgType.BINARY, message
            data = message.data.decode("utf-8", "replace")
            seen += data
            for row in re.findall(r"\x1b\[(\d+);1H", data):
                drawn.add(int(row))
                if drawn >= set(range(1, rows + 1)):
                    screens, drawn = screens + 1, set()
    return seen


async def test_a_page_turned_there_and_back_within_a_pause_is_drawn_again_whole(
    tmp_path: Path,
) -> None:
    """A phone turned and back at once: its terminal (xterm.js) reflowed its lines to the
    other size and back, and the door, which tells the app a size at most once a pause, has
    no new size to tell. The app draws the whole screen again all the same (a phone once
    kept stale rows above the table, and no buttons, after being turned)."""
    with web_server(tmp_path) as server:
        async with client_session() as session:
            assert (await claim_in_a_browser(session, server, "Ada")).status == 303
            async with session.ws_connect(
                server.url + "/ws?width=100&height=30", headers={"Origin": origin(server)}
            ) as socket:
                await terminal_text(socket, "lobby")
                # One size told at once (the first in a pause), then the phone turned and back
                # in the pause after it: the door has no new size to tell the app.
                for width, height in ((100, 31), (40, 60), (100, 31)):
                    size = {"width": width, "height": height}
                    await socket.send_str(json.dumps(["resize", size]))
                # The app asked for the whole screen: it says again whether a text field is
                # typed in (the lobby's focus does not change: only then), and draws it all.
                await terminal_text(socket, TYPING.format(0))
                await whole_screens(socket, 31, 1)


#: The files the table's page loads, named with their versions.
PAGE_FILES = {"tonk.css", "RobotoMono.ttf", "xterm.css", "tonk.js", "textual.js"}


async def test_the_pages_files_are_sent_compressed_and_kept_by_the_browser(
    tmp_path: Path,
) -> None:
    """The page names each file with its version: sent compressed, kept a year, and checked
    by its ETag (304) when asked for without it; the whole page well under 700 KB."""
    with web_server(tmp_path) as server:
        async with (
            client_session() as session,
            aiohttp.ClientSession(auto_decompress=False) as raw,
        ):
            await claim_in_a_browser(session, server, "Cy")
            page = await (await session.get(server.url + "/")).text()
            urls = re.findall(r"'(/static/([\w.]+)\?v=[0-9a-f]{16})'", page)
            assert {name for _, name in urls} == PAGE_FILES, urls
            total = len(page.encode())
            for url, name in urls:
                sent = await raw.get(server.url + url, headers={"Accept-Encoding": "gzip, br"})
                body = await sent.read()
                assert sent.status == 200, name
                assert sent.headers["Content-Encoding"] == "gzip", name
                assert "immutable" in sent.headers["Cache-Control"], name
                assert "max-age=31536000" in sent.headers["Cache-Control"], name
                assert "nosniff" in sent.headers["X-Content-Type-Options"], name
                total += len(body)
                whole = await (await session.get(server.url + url)).read()
                assert len(body) < len(whole), name  # (the same, compressed)
                # Asked for again with its ETag: nothing but "you have it".
                again = await raw.get(
                    server.url + url, headers={"If-None-Match": sent.headers["ETag"]}
                )
                assert again.status == 304 and await again.read() == b"", name
                # Without its version (an old page's link): sent, but checked each time.
                plain = await raw.get(server.url + f"/static/{name}?v=0123456789abcdef")
                assert plain.headers["Cache-Control"] == "no-cache", name
            assert total < 350_000, total
            page_headers = (await session.get(server.url + "/")).headers
            assert page_headers["Cache-Control"] == "no-store"  # (the page itself: never kept)


def test_a_reload_fetches_the_page_alone(tmp_path: Path, chromium: SharedBrowser) -> None:
    """In a real browser: the first load fetches the files (compressed), a reload only the
    page, its files coming from the browser's cache."""
    browser = chromium.fresh(1000, 700)
    with web_server(tmp_path) as server:
        browser.open(server.url + "/")
        browser.wait_for_page("Your name at the table")
        form = fetched(browser)
        browser.choose_name("Dee")
        browser.wait_for("lobby")
        table = fetched(browser)
        # (The form's page fetched the style and the font: the table's page has them.)
        assert set(form) | set(table) >= PAGE_FILES, (form, table)
        assert not set(form) & set(table) - {"/"}, (form, table)
        assert sum(form.values()) + sum(table.values()) < 350_000, (form, table)
        browser.driver.refresh()
        browser.wait_for("lobby")
        again = fetched(browser)
        assert not set(again) & PAGE_FILES, again  # all from the cache
        assert sum(again.values()) < 20_000, again


def fetched(browser: Browser) -> dict[str, int]:
    """The bytes the page's load took from the network, by file (the page as "/"): none for
    what came from the browser's cache."""
    entries = browser.js(
        "return performance.getEntries().filter(e => e.transferSize > 0)"
        ".map(e => [e.name, e.transferSize]);"
    )
    return {str(name).split("?")[0].rsplit("/", 1)[-1] or "/": int(size) for name, size in entries}


async def test_a_friend_whose_seat_went_to_a_bot_is_told_so_in_the_browser(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    browser = chromium.fresh(1000, 700)
    with web_server(tmp_path) as server:
        ann = await NetClient.connect(server.tcp_port, "Ann")
        try:
            await ann.create_table("easy", name="Kitchen", seats=3)
            await asyncio.to_thread(browser.open, server.url + "/")
            await asyncio.to_thread(browser.wait_for_page, "Your name at the table")
            await asyncio.to_thread(browser.choose_name, "dee")
            await asyncio.to_thread(browser.wait_for, "playing as dee", "Kitchen")
            await asyncio.to_thread(browser.keys, "\ue007")  # enter: the last seat
            await asyncio.to_thread(browser.wait_for, "Your hand")
            await asyncio.to_thread(browser.open, "about:blank")  # the tab goes: link dropped
            await ann.expect(
                p.TABLE, lambda m: m["table"]["players"][2]["status"] == "disconnected"
            )
            await ann.request({"type": p.SEAT_TO_BOT, "seat": 2}, p.TABLE)
            # Back in the browser: the lobby, saying why (not a plain lobby with no word).
            await asyncio.to_thread(browser.open, server.url + "/")
            await asyncio.to_thread(browser.wait_for, "playing as dee", "given to a bot")
        finally:
            await ann.close()
