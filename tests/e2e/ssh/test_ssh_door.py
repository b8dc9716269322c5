"""The SSH door with asyncssh as the client, against the server and door in this process:
what the door refuses (no terminal, commands, forwarding, SFTP, passwords), its limits at
their edges, who may be who (claimed names, authorized keys, the TCP side), and that nothing
is left running when a connection drops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import socket
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncssh
import pyte
import pytest
from netclient import NetClient
from termkit import loopback_args
from tonk.server.app import Limits, ServerConfig, TonkServer
from tonk.server.commands import names
from tonk.server.doors import door as door_module
from tonk.server.doors import door_template as template_module
from tonk.server.doors.door import DoorConfig, SSHDoor, default_host_key_path
from tonk.server.doors.door_names import DoorNames
from tonk.server.doors.door_request import DoorCommand, parse_command
from tonk.server.doors.door_session import CRASH_LINE, DoorSession
from tonk.server.doors.door_template import SessionTemplate
from tonk.server.store.store import SavedName
from tonk.shared.wire import protocol as p

pytestmark = pytest.mark.e2e

#: A test whose door forks its sessions from the module's template (conftest's `template`)
#: runs in the module's event loop, which the template runs in.
in_the_modules_loop = pytest.mark.asyncio(loop_scope="module")


class Banners(asyncssh.SSHClient):
    """An asyncssh client that keeps the authentication banners it is shown."""

    def __init__(self) -> None:
        self.banners: list[str] = []

    def auth_banner_received(self, msg: str, lang: str) -> None:
        self.banners.append(msg.strip())


@contextlib.asynccontextmanager
async def running_door(
    directory: Path,
    authorized_keys: Path | None = None,
    session_class: type[DoorSession] | None = None,
    template: SessionTemplate | None = None,
    *,
    forks_from: SessionTemplate | None = None,
    **limits: Any,
) -> AsyncIterator[tuple[TonkServer, SSHDoor]]:
    """A server and its SSH door on free ports. The door's sessions are forked from
    `template`, started here and closed after, or from `forks_from`, a template already
    running and left so (the module's: see conftest's `template`), or else from the door's
    own."""
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        db_path=directory / "door.sqlite3",
        limits=replace(Limits(), **limits),
        bot_pause=0.05,
    )
    server = TonkServer(config)
    await server.start()
    door = SSHDoor(
        server,
        DoorConfig("127.0.0.1", 0, authorized_keys=authorized_keys),
        session_class,
        template or forks_from,
    )
    try:
        if template is not None:
            await template.start()
        await door.start()
        yield server, door
    finally:
        await door.close()
        await server.close()
        if template is not None:
            await template.close()


@contextlib.asynccontextmanager
async def door_with_ann(
    directory: Path, template: SessionTemplate
) -> AsyncIterator[tuple[TonkServer, SSHDoor, NetClient]]:
    """A server and its door (sessions forked from `template`), and Ann connected over TCP."""
    async with running_door(directory, forks_from=template) as (server, door):
        ann = await NetClient.connect(server.port, "Ann")
        try:
            yield server, door, ann
        finally:
            await ann.close()


def new_key() -> asyncssh.SSHKey:
    return asyncssh.generate_private_key("ssh-ed25519")


async def connect(
    door: SSHDoor,
    name: str,
    key: asyncssh.SSHKey | None,
    client: Banners | None = None,
    **options: Any,
) -> tuple[asyncssh.SSHClientConnection, Banners]:
    """Log in to the door as `name` with `key` (or options["client_keys"]); `client` keeps the
    banners shown, which a test reads after a refusal."""
    options.setdefault("client_keys", [key] if key is not None else None)
    conn, client = await asyncssh.create_connection(
        Banners if client is None else lambda: client,
        "127.0.0.1",
        door.port,
        username=name,
        known_hosts=None,
        agent_path=None,
        config=None,
        **options,
    )
    assert isinstance(client, Banners)
    return conn, client


async def terminal(
    conn: asyncssh.SSHClientConnection,
    command: str | None = None,
    term_type: str = "xterm",
    **options: Any,
) -> asyncssh.SSHClientProcess[bytes]:
    """A session with a 100x30 terminal (`command` is what the player typed after the host)."""
    return await conn.create_process(
        command, term_type=term_type, term_size=(100, 30), encoding=None, **options
    )


async def in_the_lobby(
    door: SSHDoor, name: str
) -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[bytes]]:
    """A player with a new key logs in as `name` and opens a terminal: the lobby is shown."""
    conn, _ = await connect(door, name, new_key())
    process = await terminal(conn)
    await screen_of(process, f"playing as {name}")
    return conn, process


async def claim(door: SSHDoor, name: str, key: asyncssh.SSHKey) -> None:
    """Log in as `name` with `key` and open a session (without a terminal: it is told so
    and closed), which claims the name for the key."""
    conn, _ = await connect(door, name, key)
    async with conn:
        await asyncio.wait_for(conn.run(), 20)


async def to_the_end(
    process: asyncssh.SSHClientProcess[bytes], conn: asyncssh.SSHClientConnection
) -> bytes:
    """Everything the session writes until it ends, once it has closed; then log out."""
    output = await asyncio.wait_for(process.stdout.read(), 20)
    await asyncio.wait_for(process.wait_closed(), 10)
    conn.close()
    return output


async def screen_of(
    process: asyncssh.SSHClientProcess[bytes],
    pattern: str,
    timeout: float = 20,
    *,
    also: tuple[str, ...] = (),
) -> pyte.Screen:
    """Read the session's output into a screen until it shows `pattern` (and each of `also`
    with it)."""
    screen = pyte.Screen(100, 30)
    stream = pyte.ByteStream(screen)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not all(text in "\n".join(screen.display) for text in (pattern, *also)):
        left = end - loop.time()
        if left <= 0:
            raise AssertionError(f"never saw {pattern!r}:\n" + "\n".join(screen.display))
        try:
            data = await asyncio.wait_for(process.stdout.read(65536), left)
        except TimeoutError:
            continue
        if not data:
            raise AssertionError(f"the session ended before {pattern!r}")
        stream.feed(data)
    return screen


@in_the_modules_loop
async def test_the_first_key_claims_a_name_and_a_pty_session_shows_the_lobby(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        key = new_key()
        conn, _ = await connect(door, "ann", key)
        async with conn:
            process = await terminal(conn, term_type="xterm-256color")
            await screen_of(process, "playing as ann")
            claim = server.door_names.owner("ANN")
            assert claim is not None and claim.name == "ann"
            assert claim.fingerprint == key.get_fingerprint("sha256")
            process.stdin.write(b"q")
            await asyncio.wait_for(process.wait_closed(), 10)
            assert process.exit_status == 0


@in_the_modules_loop
async def test_a_session_without_a_terminal_is_told_to_use_ssh_t_and_closed(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "ann", new_key())
        async with conn:
            result = await asyncio.wait_for(conn.run(), 10)
    assert result.exit_status == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"tonk: the table needs a terminal: connect with ssh -t -p {door.port} ann@127.0.0.1 "
        "(or without a command)\r\n"
    )


@in_the_modules_loop
async def test_a_command_is_refused_with_one_line_even_with_a_terminal(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "ann", new_key())
        async with conn:
            result = await asyncio.wait_for(conn.run("cat /etc/passwd", term_type="xterm"), 10)
    assert result.exit_status == 1
    assert "root:" not in str(result.stdout)
    said = str(result.stdout) + str(result.stderr)
    assert said.strip().splitlines() == [
        "tonk: this server runs the tonk table, not commands: 'cat /etc/passwd' is not one it "
        "knows (ssh with no command for the lobby, or practice [BOTS], join TABLE)"
    ]


def test_the_door_knows_only_practice_with_its_bots_and_join() -> None:
    assert parse_command(None) == (DoorCommand(), None)
    assert parse_command("practice") == (DoorCommand(bots=2), None)
    assert parse_command("practice 4") == (DoorCommand(bots=4), None)
    assert parse_command("practice 5")[1] == "tonk: practice takes 1 to 4 bots, e.g. `practice 3`"
    assert parse_command("bash")[0] == DoorCommand()
    assert parse_command("bash")[1] is not None
    assert parse_command("practice; bash") == (DoorCommand(), parse_command("practice; bash")[1])
    assert parse_command("practice; bash")[1] is not None
    # Everything after join is the name: ssh joins its words with spaces, quoted or not.
    assert parse_command("join Friday") == (DoorCommand(table="Friday"), None)
    assert parse_command("join Friday  night") == (DoorCommand(table="Friday night"), None)
    assert parse_command("join 'Friday night'") == (DoorCommand(table="Friday night"), None)
    assert parse_command("join") == (
        DoorCommand(),
        "tonk: join takes a table's name, e.g. `join Friday`",
    )


@in_the_modules_loop
async def test_port_forwards_both_ways_are_refused(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        conn, _ = await connect(door, "ann", new_key())
        async with conn:
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_connection(asyncssh.SSHTCPSession, "127.0.0.1", server.port)
            with pytest.raises(asyncssh.ChannelListenError):
                await conn.forward_remote_port("127.0.0.1", 0, "127.0.0.1", server.port)
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_unix_connection(asyncssh.SSHUNIXSession, "/tmp/anything")
        # None of them reached the game server.
        assert not server.connections


@in_the_modules_loop
async def test_sftp_and_x11_forwarding_are_refused(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "ann", new_key())
        async with conn:
            with pytest.raises((asyncssh.ChannelOpenError, asyncssh.SFTPError)):
                await asyncio.wait_for(conn.start_sftp_client(), 10)
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_session(
                    asyncssh.SSHClientSession, "practice", x11_forwarding=True, term_type="xterm"
                )
        assert not door.connections or all(c.session is None for c in door.connections)


@in_the_modules_loop
async def test_a_password_is_never_accepted(tmp_path: Path, template: SessionTemplate) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", None, password="hunter2", preferred_auth="password")
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(
                door, "ann", None, password="hunter2", preferred_auth="keyboard-interactive"
            )
        assert server.door_names.owner("ann") is None


@in_the_modules_loop
async def test_another_key_under_a_claimed_name_is_refused_with_one_line(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        await claim(door, "ann", new_key())
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "Ann", new_key())
        # The line, as an asyncssh client sees it.
        client = Banners()
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", new_key(), client)
        # The command to use with the door's own port and address filled in.
        assert client.banners == [
            "tonk: the name ann belongs to another key on this server: use your own name "
            f"(ssh -p {door.port} NAME@127.0.0.1)"
        ]


@in_the_modules_loop
async def test_a_name_claimed_over_ssh_is_refused_to_a_tcp_hello(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        await claim(door, "ann", new_key())
        for name in ("ann", "ANN"):
            client = await NetClient.connect(server.port)
            try:
                await client.send({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": name})
                reply = await client.recv()
            finally:
                await client.close()
            assert reply["type"] == p.ERROR and reply["code"] == p.BAD_NAME and reply["fatal"]
            assert "SSH door" in reply["message"]
        client = await NetClient.connect(server.port)
        try:
            await client.send({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "bob"})
            assert (await client.recv())["type"] == p.WELCOME
        finally:
            await client.close()


@in_the_modules_loop
async def test_a_name_in_use_over_tcp_cannot_be_claimed_by_a_key(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        client = await NetClient.connect(server.port)
        try:
            await client.send({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "cal"})
            assert (await client.recv())["type"] == p.WELCOME
            with pytest.raises(asyncssh.PermissionDenied):
                await connect(door, "cal", new_key())
            assert server.door_names.owner("cal") is None
        finally:
            await client.close()


@in_the_modules_loop
async def test_names_and_the_host_key_outlive_a_restart(
    tmp_path: Path, template: SessionTemplate
) -> None:
    ann = new_key()
    async with running_door(tmp_path, forks_from=template) as (_, door):
        first = door.fingerprint
        await claim(door, "ann", ann)
    assert default_host_key_path(tmp_path / "door.sqlite3").exists()
    async with running_door(tmp_path, forks_from=template) as (server, door):
        assert door.fingerprint == first
        assert server.door_names.owner("ann") is not None
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", new_key())
        conn, _ = await connect(door, "ann", ann)
        conn.close()


@in_the_modules_loop
async def test_an_authorized_keys_file_admits_only_its_keys(
    tmp_path: Path, template: SessionTemplate
) -> None:
    listed, other = new_key(), new_key()
    keys = tmp_path / "authorized_keys"
    keys.write_bytes(listed.export_public_key("openssh"))
    async with running_door(tmp_path, forks_from=template, authorized_keys=keys) as (server, door):
        client = Banners()
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "dee", other, client)
        assert client.banners == ["tonk: this server admits only the keys its host has listed"]
        assert server.door_names.owner("dee") is None
        await claim(door, "dee", listed)
        assert server.door_names.owner("dee") is not None


@in_the_modules_loop
async def test_sessions_per_address_at_the_limit_and_one_past_it(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_per_address=2) as (_, door):
        key = new_key()
        first, _ = await connect(door, "eve", key)
        second, _ = await connect(door, "eve", key)
        with pytest.raises(asyncssh.DisconnectError, match="too many SSH sessions from your"):
            await connect(door, "eve", key)
        first.close()
        await first.wait_closed()
        for _ in range(200):  # until the server has seen it go
            if door.players("127.0.0.1") == 1:
                break
            await asyncio.sleep(0.025)
        third, _ = await connect(door, "eve", key)  # a freed place is taken again
        second.close()
        third.close()


@in_the_modules_loop
async def test_sessions_in_all_at_the_limit_and_one_past_it(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_sessions=2) as (_, door):
        first, _ = await connect(door, "fay", new_key())
        second, _ = await connect(door, "gus", new_key())
        with pytest.raises(asyncssh.DisconnectError, match="as many SSH sessions as it allows"):
            await connect(door, "hal", new_key())
        first.close()
        second.close()


@in_the_modules_loop
async def test_refused_keys_at_the_limit_and_one_past_it(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_auth_attempts=3) as (_, door):
        ivy = new_key()
        await claim(door, "ivy", ivy)
        # Two wrong keys, then the right one: let in.
        conn, _ = await connect(door, "ivy", None, client_keys=[new_key(), new_key(), ivy])
        conn.close()
        # Three wrong keys: cut off before the right one is tried.
        with pytest.raises(asyncssh.DisconnectError, match="too many keys refused"):
            await connect(door, "ivy", None, client_keys=[new_key(), new_key(), new_key(), ivy])


@in_the_modules_loop
async def test_an_idle_session_is_closed_with_a_line(
    tmp_path: Path, template: SessionTemplate, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "tonk.server")
    async with running_door(tmp_path, forks_from=template, ssh_idle_timeout=4.0) as (server, door):
        conn, _ = await connect(door, "jo", new_key())
        async with conn:
            process = await terminal(conn)
            await screen_of(process, "playing as jo")
            output = await asyncio.wait_for(process.stdout.read(), 15)
            await process.wait_closed()
        assert b"tonk: no key pressed for" in output
        await _nothing_left(server, door)
    # The host's log says who came in, and when and how they went.
    said = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("ssh door: jo in from") for line in said), said
    out = "ssh door: jo out after less than a minute (closed by the door)"
    assert out in said, said


async def _nothing_left(server: TonkServer, door: SSHDoor) -> None:
    for _ in range(100):
        tasks = [
            t
            for t in asyncio.all_tasks()
            if t.get_name().startswith(("ssh-", "door-link-")) and t.get_name() != "ssh-idle"
        ]
        if not door.connections and not server.connections and not tasks:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(
        f"left running: {door.connections}, {server.connections}, "
        f"{[t.get_name() for t in asyncio.all_tasks()]}"
    )


@in_the_modules_loop
async def test_a_dropped_connection_leaves_nothing_running_and_the_seat_kept(
    tmp_path: Path, template: SessionTemplate, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "tonk.server")
    async with running_door(tmp_path, forks_from=template) as (server, door):
        conn, _ = await connect(door, "kit", new_key())
        process = await terminal(conn, "practice")
        await screen_of(process, "kit's practice")
        assert len(server.connections) == 1
        (door_conn,) = door.connections
        assert door_conn.session is not None and door_conn.session.child is not None
        child = door_conn.session.child.pid
        conn.abort()  # the network goes, no goodbye
        await _nothing_left(server, door)
        out = "ssh door: kit out after less than a minute (the terminal went)"
        assert out in [r.getMessage() for r in caplog.records]
        with pytest.raises(ProcessLookupError):  # the session's app is gone, and reaped
            os.kill(child, 0)
        (table,) = server.tables.values()
        assert [s.name for s in table.seats if s.kind == "human"] == ["kit"]
        assert server.door_names.seats("kit")[0].table_id == table.id


@in_the_modules_loop
async def test_a_name_that_cannot_be_one_is_refused_with_a_line(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        for bad in ("x" * 25, "  "):
            client = Banners()
            with pytest.raises(asyncssh.PermissionDenied):
                await connect(door, bad, new_key(), client)
            assert len(client.banners) == 1
            assert (
                "cannot be a name here: a name is printable text of 1 to 24" in (client.banners[0])
            )
            assert client.banners[0].endswith(f"(ssh -p {door.port} NAME@127.0.0.1)")
        assert len(server.door_names) == 0


@in_the_modules_loop
async def test_the_host_key_is_private_to_the_server_and_its_fingerprint_is_printed(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        path = default_host_key_path(tmp_path / "door.sqlite3")
        assert path.stat().st_mode & 0o777 == 0o600
        assert asyncssh.read_private_key(str(path)).get_fingerprint("sha256") == door.fingerprint
        seen = await asyncssh.get_server_host_key("127.0.0.1", door.port)
        assert seen is not None and seen.get_fingerprint("sha256") == door.fingerprint


def test_a_host_key_file_that_is_not_a_key_stops_the_server_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tonk.server.commands import cli

    bad = tmp_path / "hostkey"
    bad.write_text("not a key\n")
    code = cli.main(
        [
            *loopback_args(tmp_path / "t.db"),
            "--ssh-port",
            "0",
            "--ssh-host-key",
            str(bad),
        ]
    )
    assert code == 1
    assert f"cannot read the SSH host key {bad}" in capsys.readouterr().err


def test_the_terminal_s_character_set_comes_from_its_locale() -> None:
    from tonk.server.doors.door_request import TerminalInfo

    def charset(**environ: str) -> str:
        return TerminalInfo("xterm", 80, 24, environ).charset

    assert charset() == "utf-8"
    assert charset(LANG="en_GB.UTF-8") == "utf-8"
    assert charset(LANG="de_DE.ISO-8859-1") == "iso8859-1"
    assert charset(LANG="en_GB.UTF-8", LC_ALL="C") == "ascii"
    assert charset(LC_CTYPE="fr_FR@euro", LANG="C") == "utf-8"
    assert not TerminalInfo("dumb", 80, 24, {}).colour
    assert not TerminalInfo("xterm", 80, 24, {"NO_COLOR": "1"}).colour
    assert TerminalInfo("xterm", 80, 24, {}).child_environ()["TERM"] == "xterm"


@in_the_modules_loop
async def test_a_seat_left_on_purpose_is_taken_back_by_sitting_there_again(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        key = new_key()
        conn, _ = await connect(door, "lou", key)
        async with conn:
            process = await terminal(conn, "practice")
            await screen_of(process, "lou's practice")
            process.stdin.write(b"q")  # leave the table (a hand is on: asked first)
            await asyncio.sleep(0.5)
            process.stdin.write(b"y")
            await screen_of(process, "playing as lou")
            process.stdin.write(b"q")
            await asyncio.wait_for(process.wait_closed(), 10)
        (table,) = server.tables.values()
        assert [s.left for s in server.door_names.seats("lou")] == [True]
        conn, _ = await connect(door, "lou", key)
        async with conn:
            process = await terminal(conn)
            # Left on purpose: the lobby first, not the table.
            await screen_of(process, "playing as lou")
            process.stdin.write(b"\r")  # sit at the (only) table: the seat is lou's again
            await screen_of(process, "lou's practice")
            for _ in range(100):
                if server.door_names.seats("lou")[0].left is False:
                    break
                await asyncio.sleep(0.05)
            assert [s.left for s in server.door_names.seats("lou")] == [False]
            lou = next(s for s in table.seats if s.name == "lou")
            assert lou.conn is not None and lou.conn.door_name == "lou"


@in_the_modules_loop
async def test_a_terminal_that_is_not_utf8_gets_its_own_character_set(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, _ = await connect(door, "max", new_key())
        async with conn:
            process = await terminal(conn, "practice", env={"LANG": "de_DE.ISO-8859-1"})
            received = b""
            while b"Your turn" not in received and b"to play" not in received:
                data = await asyncio.wait_for(process.stdout.read(65536), 30)
                assert data, "the session ended"
                received += data
            process.stdin.write(b"\x03")
        # Latin-1 all through: no UTF-8 sequence (box lines, suit symbols) reached it, and
        # the cards are written in ASCII (the app was started with --ascii).
        assert b"\xe2" not in received
        received.decode("iso8859-1")
        assert re.search(rb"\b(10|[2-9AKQJ])[SHDC]\b", received)


@in_the_modules_loop
async def test_a_connection_that_does_not_log_in_in_time_is_closed(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_auth_timeout=1.0) as (_, door):
        reader, writer = await asyncio.open_connection("127.0.0.1", door.port)
        try:
            # The server's version line and key exchange, then nothing: closed by the
            # server (without the limit, the read would wait for ever and time out).
            while await asyncio.wait_for(reader.read(65536), 10):
                pass
            assert not door.connections
        finally:
            writer.close()


@in_the_modules_loop
async def test_shutting_the_server_down_ends_each_session_with_a_line(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        conn, process = await in_the_lobby(door, "ned")
        (door_conn,) = door.connections
        assert door_conn.session is not None and door_conn.session.child is not None
        child = door_conn.session.child.pid
        closing = asyncio.create_task(door.close())
        output = await asyncio.wait_for(process.stdout.read(), 15)
        await asyncio.wait_for(process.wait_closed(), 15)
        await closing
        conn.close()
    # The terminal is given back as it was (alternate screen left, cursor shown), then told.
    assert output.endswith(b"\x1b[?1049l\x1b[?25htonk: the server is shutting down\r\n")
    assert process.exit_status == 1
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


#: Loaded by a session's app at its start (sitecustomize): a crash in the app's own code on
#: a resize to 77 columns, as a bug would.
CRASHING_APP = """
import tonk.client.app

resize = tonk.client.app.TonkApp.on_resize


def on_resize(self, event):
    if event.size.width == 77:
        raise RuntimeError("a bug in the table app")
    resize(self, event)


tonk.client.app.TonkApp.on_resize = on_resize
"""


def template_running(folder: Path, code: str) -> SessionTemplate:
    """A template for door sessions that runs `code` first (as its sitecustomize) to change
    the app: every session forked from it has the change."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(code)
    return SessionTemplate({"PYTHONPATH": str(folder)})


async def test_a_crashing_app_s_traceback_goes_to_the_log_and_the_player_gets_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crashing = template_running(tmp_path / "crash", CRASHING_APP)
    async with running_door(tmp_path, template=crashing) as (server, door):
        conn, process = await in_the_lobby(door, "ida")
        process.change_terminal_size(77, 30)
        output = await to_the_end(process, conn)
        await _nothing_left(server, door)
    assert process.exit_status == 1
    # The player's terminal: given back (alternate screen off, cursor on), then one line.
    assert b"Traceback" not in output and b"a bug in the table app" not in output
    assert output.endswith(b"\x1b[?1049l\x1b[?25h" + CRASH_LINE.encode() + b"\r\n")
    # The host's log: who, and the traceback.
    (record,) = [r for r in caplog.records if "stopped on an error" in r.getMessage()]
    assert record.levelname == "ERROR"
    assert "ida's table app" in record.getMessage()
    assert "RuntimeError" in record.getMessage()
    assert "a bug in the table app" in record.getMessage()


@in_the_modules_loop
async def test_an_app_killed_outright_gives_the_terminal_back_with_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        conn, process = await in_the_lobby(door, "jo")
        (door_conn,) = door.connections
        assert door_conn.session is not None and door_conn.session.child is not None
        os.kill(door_conn.session.child.pid, signal.SIGKILL)  # the kernel's OOM killer, say
        output = await to_the_end(process, conn)
        await _nothing_left(server, door)
    assert process.exit_status == 1
    assert output.endswith(b"\x1b[?1049l\x1b[?25h" + CRASH_LINE.encode() + b"\r\n")
    assert any(
        r.levelname == "ERROR"
        and "jo's table app stopped on an error (exit status -9)" in r.message
        for r in caplog.records
    )


@in_the_modules_loop
async def test_a_connection_that_asks_for_no_session_is_closed(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template, ssh_login_timeout=1.0) as (_, door):
        conn, _ = await connect(door, "ned", new_key())
        # Logged in, then nothing asked for (as `ssh -N` does): closed by the server (without
        # the limit, this would wait for ever and time out). What OpenSSH shows the player is
        # in test_ssh_door_openssh.py.
        await asyncio.wait_for(conn.wait_closed(), 10)
        assert not door.connections


@in_the_modules_loop
async def test_agent_forwarding_is_refused(tmp_path: Path, template: SessionTemplate) -> None:
    async with running_door(tmp_path, forks_from=template) as (_, door):
        # The client asks to forward its agent (at a socket of the test's own) with its session.
        conn, _ = await connect(door, "ann", new_key(), agent_forwarding=str(tmp_path / "agent"))
        async with conn:
            process = await terminal(conn)
            await screen_of(process, "playing as ann")
            (door_conn,) = door.connections
            assert door_conn.conn is not None and door_conn.session is not None
            # Granted, the server would listen on a socket of its own for agent connections.
            assert door_conn.conn.get_agent_path() is None
            assert door_conn.session.chan is not None
            assert door_conn.session.chan.get_agent_path() is None
            assert "SSH_AUTH_SOCK" not in door_conn.session.child_environ()
            process.stdin.write(b"q")
            await asyncio.wait_for(process.wait_closed(), 10)


@in_the_modules_loop
async def test_a_name_released_while_the_server_runs_can_be_claimed_by_another_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: SessionTemplate
) -> None:
    monkeypatch.setattr(door_module, "RELEASE_CHECK", 0.1)
    async with running_door(tmp_path, forks_from=template) as (server, door):
        lost, new = new_key(), new_key()
        await claim(door, "ann", lost)
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", new)
        listed = names.claims_text(names.claims(sqlite3.connect(server.config.db_path)))
        assert [line.split()[0] for line in listed] == ["name", "ann"]
        assert listed[1].endswith(lost.get_fingerprint("sha256"))
        released = names.release(server.config.db_path, "ANN")
        assert released.name == "ann"
        # The running server lets go of it (a few checks of the database at most).
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while server.door_names.owner("ann") is not None:
            assert loop.time() < end, "the server never let go of the released name"
            await asyncio.sleep(0.05)
        await claim(door, "ann", new)
        claimed = server.door_names.owner("ann")
        assert claimed is not None and claimed.fingerprint == new.get_fingerprint("sha256")
        with pytest.raises(names.AuditError, match="nobody has claimed the name 'bob'"):
            names.release(server.config.db_path, "bob")


def test_a_claim_not_yet_written_or_made_since_the_database_was_read_is_kept() -> None:
    door_names = DoorNames()
    door_names.claim(SavedName("ann", "ssh-ed25519 AAAA", "SHA256:a", 0.0))
    # Its write is under way: the database does not have it yet, and it is not let go of.
    assert door_names.refresh(door_names.saved_claims(), set()) == []
    assert door_names.owner("ann") is not None
    door_names.saved("ann")
    known = door_names.saved_claims()
    # Made and written while the database was being read: kept.
    door_names.claim(SavedName("bob", "ssh-ed25519 BBBB", "SHA256:b", 1.0))
    door_names.saved("bob")
    assert door_names.refresh(known, {"ann"}) == []
    assert door_names.owner("bob") is not None
    # Released: let go of.
    assert [c.name for c in door_names.refresh(door_names.saved_claims(), {"bob"})] == ["ann"]
    assert door_names.owner("ann") is None and door_names.owner("bob") is not None


class NoKey(Banners):
    """A client with no key, that goes on to keyboard-interactive as OpenSSH's ssh does,
    answering whatever it is asked with nothing."""

    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(
        self, name: str, instructions: str, lang: str, prompts: Any
    ) -> list[str]:
        return ["" for _ in prompts]


@in_the_modules_loop
async def test_a_player_with_no_key_is_told_how_to_make_one_and_not_let_in(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        client = NoKey()
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", None, client)
        assert client.banners == [door_module.NO_KEY]
        # A key that is refused is not told that: it is told why its key was refused.
        await claim(door, "ann", new_key())
        refused = NoKey()
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "ann", new_key(), refused)
        assert len(refused.banners) == 1
        assert refused.banners[0].startswith("tonk: the name ann belongs to another key")
        assert len(server.door_names) == 1


@in_the_modules_loop
async def test_a_link_the_server_closes_is_opened_again_and_the_seat_resumed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, template: SessionTemplate
) -> None:
    caplog.set_level(logging.INFO, "tonk.server")
    async with running_door(tmp_path, forks_from=template) as (server, door):
        conn, _ = await connect(door, "lee", new_key())
        process = await terminal(conn, "practice")
        await screen_of(process, "lee's practice")
        (first,) = server.connections
        # The server closes the session's link (as it does to a connection past its message
        # rate, or too far behind): the app connects again, as tonk-client would.
        first.abort()
        await screen_of(process, "Connected again")
        (second,) = server.connections
        assert second is not first and second.name == "lee"
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while not any("lee resumes seat 0" in r.getMessage() for r in caplog.records):
            assert loop.time() < end, "the seat was not resumed"
            await asyncio.sleep(0.05)
        process.stdin.write(b"q")
        conn.close()
        await _nothing_left(server, door)


def test_a_door_port_in_use_stops_the_server_with_a_line_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tonk.server.commands import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = str(tmp_path / "t.db")
        code = cli.main(["--host", "127.0.0.1", "--port", "0", "--db", db, "--ssh-port", str(port)])
    assert code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"tonk-server: --ssh-port {port}: cannot listen on 127.0.0.1:{port}: address already in use"
    )


@in_the_modules_loop
async def test_a_refusal_from_the_server_is_said_on_the_terminal_not_logged_as_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, template: SessionTemplate
) -> None:
    # One connection from this address at most: a TCP client holds it, so the session's link
    # (counted against the SSH client's address) is refused and the app ends with a line.
    async with running_door(tmp_path, forks_from=template, max_per_address=1) as (server, door):
        holder = await NetClient.connect(server.port, "tcp")
        try:
            conn, _ = await connect(door, "kim", new_key())
            process = await terminal(conn)
            output = await to_the_end(process, conn)
        finally:
            await holder.close()
    assert process.exit_status == 1
    # The line names the door (HOST:PORT as typed after ssh -p), and says tonk:, not tonk-client:
    # (what it says of the refusal is the client's own).
    plain = re.sub(rb"\x1b(\[[0-9;?<>=$]*[a-zA-Z~]|\][^\x07]*\x07)", b"", output)
    last = plain.rstrip().splitlines()[-1]
    assert last.startswith(b"tonk: "), last
    assert b"127.0.0.1:%d" % door.port in last, last
    assert CRASH_LINE.encode() not in output
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


@in_the_modules_loop
async def test_practice_again_goes_back_to_the_player_s_own_practice_table(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, template: SessionTemplate
) -> None:
    caplog.set_level(logging.INFO, "tonk.server")
    key = new_key()
    async with running_door(tmp_path, forks_from=template) as (server, door):

        async def practice(command: str) -> tuple[asyncssh.SSHClientConnection, Any]:
            conn, _ = await connect(door, "max", key)
            process = await terminal(conn, command)
            await screen_of(process, "max's practice")
            return conn, process

        conn, _ = await practice("practice")
        (table,) = server.tables.values()
        conn.abort()  # dropped mid-hand
        await _nothing_left(server, door)
        # The same command again (the shell's history): back in that seat, no new table.
        conn, process = await practice("practice")
        assert list(server.tables) == [table.id]
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while not any("max resumes seat 0" in r.getMessage() for r in caplog.records):
            assert loop.time() < end, "the seat was not resumed"
            await asyncio.sleep(0.05)
        # Left on purpose (q, then y), then practice again: that table still.
        process.stdin.write(b"q")
        await asyncio.sleep(0.5)
        process.stdin.write(b"y")
        await screen_of(process, "playing as max")  # the lobby
        conn.close()
        await _nothing_left(server, door)
        conn, _ = await practice("practice")
        assert list(server.tables) == [table.id]
        conn.close()
        await _nothing_left(server, door)
        # Another number of bots is another practice table.
        conn, _ = await practice("practice 3")
        assert len(server.tables) == 2
        conn.close()
        await _nothing_left(server, door)


#: Loaded by a session's app at its start (sitecustomize): a warning as the app is made.
WARNING_APP = """
import warnings

import tonk.client.app

init = tonk.client.app.TonkApp.__init__


def __init__(self, *args, **kwargs):
    warnings.warn("something the app was warned of", RuntimeWarning)
    init(self, *args, **kwargs)


tonk.client.app.TonkApp.__init__ = __init__
"""


async def test_a_warning_from_the_app_is_logged_but_is_not_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    warned = template_running(tmp_path / "warn", WARNING_APP)
    async with running_door(tmp_path, template=warned) as (server, door):
        conn, process = await in_the_lobby(door, "uma")
        process.stdin.write(b"q")
        output = await to_the_end(process, conn)
        await _nothing_left(server, door)
    assert process.exit_status == 0
    assert CRASH_LINE.encode() not in output and b"something the app" not in output
    (record,) = [r for r in caplog.records if "uma's table app" in r.getMessage()]
    assert record.levelname == "WARNING"
    assert "RuntimeWarning: something the app was warned of" in record.getMessage()


def test_names_on_a_database_from_before_the_door_lists_none_and_releases_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tonk.server.commands import cli

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a server from before the door: no ssh_* tables
        conn.execute("CREATE TABLE tables (id INTEGER PRIMARY KEY)")
    assert cli.main(["names", "--db", str(path)]) == 0
    assert capsys.readouterr().out == "no name has been claimed at the SSH door or the web door\n"
    assert cli.main(["names", "release", "ann", "--db", str(path)]) == 2
    assert "nobody has claimed the name 'ann'" in capsys.readouterr().err


@in_the_modules_loop
async def test_a_key_added_to_the_authorized_keys_file_is_admitted_without_a_restart(
    tmp_path: Path, template: SessionTemplate
) -> None:
    first, friend = new_key(), new_key()
    keys = tmp_path / "authorized_keys"
    keys.write_bytes(first.export_public_key("openssh"))
    async with running_door(tmp_path, forks_from=template, authorized_keys=keys) as (_, door):
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "fay", friend)
        # The host adds the friend's key to the file, the server running.
        keys.write_bytes(first.export_public_key("openssh") + friend.export_public_key("openssh"))
        conn, _ = await connect(door, "fay", friend)
        conn.close()
        # A file that cannot be read leaves the keys read last in force (not every key).
        keys.write_text("this is not a key\n")
        with pytest.raises(asyncssh.PermissionDenied):
            await connect(door, "gus", new_key())
        conn, _ = await connect(door, "fay", friend)
        conn.close()


@in_the_modules_loop
async def test_join_goes_straight_to_a_table_by_name_seated_watching_or_the_lobby(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with door_with_ann(tmp_path, template) as (server, door, ann):
        await ann.create_table(name="Friday night", seats=2)
        # A free seat: taken (the name in any case, after join with or without quotes).
        conn, _ = await connect(door, "dee", new_key())
        async with conn:
            process = await terminal(conn, "join friday NIGHT")
            await screen_of(process, "You sit at Friday night", also=("Your hand",))
            (table,) = server.tables.values()
            assert [s.name for s in table.seats] == ["Ann", "dee"]
        # Full now: watching, with the line that says so.
        conn, _ = await connect(door, "eve", new_key())
        async with conn:
            process = await terminal(conn, "join 'Friday night'")
            screen = await screen_of(
                process, "Friday night is full: you", also=("are watching", "Watching")
            )
            assert "You sit" not in "\n".join(screen.display)
        # No such table: the line, and the lobby.
        conn, _ = await connect(door, "fay", new_key())
        async with conn:
            process = await terminal(conn, "join Saturday")
            await screen_of(process, "No such table", also=("Saturday", "playing as fay"))


@in_the_modules_loop
async def test_a_guest_is_not_told_of_a_computer_account_at_a_table_in_play(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        ann = await NetClient.connect(server.port, "Ann")
        bob = await NetClient.connect(server.port, "Bob")
        try:
            # Two people, no bot (a bot's seat would be offered instead): it starts.
            table = await ann.create_table(name="Kitchen", seats=2)
            await bob.request({"type": p.SIT, "table": table}, p.SEATED)
            conn, _ = await connect(door, "dee", new_key())
            async with conn:
                process = await terminal(conn)
                await screen_of(process, "playing as dee", also=("Kitchen", "playing "))
                process.stdin.write(b"\r")  # sit at the table in play
                screen = await screen_of(process, "started: w watches it", also=("door to",))
                said = " ".join(line.strip(" │▌") for line in screen.display)
                assert "hold no seat there under your name" in " ".join(said.split())
                assert "computer account" not in said
        finally:
            await ann.close()
            await bob.close()


def parent_of(pid: int) -> int:
    """A process's parent, from /proc/PID/stat."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def open_sockets(pid: int) -> set[str]:
    """The sockets a process's descriptors are open on (`socket:[INODE]`)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found.add(os.readlink(fd))
    return {f for f in found if f.startswith("socket:")}


def session_of(door: SSHDoor, name: str) -> DoorSession:
    (session,) = [c.session for c in door.connections if c.session and c.session.name == name]
    assert session.child is not None
    return session


async def test_a_crash_in_one_session_leaves_the_template_and_the_other_sessions_running(
    tmp_path: Path,
) -> None:
    crashing = template_running(tmp_path / "crash", CRASHING_APP)
    async with running_door(tmp_path, template=crashing) as (server, door):
        conn, process = await in_the_lobby(door, "ida")
        other_conn, other = await in_the_lobby(door, "bo")
        assert crashing.process is not None
        template = crashing.process.pid
        for name in ("ida", "bo"):  # both forked from the template
            child = session_of(door, name).child
            assert child is not None and parent_of(child.pid) == template
        process.change_terminal_size(77, 30)
        output = await to_the_end(process, conn)
        assert output.endswith(CRASH_LINE.encode() + b"\r\n")
        # Bo's session goes on, and the template is the same one, still forking sessions.
        other.stdin.write(b"?")
        await screen_of(other, "Keys")
        assert crashing.process is not None and crashing.process.pid == template
        os.kill(template, 0)
        third_conn, _ = await in_the_lobby(door, "cy")
        child = session_of(door, "cy").child
        assert child is not None and parent_of(child.pid) == template
        for c in (other_conn, third_conn):
            c.close()
        await _nothing_left(server, door)


async def test_a_template_killed_is_replaced_and_its_sessions_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another template starts RESTART_PAUSE after the last start (10 s in use): set here to
    # 8 s after the kill at the least, however long the door and Ida's session took to start
    # on a busy machine: seconds in which a session starts with no template, as the test asks.
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with running_door(tmp_path) as (server, door):
        template = door.template
        conn, process = await in_the_lobby(door, "ida")
        assert template.process is not None
        first = template.process.pid
        monkeypatch.setattr(template_module, "RESTART_PAUSE", loop.time() - started + 8.0)
        os.kill(first, signal.SIGKILL)
        end = loop.time() + 10
        while template.process is not None and template.process.pid == first:
            assert loop.time() < end, "the server never saw its template go"
            await asyncio.sleep(0.05)
        assert any(
            r.levelname == "WARNING" and f"template (pid {first}) ended" in r.getMessage()
            for r in caplog.records
        )
        # While there is no template, a session's app starts as a program of its own.
        alone_conn, _ = await in_the_lobby(door, "bo")
        child = session_of(door, "bo").child
        assert child is not None and parent_of(child.pid) == os.getpid()
        # Another template starts, and the next session is forked from it.
        end = loop.time() + 30
        while not template.ready:
            assert loop.time() < end, "no template was started again"
            await asyncio.sleep(0.1)
        assert template.process is not None and template.process.pid != first
        forked_conn, _ = await in_the_lobby(door, "cy")
        child = session_of(door, "cy").child
        assert child is not None and parent_of(child.pid) == template.process.pid
        # Ida's session, forked from the template that was killed, goes on and ends as she
        # asks (its exit status said by the session itself: no crash).
        process.stdin.write(b"q")
        output = await to_the_end(process, conn)
        assert process.exit_status == 0
        assert CRASH_LINE.encode() not in output
        for c in (alone_conn, forked_conn):
            c.close()
        await _nothing_left(server, door)


@in_the_modules_loop
async def test_a_forked_session_holds_only_its_own_descriptors_and_environment(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with running_door(tmp_path, forks_from=template) as (server, door):
        assert door.template is template
        conn, _ = await connect(door, "ida", new_key())
        plain = await terminal(conn, env={"NO_COLOR": "1"})
        plain_screen = await output_until(plain, b"playing as ida")
        other_conn, coloured = await in_the_lobby(door, "bo")
        assert template.process is not None
        ours = open_sockets(template.process.pid)
        shared = []
        for name in ("ida", "bo"):
            child = session_of(door, name).child
            assert child is not None and parent_of(child.pid) == template.process.pid
            # Of the template's sockets a session has its own status socket only (not the
            # template's control socket, nor another session's).
            shared.append(open_sockets(child.pid) & ours)
            assert Path(f"/proc/{child.pid}/comm").read_text().strip() == "tonk-session"
        assert [len(s) for s in shared] == [1, 1] and shared[0] != shared[1]
        # Each session's environment is its own: NO_COLOR said by Ida's ssh, not by Bo's.
        coloured.stdin.write(b"?")
        coloured_screen = await output_until(coloured, b"Keys")
        plain_colours, colours = colours_in(plain_screen), colours_in(coloured_screen)
        assert len(plain_colours) <= 1 and len(colours - plain_colours) >= 3, (
            plain_colours,
            colours,
        )
        for c in (conn, other_conn):
            c.close()
        await _nothing_left(server, door)


#: A colour set on a terminal (SGR: a foreground colour of 8, 16, 256 or 2**24).
COLOUR = re.compile(rb"\x1b\[(?:[0-9]+;)*(?:3[0-8]|9[0-7])[;m]")


def colours_in(output: bytes) -> set[bytes]:
    """The foreground colours a session's output sets (NO_COLOR leaves Textual's black, of
    its monochrome filter)."""
    return {found.group() for found in COLOUR.finditer(output)}


async def output_until(process: asyncssh.SSHClientProcess[bytes], text: bytes) -> bytes:
    """The bytes a session writes until `text` has come."""
    output = b""
    async with asyncio.timeout(20):
        while text not in output:
            data = await process.stdout.read(65536)
            assert data, f"the session ended before {text!r}"
            output += data
    return output


async def test_a_session_that_comes_while_the_template_starts_waits_for_it(tmp_path: Path) -> None:
    # A template slower to start than the server's handshake time (2 s more than its import,
    # against 1 s): a session's link, opened before the template is ready, would be closed
    # before its app could say hello.
    slow = template_running(tmp_path / "slow", "import time\ntime.sleep(2)\n")
    async with running_door(tmp_path, template=slow, handshake_timeout=1.0) as (server, door):
        assert not slow.ready
        conn, _ = await in_the_lobby(door, "ida")
        child = session_of(door, "ida").child
        assert slow.process is not None
        assert child is not None and parent_of(child.pid) == slow.process.pid
        conn.close()
        await _nothing_left(server, door)


@in_the_modules_loop
async def test_a_player_whose_seat_went_to_a_bot_is_told_at_the_door_each_time_and_offered_it(
    tmp_path: Path, template: SessionTemplate
) -> None:
    async with door_with_ann(tmp_path, template) as (server, door, ann):
        table_id = await ann.create_table("easy", name="Kitchen", seats=3)
        key = new_key()
        conn, _ = await connect(door, "dee", key)
        process = await terminal(conn, "join Kitchen")
        await screen_of(process, "You sit at Kitchen")
        (table,) = server.tables.values()
        conn.abort()  # the network goes
        await ann.expect(p.TABLE, lambda m: m["table"]["players"][2]["status"] == "disconnected")
        await ann.request({"type": p.SEAT_TO_BOT, "seat": 2}, p.TABLE)
        # Back through the door, twice: told each time, in the lobby, not left to guess.
        for visit in (1, 2):
            conn, _ = await connect(door, "dee", key)
            async with conn:
                process = await terminal(conn)
                await screen_of(process, "playing as dee", also=("given to a bot",))
                if visit == 1:
                    continue
                # Enter on the table offers dee's own seat back (seat 2, not Ada's).
                process.stdin.write(b"\r")
                await screen_of(process, "Your seat at Kitchen was given to a bot")
                process.stdin.write(b"y")
                for _ in range(200):
                    if table.away.claims or table.seats[2].name == "dee":
                        break
                    await asyncio.sleep(0.05)
                claimed = {n: c.name for n, c in table.away.claims.items()}
                assert claimed == {2: "dee"} or table.seats[2].name == "dee", claimed
        assert table.id == table_id
