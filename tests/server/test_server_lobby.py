"""The live lobby, through real sockets: a connection in the lobby is sent the list when it
arrives and every change after, a burst of changes as one message per interval; the list is
paged; and what a request costs does not grow with the number of tables."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest
from netclient import NetClient, start_server
from tonk.server.connection import Connection
from tonk.server.tables.lobby import Lobby, lobby_frames
from tonk.server.tables.table import Table
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    LobbyChanges,
    PlayerSummary,
    SeatKind,
    SeatStatus,
    Tables,
    TableState,
    TableSummary,
    validate_server,
)


def by_id(message: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {t["id"]: t for t in message["tables"]}


async def lobby_until(
    client: NetClient, predicate: Any, what: str, timeout: float = 10.0
) -> dict[str, Any]:
    """The next `lobby` message that satisfies `predicate`."""
    try:
        return await client.expect(p.LOBBY, predicate, timeout=timeout)
    except TimeoutError:
        raise AssertionError(f"no lobby message with {what}") from None


async def test_arriving_in_the_lobby_sends_the_list_and_then_every_change(tmp_path: Path) -> None:
    async with start_server(tmp_path, lobby_interval=0.05) as server:
        alice = await NetClient.connect(server.port, "Alice")
        await alice.request({"type": "create_table", "name": "Old", "seats": 3}, p.SEATED)
        watcher = await NetClient.connect(server.port, "Watcher")
        first = await watcher.recv()
        validate_server(first)
        assert first["type"] == p.TABLES and "reply_to" not in first
        assert (first["after"], first["more"], first["total"]) == (0, False, 1)
        [old] = first["tables"]
        assert (old["name"], old["taken"], old["state"]) == ("Old", 1, "waiting")

        # Created.
        bob = await NetClient.connect(server.port, "Bob")
        seated = await bob.request(
            {"type": "create_table", "name": "New", "seats": 2, "hands": 1, "seed": 5}, p.SEATED
        )
        new_id = seated["table"]
        change = await lobby_until(watcher, lambda m: new_id in by_id(m), "the new table")
        validate_server(change)
        assert by_id(change)[new_id]["taken"] == 1 and change["removed"] == []
        # A seat taken; the table full, so it starts.
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "sit", "table": new_id}, p.SEATED)
        await lobby_until(
            watcher, lambda m: by_id(m).get(new_id, {}).get("state") == "playing", "the start"
        )
        # A spectator comes and goes (the count is in the list).
        dan = await NetClient.connect(server.port, "Dan")
        await dan.request({"type": "watch", "table": new_id}, p.WATCHING)
        await lobby_until(
            watcher, lambda m: by_id(m).get(new_id, {}).get("spectators") == 1, "a spectator"
        )
        # Ended: the one hand is played out.
        await asyncio.gather(
            bob.play_until(lambda m: m["type"] == p.SESSION_END),
            carol.play_until(lambda m: m["type"] == p.SESSION_END),
        )
        ended = await lobby_until(
            watcher, lambda m: by_id(m).get(new_id, {}).get("state") == "finished", "the end"
        )
        assert by_id(ended)[new_id]["hands_played"] == 1
        # Everybody leaves a finished table: it leaves the list.
        for client in (bob, carol, dan):
            await client.request({"type": "leave"}, p.LEFT)
        await lobby_until(watcher, lambda m: new_id in m["removed"], "the finished table gone")
        # A seat freed, then the waiting table closed (its last player left).
        dora = await NetClient.connect(server.port, "Dora")
        await dora.request({"type": "sit", "table": old["id"]}, p.SEATED)
        await lobby_until(
            watcher, lambda m: by_id(m).get(old["id"], {}).get("taken") == 2, "Dora seated"
        )
        await dora.request({"type": "leave"}, p.LEFT)
        await lobby_until(
            watcher, lambda m: by_id(m).get(old["id"], {}).get("taken") == 1, "the seat freed"
        )
        await alice.request({"type": "leave"}, p.LEFT)
        await lobby_until(watcher, lambda m: old["id"] in m["removed"], "the closed table gone")
        for client in (alice, bob, carol, dan, dora, watcher):
            await client.close()


async def test_a_connection_at_a_table_gets_no_lobby_changes_and_gets_the_list_when_back(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path, lobby_interval=0.05) as server:
        alice = await NetClient.connect(server.port, "Alice")
        seated = await alice.request({"type": "create_table", "name": "Here", "seats": 3}, p.SEATED)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.expect(p.TABLES)
        await bob.request({"type": "watch", "table": seated["table"], "id": 4}, p.WATCHING)
        others = [await NetClient.connect(server.port, f"Maker{i}") for i in range(3)]
        for i, maker in enumerate(others):
            await maker.request({"type": "create_table", "name": f"M{i}", "sit": False}, p.TABLE)
        lobby = await NetClient.connect(server.port, "Lobby")
        await lobby_until(lobby, lambda m: any(t["name"] == "M2" for t in m["tables"]), "M2")
        # Bob, watching, was sent none of that.
        await bob.send({"type": "ping", "n": 1})
        await bob.expect(p.PONG)
        assert not [m for m in bob.received if m["type"] == p.LOBBY]
        # Back in the lobby: `left`, then the whole list as it is now.
        await bob.send({"type": "leave", "id": 5})
        left = await bob.recv()
        assert (left["type"], left["reply_to"]) == (p.LEFT, 5)
        listed = await bob.recv()
        assert listed["type"] == p.TABLES and "reply_to" not in listed
        assert [t["name"] for t in listed["tables"]] == ["Here", "M0", "M1", "M2"]
        assert listed["tables"][0]["spectators"] == 0
        for client in (alice, bob, lobby, *others):
            await client.close()


async def test_a_burst_of_changes_is_one_message_per_interval_and_the_same_bytes_for_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interval = 0.4
    async with start_server(
        tmp_path, lobby_interval=interval, limit_changes={"max_tables_per_address": 100}
    ) as server:
        watchers = [await NetClient.connect(server.port, f"W{i}") for i in range(3)]
        for watcher in watchers:
            await watcher.expect(p.TABLES)
        maker = await NetClient.connect(server.port, "Maker")
        frames: list[bytes] = []
        # What the server writes to the watchers' connections, as it writes it.
        conns = {c for c in server.connections if c.name in ("W0", "W1", "W2")}
        assert len(conns) == 3
        original = Connection.send_frame

        def spy(conn: Connection, frame: bytes) -> None:
            if conn in conns:
                frames.append(frame)
            original(conn, frame)

        monkeypatch.setattr(Connection, "send_frame", spy)
        loop = asyncio.get_running_loop()
        began = loop.time()
        for i in range(40):
            await maker.send({"type": "create_table", "name": f"T{i}", "sit": False})
        await maker.expect(p.TABLE, lambda m: m["table"]["name"] == "T39")
        made = loop.time() - began
        seen: set[str] = set()
        for watcher in watchers[:1]:
            while len(seen) < 40:
                message = await watcher.expect(p.LOBBY)
                seen |= {t["name"] for t in message["tables"]}
        await asyncio.sleep(interval * 1.5)  # any message still due
        # Each watcher got at most one message per interval while the tables were made
        # (and one more for what came after the last), each one frame shared by all three.
        messages = len(frames) // 3
        assert messages <= int(made / interval) + 2, (messages, made)
        assert messages < 40
        for i in range(messages):
            assert frames[3 * i] is frames[3 * i + 1] is frames[3 * i + 2]
        for client in (*watchers, maker):
            await client.close()


async def test_the_list_is_paged_and_every_page_answers_its_request(tmp_path: Path) -> None:
    async with start_server(tmp_path, limit_changes={"max_tables_per_address": 300}) as server:
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(250):
            await maker.send({"type": "create_table", "name": f"T{i:03}", "sit": False})
        await maker.expect(p.TABLE, lambda m: m["table"]["name"] == "T249")
        reader = await NetClient.connect(server.port, "Reader")
        first = await reader.expect(p.TABLES)
        assert (len(first["tables"]), first["more"], first["total"]) == (p.PAGE_SIZE, True, 250)
        names = [t["name"] for t in first["tables"]]
        after = first["tables"][-1]["id"]
        while True:
            page = await reader.request(
                {"type": "list_tables", "after": after, "id": 100 + len(names)}, p.TABLES
            )
            validate_server(page)
            assert page["reply_to"] == 100 + len(names) and page["after"] == after
            names += [t["name"] for t in page["tables"]]
            if not page["more"]:
                break
            after = page["tables"][-1]["id"]
        assert names == [f"T{i:03}" for i in range(250)]
        small = await reader.request({"type": "list_tables", "limit": 3, "after": 10}, p.TABLES)
        assert [t["id"] for t in small["tables"]] == [11, 12, 13] and small["more"]
        past = await reader.request({"type": "list_tables", "after": 10_000}, p.TABLES)
        assert (past["tables"], past["more"], past["total"]) == ([], False, 250)
        await maker.close()
        await reader.close()


async def test_asking_for_the_list_costs_nothing_per_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the tables are packed, no request makes the server build a table's summary
    again: only a change to a table does, once, however many connections ask or listen."""
    async with start_server(
        tmp_path, lobby_interval=0.05, limit_changes={"max_tables_per_address": 100}
    ) as server:
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(60):
            await maker.send({"type": "create_table", "name": f"T{i}", "sit": False})
        await maker.expect(p.TABLE, lambda m: m["table"]["name"] == "T59")
        askers = [await NetClient.connect(server.port, f"A{i}") for i in range(4)]
        for asker in askers:
            await asker.expect(p.TABLES)
        built: list[int] = []
        summary = Table.summary

        def counting(self: Table) -> dict[str, Any]:
            built.append(self.id)
            return summary(self)

        monkeypatch.setattr(Table, "summary", counting)
        for asker in askers:
            for after in (0, 0, 20, 40):
                page = await asker.request({"type": "list_tables", "after": after}, p.TABLES)
                assert len(page["tables"]) == 60 - after
        assert built == []
        # One change: its summary built once for the lobby (and once for the `table` that
        # answers its creator), however many are in the lobby.
        await maker.send({"type": "create_table", "name": "Late", "sit": False})
        for asker in askers:
            change = await lobby_until(
                asker, lambda m: any(t["name"] == "Late" for t in m["tables"]), "Late"
            )
            validate_server(change)
        assert len(built) == 2
        for client in (maker, *askers):
            await client.close()


async def test_pages_are_paced_per_connection(tmp_path: Path) -> None:
    async with start_server(
        tmp_path, limit_changes={"pages_per_second": 4.0, "page_burst": 2.0}
    ) as server:
        reader = await NetClient.connect(server.port, "Reader")
        await reader.expect(p.TABLES)  # the page on arrival takes one of the two at once
        loop = asyncio.get_running_loop()
        began = loop.time()
        for n in range(5):
            await reader.send({"type": "list_tables", "id": n})
        answers = [await reader.expect(p.TABLES) for _ in range(5)]
        assert [a["reply_to"] for a in answers] == list(range(5))
        # One page was left in the burst; the other four came at 4 a second at most.
        assert loop.time() - began >= 4 / 4 - 0.05
        # The connection was not cut for asking.
        await reader.request({"type": "ping", "n": 3}, p.PONG)
        await reader.close()


def test_changes_that_do_not_fit_in_one_frame_go_in_several() -> None:
    summary = msgpack.packb({"name": "x" * 5000})
    frames = lobby_frames([summary] * 500, [7, 8])
    assert len(frames) == 3
    decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
    for frame in frames:
        assert len(frame) <= p.MAX_SERVER_FRAME + p.HEADER_SIZE
        decoder.feed(frame)
    messages = list(decoder.messages())
    for message in messages:
        validate_server(message)
    assert sum(len(m["tables"]) for m in messages) == 500
    assert [m["removed"] for m in messages] == [[7, 8], [], []]


class WalkedDict(dict[int, Table]):
    """The server's tables, noting every walk through all of them."""

    walks = 0

    def values(self) -> Any:
        WalkedDict.walks += 1
        return super().values()

    def items(self) -> Any:
        WalkedDict.walks += 1
        return super().items()

    def __iter__(self) -> Any:
        WalkedDict.walks += 1
        return super().__iter__()


async def test_the_table_limits_are_kept_counted_not_counted_on_every_request(
    tmp_path: Path,
) -> None:
    limits = {"max_tables": 40, "max_tables_per_address": 40}
    async with start_server(tmp_path, lobby_interval=0.05, limit_changes=limits) as server:
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(39):
            await maker.send({"type": "create_table", "name": f"T{i}", "sit": False})
        await maker.expect(p.TABLE, lambda m: m["table"]["name"] == "T38")
        server.tables = WalkedDict(server.tables)
        WalkedDict.walks = 0
        # The 40th is allowed, the next ones are refused: no request walks every table.
        await maker.request({"type": "create_table", "name": "T39", "sit": False}, p.TABLE)
        for i in range(20):
            await maker.send({"type": "create_table", "name": f"X{i}", "id": i})
            error = await maker.expect(p.ERROR)
            assert (error["code"], error["reply_to"]) == (p.TOO_MANY_TABLES, i)
        assert WalkedDict.walks == 0
        assert server.open_tables() == 40 and server.open_tables("127.0.0.1") == 40
        # A table that closes is counted out: another may be made.
        closer = await NetClient.connect(server.port, "Closer")
        await closer.request({"type": "sit", "table": 1}, p.SEATED)
        await closer.request({"type": "leave"}, p.LEFT)
        assert server.open_tables() == 39
        await maker.request({"type": "create_table", "name": "Again", "sit": False}, p.TABLE)
        await maker.close()
        await closer.close()


@pytest.mark.slow
async def test_a_page_of_a_hundred_tables_at_their_largest_fits_in_one_frame(
    tmp_path: Path,
) -> None:
    """Since protocol 2 a table's summary carries every rule option. At the edge of every
    range a client can reach (names of 64 four-byte characters, five seats each with its own
    stake, every option of the table set, every table paused with the server's reason), a page
    still holds PAGE_SIZE tables in one frame, and a `lobby` message of them all is one frame."""
    import sqlite3

    wide = "\U0001d54f"  # four bytes in UTF-8, printable
    changes = {"max_name": 64, "max_table_name": 64, "max_tables_per_address": 200}
    async with start_server(tmp_path, limit_changes=changes) as server:
        names = [wide * 63 + str(n) for n in range(5)]
        seats = [await NetClient.connect(server.port, name) for name in names]
        create = {
            "type": "create_table",
            "rules": {"preset": "speno", "several_deal_tonks": "pay_each", "hit_lock": 1},
            "stake": 1_000_000,
            "unit": wide * 16,
            "seats": 5,
            "turn_timer": 3599.5,
            "hands": 100_000,
            "minutes": 99_999.5,
            "bot_pause": 9.5,  # nobody plays while the test looks
        }
        for t in range(p.PAGE_SIZE):
            await seats[0].request({**create, "name": wide * 62 + f"{t:02}"}, p.SEATED)
            for client in seats[1:]:
                sit = {"type": "sit", "table": seats[0].table, "stake": 1_000_000}
                await client.request(sit, p.SEATED)
            for client in seats:
                await client.request({"type": "leave"}, p.LEFT)  # the seat is kept
        lobby = await NetClient.connect(server.port, "Lobby")
        first = await lobby.expect(p.TABLES)
        assert (len(first["tables"]), first["more"]) == (p.PAGE_SIZE, False)
        assert {len(t["players"]) for t in first["tables"]} == {5}
        # Every table pauses at once: one change each, all in the next `lobby` message.
        locker = sqlite3.connect(server.config.db_path, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        try:
            # (another connection's request waits for the storage: the lobby's is read)
            await seats[0].send({"type": "create_table", "name": "x", "sit": False})
            changed = await lobby.expect(
                p.LOBBY, lambda m: any(t["paused"] for t in m["tables"]), timeout=20
            )
            assert len(changed["tables"]) == p.PAGE_SIZE
            assert all(t["paused"] for t in changed["tables"])
            page = await lobby.request({"type": "list_tables", "id": 2}, p.TABLES)
            assert len(page["tables"]) == p.PAGE_SIZE and page["more"] is False
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        sizes = {m["type"]: len(msgpack.packb(m)) for m in (changed, page)}
        # (about 240 KB) With room to spare: it would still fit if every table's `paused`
        # named a path of 4,096 bytes (a file fault names the database's path).
        assert max(sizes.values()) + p.PAGE_SIZE * (4096 + 100) < p.MAX_SERVER_FRAME, sizes
        for client in (*seats, lobby):
            await client.close()


async def test_a_page_that_would_not_fit_in_a_frame_holds_fewer_and_says_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edge the tables of this server do not reach, reached by a smaller frame: a page
    holds the tables that fit, `more` says there are others, and the next page goes on from
    its last id without a gap."""
    async with start_server(tmp_path, limit_changes={"max_tables_per_address": 100}) as server:
        maker = await NetClient.connect(server.port, "Maker")
        for i in range(40):
            await maker.request({"type": "create_table", "name": f"T{i:02}", "sit": False}, p.TABLE)
        reader = await NetClient.connect(server.port, "Reader")
        whole = await reader.expect(p.TABLES)
        assert len(whole["tables"]) == 40
        frame = 16 * 1024
        monkeypatch.setattr(p, "MAX_SERVER_FRAME", frame)
        await maker.request({"type": "create_table", "name": "T40", "sit": False}, p.TABLE)
        names: list[str] = []
        after = 0
        while True:
            page = await reader.request({"type": "list_tables", "after": after}, p.TABLES)
            assert len(msgpack.packb(page)) <= frame
            names += [t["name"] for t in page["tables"]]
            if not page["more"]:
                break
            assert 0 < len(page["tables"]) < p.PAGE_SIZE
            after = page["tables"][-1]["id"]
        assert names == [f"T{i:02}" for i in range(41)]
        assert len(names) > len(page["tables"])  # it took more than one page


async def test_sent_back_to_the_lobby_by_somebody_else_a_connection_gets_the_first_page(
    tmp_path: Path,
) -> None:
    """PROTOCOL.md, "The lobby": after `left` because the table watched was closed, and after
    `seat_resumed_elsewhere`, the connection is sent the first page by itself."""
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        closing = await alice.request({"type": "create_table", "name": "Brief"}, p.SEATED)
        carol = await NetClient.connect(server.port, "Carol")
        await carol.request({"type": "watch", "table": closing["table"]}, p.WATCHING)
        await alice.request({"type": "leave"}, p.LEFT)  # the last player: the table closes
        left = await carol.expect(p.LEFT)
        assert left["table"] == closing["table"] and "reply_to" not in left
        page = await carol.recv()
        assert (page["type"], page["after"], page["tables"]) == (p.TABLES, 0, [])
        assert "reply_to" not in page
        seated = await alice.request({"type": "create_table", "name": "Kept"}, p.SEATED)
        again = await NetClient.connect(server.port, "Alice")
        resume = {"type": "resume", "table": seated["table"], "token": alice.token}
        await again.request(resume, p.SEATED)
        told = await alice.expect(p.ERROR)
        assert told["code"] == p.SEAT_RESUMED_ELSEWHERE
        page = await alice.recv()
        assert page["type"] == p.TABLES and "reply_to" not in page
        assert [t["name"] for t in page["tables"]] == ["Kept"]
        for client in (alice, carol, again):
            await client.close()


class ListedTable:
    """A table as the lobby reads it, with a summary of its own."""

    def __init__(self, summary: TableSummary) -> None:
        self.id = summary.id
        self.summary_now = summary
        self.creator_address = "127.0.0.1"
        self.open = self.listed = True
        self.task = None

    def summary(self) -> TableSummary:
        return self.summary_now


def listed_summary(table_id: int) -> TableSummary:
    seats = 2 + table_id % 4
    players = tuple(
        PlayerSummary(n, f"P{table_id}.{n}", SeatKind.HUMAN, None, SeatStatus.CONNECTED, n, -n)
        for n in range(table_id % (seats + 1))
    )
    return TableSummary(
        id=table_id,
        name=f"Table {table_id}" * (1 + table_id % 3),
        rules=PRESETS["classic"].to_wire(),
        rules_name="classic",
        stake=table_id,
        unit="¢",
        seats=seats,
        taken=len(players),
        free=seats - len(players),
        state=TableState.WAITING,
        spectators=table_id % 2,
        turn_timer=None if table_id % 2 else 30.5,
        hands=None,
        minutes=None,
        bot_pause=1.0,
        hands_played=table_id * 1000,
        creator=None,
        dealer=table_id % seats,
        paused=None,
        players=players,
    )


async def test_a_page_and_a_lobby_message_are_the_bytes_their_messages_encode_to() -> None:
    """The lobby puts its frames together from summaries packed once (shared/_speedups.py):
    each is the very frame the message, written as a dict, encodes to."""
    tables = {t: ListedTable(listed_summary(t)) for t in range(1, 41)}
    server = SimpleNamespace(tables=tables, connections=())
    lobby = Lobby(server, interval=60.0)
    for table_id in tables:
        lobby.changed(table_id)
    summaries = [tables[t].summary() for t in sorted(tables)]
    for after, limit, reply_to in [(0, 100, None), (0, 15, 7), (3, 16, 2**31), (39, 5, 0)]:
        shown = summaries[after : after + limit]
        page = Tables(tuple(shown), after, after + len(shown) < 40, 40, reply_to)
        assert lobby.page(after, limit, reply_to) == p.encode(page.to_wire())
    for count, removed in [(0, []), (3, [41]), (17, list(range(100, 120)))]:
        changes = LobbyChanges(tuple(summaries[:count]), tuple(removed))
        wire = summaries[:count]
        [frame] = lobby_frames([p.encode(s.to_wire())[p.HEADER_SIZE :] for s in wire], removed)
        assert frame == p.encode(changes.to_wire())
    lobby.close()
