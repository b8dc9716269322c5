"""Every error path of the protocol against a real server: each gets its documented error, and
the server goes on serving a table that is playing meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import gc
import logging
import socket
import sys
import termios
from collections.abc import AsyncIterator

import msgpack
import pytest
from netclient import NetClient, start_server
from tonk.server.app import TonkServer
from tonk.shared.wire import protocol as p


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


@contextlib.asynccontextmanager
async def busy_table(server: TonkServer) -> AsyncIterator[NetClient]:
    """A table of bots with a spectator, playing hand after hand while a test misbehaves;
    on exit, checks it went on playing."""
    host = await NetClient.connect(server.port, "Host")
    table = await host.create_table(None, "sharp", name="busy", seats=3, seed=1)
    await host.request({"type": "leave"}, p.LEFT)  # Host's seat is played for it from now on
    watcher = await NetClient.connect(server.port, "Watcher")
    await watcher.request({"type": "watch", "table": table}, p.WATCHING)
    await watcher.expect(p.HAND_END)
    yield watcher
    # Two more hands, counted as they are taken: `received` also holds what arrived but was
    # not taken yet, and counting that made the check fail whenever the hands came early.
    first = await watcher.expect(p.HAND_END)
    second = await watcher.expect(p.HAND_END)
    assert second["hand"] == first["hand"] + 1
    assert not any(m["type"] == p.ERROR for m in watcher.received)


FATAL_FRAMES = [
    pytest.param(frame(b""), p.BAD_FRAME, id="empty-frame"),
    pytest.param((1 << 20).to_bytes(4, "big"), p.FRAME_TOO_LARGE, id="oversized-frame"),
    pytest.param(frame(b"\xc1\xc1"), p.BAD_MSGPACK, id="not-msgpack"),
    pytest.param(frame(b"\x91" * 3000), p.BAD_MSGPACK, id="deeply-nested"),
    pytest.param(frame(msgpack.packb([1, 2, 3])), p.BAD_MESSAGE, id="not-a-map"),
    pytest.param(frame(msgpack.packb({"kind": "hello"})), p.BAD_MESSAGE, id="no-type"),
    pytest.param(frame(msgpack.packb({"type": "teleport"})), p.UNKNOWN_TYPE, id="unknown-type"),
    pytest.param(
        frame(msgpack.packb({"type": "hello", "version": "1", "name": "x"})),
        p.BAD_MESSAGE,
        id="wrong-field-type",
    ),
    pytest.param(
        frame(
            msgpack.packb(
                {"type": "hello", "version": p.PROTOCOL_VERSION, "name": "x", "admin": True}
            )
        ),
        p.BAD_MESSAGE,
        id="unknown-field",
    ),
    pytest.param(frame(msgpack.packb({"type": "list_tables"})), p.HELLO_FIRST, id="before-hello"),
]


@pytest.mark.parametrize(("data", "code"), FATAL_FRAMES)
async def test_bad_frames_get_an_error_and_a_closed_connection(tmp_path, data, code):
    async with start_server(tmp_path) as server, busy_table(server):
        bad = await NetClient.connect(server.port)
        await bad.send_raw(data)
        error = await bad.expect_error(code)
        assert error["fatal"] is True
        await bad.expect_closed()


async def test_bad_frames_after_the_handshake_too(tmp_path):
    async with start_server(tmp_path) as server, busy_table(server):
        for payload, code in [
            ({"type": "sit", "table": "one"}, p.BAD_MESSAGE),
            ({"type": "spread", "cards": [1, 2, 3]}, p.BAD_MESSAGE),
            ({"type": "hello", "version": p.PROTOCOL_VERSION, "name": "again"}, p.HELLO_FIRST),
        ]:
            client = await NetClient.connect(server.port, "Zed")
            await client.send_raw(frame(msgpack.packb(payload)))
            await client.expect_error(code)
            await client.expect_closed()


async def test_a_client_of_another_version_is_told_clearly(tmp_path):
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port)
        await client.send({"type": "hello", "version": 99, "name": "Future"})
        error = await client.expect_error(p.VERSION_MISMATCH)
        assert error["version"] == p.PROTOCOL_VERSION
        assert f"version {p.PROTOCOL_VERSION}" in error["message"]
        assert "version 99" in error["message"] and "newer" in error["message"]
        await client.expect_closed()


@pytest.mark.parametrize("old", [1, 2])
async def test_a_client_of_an_older_protocol_version_is_told_it_is_older(tmp_path, old):
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port)
        await client.send({"type": "hello", "version": old, "name": "Old", "id": 4})
        error = await client.expect_error(p.VERSION_MISMATCH)
        assert error["version"] == p.PROTOCOL_VERSION == 3
        assert f"version {old}, an older one" in error["message"]
        assert error["fatal"] and "reply_to" not in error
        await client.expect_closed()


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "bell\x07", "new\nline"])
async def test_bad_names_are_refused(tmp_path, name):
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port)
        await client.send({"type": "hello", "version": p.PROTOCOL_VERSION, "name": name})
        await client.expect_error(p.BAD_NAME)
        await client.expect_closed()


async def test_chat_must_be_printable_and_short(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send({"type": "chat", "text": "hi"})
        await alice.expect_error(p.NOT_AT_TABLE)
        await alice.create_table(name="t")
        for text in ["x" * 201, "two\nlines", "", "\x1b[31mred"]:
            await alice.send({"type": "chat", "text": text})
            await alice.expect_error(p.BAD_CHAT)
        await alice.send({"type": "chat", "text": "x" * 200})
        chat = await alice.expect(p.CHAT)
        assert chat["text"] == "x" * 200 and chat["seat"] == 0


async def test_table_requests_that_are_refused(tmp_path):
    async with start_server(tmp_path) as server, busy_table(server):
        alice = await NetClient.connect(server.port, "Alice")
        bob = await NetClient.connect(server.port, "Bob")
        for bad, code in [
            ({"rules": {"preset": "vegas"}}, p.BAD_RULES),
            ({"rules": {"preset": "classic", "caught_pays": 99}}, p.BAD_RULES),
            ({"rules": {"wild_cards": True}}, p.BAD_RULES),
            ({"seats": 5}, p.BAD_TABLE),  # classic seats at most 4
            ({"name": "\x00"}, p.BAD_TABLE),
            ({"name": "x" * 33}, p.BAD_TABLE),
            ({"deck": "As 2s"}, p.BAD_TABLE),
        ]:
            await alice.send({"type": "create_table", "name": "t", **bad})
            error = await alice.expect_error(code)
            assert error["fatal"] is False
        await alice.send({"type": "sit", "table": 999})
        await alice.expect_error(p.NO_SUCH_TABLE)
        table = await alice.create_table(name="t", seats=2)
        await alice.send({"type": "create_table", "name": "u"})
        await alice.expect_error(p.ALREADY_AT_TABLE)
        await bob.send({"type": "sit", "table": table, "seat": 0})
        await bob.expect_error(p.SEAT_TAKEN)
        await bob.send({"type": "sit", "table": table, "seat": 4})
        await bob.expect_error(p.NO_SUCH_SEAT)
        alice2 = await NetClient.connect(server.port, "Alice")
        await alice2.send({"type": "sit", "table": table})
        await alice2.expect_error(p.NAME_TAKEN)
        await alice.send({"type": "start"})
        await alice.expect_error(p.NOT_ENOUGH_PLAYERS)
        await alice.send({"type": "draw_stock"})
        await alice.expect_error(p.NO_HAND)
        await bob.request({"type": "sit", "table": table}, p.SEATED)  # full: starts
        carol = await NetClient.connect(server.port, "Carol")
        await carol.send({"type": "sit", "table": table})
        await carol.expect_error(p.ALREADY_STARTED)


async def test_a_refusal_out_of_range_says_what_was_wrong_not_the_whole(tmp_path):
    """A bad option is refused for that option (not "1 options"), a 14-card spread for its 14
    cards (not its length in characters)."""
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.send({"type": "create_table", "name": "t", "rules": {"stake_mode": "s" * 33}})
        error = await alice.expect_error(p.BAD_RULES)
        assert error["message"].endswith("not a value of 33 characters for 'stake_mode'")
        await alice.create_table(name="t")
        await alice.send({"type": "spread", "cards": " ".join(["As"] * 14)})
        error = await alice.expect_error(p.BAD_VALUE)
        assert error["message"].endswith("not 14 cards"), error["message"]


async def test_a_full_table_refuses_another_player(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        seated = await alice.request(
            {"type": "create_table", "name": "t", "seats": 2, "sit": False}, p.TABLE
        )
        table = seated["table"]["id"]
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table, "seat": 1}, p.SEATED)
        await alice.send({"type": "sit", "table": table, "seat": 1})
        await alice.expect_error(p.SEAT_TAKEN)
        # Not full yet: Carol takes the last seat and the table starts; nobody else fits.
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "sit", "table": table}, p.SEATED)
        dave = await NetClient.connect(server.port, "Dave")
        await dave.send({"type": "sit", "table": table})
        await dave.expect_error(p.ALREADY_STARTED)


async def test_table_full_before_the_start(tmp_path):
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table = await alice.create_table(name="t", seats=3)
        # Hold the start off by keeping a seat reserved for a player who dropped (grace).
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": table}, p.SEATED)
        server.tables[table].seats[2].kind = "human"  # a reserved seat, by hand
        server.tables[table].seats[2].name = "Reserved"
        carol = await NetClient.connect(server.port, "Carol")
        await carol.send({"type": "sit", "table": table})
        await carol.expect_error(p.TABLE_FULL)


async def test_dev_options_are_refused_without_dev(tmp_path):
    async with start_server(tmp_path, dev=False) as server:
        alice = await NetClient.connect(server.port, "Alice")
        welcome = alice.received[0]
        assert welcome["dev"] is False
        for dev in ({"seed": 1}, {"deck": "As"}, {"dealer": 0}):
            await alice.send({"type": "create_table", "name": "t", **dev})
            error = await alice.expect_error(p.DEV_ONLY)
            assert next(iter(dev)) in error["message"]
        await alice.create_table(name="t")


async def test_rate_limit(tmp_path):
    async with (
        start_server(tmp_path, limit_changes={"messages_per_second": 5, "burst": 10}) as server,
        busy_table(server),
    ):
        greedy = await NetClient.connect(server.port, "Greedy")
        for _ in range(30):
            await greedy.send({"type": "ping"})
        await greedy.expect_error(p.RATE_LIMITED)
        await greedy.expect_closed()
        pongs = sum(m["type"] == p.PONG for m in greedy.received)
        assert 8 <= pongs <= 10  # the burst (less the hello), then refused
        polite = await NetClient.connect(server.port, "Polite")
        await polite.request({"type": "list_tables"}, p.TABLES)


async def test_connection_limits(tmp_path):
    async with start_server(
        tmp_path, limit_changes={"max_per_address": 3, "max_connections": 4}
    ) as server:
        clients = [await NetClient.connect(server.port, f"P{i}") for i in range(3)]
        extra = await NetClient.connect(server.port)
        await extra.expect_error(p.TOO_MANY_CONNECTIONS)
        await extra.expect_closed()
        await clients[0].close()
        for _ in range(100):  # the server notices the close
            if len(server.connections) < 3:
                break
            await asyncio.sleep(0.01)
        again = await NetClient.connect(server.port, "Again")
        await again.request({"type": "list_tables"}, p.TABLES)


async def test_table_limit(tmp_path):
    async with start_server(tmp_path, limit_changes={"max_tables": 2}) as server:
        for i in range(2):
            client = await NetClient.connect(server.port, f"P{i}")
            await client.request({"type": "create_table", "name": f"t{i}"}, p.SEATED)
        third = await NetClient.connect(server.port, "P3")
        await third.send({"type": "create_table", "name": "t3"})
        await third.expect_error(p.TOO_MANY_TABLES)


async def test_one_address_may_open_only_so_many_tables_and_others_still_can(tmp_path):
    limits = {"max_tables_per_address": 2}
    async with start_server(tmp_path, limit_changes=limits) as server:
        for i in range(2):
            client = await NetClient.connect(server.port, f"P{i}")
            await client.request({"type": "create_table", "name": f"t{i}"}, p.SEATED)
        greedy = await NetClient.connect(server.port, "Greedy")
        await greedy.send({"type": "create_table", "name": "t3"})
        error = await greedy.expect_error(p.TOO_MANY_TABLES)
        assert "your address" in error["message"]
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.port, local_addr=("127.0.0.2", 0)
        )
        neighbour = NetClient(reader, writer)
        await neighbour.hello("Neighbour")
        await neighbour.create_table(name="t4")
        assert server.open_tables() == 3
        assert server.open_tables("127.0.0.1") == 2


async def test_handshake_timeout(tmp_path):
    async with start_server(tmp_path, limit_changes={"handshake_timeout": 0.2}) as server:
        silent = await NetClient.connect(server.port)
        await silent.expect_error(p.HANDSHAKE_TIMEOUT)
        await silent.expect_closed()


async def test_a_client_that_never_reads_is_dropped_without_slowing_others(tmp_path):
    async with (
        # (its pages wait until it has taken the ones before: it is dropped for taking none)
        start_server(tmp_path, limit_changes={"queue": 8, "unread_timeout": 1.0}) as server,
        busy_table(server) as watcher,
    ):
        for i in range(20):
            client = await NetClient.connect(server.port, f"T{i}")
            await client.request({"type": "create_table", "name": f"t{i}", "sit": False}, p.TABLE)
        hog = await NetClient.connect(server.port, "Hog")
        request = p.encode({"type": "list_tables"})
        with contextlib.suppress(ConnectionError):
            for _ in range(300):  # megabytes of answers it never reads
                hog.writer.write(request * 10)
                await hog.writer.drain()
                await asyncio.sleep(0)
        # The server dropped it: its connection count goes down, everybody else goes on.
        for _ in range(500):
            if not any(c.name == "Hog" for c in server.connections):
                break
            await asyncio.sleep(0.01)
        assert not any(c.name == "Hog" for c in server.connections)
        await watcher.expect(p.HAND_END)


def kernel_holds(sock: socket.socket) -> int:
    """Bytes the kernel holds in `sock`'s send queue (not sent, or not acknowledged)."""
    raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    return int.from_bytes(raw, sys.byteorder)


async def test_lobby_clients_that_never_read_are_counted_with_the_kernels_bytes_and_dropped(
    tmp_path,
):
    """Connections that enter the lobby, ask for pages and never read: what the kernel holds
    for each is counted and kept small, each is sent no page after page to hold, and each is
    dropped once it has taken nothing for `unread_timeout`, however little it was sent. The
    busy table plays on meanwhile."""
    limits = {"unread_timeout": 1.0, "max_tables_per_address": 100, "max_tables": 100}
    async with (
        start_server(tmp_path, limit_changes=limits) as server,
        busy_table(server) as watcher,
    ):
        host = await NetClient.connect(server.port, "Host")
        for number in range(60):  # a first page of some 60 KB
            await host.request(
                {"type": "create_table", "name": f"{number:02d} " + "n" * 29, "sit": False},
                p.TABLE,
            )
        silent = []
        hello = {"type": "hello", "version": p.PROTOCOL_VERSION}
        for number in range(20):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(p.encode({**hello, "name": f"S{number}"}))
            sock.sendall(p.encode({"type": "list_tables"}) * 15)
            silent.append(sock)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + 5
        while loop.time() < give_up and len(server.connections) < 23:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # every page it may be sent is with the kernel now
        held = [c for c in server.connections if c.name and c.name.startswith("S")]
        assert len(held) == 20
        for conn in held:
            # Bounded by a page's worth or two, not 15 pages (about 900 KB) in the kernel's
            # megabytes; and counted: what the kernel holds is part of what the server says waits.
            kernel = kernel_holds(conn.transport.get_extra_info("socket"))
            waiting = kernel + conn.transport.get_write_buffer_size()
            assert 0 < waiting < 300_000, (kernel, waiting)
            assert conn.unsent() >= waiting
        for _ in range(500):  # dropped for taking nothing, well before the idle timeout
            if not any(c.name and c.name.startswith("S") for c in server.connections):
                break
            await asyncio.sleep(0.02)
        assert not any(c.name and c.name.startswith("S") for c in server.connections)
        for sock in silent:
            sock.close()
        await watcher.expect(p.HAND_END)
        await host.close()


async def test_a_table_nobody_sits_at_is_closed_after_the_grace_period(tmp_path):
    async with start_server(tmp_path, grace=0.3) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "create_table", "name": "empty", "sit": False}, p.TABLE)
        listed = await alice.request({"type": "list_tables"}, p.TABLES)
        assert len(listed["tables"]) == 1
        for _ in range(300):
            if not server.tables:
                break
            await asyncio.sleep(0.01)
        listed = await alice.request({"type": "list_tables"}, p.TABLES)
        assert listed["tables"] == []


@pytest.mark.slow
async def test_tables_closed_by_themselves_leave_no_task_pending(tmp_path, caplog):
    """A table its own loop closes (nobody sat down) ends that loop: no "Task was destroyed
    but it is pending!" when the table is collected, and no table task left running."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    async with start_server(tmp_path, grace=0.2) as server:
        alice = await NetClient.connect(server.port, "Alice")
        for number in range(12):
            await alice.request(
                {"type": "create_table", "name": f"empty {number}", "sit": False}, p.TABLE
            )
        for _ in range(500):
            if not server.tables:
                break
            await asyncio.sleep(0.01)
        assert not server.tables
        await asyncio.sleep(0.05)  # a loop that ends on its own has ended by now
        gc.collect()
        tables = [t for t in asyncio.all_tasks() if t.get_name().startswith("table-")]
        assert tables == []
        listed = await alice.request({"type": "list_tables"}, p.TABLES)
        assert listed["tables"] == []
    gc.collect()
    destroyed = [r for r in caplog.records if "destroyed but it is pending" in r.getMessage()]
    assert destroyed == []


async def test_an_action_that_cannot_be_saved_is_not_accepted(tmp_path):
    from tonk.server.store.store import StoreError

    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        table_id = await alice.create_table(None, name="t", seats=2, seed=8, dealer=1)
        before = await alice.expect(p.UPDATE)
        assert before["view"]["turn"] == 0
        real_write = server.store.write

        async def failing_write(ops):
            raise StoreError("disk full")

        server.store.write = failing_write  # type: ignore[method-assign]
        await alice.send({"type": "draw_stock"})
        error = await alice.expect_error(p.STORAGE_ERROR)
        assert error["fatal"] is False
        table = server.tables[table_id]
        assert (
            table.play.hand is not None
            and len(table.play.hand.events) == before["view"]["event_count"]
        )
        server.store.write = real_write  # type: ignore[method-assign]
        # A write that fails alone (its own fault, not the storage's) refuses that request and
        # no other: the table is not paused, and the same action goes through next time.
        assert table.store.paused is None
        await alice.send({"type": "draw_stock"})
        after = await alice.expect(p.UPDATE)
        assert after["from"] == before["view"]["event_count"]
        assert after["events"][0]["kind"] == "draw_stock"
