"""Invites that stay put: the SSH door's port kept in the database across restarts,
`tonk-server invite` read from a real database and host key, and going straight to a table by
name, `tonk-client HOST --table NAME` on a real terminal against a real server."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from netclient import NetClient
from ptyterm import Term
from sshkit import DoorServer, claim_and_quit, make_key
from termkit import command_path, tonk_server
from tonk.client.model.lobbylist import named
from tonk.client.model.state import TableInfo
from tonk.server.announce import ordered
from tonk.shared.wire import messages as m

pytestmark = pytest.mark.e2e


def invite(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [command_path("tonk-server"), "invite", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


# -- the door's port --------------------------------------------------------------------------


def test_the_door_s_port_0_is_the_same_port_on_every_restart(tmp_path: Path) -> None:
    first = DoorServer(tmp_path)
    try:
        door, table_port = first.port, first.tcp_port
    finally:
        first.stop()
    second = DoorServer(tmp_path)
    try:
        assert (second.port, second.tcp_port) == (door, table_port)
        # A guest's ssh command from their shell history works again.
        claim_and_quit(second.port, make_key(tmp_path, "ann"), "ann")
    finally:
        second.stop()


def test_a_kept_door_port_taken_meanwhile_gives_a_free_one_with_a_line(tmp_path: Path) -> None:
    first = DoorServer(tmp_path)
    door = first.port
    first.stop()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", door))
        squatter.listen()
        second = DoorServer(tmp_path)
        try:
            moved = second.port
            assert moved != door
            log = second.server_log()
        finally:
            second.stop()
    assert f"port {door}, where the SSH door of" in log
    assert "listening on a free port instead; guests must be told it" in log
    # Kept from then on: the next start takes the new one.
    third = DoorServer(tmp_path)
    try:
        assert third.port == moved
    finally:
        third.stop()


async def test_tonk_client_pointed_at_the_door_says_to_use_ssh(tmp_path: Path) -> None:
    server = DoorServer(tmp_path)
    term = Term(100, 24)
    try:
        term.start(
            [command_path("tonk-client"), f"127.0.0.1:{server.port}", "--name", "Ann"],
            {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")},
        )
        assert await term.wait_exit() == 1
        text = " ".join(term.raw().decode("utf-8", "replace").split())
    finally:
        term.close()
        server.stop()
    assert (
        f"tonk-client: 127.0.0.1:{server.port} is an SSH server (tonk-server's SSH door, say), "
        f"not the port tonk-client plays on: connect with ssh -t -p {server.port} "
        "YOUR-NAME@127.0.0.1, or give tonk-client the server's other port" in text
    ), text[-600:]
    assert "bytes is over the limit" not in text


# -- tonk-server invite -----------------------------------------------------------------------


def test_invite_tells_the_ports_the_fingerprint_and_the_commands(tmp_path: Path) -> None:
    server = DoorServer(tmp_path)
    try:
        running = invite("--db", str(server.db))
        door, table_port, fingerprint = server.port, server.tcp_port, server.fingerprint
    finally:
        server.stop()
    assert running.returncode == 0, running.stderr
    lines = running.stdout.splitlines()
    assert lines[0] == f"tonk-server is running on {server.db} now."
    # The server listened on 127.0.0.1 only: that is the address to tell.
    assert "This machine: 127.0.0.1" in lines
    assert f"  ssh -t -p {door} YOUR-NAME@127.0.0.1" in lines
    assert f"  ssh -t -p {door} YOUR-NAME@127.0.0.1 join TABLE" in lines
    assert f"  tonk-client 127.0.0.1:{table_port}" in lines
    assert f"  tonk-client 127.0.0.1:{table_port} --table TABLE" in lines
    assert any("YOUR-NAME is the name each friend plays under" in line for line in lines)
    assert any(line.endswith(f"ED25519 key fingerprint must be {fingerprint}") for line in lines)
    # How a friend makes the SSH key the door lets in.
    assert "ssh-keygen -t ed25519" in running.stdout

    stopped = invite("--db", str(server.db), "--host", "tonkbox")
    assert stopped.returncode == 0, stopped.stderr
    lines = stopped.stdout.splitlines()
    assert lines[0].startswith(f"tonk-server is not running on {server.db}: these are the ports")
    assert f"  ssh -t -p {door} YOUR-NAME@tonkbox" in lines
    assert f"  tonk-client tonkbox:{table_port}" in lines
    assert any(fingerprint in line for line in lines)


def test_invite_names_the_open_table_quoted_and_says_when_there_is_no_door(
    tmp_path: Path,
) -> None:
    with tonk_server(tmp_path, "--port", "0") as port:
        import asyncio

        async def create() -> None:
            ann = await NetClient.connect(port, "Ann")
            await ann.create_table(name="Friday night", seats=3)
            await ann.close()

        asyncio.run(create())
        said = invite("--db", str(tmp_path / "server.db"))
    assert said.returncode == 0, said.stderr
    lines = said.stdout.splitlines()
    assert f"  tonk-client 127.0.0.1:{port} --table 'Friday night'" in lines
    assert any(line.startswith("No SSH door has been opened on this database") for line in lines)
    assert not any("ssh -t" in line for line in lines)


def test_invite_of_a_database_that_is_not_there_says_so(tmp_path: Path) -> None:
    said = invite("--db", str(tmp_path / "none.db"))
    assert said.returncode == 2
    assert said.stderr.strip() == f"tonk-server invite: no database at {tmp_path / 'none.db'}"


def test_the_lan_s_addresses_come_first_and_loopback_only_when_there_is_nothing_else() -> None:
    assert ordered(["127.0.1.1", "fe80::1%eth0", "192.168.1.5", "::1", "2001:db8::5"]) == [
        "192.168.1.5",
        "2001:db8::5",
    ]
    assert ordered(["127.0.1.1", "::1", "192.168.1.5", "192.168.1.5"]) == ["192.168.1.5"]
    assert ordered(["127.0.1.1", "::1"]) == ["127.0.1.1", "::1"]
    assert ordered([]) == ["127.0.0.1"]


# -- a table by name --------------------------------------------------------------------------


def info(number: int, name: str, state: m.TableState, taken: int, mine: bool = False) -> TableInfo:
    return TableInfo(str(number), name, "classic", 1, "", taken, 4, state, 0, mine=mine)


def test_a_table_is_found_by_its_name_in_any_case_the_exact_one_first() -> None:
    waiting, playing = m.TableState.WAITING, m.TableState.PLAYING
    tables = [
        info(1, "friday", playing, 4),
        info(2, "Friday", waiting, 4),
        info(3, "FRIDAY", waiting, 2),
        info(4, "Saturday", waiting, 1),
    ]
    assert named(tables, "Friday") == tables[1]
    assert named(tables, "fRiDaY") == tables[2]  # none exact: the one with a seat free
    assert named(tables, "  saturday ") == tables[3]
    assert named(tables, "Sunday") is None
    held = [info(1, "Kitchen", playing, 4), info(2, "Kitchen", playing, 4, mine=True)]
    assert named(held, "Kitchen") == held[1]
    assert named([info(1, "Gone", m.TableState.FINISHED, 2)], "Gone") is None


def client(tmp_path: Path, port: int, name: str, table: str) -> Term:
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", name, "--table", table],
        {"LANG": "C.UTF-8", "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    return term


async def test_table_takes_a_free_seat_watches_a_full_table_and_says_which(
    tmp_path: Path,
) -> None:
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        ann = await NetClient.connect(port, "Ann")
        terms: list[Term] = []
        try:
            await ann.create_table(name="Friday night", seats=3, seed=3)
            bob = client(tmp_path, port, "Bob", "friday NIGHT")
            terms.append(bob)
            await bob.wait_for_all("You sit at Friday night", "seat was free", "Bob (you)")
            cy = client(tmp_path, port, "Cy", "Friday night")
            terms.append(cy)
            # Cy takes the last seat: the game starts.
            await cy.wait_for_all("You sit at Friday night", "Your hand")
            dee = client(tmp_path, port, "Dee", "Friday night")
            terms.append(dee)
            screen = await dee.wait_for_all("Friday night is full", "are watching", "started).")
            assert "Your hand" not in screen

            # Cy's terminal goes; started again with --table, Cy is back in the same seat.
            cy.close()
            cy = client(tmp_path, port, "Cy", "FRIDAY night")
            terms.append(cy)
            await cy.wait_for_all("Back in your seat at", "Friday night.", "Your hand")
        finally:
            for term in terms:
                term.close()
            await ann.close()


async def test_table_of_a_name_nobody_gave_says_so_and_shows_the_lobby(tmp_path: Path) -> None:
    with tonk_server(tmp_path) as port:
        ann = await NetClient.connect(port, "Ann")
        await ann.create_table(name="Friday", seats=3)
        term = client(tmp_path, port, "Bob", "Fryday")
        try:
            await term.wait_for_all("No such table", "Fryday", "playing as Bob", "Friday ")
            term.keys("Enter")  # the lobby works: sit at Friday (Ann's, of 3 seats)
            # (The log's "At table Friday." is under the notice until it goes, 10 s later.)
            await term.wait_for_all("Bob (you)", "Ann", "1 of 3 seats open")
        finally:
            term.close()
            await ann.close()


def test_table_without_a_server_is_refused_with_a_line(tmp_path: Path) -> None:
    said = subprocess.run(
        [command_path("tonk-client"), "--table", "Friday"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"XDG_STATE_HOME": str(tmp_path), "HOME": str(tmp_path)},
    )
    assert said.returncode == 2
    assert "--table NAME joins a table on a server: give its HOST[:PORT] too" in said.stderr


def test_invite_says_when_the_door_was_not_opened_last_time(tmp_path: Path) -> None:
    server = DoorServer(tmp_path)
    door = server.port
    server.stop()
    # The same database, served without the door.
    process = subprocess.Popen(
        [command_path("tonk-server"), "--host", "127.0.0.1", "--port", "0", "--db", str(server.db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("tonk-server listening on")
        hint = process.stdout.readline().strip()
        assert hint == f"tonk-server invite --db {server.db} prints what to tell the friends"
        said = invite("--db", str(server.db))
    finally:
        process.terminate()
        process.wait(15)
    lines = said.stdout.splitlines()
    assert (
        "The SSH door is not open: the server runs without --ssh-port (it was on port "
        f"{door} before; --ssh-port 0 opens it there again, for these commands):" in lines
    )
    assert f"  ssh -t -p {door} YOUR-NAME@127.0.0.1" in lines
