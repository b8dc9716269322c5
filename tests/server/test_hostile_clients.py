"""Hostile and broken clients against a real server while a bot table keeps playing: each gets a
clear error where its connection can still carry one, and a closed connection; the bot table's
hands go on and its ledger stays exact. (tests/server/test_server_errors.py has the simple one-frame
cases; these are the rest.)"""

from __future__ import annotations

import asyncio
import contextlib
import random
import resource
import socket
import sqlite3
from typing import Any

import msgpack
import pytest
from netclient import NetClient, start_server
from reliakit import (
    LiveClient,
    PlayingTable,
    check_still_playing,
    frame,
    ledger_problems,
    table_keeps_playing,
    wait_until,
)
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import validate_server

#: What a broken stream may be told: the framing and shape errors, all fatal.
STREAM_ERRORS = {
    p.BAD_FRAME,
    p.FRAME_TOO_LARGE,
    p.BAD_MSGPACK,
    p.BAD_MESSAGE,
    p.UNKNOWN_TYPE,
    p.HELLO_FIRST,
}


def hello() -> bytes:
    return p.encode({"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": "Noise"})


async def the_end(client: NetClient) -> dict[str, Any]:
    """Read to the server's close; the last message must be a fatal error: return it."""
    await client.expect_closed()
    errors = [m for m in client.received if m["type"] == p.ERROR]
    assert errors, client.received
    assert errors[-1]["fatal"] is True and client.received[-1] is errors[-1]
    return errors[-1]


async def test_random_bytes_are_refused_and_the_connection_closed(tmp_path):
    rng = random.Random(20261129)
    async with start_server(tmp_path) as server, table_keeps_playing(server):
        codes = set()
        for i in range(50):
            size = rng.randrange(1, 3000)
            blob = rng.randbytes(size)
            data = [
                blob,  # noise from the first byte
                frame(blob[: rng.randrange(1, 400)]),  # a good length, a noise payload
                hello() + blob,  # noise after the handshake
                hello() + frame(blob[:300]),
                frame(blob)[: rng.randrange(4, size + 4)],  # a frame cut short
            ][i % 5]
            client = await NetClient.connect(server.port)
            await client.send_raw(data)
            client.writer.write_eof()  # and nothing more: a cut-off frame is an error too
            error = await the_end(client)
            assert error["code"] in STREAM_ERRORS, error
            codes.add(error["code"])
        # The noise met several of the decoder's defences, not one.
        assert {p.FRAME_TOO_LARGE, p.BAD_MSGPACK} <= codes and len(codes) >= 3
        await wait_until(lambda: len(server.connections) == 2, "only the bot table's left")


async def test_truncated_frames(tmp_path):
    async with (
        start_server(
            tmp_path,
            limit_changes={"handshake_timeout": 0.3, "heartbeat": 0.2, "idle_timeout": 0.6},
        ) as server,
        table_keeps_playing(server),
    ):
        whole = p.encode({"type": "list_tables"})
        # Cut off, then the client shuts its side: told so (it can still read).
        for prefix in (b"", hello()):
            for cut in (2, 4, len(whole) - 1):
                client = await NetClient.connect(server.port)
                await client.send_raw(prefix + whole[:cut])
                client.writer.write_eof()
                error = await the_end(client)
                assert error["code"] == p.BAD_FRAME and "middle of a frame" in error["message"]
        # Cut off and left hanging: the handshake or the idle timeout closes it.
        client = await NetClient.connect(server.port)
        await client.send_raw(whole[:5])
        assert (await the_end(client))["code"] == p.HANDSHAKE_TIMEOUT
        client = await NetClient.connect(server.port, "Hanging")
        await client.send_raw(whole[:5])
        assert (await the_end(client))["code"] == p.IDLE_TIMEOUT


async def test_a_frame_trickled_a_byte_at_a_time_does_not_keep_a_connection(tmp_path):
    async with (
        start_server(tmp_path, limit_changes={"heartbeat": 0.2, "idle_timeout": 0.6}) as server,
        table_keeps_playing(server),
    ):
        slow = await NetClient.connect(server.port, "Loris")
        big = p.encode({"type": "chat", "text": "x" * 900})

        def still_there() -> bool:
            return any(c.name == "Loris" for c in server.connections)

        with contextlib.suppress(ConnectionError):
            for byte in big[:200]:  # a byte every 50 ms: 10 s for a frame that never ends
                slow.writer.write(bytes([byte]))
                await slow.writer.drain()
                await asyncio.sleep(0.05)
                if not still_there():
                    break
        assert not still_there()
        assert (await the_end(slow))["code"] == p.IDLE_TIMEOUT


async def test_a_client_still_sending_when_it_is_cut_off_still_reads_why(tmp_path):
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port, "Busy")
        client.writer.write(frame(b"\xc1"))  # never msgpack: the connection is closed
        # The client goes on writing for a while before it reads, as one busy sending would.
        # Had the server closed at once, these bytes would be answered with a reset, and the
        # reset could make the client's system drop the error unread.
        with contextlib.suppress(ConnectionError):
            for _ in range(30):
                client.writer.write(b"\x00" * 1000)
                await client.writer.drain()
                await asyncio.sleep(0.01)
        end = await the_end(client)
        assert end["code"] == p.BAD_MSGPACK


async def test_frames_at_and_over_the_size_limit(tmp_path):
    async with start_server(tmp_path) as server, table_keeps_playing(server):
        limit = server.config.limits.max_frame
        text = "x" * (limit - 20)
        payload = msgpack.packb({"type": "chat", "text": text})
        payload = msgpack.packb({"type": "chat", "text": text + "x" * (limit - len(payload))})
        assert len(payload) == limit
        at = await NetClient.connect(server.port, "AtLimit")
        await at.send_raw(frame(payload))  # taken in whole, then refused for its field
        error = await at.expect(p.ERROR)
        assert (error["code"], error["detail"], error["fatal"]) == (p.BAD_CHAT, "text", False)
        await at.request({"type": "ping", "n": 1}, p.PONG)  # and the connection goes on
        over = await NetClient.connect(server.port, "OverLimit")
        await over.send_raw(frame(payload + b"\x00")[:5])  # the prefix is enough to refuse
        assert (await the_end(over))["code"] == p.FRAME_TOO_LARGE


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


WRONG_SHAPES = [
    pytest.param({"type": "sit", "table": 1.0}, p.BAD_MESSAGE, id="float-for-int"),
    pytest.param({"type": "sit", "table": True}, p.BAD_MESSAGE, id="bool-for-int"),
    pytest.param({"type": "sit", "table": None}, p.BAD_MESSAGE, id="nil-required"),
    pytest.param({"type": "chat", "text": b"bytes"}, p.BAD_MESSAGE, id="bin-for-str"),
    pytest.param({"type": b"chat", "text": "x"}, p.BAD_MESSAGE, id="bin-type"),
    pytest.param({"type": ["chat"]}, p.BAD_MESSAGE, id="list-type"),
    pytest.param({"type": "spread", "cards": {"As": 1}}, p.BAD_MESSAGE, id="map-for-list"),
    pytest.param({"type": "spread", "cards": ["As"] * 500}, p.BAD_MESSAGE, id="long-list"),
    pytest.param({"type": "hit", "card": "As", "spread": "1"}, p.BAD_MESSAGE, id="str-for-int"),
    pytest.param(
        {"type": "create_table", "name": "t", "turn_timer": float("inf")},
        p.BAD_MESSAGE,
        id="infinity",
    ),
    pytest.param(
        {"type": "create_table", "name": "t", "rules": {"preset": ["classic"]}},
        p.BAD_MESSAGE,
        id="list-option",
    ),
    pytest.param(
        {"type": "create_table", "name": "t", "rules": nested(100)},
        p.BAD_MESSAGE,
        id="nested-maps-in-a-field",
    ),
    pytest.param({"type": "chat", "text": nested(500)}, p.BAD_MESSAGE, id="nested-500"),
    pytest.param(
        {"type": "chat", "text": "hi", **{f"k{i}": i for i in range(1000)}},
        p.BAD_MESSAGE,
        id="thousand-fields",
    ),
    pytest.param({"type": "x" * 10_000}, p.UNKNOWN_TYPE, id="long-unknown-type"),
    pytest.param({"type": "draw_stock", "seat": 1}, p.BAD_MESSAGE, id="for-another-seat"),
]


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"type": "sit", "table": 2**64 - 1}, id="uint64"),
        pytest.param({"type": "sit", "table": -(2**63)}, id="int64-min"),
    ],
)
async def test_integers_at_the_ends_of_msgpack_are_out_of_range_not_fatal(tmp_path, message):
    async with start_server(tmp_path) as server:
        client = await NetClient.connect(server.port, "Ends")
        await client.send_raw(frame(msgpack.packb({**message, "id": 3})))
        error = await client.expect(p.ERROR)
        assert (error["code"], error["detail"], error["fatal"]) == (p.NO_SUCH_TABLE, "table", False)
        assert error["reply_to"] == 3
        await client.request({"type": "ping"}, p.PONG)


@pytest.mark.parametrize(("message", "code"), WRONG_SHAPES)
async def test_valid_msgpack_of_the_wrong_shape_or_types(tmp_path, message, code):
    async with start_server(tmp_path) as server, table_keeps_playing(server, hands=1):
        client = await NetClient.connect(server.port, "Shapes")
        await client.send_raw(frame(msgpack.packb(message, use_bin_type=True)))
        error = await the_end(client)
        assert error["code"] == code, error


async def test_extension_types_and_bad_utf8_are_not_msgpack_we_take(tmp_path):
    async with start_server(tmp_path) as server, table_keeps_playing(server, hands=1):
        for payload in (
            msgpack.packb({"type": "chat", "text": msgpack.ExtType(1, b"x" * 100)}),
            b"\x82\xa4type\xa4chat\xa4text\xa3\xff\xfe\xfd",  # a str that is not UTF-8
            b"\x82\xa4type\xa4chat" + b"\x91" * 2000 + b"\x01",  # deeper than msgpack goes
        ):
            client = await NetClient.connect(server.port, "Ext")
            await client.send_raw(frame(payload))
            assert (await the_end(client))["code"] == p.BAD_MSGPACK


async def seated_pair(server: Any, **table: Any) -> tuple[NetClient, NetClient, int]:
    alice = await NetClient.connect(server.port, "Alice")
    seated = await alice.request(
        {"type": "create_table", "name": "pair", "seats": 2, "seed": 7, "dealer": 1, **table},
        p.SEATED,
    )
    bob = await NetClient.connect(server.port, "Bob")
    await bob.request({"type": "sit", "table": seated["table"]}, p.SEATED)
    for client in (alice, bob):
        await client.expect(p.UPDATE)
    return alice, bob, seated["table"]


def stored_actions(server: Any, table: int) -> list[str]:
    with contextlib.closing(sqlite3.connect(server.config.db_path)) as conn:
        rows = conn.execute(
            "SELECT action FROM actions WHERE table_id = ? ORDER BY hand, idx", (table,)
        )
        return [action for (action,) in rows]


async def test_actions_out_of_turn_duplicated_replayed_and_for_another_seat(tmp_path):
    async with start_server(tmp_path) as server, table_keeps_playing(server):
        alice, bob, table = await seated_pair(server)
        assert alice.seat_view().my_turn  # Bob deals; Alice plays first
        # Out of turn: Bob may not act for himself, and cannot name Alice's seat.
        await bob.send({"type": "draw_stock", "id": 1})
        assert (await bob.expect_error(p.ILLEGAL_ACTION))["detail"] == "not_your_turn"
        # The same draw twice in one write: the first is played, the copy refused.
        draw = p.encode({"type": "draw_stock", "id": 2})
        await alice.send_raw(draw + draw)
        drawn = await alice.expect(p.UPDATE)
        assert [e["kind"] for e in drawn["events"]] == ["draw_stock"]
        assert (await alice.expect_error(p.ILLEGAL_ACTION))["detail"] == "wrong_phase"
        assert len(stored_actions(server, table)) == 1
        # A discard, then replayed from a new connection that resumed the seat: refused.
        card = str(max(alice.seat_view().hand, key=lambda c: c.value))
        await alice.send({"type": "discard", "card": card})
        await alice.expect(p.UPDATE, lambda m: m["view"]["turn"] == 1)
        again = await NetClient.connect(server.port, "Alice")
        await again.request({"type": "resume", "table": table, "token": alice.token}, p.SEATED)
        await again.send({"type": "discard", "card": card})
        assert (await again.expect_error(p.ILLEGAL_ACTION))["detail"] == "not_your_turn"
        assert len(stored_actions(server, table)) == 2
        # An action naming a seat is not a message of this protocol: fatal, nothing played.
        await bob.send_raw(frame(msgpack.packb({"type": "draw_stock", "seat": 1})))
        assert (await the_end(bob))["code"] == p.BAD_MESSAGE
        assert len(stored_actions(server, table)) == 2


async def test_wrong_and_guessed_seat_tokens_get_no_seat(tmp_path):
    async with start_server(tmp_path) as server, table_keeps_playing(server) as busy:
        alice, _bob, table = await seated_pair(server)
        other = await NetClient.connect(server.port, "Other")
        seated = await other.request({"type": "create_table", "name": "other"}, p.SEATED)
        rng = random.Random(3)
        mallory = await NetClient.connect(server.port, "Mallory")
        assert alice.token is not None
        guesses = [
            "",
            " ",
            alice.token[:-1],
            alice.token + "x",
            alice.token.upper(),
            seated["token"],  # a real token, of another table
            "☃" * 64,
            *("".join(rng.choices("abcdefABCDEF0123456789-_", k=24)) for _ in range(20)),
        ]
        for guess in guesses:
            await mallory.send({"type": "resume", "table": table, "token": guess})
            assert (await mallory.expect_error(p.BAD_TOKEN))["fatal"] is False
        # A bot table's seat is no easier: its host's token is not a spectator's to guess.
        await mallory.send({"type": "resume", "table": busy.table, "token": alice.token})
        await mallory.expect_error(p.BAD_TOKEN)
        await mallory.send({"type": "draw_stock"})
        await mallory.expect_error(p.NOT_AT_TABLE)
        # A token over the size limit is out of range: refused as a bad token, not fatal.
        await mallory.send({"type": "resume", "table": table, "token": "x" * 65})
        error = await mallory.expect_error(p.BAD_TOKEN)
        assert (error["fatal"], error["detail"]) == (False, "token")
        assert stored_actions(server, table) == []


async def test_a_seated_player_flooding_actions_is_cut_off_and_the_game_goes_on(tmp_path):
    async with (
        start_server(
            tmp_path, grace=0.3, limit_changes={"messages_per_second": 20, "burst": 40}
        ) as server,
        table_keeps_playing(server),
    ):
        alice, bob, table = await seated_pair(server)
        flood = p.encode({"type": "draw_stock"}) * 200
        with contextlib.suppress(ConnectionError):
            await alice.send_raw(flood)
        error = await the_end(alice)
        assert error["code"] == p.RATE_LIMITED
        refused = [m for m in alice.received if m.get("code") == p.ILLEGAL_ACTION]
        assert 30 <= len(refused) < 60  # about the burst of 40 answered, then the cut
        # Her seat is held, then played for her; Bob's game goes on to the hand's end.
        await bob.expect(p.TABLE, lambda m: m["table"]["players"][0]["status"] == "away")
        end = await bob.play_until(lambda m: m["type"] == p.HAND_END, timeout=30)
        assert ledger_problems(server.config.db_path, table, [end]) == []


def raise_open_files(wanted: int) -> None:
    """Raise this process's open-file limit to `wanted` (the hard limit too, if allowed)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= wanted:
        return
    if hard == resource.RLIM_INFINITY or hard >= wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))  # root may
    except (ValueError, PermissionError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def open_from(address: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))


async def told(reader: asyncio.StreamReader, wait: float) -> str | None:
    """The error code a connection was sent (and closed with), or None if it sits open."""
    decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
    try:
        async with asyncio.timeout(wait):
            while True:
                data = await reader.read(65536)
                if not data:
                    return "closed"
                decoder.feed(data)
                for message in decoder.messages():
                    if message["type"] == p.ERROR:
                        return str(message["code"])
    except TimeoutError:
        return None


@pytest.mark.slow
async def test_thousands_of_idle_connections_meet_the_limits_and_the_table_plays_on(tmp_path):
    raise_open_files(4096)  # 1,210 connections, both ends in this process
    limits = {"max_connections": 1000, "max_per_address": 64, "handshake_timeout": 60.0}
    async with (
        start_server(tmp_path, limit_changes=limits) as server,
        table_keeps_playing(server) as busy,
    ):
        assert len(server.connections) == 2  # the bot table's host and watcher
        opened: list[tuple[str, asyncio.StreamReader, asyncio.StreamWriter]] = []

        async def batch(addresses: list[str]) -> None:
            for start in range(0, len(addresses), 100):
                chunk = addresses[start : start + 100]
                pairs = await asyncio.gather(*(open_from(a, server.port) for a in chunk))
                opened.extend((a, r, w) for a, (r, w) in zip(chunk, pairs, strict=True))

        # 70 from one address: 64 are let in, 6 refused. Then 1,140 from 19 others, 60 each:
        # the server's total of 1,000 is reached (2 + 64 + 934) and the last 206 refused.
        await batch(["127.0.0.2"] * 70)
        await batch([f"127.0.0.{3 + i % 19}" for i in range(19 * 60)])
        assert len(opened) == 1210
        await wait_until(lambda: len(server.connections) == 1000, "1,000 connections")
        # Half of those let in say hello and go quiet; the rest never say a word.
        for i, (_, _, writer) in enumerate(opened):
            if i % 2 == 0:
                writer.write(
                    p.encode({"type": "hello", "version": p.PROTOCOL_VERSION, "name": f"Idle{i}"})
                )
        answers = await asyncio.gather(*(told(r, 2.0) for _, r, _ in opened))
        refused = [opened[i][0] for i, code in enumerate(answers) if code is not None]
        assert set(answers) == {None, p.TOO_MANY_CONNECTIONS}
        assert refused.count("127.0.0.2") == 6 and len(refused) == 6 + 206
        assert len(server.connections) == 1000
        assert max(server._per_address.values()) == 64
        assert not [m for m in busy.watcher.received if m["type"] == p.ERROR]
        # Once they go, the counts go back down, and a newcomer gets in.
        for _, _, writer in opened:
            writer.close()
        await wait_until(lambda: len(server.connections) == 2, "the idle ones to go", 30)
        assert server._per_address == {"127.0.0.1": 2}
        late = await NetClient.connect(server.port, "Late")
        await late.request({"type": "list_tables"}, p.TABLES)


async def live_watcher(port: int, table: int) -> LiveClient:
    """A watcher of `table` that reads everything as it comes (and answers every ping)."""
    watcher = LiveClient(*await asyncio.open_connection("127.0.0.1", port))
    await watcher.hello("Watcher")
    await watcher.request({"type": "watch", "table": table}, p.WATCHING)
    watcher.pump()
    return watcher


async def small_buffered_client(port: int, name: str) -> NetClient:
    """A client whose socket takes in only 4 KiB before the server's writes to it back up."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    client = NetClient(reader, writer)
    await client.hello(name)
    return client


@pytest.mark.slow
async def test_a_client_that_never_reads_big_answers_is_dropped_by_bytes(tmp_path):
    """However few the frames, the bytes waiting for one connection are bounded too."""
    # (its pages wait until it has taken the ones before: it is dropped for taking none, once
    # `unread_timeout` is up, as test_server_errors's reader that never reads is; a second of
    # it, not the default ten, with the busy table playing all the while)
    limits = {"queue": 100_000, "queue_bytes": 256 * 1024, "unread_timeout": 1.0}
    async with start_server(tmp_path, limit_changes=limits) as server, table_keeps_playing(server):
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(30):
            await maker.request(
                {"type": "create_table", "name": f"{'☃' * 30}{i:02}", "sit": False}, p.TABLE
            )
        listing = await maker.request({"type": "list_tables"}, p.TABLES)
        size = len(p.encode(listing))
        assert size > 15_000
        hog = await small_buffered_client(server.port, "Hog")
        request = p.encode({"type": "list_tables"})
        with contextlib.suppress(ConnectionError):
            for _ in range(400):  # many megabytes of answers it never reads
                hog.writer.write(request * 4)
                await hog.writer.drain()
                await asyncio.sleep(0.001)
                if not any(c.name == "Hog" for c in server.connections):
                    break
        await wait_until(lambda: not any(c.name == "Hog" for c in server.connections), "the drop")


async def test_a_seated_player_who_never_reads_is_dropped_and_played_for(tmp_path):
    async with (
        start_server(tmp_path, grace=0.2, limit_changes={"queue": 32}) as server,
        table_keeps_playing(server),
    ):
        sleepy = await small_buffered_client(server.port, "Sleepy")
        # A small kernel buffer on the server's side too (no autotuning to megabytes): the
        # backlog reaches the server's own queue after a few hands, not a few hundred.
        [conn] = [c for c in server.connections if c.name == "Sleepy"]
        conn.writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        seated = await sleepy.request(
            {"type": "create_table", "name": "deaf", "seats": 3, "turn_timer": 0.05}, p.SEATED
        )
        await sleepy.send({"type": "add_bot"})
        await sleepy.send({"type": "add_bot", "strategy": "sharp"})
        watcher = await live_watcher(server.port, seated["table"])
        # Sleepy never reads again: the updates pile up until the server drops it; its seat
        # is held for the grace period and then played for it; the hands go on.
        await wait_until(lambda: not any(c.name == "Sleepy" for c in server.connections), "drop")
        dropped_at = max(
            (m["hand"] for m in watcher.received if m["type"] == p.HAND_END), default=0
        )

        def statuses() -> list[str]:
            tables = [m for m in watcher.received if m["type"] == p.TABLE]
            return [t["table"]["players"][0]["status"] for t in tables]

        playing = PlayingTable(seated["table"], watcher, sleepy)
        await check_still_playing(playing, server.config.db_path, 3, since=dropped_at)
        assert statuses()[-1] == "away"  # played for, until its player is back


@pytest.mark.slow
async def test_a_vanished_peer_is_found_by_heartbeats_and_its_seat_held_then_played(tmp_path):
    """A client that went away without a FIN: it answers no ping and never closes. The
    heartbeat finds it; its seat goes to the grace period, then is played for it."""
    limits = {"heartbeat": 0.2, "idle_timeout": 0.8}
    async with (
        start_server(tmp_path, grace=0.3, limit_changes=limits) as server,
        table_keeps_playing(server),
    ):
        ghost = await NetClient.connect(server.port, "Ghost")
        seated = await ghost.request(
            {"type": "create_table", "name": "ghost", "seats": 2, "seed": 2, "dealer": 1},
            p.SEATED,
        )
        await ghost.send({"type": "add_bot"})
        watcher = await live_watcher(server.port, seated["table"])
        # From here the ghost neither reads nor writes nor closes.
        await wait_until(lambda: not any(c.name == "Ghost" for c in server.connections), "found")

        def statuses() -> list[str]:
            tables = [m for m in watcher.received if m["type"] == p.TABLE]
            return [t["table"]["players"][0]["status"] for t in tables]

        await wait_until(lambda: "away" in statuses(), "the ghost's seat played for it")
        assert statuses().index("disconnected") < statuses().index("away")
        playing = PlayingTable(seated["table"], watcher, ghost)
        await check_still_playing(playing, server.config.db_path, 2, since=0)
        # What the ghost would find, if it ever read again: pings, then the reason, then EOF.
        error = await the_end(ghost)
        assert error["code"] == p.IDLE_TIMEOUT
        assert any(m["type"] == p.PING for m in ghost.received)


@pytest.mark.slow
async def test_a_lobby_too_big_for_one_frame_is_listed_whole_in_pages(tmp_path):
    """Tables with the longest names allowed, more than one frame can list: the lobby lists
    every one of them, a page at a time."""
    makers, each = 20, 100
    limits = {"max_tables": makers * each, "max_tables_per_address": makers * each}
    async with start_server(tmp_path, limit_changes=limits) as server:

        async def create(maker: int) -> None:
            client = await NetClient.connect(server.port, f"Maker{maker}")
            for i in range(each):
                name = "😀" * 28 + f"{maker:02}{i:02}"  # 32 characters, 116 bytes
                await client.send({"type": "create_table", "name": name, "sit": False})
            await client.expect(p.TABLE, lambda m: m["table"]["name"].endswith(f"{maker:02}99"))

        await asyncio.gather(*(create(maker) for maker in range(makers)))
        assert len(server.tables) == makers * each
        summaries = [t.summary().to_wire() for t in server.tables.values()]
        assert len(msgpack.packb(summaries)) > p.MAX_SERVER_FRAME  # all would not fit in one
        lobby = await NetClient.connect(server.port, "Lobby")
        ids: list[int] = []
        after = 0
        while True:
            listed = await lobby.request({"type": "list_tables", "after": after}, p.TABLES)
            validate_server(listed)
            assert listed["total"] == makers * each
            assert len(p.encode(listed)) <= p.MAX_SERVER_FRAME + p.HEADER_SIZE
            ids += [t["id"] for t in listed["tables"]]
            if not listed["more"]:
                break
            after = ids[-1]
        assert ids == sorted(server.tables)
