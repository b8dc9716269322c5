"""The terminal bell through the SSH door, with OpenSSH's own client: a guest's turn left
untouched rings it once; `ssh ... nobell` turns it off (the door's `tonk-client --no-bell`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from netclient import NetClient
from sshkit import DoorServer, SSHTerminal, door_server, make_key
from test_client_waiting import bells
from tonk.server.doors.door_request import bell_choice

pytestmark = pytest.mark.e2e

SEED = 1


@pytest.fixture
def door(tmp_path: Path) -> Iterator[DoorServer]:
    """`tonk-server` with its SSH door, and --dev: the table's first dealer is chosen."""
    with door_server(tmp_path, "--dev") as server:
        yield server


def friday_with_a_bot(port: int) -> None:
    """Bob makes a three-seat table with a 4 s turn timer and a bot, and loses the link (his
    seat waits for him): the guest who sits next fills it, and plays first (the bot deals;
    the deck from a seed, with no tonk at the deal)."""

    async def make() -> None:
        bob = await NetClient.connect(port, "Bob")
        await bob.create_table("easy", name="Friday", seats=3, turn_timer=4, dealer=1, seed=SEED)
        await bob.expect("table", lambda m: m["table"]["players"][1]["kind"] == "bot")
        await bob.close()

    asyncio.run(make())


def seated_guest(door: DoorServer, tmp_path: Path, *command: str) -> SSHTerminal:
    friday_with_a_bot(door.tcp_port)
    term = SSHTerminal(door.port, make_key(tmp_path, "cy_key"), "cy", *command)
    term.wait_for(r"Friday")
    term.press(b"\r")
    term.wait_for(r"Your turn", timeout=60)
    return term


def test_a_guests_turn_left_waiting_rings_the_bell_once(door: DoorServer, tmp_path: Path) -> None:
    term = seated_guest(door, tmp_path)
    try:
        before = bells(term.output)
        term.wait_for(r"Press any key to come back", timeout=60)
        assert bells(term.output) == before + 1
    finally:
        term.kill()


def test_nobell_after_the_host_turns_the_bell_off(door: DoorServer, tmp_path: Path) -> None:
    term = seated_guest(door, tmp_path, "nobell")
    try:
        # The turn ran out (past the moment the bell would have rung): still no bell.
        term.wait_for(r"Press any key to come back", timeout=60)
        assert bells(term.output) == 0
    finally:
        term.kill()


@pytest.mark.parametrize(
    ("command", "left", "bell"),
    [
        (None, None, True),
        ("practice 3", "practice 3", True),
        ("nobell", "", False),
        ("nobell practice 3", "practice 3", False),
        ("practice nobell", "practice", False),
    ],
)
def test_the_word_nobell_anywhere_in_the_command_turns_the_bell_off(command, left, bell):
    assert bell_choice(command) == (left, bell)
