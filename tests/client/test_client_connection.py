"""The client's connection: reconnecting with the seat token, taking a seat back after a
restart, and clear messages for a refused connection or a server of another version; the
practice table; the notice for a terminal too small."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from clientkit import (
    at_my_turn,
    hand_text,
    in_the_lobby,
    joined_app,
    log_text,
    my_turn,
    practice_app,
    running,
    table_request,
    table_state,
    wait_for,
)
from netclient import NetClient, start_server
from textual.widgets import Static
from tonk.client.connection import describe_os_error
from tonk.client.practice import start_practice_server
from tonk.client.screens import TableScreen
from tonk.client.tokens import SeatRecord, SeatTokens
from tonk.shared.wire import protocol as p


async def test_a_dropped_link_reconnects_and_resumes_the_seat(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            await pilot.press("d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the draw")
            lines_before = log_text(app).count("You drew 8♠")
            for conn in list(server.connections):
                conn.abort()
            await wait_for(pilot, lambda: app.table_screen.link_note, "the link noticed lost")
            assert "reconnecting" in app.table_screen.link_note
            # Keys are greyed while the link is down.
            assert app.table_screen.check_action("discard", ()) is None
            await wait_for(pilot, lambda: not app.table_screen.link_note, "the link back")
            await wait_for(pilot, lambda: my_turn(app), "the seat resumed")
            assert hand_text(app) == "5s 6s 7s 9h 9d 8s"
            # The resumed hand's events were not logged twice.
            assert log_text(app).count("You drew 8♠") == lines_before
            await pilot.press("x")
            await wait_for(pilot, lambda: hand_text(app) == "6s 7s 9h 9d 8s", "the discard")


async def test_a_client_started_again_takes_its_seat_back(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    async with start_server(tmp_path) as server:
        first = joined_app(server.port, state_dir, table=table_request())
        async with at_my_turn(first):
            table_id = int(table_state(first).table_id)  # type: ignore[union-attr]
        # The first client is gone (as when an SSH session dies); its token is on disk.
        address = f"127.0.0.1:{server.port}"
        records = SeatTokens(state_dir).seats(address, "Tester")
        assert [(r.table, r.name, r.left) for r in records] == [(table_id, "Tester", False)]
        assert (state_dir / "seats.json").stat().st_mode & 0o077 == 0
        second = joined_app(server.port, state_dir)
        async with at_my_turn(second, "the seat taken back"):
            assert isinstance(second.screen, TableScreen)
            assert table_state(second).seat == 0  # type: ignore[union-attr]
            assert hand_text(second) == "5s 6s 7s 9h 9d"


HOLD_CLAIM = """
import sys
from pathlib import Path
from tonk.client.tokens import SeatTokens
tokens = SeatTokens(Path(sys.argv[1]))
print(tokens.claim(sys.argv[2], sys.argv[3]), flush=True)
sys.stdin.read()  # (held until the test closes our input, or kills us)
"""


def other_client(state_dir: Path, server: str, name: str) -> subprocess.Popen[str]:
    """Another process of this account playing as `name` on `server`, as a running
    tonk-client does: it holds the claim on that name until it ends."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_CLAIM, str(state_dir), server, name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "True"
    return process


def test_a_name_is_claimed_by_one_running_client_of_the_account_at_a_time(
    tmp_path: Path,
) -> None:
    mine, friends = SeatTokens(tmp_path), SeatTokens(tmp_path)
    assert mine.claim("box:7777", "ann")
    assert not friends.claim("box:7777", "ann")  # ann plays there from this account already
    assert friends.claim("box:7777", "ann 2")
    assert friends.claim("other:7777", "ann")  # another server: another name
    mine.release()
    assert SeatTokens(tmp_path).claim("box:7777", "ann")  # let go of


@pytest.mark.e2e
def test_a_claim_goes_with_the_process_that_held_it(tmp_path: Path) -> None:
    process = other_client(tmp_path, "box:7777", "ann")
    try:
        assert not SeatTokens(tmp_path).claim("box:7777", "ann")
    finally:
        process.kill()  # however it ends (an SSH session that died), the claim goes with it
        process.wait(10)
    assert SeatTokens(tmp_path).claim("box:7777", "ann")


@pytest.mark.e2e
async def test_a_friend_on_the_same_account_plays_under_a_name_of_their_own(
    tmp_path: Path,
) -> None:
    """Two people on one computer account, neither giving --name: the second client does not
    take the first one's seat (its token is on disk under the same login name) but plays as
    "NAME 2"; once the first client has ended, a client started again takes the seat back."""
    state_dir = tmp_path / "state"
    async with start_server(tmp_path) as server:
        address = f"127.0.0.1:{server.port}"
        first = await NetClient.connect(server.port, "Tester")
        table_id = await first.create_table(name="Kitchen", seats=3)
        assert first.token is not None
        SeatTokens(state_dir).remember(address, SeatRecord(table_id, first.token, "Tester"))
        running_client = other_client(state_dir, address, "Tester")
        try:
            friend = joined_app(server.port, state_dir)
            async with in_the_lobby(friend) as pilot:
                await wait_for(pilot, lambda: friend.identity[1] == "Tester 2", "the name")
                await pilot.pause()
                assert any("you are Tester 2 here" in n.message for n in friend._notifications)
                assert table_state(friend) is None  # in the lobby, not in Tester's seat
                info = friend.lobby.tables[0]
                assert (info.players, info.mine) == (("Tester",), False)
            # Tester was never told the seat went elsewhere: a round trip now reads everything
            # the server sent it (an error on the way fails the request).
            await first.request({"type": p.PING, "n": 1}, p.PONG)
            assert not [m for m in first.received if m.get("type") == p.ERROR]
        finally:
            running_client.kill()
            running_client.wait(10)
        again = joined_app(server.port, state_dir)
        async with running(again, lambda: table_state(again) is not None, "the seat back"):
            assert again.identity[1] == "Tester"
            assert table_state(again).seat == 0  # type: ignore[union-attr]
        await first.close()


async def test_a_stale_token_lands_in_the_lobby_and_is_forgotten(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    async with start_server(tmp_path) as server:
        address = f"127.0.0.1:{server.port}"
        SeatTokens(state_dir).remember(address, SeatRecord(42, "not-a-token", "Tester"))
        app = joined_app(server.port, state_dir)
        async with in_the_lobby(app) as pilot:
            await pilot.pause()
            assert any("has closed since" in n.message for n in app._notifications)
        assert SeatTokens(state_dir).seats(address) == []


async def test_a_refused_connection_is_a_sentence_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    app = joined_app(port, tmp_path / "state")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.return_code is not None, "the client to give up")
    assert app.return_code == 1
    assert "Traceback" not in capsys.readouterr().err
    assert app.failure == (
        f"tonk-client: connection to 127.0.0.1:{port} refused: "
        "is tonk-server running there on that port?"
    )


def test_unreachable_and_unknown_hosts_are_said_plainly() -> None:
    unreachable = OSError(113, "No route to host")
    assert describe_os_error(unreachable, "10.1.2.3:7777") == (
        "cannot reach 10.1.2.3:7777: No route to host"
    )
    unknown = socket.gaierror(-2, "Name or service not known")
    assert describe_os_error(unknown, "nohost:7777") == (
        "cannot find the host of nohost:7777: Name or service not known"
    )
    assert "no answer after" in describe_os_error(TimeoutError(), "slow:7777")


async def test_a_server_of_another_protocol_version_is_named(tmp_path: Path) -> None:
    hellos: list[dict[str, object]] = []

    async def old_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = p.FrameDecoder(p.MAX_CLIENT_FRAME)
        while not hellos:
            data = await reader.read(4096)
            if not data:
                return
            decoder.feed(data)
            hellos.extend(decoder.messages())
        writer.write(
            p.encode(
                {
                    "type": "error",
                    "code": p.VERSION_MISMATCH,
                    "message": "this server speaks version 99",
                    "fatal": True,
                    "version": 99,
                }
            )
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(old_server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        app = joined_app(port, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.return_code is not None, "the client to give up")
    finally:
        server.close()
        await server.wait_closed()
    assert hellos[0]["type"] == "hello" and hellos[0]["version"] == p.PROTOCOL_VERSION
    assert app.return_code == 1
    assert app.failure == (
        f"tonk-client: 127.0.0.1:{port} speaks tonk protocol version 99; this client speaks "
        f"version {p.PROTOCOL_VERSION}. Use a tonk-client of the server's version."
    )


async def test_the_practice_table_runs_its_own_server_with_bots() -> None:
    app = practice_app(bots=3, rules="pagat")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn at the practice table")
        state = table_state(app)
        assert state is not None
        assert [p.bot for p in state.players] == [False, True, True, True]
        assert state.rules.preset == "pagat"
        assert app.practice_server is not None
        directory = app.practice_server.directory
        assert (directory / "practice.sqlite3").exists()
        await pilot.press("q")  # during a hand: asks first
        await pilot.press("y")
        await wait_for(pilot, lambda: app.return_code is not None, "the client to quit")
    await asyncio.sleep(0)
    assert not directory.exists()


async def test_a_terminal_too_small_gets_a_notice_not_a_broken_table() -> None:
    app = practice_app()
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(
            pilot, lambda: table_state(app) is not None and app.table_screen.is_mounted, "table"
        )
        notice = app.table_screen.query_one("#too-small", Static)
        await wait_for(pilot, lambda: notice.display, "the notice")
        assert "Terminal too small: 60x20" in str(notice.render())
        assert "at least 40x24" in str(notice.render())  # (under 80 columns: upright)
        assert app.table_screen.check_action("draw", ()) is None
        await pilot.press("d")
        await pilot.pause()
        assert any("too small" in n.message for n in app._notifications)
        await pilot.resize_terminal(39, 40)  # one column short of the upright table's
        await pilot.pause()
        assert notice.display
        await pilot.resize_terminal(40, 24)
        await wait_for(pilot, lambda: not notice.display, "the notice gone")
        await wait_for(pilot, lambda: my_turn(app), "your turn")
        assert app.table_screen.check_action("draw", ()) is True


def test_the_tokens_file_is_json_per_server_player_and_table(tmp_path: Path) -> None:
    tokens = SeatTokens(tmp_path)
    tokens.remember("a:1", SeatRecord(3, "t3", "Ann"))
    tokens.remember("a:1", SeatRecord(5, "t5", "Ann"))
    tokens.remember("b:2", SeatRecord(3, "u3", "Bo"))
    # A second player of the same account at the same table keeps a token of their own.
    tokens.remember("a:1", SeatRecord(5, "c5", "Cy"))
    assert [r.table for r in tokens.seats("a:1", "Ann")] == [5, 3]  # newest first
    assert [(r.table, r.token) for r in tokens.seats("a:1", "Cy")] == [(5, "c5")]
    assert [r.name for r in tokens.seats("a:1")] == ["Cy", "Ann", "Ann"]
    tokens.mark_left("a:1", 5, "Ann")
    assert tokens.seats("a:1", "Ann")[0].left
    assert not tokens.seats("a:1", "Cy")[0].left
    tokens.forget("a:1", 5, "Ann")
    tokens.forget("a:1", 3, "Ann")
    assert tokens.seats("a:1", "Ann") == []
    tokens.forget("a:1", 5, "Cy")
    data = json.loads((tmp_path / "seats.json").read_text())
    assert data["version"] == 2
    assert list(data["servers"]) == ["b:2"]
    assert data["servers"]["b:2"]["Bo"]["3"]["token"] == "u3"


def test_a_tokens_file_of_the_old_layout_is_read_and_rewritten(tmp_path: Path) -> None:
    """Written before tokens were kept per player: one entry per server and table."""
    old = {
        "a:1": {
            "3": {"token": "t3", "name": "Ann", "order": 1, "left": False},
            "5": {"token": "t5", "name": "Bo", "order": 2, "left": True},
        }
    }
    (tmp_path / "seats.json").write_text(json.dumps(old))
    tokens = SeatTokens(tmp_path)
    assert tokens.seats("a:1", "Ann") == [SeatRecord(3, "t3", "Ann")]
    assert tokens.seats("a:1", "Bo") == [SeatRecord(5, "t5", "Bo", left=True)]
    tokens.remember("a:1", SeatRecord(3, "c3", "Cy"))
    data = json.loads((tmp_path / "seats.json").read_text())
    assert set(data) == {"version", "servers"}
    assert set(data["servers"]["a:1"]) == {"Ann", "Bo", "Cy"}
    assert [r.token for r in tokens.seats("a:1")] == ["c3", "t5", "t3"]
    # An older client adds its entries beside the new layout: they are read too.
    data["b:2"] = {"7": {"token": "d7", "name": "Di", "order": 1, "left": False}}
    (tmp_path / "seats.json").write_text(json.dumps(data))
    assert tokens.seats("b:2", "Di") == [SeatRecord(7, "d7", "Di")]
    assert [r.token for r in tokens.seats("a:1")] == ["c3", "t5", "t3"]


async def test_the_servers_goodbye_is_told_in_its_words_not_its_code(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            link = app.connection
            assert link is not None
            reasons: list[str] = []
            real = link._wait_to_retry

            async def noted(reason: str, attempt: int) -> None:
                reasons.append(reason)
                await real(reason, attempt)

            link._wait_to_retry = noted  # type: ignore[method-assign]
            await server.close("the server is going down for the night")
            await wait_for(pilot, lambda: reasons, "the link to notice the goodbye")
    assert reasons[0] == "the server said goodbye: the server is going down for the night"


async def test_a_practice_server_gives_the_server_log_back_when_it_stops() -> None:
    """The embedded server's log goes to a file while it runs (not over the table); once it
    stops, the server's logger is as it was, its file closed (or the log of everything after
    it in this process went on into a deleted directory)."""
    import logging

    logger = logging.getLogger("tonk.server")
    before = (list(logger.handlers), logger.level, logger.propagate)
    practice = await start_practice_server()
    try:
        assert logger.propagate is False
        (handler,) = [h for h in logger.handlers if h not in before[0]]
    finally:
        await practice.close()
    assert (list(logger.handlers), logger.level, logger.propagate) == before
    assert handler.stream is None  # type: ignore[attr-defined]  # closed


async def test_the_practice_server_runs_with_the_settings_it_is_given() -> None:
    practice = await start_practice_server(dev=True, next_hand_delay=42.0, bot_pause=0.25)
    try:
        config = practice.server.config
        assert (config.dev, config.next_hand_delay, config.bot_pause) == (True, 42.0, 0.25)
        assert config.host == "127.0.0.1" and practice.port == practice.server.port > 0
    finally:
        await practice.close()
    assert not practice.directory.exists()
    with pytest.raises(TypeError):
        await start_practice_server(next_hand_dely=1.0)
