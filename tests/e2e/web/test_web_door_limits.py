"""The web door under attack, from outside: a real `tonk-server --web-port`, and websocket and
HTTP clients doing what a browser's page (or a script posing as one) can: messages that are
not keys sent in a flood, television pages by the dozen, names claimed by the thousand, idle
and trickling connections, another site's name for the server, and requests no page sends."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
from pathlib import Path

import aiohttp
import pytest
from netclient import NetClient
from test_web_door import (
    claim_by_playing,
    claim_in_a_browser,
    client_session,
    names_list,
    origin,
    terminal_text,
)
from tonk.shared.wire import protocol as p
from webkit import WebServer, web_server

pytestmark = pytest.mark.e2e

GOODBYE = "more came from your terminal than a player sends"
#: A session's budget smaller than the default (a flood several times its burst is then
#: sent in a moment, and read by the door before it closes the session).
SMALL_BUDGET = ("--limit", "door_input_rate=256", "--limit", "door_input_burst=2048")


async def played_session(
    session: aiohttp.ClientSession, server: WebServer, name: str
) -> aiohttp.ClientWebSocketResponse:
    """A browser's table app, in the lobby: the name chosen, the websocket open."""
    assert (await claim_in_a_browser(session, server, name)).status == 303
    return await open_page(session, server)


async def open_page(
    session: aiohttp.ClientSession, server: WebServer
) -> aiohttp.ClientWebSocketResponse:
    """The page's websocket, with the browser's cookie, once the lobby is drawn."""
    socket = await session.ws_connect(
        server.url + "/ws?width=100&height=30", headers={"Origin": origin(server)}
    )
    await terminal_text(socket, "lobby")
    return socket


async def an_open_table(server: WebServer) -> tuple[NetClient, int]:
    """A table waiting for players (its creator stays connected)."""
    ann = await NetClient.connect(server.tcp_port, "Ann")
    return ann, await ann.create_table(name="Friday", seats=3)


FLOODS = {
    "resize": ["resize", {"width": 100, "height": 30}],
    "resize to new sizes": None,  # each its own size
    "focus": ["focus"],
    "not a message": ["nothing", "x" * 40],
}


def flood_message(kind: str, n: int) -> str:
    if FLOODS[kind] is None:
        return json.dumps(["resize", {"width": 80 + n % 40, "height": 24 + n % 20}])
    return json.dumps(FLOODS[kind])


async def flood(socket: aiohttp.ClientWebSocketResponse, kind: str) -> str:
    """Send `kind` as fast as the socket takes it, 6 KB of it (SMALL_BUDGET's burst and 16 s
    of its rate), reading what the terminal gets all the while, until the door closes the
    session. (Read as it comes: a page the door closes while it still sends is reset, and
    what the door sent before the reset and was not yet read would be lost.)"""
    seen: list[str] = []

    async def read() -> None:
        with contextlib.suppress(aiohttp.ClientError):
            while (message := await socket.receive()).type == aiohttp.WSMsgType.BINARY:
                seen.append(message.data.decode("utf-8", "replace"))

    reader = asyncio.create_task(read())
    sent, n = 0, 0
    while sent < 6 * 1024 and not reader.done():
        n += 1
        text = flood_message(kind, n)
        try:
            await socket.send_str(text)
        except aiohttp.ClientConnectionResetError:
            break  # the door closed the page before it had sent all of it
        sent += len(text)
        await asyncio.sleep(0)  # the reader reads what came meanwhile
    async with asyncio.timeout(60):
        await reader
    return "".join(seen)


@pytest.mark.parametrize("kind", FLOODS)
async def test_a_page_sending_sizes_or_focus_in_a_flood_is_closed_with_a_line(
    tmp_path: Path, kind: str
) -> None:
    with web_server(tmp_path, *SMALL_BUDGET) as server:
        async with client_session() as session:
            socket = await played_session(session, server, "Ada")
            seen = await flood(socket, kind)
            assert GOODBYE in seen, seen[-500:]
            # The door is still there for the next page.
            again = await open_page(session, server)
            await again.close()


async def test_a_television_page_sending_a_flood_is_closed_with_a_line(tmp_path: Path) -> None:
    with web_server(tmp_path, *SMALL_BUDGET) as server:
        ann, table = await an_open_table(server)
        async with client_session() as session:
            socket = await session.ws_connect(
                f"{server.url}/watch/{table}/ws?width=100&height=30",
                headers={"Origin": origin(server)},
            )
            await terminal_text(socket, "Friday")
            assert GOODBYE in await flood(socket, "resize to new sizes")
        await ann.close()


async def test_a_message_nested_thousands_deep_is_ignored_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    with web_server(tmp_path, "--limit", "door_input_burst=100000") as server:
        async with client_session() as session:
            socket = await played_session(session, server, "Ada")
            await socket.send_str("[" * 10_000 + "]" * 10_000)
            await socket.send_str(json.dumps(["resize", {"width": 120, "height": 40}]))
            await terminal_text(socket, "lobby")  # drawn again at the new size
            assert not socket.closed
            await socket.close()
        assert "RecursionError" not in server.server_log()


async def test_a_table_number_in_other_digits_is_no_such_table(tmp_path: Path) -> None:
    with web_server(tmp_path) as server:
        async with client_session() as session:
            for path in ("/watch/¹", "/watch/١٢", "/watch/¹/ws"):
                response = await session.get(server.url + path, headers={"Origin": origin(server)})
                assert response.status == 404, path
        assert "Traceback" not in server.server_log()


def descendants(pid: int) -> set[int]:
    """Every process started under `pid` (its children, theirs, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


async def test_sessions_end_with_a_server_killed_while_it_holds_a_thousand_files(
    tmp_path: Path,
) -> None:
    crowd = ("--limit", "max_per_address=2000", "--limit", "handshake_timeout=600")
    with web_server(tmp_path, *crowd) as server:
        # 1,100 connections that say nothing: the server's descriptors go past 1,024, and
        # those it hands a session's app are numbered above it.
        held = [await asyncio.open_connection("127.0.0.1", server.tcp_port) for _ in range(1100)]
        async with client_session() as session:
            await played_session(session, server, "Ada")
            apps = descendants(server.proc.pid)
            assert apps
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait()
            async with asyncio.timeout(60):
                while any(alive(pid) for pid in apps):
                    await asyncio.sleep(0.2)
        for _, writer in held:
            writer.close()


async def watch_page(
    session: aiohttp.ClientSession, server: WebServer, table: int
) -> aiohttp.ClientWebSocketResponse:
    """A television page's websocket (no name, no cookie)."""
    return await session.ws_connect(
        f"{server.url}/watch/{table}/ws?width=100&height=30", headers={"Origin": origin(server)}
    )


async def television_pages(
    session: aiohttp.ClientSession, server: WebServer, table: int, count: int
) -> list[aiohttp.ClientWebSocketResponse]:
    """`count` television pages watching `table`, each showing it."""
    watching = [await watch_page(session, server, table) for _ in range(count)]
    for socket in watching:
        await terminal_text(socket, "Friday")
    return watching


async def test_names_claimed_by_players_do_not_stop_the_television_page(tmp_path: Path) -> None:
    with web_server(tmp_path, "--limit", "web_names_per_address=10") as server:
        ann, table = await an_open_table(server)
        async with client_session() as session:
            for name in ("TV", *(f"TV {n}" for n in range(2, 10))):
                async with client_session() as someone:
                    assert await claim_by_playing(someone, server, name) == 303
            socket = await watch_page(session, server, table)
            seen = await terminal_text(socket, "Friday", "Ann")
            assert "refused" not in seen
            await socket.close()
        await ann.close()


async def test_television_pages_have_places_of_their_own_and_a_player_gets_in(
    tmp_path: Path,
) -> None:
    limits = ("web_sessions=1", "web_per_address=1", "web_watchers=2")
    with web_server(tmp_path, *(f"--limit={limit}" for limit in limits)) as server:
        ann, table = await an_open_table(server)
        async with client_session() as session:
            watching = await television_pages(session, server, table, 2)
            one_more = await watch_page(session, server, table)
            await terminal_text(one_more, "as many television pages as it allows")
            # The places the television pages hold are not a player's.
            player = await played_session(session, server, "Ada")
            await player.close()
            for socket in watching:
                await socket.close()
        await ann.close()


async def test_one_address_holds_two_television_pages_at_most(tmp_path: Path) -> None:
    with web_server(tmp_path) as server:
        ann, table = await an_open_table(server)
        async with client_session() as session:
            watching = await television_pages(session, server, table, 2)
            third = await watch_page(session, server, table)
            await terminal_text(third, "too many television pages from your address")
            for socket in watching:
                await socket.close()
        await ann.close()


async def test_a_name_the_server_does_not_answer_to_is_refused(tmp_path: Path) -> None:
    with web_server(tmp_path, "--web-name", "Tonk.LAN") as server:
        async with client_session() as session:
            # A site whose name was made to point at this box (DNS rebinding): its page is
            # on its own origin, the same as the Host its requests carry.
            for name in ("rebind.example.test", "localhost.example.test", "tonk.lan.evil"):
                host = f"{name}:{server.port}"
                page = await session.get(server.url + "/", headers={"Host": host})
                assert page.status == 421, name
                form = await session.post(
                    server.url + "/",
                    data={"name": "Eve"},
                    headers={"Host": host, "Origin": f"http://{host}"},
                    allow_redirects=False,
                )
                assert form.status == 421, name
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(
                        f"{server.url}/watch/1/ws",
                        headers={"Host": host, "Origin": f"http://{host}"},
                    )
                assert refused.value.status == 421
            # By its address, as localhost, and by the name its host gave it: the page.
            for name in ("127.0.0.1", "localhost", "tonk.lan", "TONK.LAN."):
                page = await session.get(
                    server.url + "/", headers={"Host": f"{name}:{server.port}"}
                )
                assert page.status == 200, name
        assert server.server_log().count("not a name this server answers to") <= 6


async def test_a_name_chosen_is_claimed_only_when_a_session_opens_under_it(
    tmp_path: Path,
) -> None:
    with web_server(tmp_path) as server:
        for n in range(50):
            async with client_session() as session:
                assert (await claim_in_a_browser(session, server, f"Name{n}")).status == 303
        # Nothing is claimed: the names are anybody's, over TCP as at the doors.
        assert "Name" not in names_list(server.db)
        client = await NetClient.connect(server.tcp_port, "Name7")
        await client.close()
        # A browser that chose a name has the table page, and claims the name as it plays.
        async with client_session() as session:
            assert await claim_by_playing(session, server, "Ada") == 303
            assert "Ada" in names_list(server.db)
            page = await session.get(server.url + "/")
            assert "Your name at the table" not in await page.text()
        # A name taken between the form and the page's session: the page says so.
        async with client_session() as late, client_session() as early:
            assert (await claim_in_a_browser(late, server, "Bea")).status == 303
            assert await claim_by_playing(early, server, "bea") == 303
            socket = await late.ws_connect(
                server.url + "/ws?width=100&height=30", headers={"Origin": origin(server)}
            )
            await terminal_text(socket, "Bea was taken since you chose it")
            page = await late.get(server.url + "/")
            assert "Your name at the table" in await page.text()


async def test_one_address_claims_a_handful_of_names_an_hour(tmp_path: Path) -> None:
    with web_server(tmp_path, "--limit", "web_names_per_address=2") as server:
        for name in ("Ada", "Bea"):
            async with client_session() as session:
                assert await claim_by_playing(session, server, name) == 303
        async with client_session() as session:
            third = await claim_in_a_browser(session, server, "Cy")
            assert third.status == 429
            assert "Your address has taken 2 names here in the last hour" in await third.text()
        listed = names_list(server.db)
        assert "Ada" in listed and "Bea" in listed and "Cy" not in listed
        # Another name over TCP is not the web door's to count.
        client = await NetClient.connect(server.tcp_port, "Cy")
        await client.close()


async def closed_by_the_server(reader: asyncio.StreamReader) -> bytes:
    """What comes on a raw connection until the server closes it."""
    async with asyncio.timeout(60):
        try:
            return await reader.read()
        except ConnectionResetError:
            return b""


async def test_http_connections_are_capped_by_address_and_idle_ones_closed(
    tmp_path: Path,
) -> None:
    limits = ("web_connections=20", "web_connections_per_address=20", "web_request_timeout=3")
    with web_server(tmp_path, *(f"--limit={limit}" for limit in limits)) as server:
        idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(20)]
        # One more from the same address is closed as it connects...
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        assert await closed_by_the_server(reader) == b""
        writer.close()
        # ...while another address gets the page (all the places taken: the connection idle
        # the longest makes room).
        connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
        async with aiohttp.ClientSession(connector=connector) as other:
            page = await other.get(server.url + "/")
            assert page.status == 200
        # The idle ones, and one that sends its head a byte at a time, are closed.
        slow_reader, slow = await asyncio.open_connection(
            "127.0.0.1", server.port, local_addr=("127.0.0.2", 0)
        )

        async def trickle() -> None:
            for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"x" * 1000:
                slow.write(bytes([byte]))
                await asyncio.sleep(0.5)

        trickling = asyncio.create_task(trickle())
        for idle_reader, idle_writer in idle:
            assert await closed_by_the_server(idle_reader) == b""
            idle_writer.close()
        assert await closed_by_the_server(slow_reader) == b""
        trickling.cancel()
        slow.close()


async def test_a_form_whose_body_never_comes_is_answered_408(tmp_path: Path) -> None:
    # (Answered, the connection is closed once it has been idle for web_request_timeout:
    # 4 s here, not 10, as the test reads till then. Its head comes at once.)
    limits = ("--limit", "web_body_timeout=2", "--limit", "web_request_timeout=4")
    with web_server(tmp_path, *limits) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Origin: {server.url}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: 100\r\n\r\nname=Sl".encode()
        )
        answer = await closed_by_the_server(reader)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        writer.close()


async def test_requests_no_browser_sends_are_each_one_line_in_the_log(tmp_path: Path) -> None:
    with web_server(tmp_path) as server:
        for n in range(300):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /\x00%d HTTP/1.1\r\nHost: \x01\r\n\r\n" % n)
            await closed_by_the_server(reader)
            writer.close()
        # The server still serves.
        async with client_session() as session:
            assert (await session.get(server.url + "/")).status == 200
        lines = server.server_log().splitlines()
        assert all(re.match(r"\d{4}-\d\d-\d\d ", line) for line in lines), lines[-20:]
        assert len(lines) < 40, lines[-20:]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def test_keys_faster_than_the_table_is_drawn_are_shed_not_queued(tmp_path: Path) -> None:
    # A budget no player is given: keys that the app reads at once, and cannot act on as fast.
    budget = ("--limit", "door_input_rate=10000000", "--limit", "door_input_burst=10000000")
    with web_server(tmp_path, *budget) as server:
        async with client_session() as session:
            socket = await played_session(session, server, "Ada")
            apps = descendants(server.proc.pid)
            for _ in range(200):  # 20 KB a second of keys that move the lobby's cursor, 10 s
                await socket.send_str(json.dumps(["stdin", "jk" * 1000]))
                await asyncio.sleep(0.1)
            await socket.send_str(json.dumps(["resize", {"width": 100, "height": 41}]))
            seen = ""
            async with asyncio.timeout(60):  # the size is taken behind a few keys, not 400,000
                while "\x1b[41;" not in seen:
                    message = await socket.receive()
                    assert message.type == aiohttp.WSMsgType.BINARY, seen[-300:]
                    seen += message.data.decode("utf-8", "replace")
            largest = max(rss_mib(pid) for pid in apps if alive(pid))
            assert largest < 150, largest
            await socket.close()


async def test_television_pages_of_a_table_share_one_app_each_shown_whole(
    tmp_path: Path,
) -> None:
    """Twelve television pages watching one table cost one app, not twelve: each page that
    joins is sent the picture's size and the whole screen; one page's flood closes that page
    alone; the others stay live; a player gets in meanwhile; the app ends with the last page."""
    limits = ("--limit", "web_watchers_per_address=20", *SMALL_BUDGET)
    with web_server(tmp_path, *limits) as server:
        ann, table = await an_open_table(server)
        async with client_session() as session:
            before = descendants(server.proc.pid)
            first = await watch_page(session, server, table)
            await terminal_text(first, "Friday", "Ann")
            apps = descendants(server.proc.pid)
            picture = apps - before
            assert picture  # the table's picture: an app
            others = []
            for _ in range(11):
                socket = await watch_page(session, server, table)
                # (Only a whole screen names the table and its players: the page was sent one.)
                seen = await terminal_text(
                    socket, "\x1b]7731;cols=100;rows=30\x07", "Friday", "Ann"
                )
                assert "refused" not in seen
                others.append(socket)
            assert descendants(server.proc.pid) == apps  # no app more for eleven pages
            flooder = others.pop()
            assert GOODBYE in await flood(flooder, "resize to new sizes")
            # The picture goes on for the other pages: Bob sits, and every page shows him.
            bob = await NetClient.connect(server.tcp_port, "Bob")
            await bob.request({"type": p.SIT, "table": table}, p.SEATED)
            for socket in [first, *others]:
                await terminal_text(socket, "Bob")
            player = await played_session(session, server, "Ada")
            await player.close()
            for socket in [first, *others]:
                await socket.close()
            async with asyncio.timeout(60):  # the table's picture ends with its last page
                while any(alive(pid) for pid in picture):
                    await asyncio.sleep(0.2)
            await bob.close()
        await ann.close()
