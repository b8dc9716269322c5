"""The web door (`tonk-server --web-port`), from outside: a real `tonk-server`, a real browser
(headless Chromium, tapped by touch events) for the table app, and plain HTTP and websocket
clients for what a browser would not do (another site's page, too many sessions)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import asyncssh
import pytest
from netclient import NetClient
from termkit import command_path, tonk_server
from tonk.shared.wire import protocol as p
from webkit import SharedBrowser, WebServer, require_browser, web_server

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

        # The lobby's key bar by a tap; the form's choices by taps.
        # (The footer is made again as the app starts; a tap meanwhile is lost: tapped again
        # till the form is up. A tap that comes once it is falls on the form's backdrop, which
        # takes none.)
        end = time.monotonic() + 30
        while True:
            browser.tap_text("New table", after=20)
            try:
                browser.wait_for("Create a table", timeout=2)
                break
            except AssertionError:
                assert time.monotonic() < end, browser.screen()
        browser.wait_for("Create a table", "Seats, bots")
        column, row = browser.find("Seats, bots")
        seats_at = browser.screen().split("\n")[row].index("4", column + 11)
        # (An open drop-down has a border: its first choice is two rows down, a column in.)
        browser.tap(seats_at, row)
        browser.wait_for_row(row + 2, "2")
        browser.tap(seats_at + 2, row + 2)
        line = browser.wait_for_row(row, "2")
        bots_at = line.index("0", seats_at + 3)
        browser.tap(bots_at, row)
        browser.wait_for_row(row + 3, "1")
        browser.tap(bots_at + 2, row + 3)
        # (The form's note comes above the buttons: the form, centred, may move up a row.)
        browser.wait_for("fill all 2 seats")
        end = time.monotonic() + 10
        while not re.search(r"Seats, bots\s+2\s+▼\s+1\s+▼", browser.screen()):
            assert time.monotonic() < end, browser.screen()
            time.sleep(0.1)
        # (A tap that comes while the form is laid out again, as its note comes, is lost, as
        # the key bar's first one above can be: once more while the form is still up.)
        browser.tap_text("Create", after=row)
        try:
            browser.wait_for("Your hand", timeout=10)
        except AssertionError:
            if "Create a table" in browser.screen():
                browser.tap_text("Create", after=row)
            browser.wait_for("Your hand", timeout=30)

        # A hand by taps: draw from the key bar, tap a card, discard from the key bar. (The
        # deal is not chosen: a hand can end before Ada's discard, by a deal tonk or the bot
        # going out; then the next hand is played, a few at most.)
        tapped_a_card = False
        for _hand in range(5):
            end = time.monotonic() + 240
            while True:
                shown = browser.screen()
                if "back to the table" in shown:
                    break
                assert time.monotonic() < end, f"the hand never ended:\n{shown}"
                if "Your turn" in shown and "d draw" in shown:
                    browser.tap_text("Draw", after=20)
                    browser.wait_for_any("x discard", "back to the table")
                elif "Your turn" in shown and "x discard" in shown:
                    column, row = browser.find_number_row()
                    browser.tap(column, row)  # the first card: the cursor goes to it
                    browser.wait_for_cursor_on(1)
                    tapped_a_card = True
                    browser.tap_text("Discard", after=20)
                    browser.wait_gone("x discard")
                else:
                    time.sleep(0.2)
            browser.tap(40, 12)  # a tap anywhere closes the end of the hand
            browser.wait_gone("back to the table")
            if tapped_a_card:
                break
        assert tapped_a_card

        # A reload is a dropped link and a new session: back in the seat, not the lobby.
        browser.driver.refresh()
        browser.wait_for("Your hand", "Ada")
        assert "playing as Ada" not in browser.screen()

        # The television page: the table as a spectator sees it, and no key acts.
        browser.driver.switch_to.new_window("tab")
        browser.open(server.url + "/watch/1")
        watched = browser.wait_for("You are watching this table.", "Ada")
        assert "x Discard" not in watched and "d Draw" not in watched  # no key bar
        browser.keys("q")
        time.sleep(1)
        assert "You are watching this table." in browser.screen()
        assert "a web browser" in names_list(server.db)


def test_the_page_is_sized_for_a_phone_held_sideways(
    tmp_path: Path, chromium: SharedBrowser
) -> None:
    browser = chromium.fresh(740, 360)
    with web_server(tmp_path) as server:
        browser.open(server.url + "/")
        browser.choose_name("Bea")
        browser.wait_for("playing as Bea")
        cols, rows = browser.js("return [window.tonk.terminal.cols, window.tonk.terminal.rows]")
        assert cols >= 80 and rows >= 24
        assert "Terminal too small" not in browser.screen()


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
