"""The SSH door with OpenSSH's own client on a pseudo-terminal, against `tonk-server
--ssh-port 0` on loopback: what a player with only `ssh` sees and does."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netclient import NetClient
from sshkit import (
    DoorServer,
    SSHTerminal,
    claim_and_quit,
    door_server,
    make_key,
    refused,
    require_tool,
)
from termkit import command_path, mouse_modes_left_on

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def one_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DoorServer]:
    """One `tonk-server` with its SSH door for the module's tests that read neither the whole
    of its log nor its folder (a server's start and its sessions' template take a second or
    more): each test has names of its own, and its keys and known_hosts in its tmp_path."""
    with door_server(tmp_path_factory.mktemp("door")) as server:
        yield server


@pytest.fixture
def door(one_server: DoorServer) -> DoorServer:
    """The module's server, its log read from this test's start."""
    assert one_server.proc.poll() is None, (
        f"the module's server stopped:\n{one_server.server_log()}"
    )
    one_server.log_from_here()
    return one_server


@pytest.fixture
def own_door(tmp_path: Path) -> Iterator[DoorServer]:
    """A server of the test's own, its log and folder read whole."""
    with door_server(tmp_path) as server:
        yield server


def test_a_new_key_claims_its_name_and_q_in_the_lobby_closes_the_session(
    own_door: DoorServer, tmp_path: Path
) -> None:
    door = own_door
    key = make_key(tmp_path, "ann_key")
    term = SSHTerminal(door.port, key, "ann")
    try:
        term.wait_for(r"tonk · lobby · 127\.0\.0\.1 · playing as ann")
        term.wait_for(r"No tables yet")
        term.press(b"q")
        assert term.wait_exit() == 0
    finally:
        term.kill()
    # The host key ssh was shown is the one tonk-server printed.
    known = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(tmp_path / "known_hosts")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert door.fingerprint in known
    assert "claimed by key" in door.server_log()
    assert "Warning" not in door.server_log()  # (nothing for the host to worry about)


def test_another_key_under_a_claimed_name_is_refused_with_one_clear_line(
    door: DoorServer, tmp_path: Path
) -> None:
    abe = make_key(tmp_path, "abe_key")
    mallory = make_key(tmp_path, "mallory_key")
    claim_and_quit(door.port, abe, "abe")
    said = refused(door.port, mallory, "Abe")  # a name is claimed in any case
    refusals = [line for line in said.splitlines() if line.startswith("tonk:")]
    assert refusals == [
        "tonk: the name abe belongs to another key on this server: use your own name "
        f"(ssh -p {door.port} NAME@127.0.0.1)"
    ]
    assert "playing as" not in said


def test_a_player_plays_a_move_resizes_drops_and_is_back_in_the_seat_mid_hand(
    door: DoorServer, tmp_path: Path
) -> None:
    key = make_key(tmp_path, "bea_key")
    term = SSHTerminal(door.port, key, "bea", "practice", cols=100, rows=30)
    try:
        term.wait_for(r"Your turn: d draw", timeout=60)
        # The drop's question: tonk-client's options are the server's, not a guest's to give.
        term.press(b"k")
        term.wait_for(r"a: drop, and stop asking")
        assert "--no-confirm-drop" not in term.text()
        term.press(b"n")  # keep playing
        term.press(b"d")
        term.wait_for(r"Your turn: x discard")
        assert "bea" in term.text()
        # The table follows the terminal's size: its key bar moves to the new last line.
        assert "Leave" in term.screen.display[29]
        term.resize(120, 40)
        term.pump(1.0)
        term.wait_for(r"Your turn: x discard")
        for _ in range(50):
            if "Leave" in term.screen.display[39]:
                break
            term.pump(0.1)
        assert "Leave" in term.screen.display[39], term.text()
    finally:
        term.kill()  # the connection drops mid-hand, in the middle of bea's turn
    # Nothing turned the mouse off in bea's terminal, but it reports clicks only: no stream of
    # control characters at every move of the mouse.
    assert mouse_modes_left_on(term.output) == {1000, 1006}
    back = SSHTerminal(door.port, key, "bea", cols=100, rows=30)
    try:
        # Straight back to the seat, the card drawn still to discard: no lobby on the way.
        back.wait_for(r"Your turn: x discard", timeout=30)
        assert "lobby" not in back.text()
        back.press(b"x")
        back.wait_for(r"bea discards|to play", timeout=15)
    finally:
        back.kill()


def test_a_guest_whose_ssh_dropped_comes_back_to_the_log_they_saw(
    own_door: DoorServer, tmp_path: Path
) -> None:
    """The server keeps no chat, and the door holds seats in memory: the guest's log is kept
    by the door's sessions in a folder of the server's own, private to its user."""
    door = own_door
    key = make_key(tmp_path, "cal_key")
    term = SSHTerminal(door.port, key, "cal", "practice", cols=80, rows=24)
    try:
        term.wait_for(r"Your turn: d draw", timeout=60)
        term.press(b"c")
        term.pump(0.5)
        term.press(b"tea, anyone?\r")
        term.wait_for(r"<cal> tea, anyone\?")
        term.press(b"d")
        drew = term.wait_for(r"You drew (\S+)").group(1)
    finally:
        term.kill()  # the connection drops
    back = SSHTerminal(door.port, key, "cal", cols=80, rows=24)
    try:
        back.wait_for(r"Your turn: x discard", timeout=30)
        back.wait_for(r"<cal> tea, anyone\?")
        back.wait_for(r"Back at table cal's practice\.")
        assert back.text().count(f"You drew {drew}") == 1  # and not logged twice
    finally:
        back.kill()
    logs = tmp_path / "door_door_logs"
    assert logs.stat().st_mode & 0o777 == 0o700
    kept = list(logs.glob("*.json"))
    assert len(kept) == 1 and kept[0].stat().st_mode & 0o777 == 0o600


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_ssh_n_with_a_forward_is_refused_and_closed_with_one_line(tmp_path: Path) -> None:
    require_tool("ssh", "openssh-client")
    server = DoorServer(tmp_path, "--limit", "ssh_login_timeout=3")
    key = make_key(tmp_path, "ann_key")
    local = _free_port()
    term = SSHTerminal(
        server.port, key, "ann", options=("-N", "-L", f"{local}:127.0.0.1:{server.tcp_port}")
    )
    try:
        # ssh listens on `local` once logged in; what comes through is refused by the door.
        end = time.monotonic() + 15
        while True:
            try:
                probe = socket.create_connection(("127.0.0.1", local), timeout=1)
                break
            except OSError:
                if time.monotonic() > end:
                    raise
                term.pump(0.1)
        with probe:
            probe.settimeout(10)
            assert probe.recv(100) == b""  # closed, nothing from the game server
        status = term.wait_exit(timeout=20)
        said = term.output.decode("utf-8", "replace")
    finally:
        term.kill()
        server.stop()
    assert status == 255
    assert "open failed: administratively prohibited: tonk: this server forwards nothing" in said
    assert (
        "tonk: this server opens the table and nothing else, and no table was asked for: "
        f"ssh -t -p {server.port} ann@127.0.0.1 (without -N)" in said
    )
    assert "connection #" not in server.server_log()  # nothing reached the game server


def _names(server: DoorServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [command_path("tonk-server"), "names", *args, "--db", str(server.db)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_host_lists_the_names_and_releases_one_for_a_new_key_while_serving(
    door: DoorServer, tmp_path: Path
) -> None:
    lost = make_key(tmp_path, "lost_key")
    new = make_key(tmp_path, "new_key")
    claim_and_quit(door.port, lost, "dan")
    listed = _names(door)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert rows[0].split() == ["name", "claimed", "tables", "held", "by"]
    assert _row(rows, "dan").endswith(_fingerprint(lost))
    released = _names(door, "release", "DAN")
    assert released.returncode == 0, released.stderr
    assert released.stdout.startswith(f"released dan (key {_fingerprint(lost)})")
    # The server, still running, lets go of the name within seconds.
    end = time.monotonic() + 20
    while "ssh door: dan is free again" not in door.server_log():
        assert time.monotonic() < end, door.server_log()
        time.sleep(0.1)
    claim_and_quit(door.port, new, "dan")
    assert _row(_names(door).stdout.splitlines(), "dan").endswith(_fingerprint(new))
    missing = _names(door, "release", "bob")
    assert missing.returncode == 2
    assert "nobody has claimed the name 'bob'" in missing.stderr


def _row(rows: list[str], name: str) -> str:
    """The names list's one row for `name` (the module's other tests claim names too)."""
    (row,) = [row for row in rows[1:] if row.split()[0] == name]
    return row


def _fingerprint(key: Path) -> str:
    out = subprocess.run(
        ["ssh-keygen", "-l", "-E", "sha256", "-f", f"{key}.pub"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()[1]


def test_a_player_whose_ssh_has_no_key_is_told_how_to_make_one(
    door: DoorServer, tmp_path: Path
) -> None:
    key = make_key(tmp_path, "unused_key")  # known_hosts beside it; the key is not offered
    said = refused(door.port, key, "ed", options=("-o", "PubkeyAuthentication=no"), batch=False)
    lines = [line for line in said.splitlines() if line.startswith("tonk:")]
    assert lines == [
        "tonk: this server lets players in by their SSH key, and your ssh has none: make one "
        "with ssh-keygen -t ed25519 (press Enter at each question), then ssh again"
    ]
    assert "Permission denied (publickey)" in said
    assert "password:" not in said.lower()


def test_a_compressed_link_survives_a_burst_of_resizes_and_plays_on(
    door: DoorServer, tmp_path: Path
) -> None:
    # `ssh -C`, and a window dragged to and fro: forty size changes with no pause between
    # them. The link stays up, the table follows the last size, and the next key plays.
    key = make_key(tmp_path, "cy_key")
    term = SSHTerminal(door.port, key, "cy", "practice", cols=100, rows=30, options=("-C",))
    try:
        term.wait_for(r"Your turn: d draw", timeout=60)
        sizes = [(80 + (i * 7) % 60, 24 + (i * 5) % 26) for i in range(40)]
        for cols, rows in sizes:
            term.resize(cols, rows)
        term.resize(90, 28)
        # The table has followed every size once nothing more comes for a second (a frame
        # drawn for a size on the way can pass for the last one while more are queued).
        quiet = 0
        for _ in range(200):
            before = len(term.output)
            term.pump(0.1)
            quiet = quiet + 1 if len(term.output) == before else 0
            settled = "Leave" in term.screen.display[27] and "Your turn: d draw" in term.text()
            if quiet >= 10 and settled:
                break
        assert "Leave" in term.screen.display[27], term.text()
        assert term.proc.isalive()
        term.press(b"d")
        term.wait_for(r"Your turn: x discard")
    finally:
        term.kill()


async def test_join_with_a_name_of_two_words_unquoted_takes_a_free_seat(
    door: DoorServer, tmp_path: Path
) -> None:
    flo = await NetClient.connect(door.tcp_port, "Flo")
    key = make_key(tmp_path, "bo_key")
    try:
        await flo.create_table(name="Friday night", seats=3)
        # What the guest types: ssh ... join Friday night (ssh sends "join Friday night").
        term = SSHTerminal(door.port, key, "bo", "join", "friday", "night")
        try:
            term.wait_for(r"You sit at Friday night")
            term.wait_for(r"bo +\(you\)")
        finally:
            term.kill()
    finally:
        await flo.close()


def test_a_flood_into_the_terminal_ends_the_session_with_one_line(
    door: DoorServer, tmp_path: Path
) -> None:
    key = make_key(tmp_path, "fay_key")
    term = SSHTerminal(door.port, key, "fay")
    try:
        term.wait_for(r"playing as fay")
        # A program writing into the player's terminal, as fast as ssh takes it: half a
        # megabyte of letters (the writes never wait: ssh stops reading once it is closed).
        os.set_blocking(term.proc.fd, False)
        sent = 0
        end = time.monotonic() + 20
        while sent < 512 * 1024 and term.proc.isalive() and time.monotonic() < end:
            with contextlib.suppress(BlockingIOError):
                sent += os.write(term.proc.fd, b"a" * 4096)
            term.pump(0.001)
        status = term.wait_exit(timeout=20)
        said = term.output.decode("utf-8", "replace")
    finally:
        term.kill()
    assert status == 1
    assert (
        "tonk: more came from your terminal than a player sends (over 2048 bytes a second, "
        "or 8192 at once): goodbye" in said
    )
