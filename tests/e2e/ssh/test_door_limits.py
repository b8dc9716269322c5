"""The SSH door under attack, with asyncssh as the client against the server and door in this
process: a session that sends more than a terminal does, logins that open no session, keys
that claim names by the hundred, and connections that never log in."""

from __future__ import annotations

import asyncio
import gc
import os
import weakref
from pathlib import Path

import asyncssh
import pytest
from netclient import NetClient
from test_ssh_door import (
    Banners,
    claim,
    connect,
    in_the_modules_loop,
    new_key,
    running_door,
    screen_of,
    terminal,
    to_the_end,
)
from tonk.server.doors import door as door_module
from tonk.server.doors.door import SSHDoor
from tonk.server.doors.door_template import SessionTemplate
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e

FLOODS = {
    "letters": b"a" * 65536,
    "a bracketed paste": b"\x1b[200~" + b"x" * 65536 + b"\x1b[201~",
}


@in_the_modules_loop
@pytest.mark.parametrize("flood", FLOODS, ids=list(FLOODS))
async def test_a_session_sending_more_than_a_terminal_is_closed_with_a_line(
    tmp_path: Path, flood: str, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "ann", new_key())
        process = await terminal(conn)
        await screen_of(process, "playing as ann")
        (door_conn,) = door.connections
        assert door_conn.session is not None
        child = door_conn.session.child
        assert child is not None
        for _ in range(16):  # a megabyte, as fast as the channel takes it
            process.stdin.write(FLOODS[flood])
        await process.stdin.drain()
        output = await to_the_end(process, conn)
        assert process.exit_status == 1
        assert output.endswith(
            b"tonk: more came from your terminal than a player sends (over 2048 bytes a "
            b"second, or 8192 at once): goodbye\r\n"
        )
        assert child.returncode is not None  # the app was stopped, not left to chew on it


@in_the_modules_loop
async def test_keys_and_a_chat_line_s_paste_are_within_what_a_session_may_send(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "bea", new_key())
        async with conn:
            process = await terminal(conn)
            await screen_of(process, "playing as bea")
            process.stdin.write(b"\x1b[200~" + b"w" * 200 + b"\x1b[201~")
            for _ in range(20):
                process.stdin.write(b"j")
                await asyncio.sleep(0.05)
            process.stdin.write(b"q")
            await asyncio.wait_for(process.wait_closed(), 20)
            assert process.exit_status == 0


async def _gone(door: SSHDoor) -> None:
    for _ in range(200):
        if not door.connections:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"still connected: {door.connections}")


@in_the_modules_loop
async def test_a_login_that_opens_no_session_is_let_go_of_when_it_closes(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "cal", new_key())
        (door_conn,) = door.connections
        kept = weakref.ref(door_conn)
        del door_conn
        conn.close()
        await conn.wait_closed()
        await _gone(door)
        # Nothing holds the connection any more (its timer for asking a session included):
        # its memory is given back now, not after ssh_login_timeout.
        for _ in range(20):
            gc.collect()
            if kept() is None:
                break
            await asyncio.sleep(0.05)
        assert kept() is None, gc.get_referrers(kept())


@in_the_modules_loop
async def test_a_session_s_place_is_free_as_soon_as_it_is_over(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_per_address=1) as (_, door):
        key = new_key()
        first, _ = await connect(door, "dot", key)
        # A session refused at once (a command the door does not know): over, and ssh told.
        result = await asyncio.wait_for(first.run("ls"), 20)
        assert result.exit_status == 1
        # Its ssh exits now and the guest's next one may connect before the server has seen
        # this connection close: it is let in.
        second, _ = await connect(door, "dot", key)
        second.close()
        # A client that keeps the connection open once its session is over is closed.
        await asyncio.wait_for(first.wait_closed(), door_module.AFTER_THE_SESSION + 5)


@in_the_modules_loop
async def test_a_name_is_claimed_by_opening_a_session_not_by_logging_in(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        key = new_key()
        for name in ("eve", "fay", "gus", "hal"):
            conn, _ = await connect(door, name, key)
            conn.close()
            await conn.wait_closed()
        assert len(server.door_names) == 0
        client = await NetClient.connect(server.port)
        try:
            await client.send({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "eve"})
            assert (await client.recv())["type"] == p.WELCOME
        finally:
            await client.close()


@in_the_modules_loop
async def test_one_key_claims_at_most_ssh_names_per_key_names(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_names_per_key=2) as (server, door):
        key = new_key()
        await claim(door, "ivy", key)
        await claim(door, "jo", key)
        told = Banners()
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "kit", key, told)
        assert told.banners == [
            "tonk: your key has 2 names here already (ivy, jo): come in as one of them "
            f"(ssh -p {door.port} ivy@127.0.0.1)"
        ]
        assert server.door_names.owner("kit") is None
        await claim(door, "IVY", key)  # its own names, as before
        # Logged in under two new names at once, the first session to open claims the last
        # name the key may have; the other is closed, with the reason.
        await claim(door, "lee", new_key())
        other = new_key()
        await claim(door, "max", other)
        first, _ = await connect(door, "ned", other)
        second, _ = await connect(door, "oz", other)
        async with first, second:
            await asyncio.wait_for(first.run(), 20)
            with pytest.raises(asyncssh.ChannelOpenError):
                await asyncio.wait_for(second.run(), 20)
        assert server.door_names.of_key(door_module.public_key_text(other)) == ["max", "ned"]


Silent = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _silent(address: str, port: int, banner: bool) -> Silent:
    """A connection from `address` that says nothing (or only its version line)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    if banner:
        writer.write(b"SSH-2.0-silent\r\n")
    return reader, writer


async def _closed(silent: Silent) -> bool:
    """Has the door closed this connection? (What it sent is read and dropped.)"""
    reader = silent[0]
    try:
        while await asyncio.wait_for(reader.read(65536), 0.05):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass
    return True


@in_the_modules_loop
async def test_connections_that_never_log_in_do_not_keep_a_player_out(
    tmp_path: Path, template: SessionTemplate
) -> None:
    limits = {"ssh_sessions": 4, "ssh_unauthenticated": 4}
    async with running_door(tmp_path, forks_from=template, **limits) as (_, door):
        crowd = [await _silent(f"127.0.0.{2 + n % 4}", door.port, banner=n >= 6) for n in range(12)]
        await asyncio.sleep(door_module.LOGIN_GRACE + 0.5)
        assert sum(c.logging_in for c in door.connections) <= 4
        # A player from another address comes in (one of the crowd is closed to make room),
        # and sits at the table: the connections logging in take no player's place.
        conn, _ = await connect(door, "pat", new_key(), local_addr=("127.0.0.9", 0))
        async with conn:
            process = await terminal(conn)
            await screen_of(process, "playing as pat")
            assert sum(c.logging_in for c in door.connections) <= 4
        closed = [await _closed(one) for one in crowd]
        assert 8 <= closed.count(True) < 12
        for _, writer in crowd:
            writer.close()
        # The rest are closed after ssh_auth_timeout: there is no table for them.


@in_the_modules_loop
async def test_a_connection_not_logged_in_is_closed_for_a_newcomer_from_elsewhere(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_unauthenticated=2) as (_, door):
        first = await _silent("127.0.0.2", door.port, banner=True)
        second = await _silent("127.0.0.2", door.port, banner=True)
        await asyncio.sleep(0.3)
        # A connection logging in is not disturbed for a moment: no room yet.
        early = await _silent("127.0.0.3", door.port, banner=True)
        await asyncio.sleep(0.3)
        assert await _closed(early)
        await asyncio.sleep(door_module.LOGIN_GRACE)
        # From the same address: no room; from another: the oldest of the two makes room.
        third = await _silent("127.0.0.2", door.port, banner=True)
        await asyncio.sleep(0.3)
        assert await _closed(third)
        fourth = await _silent("127.0.0.3", door.port, banner=True)
        await asyncio.sleep(0.3)
        assert [await _closed(r) for r in (first, second, fourth)] == [True, False, False]
        assert sum(c.logging_in for c in door.connections) == 2
        for _, writer in (first, second, early, third, fourth):
            writer.close()


def _niceness(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


@in_the_modules_loop
async def test_a_session_s_app_runs_below_the_server_from_its_start(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "quinn", new_key())
        async with conn:
            process = await terminal(conn)
            (door_conn,) = door.connections
            for _ in range(2000):  # the moment the app's process is there
                session = door_conn.session
                if session is not None and session.child is not None:
                    break
                await asyncio.sleep(0.001)
            assert session is not None and session.child is not None
            # Lower already while Python starts and imports the app (a second of CPU: 50
            # guests logging in at once are a minute of it, which must not delay the games).
            assert _niceness(session.child.pid) == min(_niceness(os.getpid()) + 10, 19)
            await screen_of(process, "playing as quinn")
            assert _niceness(session.child.pid) == min(_niceness(os.getpid()) + 10, 19)


async def _until_the_lobby(process: asyncssh.SSHClientProcess[bytes], name: str) -> bytes:
    """What the session writes until its lobby is drawn, as bytes."""
    received = b""
    while f"playing as {name}".encode() not in received:
        data = await asyncio.wait_for(process.stdout.read(65536), 60)
        assert data, f"the session ended before its lobby: {received!r}"
        received += data
    return received


@in_the_modules_loop
async def test_apps_start_door_starting_at_a_time_the_others_told_they_wait(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, door_starting=1) as (server, door):
        names = ("rae", "sal", "tom")
        guests = [await connect(door, name, new_key()) for name in names]
        processes = await asyncio.gather(*(terminal(conn) for conn, _ in guests))
        received = await asyncio.gather(
            *(
                _until_the_lobby(process, name)
                for process, name in zip(processes, names, strict=True)
            )
        )
        assert server.app_starts.starting == 0 and not server.app_starts.waiting
        for conn, _ in guests:
            conn.close()
    # Each guest's first line, before the app took the screen: the one whose app started
    # first was told nothing, the others how many were ahead of them.
    told = sorted(r.split(b"\r\n", 1)[0].decode() for r in received if r.startswith(b"tonk:"))
    assert told == [
        "tonk: 1 table is opening before yours; it opens in turn",
        "tonk: 2 tables are opening before yours; it opens in turn",
    ]
