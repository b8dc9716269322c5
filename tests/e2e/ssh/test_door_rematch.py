"""A rematch through the SSH door: two guests whose session ends press r, and both are seated
at the rematch, the door keeping that seat as theirs (the key is their proof, not a token)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from netclient import one_hand_table
from test_ssh_door import connect, new_key, running_door, screen_of, terminal

pytestmark = pytest.mark.e2e


async def test_two_guests_press_r_and_are_seated_at_the_rematch(tmp_path: Path) -> None:
    async with running_door(tmp_path) as (server, door):
        first = await one_hand_table(server.port)
        guests = []
        for name in ("ann", "bob"):
            conn, _ = await connect(door, name, new_key())
            process = await terminal(conn)
            await screen_of(process, "Kitchen")
            process.stdin.write(b"\r")
            guests.append((conn, process))
        for _, process in guests:
            await screen_of(process, "enter: the final standings")  # the last hand's window
            process.stdin.write(b"\r")
            await screen_of(process, "Settle up:")
        for _, process in guests:
            process.stdin.write(b"r")
        loop = asyncio.get_running_loop()
        end = loop.time() + 20
        while not any(t.rematch.of == first for t in server.tables.values()):
            assert loop.time() < end, "no rematch was opened"
            await asyncio.sleep(0.05)
        rematch = next(t for t in server.tables.values() if t.rematch.of == first)
        while not all(seat.conn is not None for seat in rematch.seats):
            assert loop.time() < end, "the guests were not seated at the rematch"
            await asyncio.sleep(0.05)
        assert [seat.conn.door_name for seat in rematch.seats if seat.conn] == ["ann", "bob"]
        for name in ("ann", "bob"):
            while rematch.id not in [s.table_id for s in server.door_names.seats(name)]:
                assert loop.time() < end, f"the door did not keep {name}'s new seat"
                await asyncio.sleep(0.05)
        for conn, process in guests:
            process.stdin.write(b"q")
            conn.close()
