"""Storage faults, real ones, against the real `tonk-server` through real sockets: a full disk
(a small tmpfs filled up, and the server's file size limit lowered), a nearly full one, a
database made immutable, a database locked by another process, the database file moved away or
replaced, two servers on one database, the database deleted under a running server.

Under each: every open table is told once that play is paused and once that it carries on,
nothing acknowledged is lost, the write that met the fault is the one tried again (and goes
through), the log says it once, and `tonk-server audit` passes afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from netclient import NetClient
from reliakit import (
    LiveClient,
    PlayingTable,
    ServerProcess,
    act_once,
    last_hand_end,
    last_view,
    ledger_problems,
    server_command,
    server_process,
    start_playing_table,
    take_seats_back,
    wait_until,
)
from termkit import loopback_args
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request

pytestmark = pytest.mark.e2e

Client = TypeVar("Client", bound=NetClient)


async def seat_two(
    port: int,
    names: tuple[str, str],
    table: str,
    seed: int,
    client: type[Client] = NetClient,  # type: ignore[assignment]
) -> tuple[int, list[Client]]:
    """The first name opens a two-seat table with this deal seed and the second sits: the
    hand starts, and each has its first update."""
    first = await client.connect(port, names[0])
    seated = await first.request(
        {"type": "create_table", "name": table, "seats": 2, "seed": seed}, p.SEATED
    )
    second = await client.connect(port, names[1])
    await second.request({"type": "sit", "table": seated["table"]}, p.SEATED)
    players = [first, second]
    for player in players:
        await player.expect(p.UPDATE)
    return seated["table"], players


async def two_players(port: int, seed: int = 4) -> tuple[int, list[NetClient]]:
    """Alice and Bob at a two-seat table, a few actions into the first hand."""
    table, players = await seat_two(port, ("Alice", "Bob"), "faulty", seed)
    for _ in range(3):
        await act_once(players)
    return table, players


def to_act(players: list[NetClient]) -> NetClient:
    return next(c for c in players if c.seat_view().my_turn)


def an_action(client: NetClient) -> dict[str, Any]:
    """A legal action for `client` to send: a draw if it may, else the first that is not a
    drop."""
    view = client.seat_view()
    actions = view.legal().actions(view.turn)
    choice = next((a for a in actions if a.kind == "draw_stock"), None)
    choice = choice or next(a for a in actions if a.kind != "drop")
    return action_request(choice).to_wire()


def paused_states(client: NetClient) -> list[str | None]:
    """The `paused` of each `table` message `client` got, repeats folded: [None, "why", None]
    is one pause and one resume."""
    out: list[str | None] = []
    for message in client.received:
        if message["type"] == p.TABLE:
            paused = message["table"]["paused"]
            if not out or (paused is None) != (out[-1] is None):
                out.append(paused)
    return out


def pause_notices(client: NetClient) -> list[dict[str, Any]]:
    return [
        m
        for m in client.received
        if m["type"] == p.ERROR and "reply_to" not in m and "paused" in m["message"]
    ]


def told_paused(client: NetClient) -> bool:
    states = paused_states(client)
    return bool(states) and states[-1] is not None and bool(pause_notices(client))


def told_resumed(client: NetClient) -> bool:
    states = paused_states(client)
    return len(states) >= 2 and states[-1] is None and states[-2] is not None


def log_lines(server: ServerProcess, text: str) -> list[str]:
    return [line for line in server.stderr if text in line]


@dataclass
class Floor:
    """What plays on a server while a fault is made: Alice and Bob a few actions into a hand,
    Carol and Dan at a table of their own where nothing is happening, a bot table watched (its
    watcher reads all the time), and a client in the lobby."""

    server: ServerProcess
    table: int
    players: list[NetClient]
    quiet: int
    others: list[NetClient]
    bots: PlayingTable
    lobby: NetClient

    @property
    def at_tables(self) -> list[NetClient]:
        return [*self.players, *self.others, self.bots.watcher]


async def floor(server: ServerProcess) -> Floor:
    table, players = await two_players(server.port)
    quiet, others = await seat_two(server.port, ("Carol", "Dan"), "quiet", 9)
    bots = await start_playing_table(server.port, "bots", live=True)
    lobby = await NetClient.connect(server.port, "Lobby")
    return Floor(server, table, players, quiet, others, bots, lobby)


async def read_all(clients: list[NetClient], seconds: float) -> None:
    """Take in what arrives for `seconds` (LiveClients read by themselves)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while (left := until - loop.time()) > 0:
        for client in clients:
            if isinstance(client, LiveClient):
                continue
            with contextlib.suppress(TimeoutError):
                await client._read_more(min(left, 0.05))


async def through_a_fault(
    server: ServerProcess,
    make_fault: Callable[[], Awaitable[None]],
    heal: Callable[[], Awaitable[None]],
    reason: str,
    hold: float = 1.5,
) -> Floor:
    """Play, make the fault, check what everybody is told while it lasts, heal it, check play
    carries on; return the floor (the server still running)."""
    f = await floor(server)
    actor = to_act(f.players)
    before = last_view(actor)
    await make_fault()
    # The player to act acts: the write either waits for the storage (answered by the update
    # once it is saved) or, the table being paused already, is refused at once.
    await actor.send({**an_action(actor), "id": 1})
    everybody = [*f.at_tables, f.lobby]
    await wait_for_all(f.at_tables, told_paused, "every table told it is paused")
    for client in f.at_tables:
        assert reason in pause_notices(client)[0]["message"], pause_notices(client)
        states = paused_states(client)
        assert states[-1] is not None and reason in states[-1], states
    listed = await f.lobby.request({"type": "list_tables"}, p.TABLES)
    assert {t["id"] for t in listed["tables"] if t["paused"]} == {f.table, f.quiet, f.bots.table}
    # While it lasts: nothing played anywhere, nobody told anything more, and requests that
    # would have to be saved are refused at once (not kept waiting).
    counts = {id(c): len(c.received) for c in everybody}
    seen = {id(c): last_view(c)["event_count"] for c in f.at_tables}
    other = to_act(f.others)
    await other.send({**an_action(other), "id": 2})
    refused = await other.expect(p.ERROR, lambda m: m.get("reply_to") == 2)
    assert refused["code"] == p.STORAGE_ERROR and "paused" in refused["message"], refused
    await f.lobby.send({"type": "create_table", "name": "new", "id": 3})
    refused = await f.lobby.expect(p.ERROR, lambda m: m.get("reply_to") == 3)
    assert refused["code"] == p.STORAGE_ERROR, refused
    await read_all(everybody, hold)
    for client in everybody:
        new = client.received[counts[id(client)] :]
        shown = [m for m in new if m["type"] in (p.UPDATE, p.HAND_END, p.TABLE)]
        if client in f.at_tables:
            # A move sent into the fault (the actor's, or a bot's at the watched table) may be
            # shown now if its write went through (a full disk's WAL copied back makes room for
            # it, while the fault lasts until there is room to spare): that one move alone, where
            # the last view ended, with no turn clock running (and the hand's end if it ended it).
            shown = saved_into_the_fault(shown, seen[id(client)])
        assert not shown, new
    assert len(log_lines(server, "storage fault:")) == 1, server.stderr
    await heal()
    await wait_for_all(f.at_tables, told_resumed, "every table told play carries on", 30)
    for client in f.at_tables:
        states = paused_states(client)
        assert len(states) == 3 and states[0] is None and states[2] is None, states
        assert len(pause_notices(client)) == 1, pause_notices(client)
    # The action sent into the fault: saved and shown now, or refused (then it is played now).
    # (Since protocol 2 the actor's update answers the action too: only an error refuses it.)
    answer = next((m for m in actor.received if m.get("reply_to") == 1), None)
    if answer is None or answer["type"] == p.UPDATE:
        for client in f.players:
            await client.expect(
                p.UPDATE, lambda m: m["view"]["event_count"] > before["event_count"]
            )
    else:
        assert answer["code"] == p.STORAGE_ERROR, answer
        for client in f.players:
            client.view_fresh = True
        await act_once(f.players)
    await act_once(f.players)
    await act_once(f.others)
    hands = max(m["hand"] for m in f.bots.watcher.received if m["type"] == p.HAND_END)
    await wait_until(
        lambda: any(
            m["type"] == p.HAND_END and m["hand"] > hands + 1 for m in f.bots.watcher.received
        ),
        "the bot table plays on",
        30,
    )
    assert len(log_lines(server, "storage fault:")) == 1, server.stderr
    assert len(log_lines(server, "storage fault over")) == 1, server.stderr
    return f


#: The events that are a player's move (the others follow from one: the turn passing, the hand
#: ending, ...).
MOVES = frozenset({"drop", "draw_stock", "take_discard", "spread", "hit", "discard"})


def saved_into_the_fault(shown: list[dict[str, Any]], events_before: int) -> list[dict[str, Any]]:
    """`shown` without the update of the one move sent into the fault, if it is there: an update
    that starts where the last view ended, holds that one move (and the turn passing, after a
    discard) and has no deadline (play is paused); with the hand's end after it if the move
    ended the hand."""
    if not shown or shown[0]["type"] != p.UPDATE or shown[0]["deadline"] is not None:
        return shown
    first, rest = shown[0], shown[1:]
    kinds = [event["kind"] for event in first["events"]]
    moves = [kind for kind in kinds if kind in MOVES]
    if first["from"] != events_before or len(moves) != 1 or kinds[0] != moves[0]:
        return shown
    if rest and rest[0]["type"] == p.HAND_END and rest[0]["hand"] == first["hand"]:
        rest = rest[1:]
    return rest


async def wait_for_all(
    clients: list[NetClient], check: Callable[[NetClient], bool], what: str, limit: float = 20
) -> None:
    loop = asyncio.get_running_loop()
    give_up = loop.time() + limit
    while not all(check(c) for c in clients):
        if loop.time() > give_up:
            raise AssertionError(
                f"gave up waiting for {what}: {[paused_states(c) for c in clients]}"
            )
        await read_all(clients, 0.05)


async def nothing_lost(db: Path, f: Floor) -> None:
    """Restarted on the same database: every seat's view is what it was last shown; then the
    audit of every ledger passes."""
    acked = {c.name: last_view(c) for c in [*f.players, *f.others]}
    f.server.kill()
    await f.server.wait()
    async with server_process(db) as server:
        for table, clients in ((f.table, f.players), (f.quiet, f.others)):
            again, fulls = await take_seats_back(server.port, table, clients)
            for client, full in zip(again, fulls, strict=True):
                assert full["view"] == acked[client.name]
    hand_ends = [m for m in f.bots.watcher.received if m["type"] == p.HAND_END]
    assert ledger_problems(db, f.bots.table, hand_ends) == []
    audit = subprocess.run(
        [*server_command(), "audit", "--db", str(db)], capture_output=True, text=True
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr


# -- a small real filesystem -----------------------------------------------------------------


@contextlib.contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (skips where that cannot be done)."""
    if os.geteuid() != 0:
        pytest.skip("a small real filesystem (tmpfs) needs root to mount")
    if shutil.which("mount") is None:
        pytest.skip("no mount command (apt-get install mount)")
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the filesystem of `directory` to its last byte; returns the filler file."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for chunk in (65536, 4096, 512, 1):
            try:
                while os.write(fd, b"\0" * chunk):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


# -- the faults ------------------------------------------------------------------------------


async def test_a_full_disk_pauses_every_table_once_and_play_carries_on_once_there_is_room(
    tmp_path,
):
    with small_disk(tmp_path / "disk", "8m") as disk:
        db = disk / "tonk.db"
        filler: list[Path] = []

        async def make_fault() -> None:
            filler.append(await asyncio.to_thread(fill, disk))

        async def heal() -> None:
            filler[0].unlink()

        async with server_process(db) as server:
            f = await through_a_fault(server, make_fault, heal, "full")
            await nothing_lost(db, f)


async def test_a_nearly_full_disk_is_not_filled_for_good_by_the_journal(tmp_path):
    """With less room than the WAL grows to before it is copied back into the database
    (4 MiB), the WAL would fill the disk: here it is copied back sooner, and three tables play
    hand after hand on a 3 MiB disk, writing far more than it holds, and are never paused."""
    with small_disk(tmp_path / "disk", "3m") as disk:
        db = disk / "tonk.db"
        async with server_process(db) as server:
            tables = [await start_playing_table(server.port, f"b{i}", live=True) for i in range(3)]
            for table in tables:
                await wait_until(
                    lambda table=table: last_hand_end(table.watcher) >= 40, "hands played", 120
                )
            for table in tables:
                await table.watcher.unpump()
                assert not told_paused(table.watcher), paused_states(table.watcher)
            assert not log_lines(server, "storage fault"), server.stderr
            server.kill()
            await server.wait()
        for table in tables:
            hand_ends = [m for m in table.watcher.received if m["type"] == p.HAND_END]
            assert ledger_problems(db, table.table, hand_ends) == []


async def test_a_lowered_file_size_limit_pauses_play_and_it_carries_on(tmp_path):
    db = tmp_path / "tonk.db"
    async with server_process(db) as server:
        pid = server.proc.pid
        limits = resource.prlimit(pid, resource.RLIMIT_FSIZE)

        async def make_fault() -> None:
            # No file of the server may grow past 1 KB (EFBIG), root or not.
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (1024, limits[1]))

        async def heal() -> None:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, limits)

        f = await through_a_fault(server, make_fault, heal, "disk I/O error")
        await nothing_lost(db, f)


async def test_an_immutable_database_pauses_play_until_it_is_writable_again(tmp_path):
    """The database and its WAL made immutable (chattr +i: not even root may write them) for a
    while: a connection opened meanwhile is silently read-only, and must not stay so."""
    if shutil.which("chattr") is None:
        pytest.skip("no chattr (apt-get install e2fsprogs)")
    if os.geteuid() != 0:
        pytest.skip("making a file immutable needs root")
    db = tmp_path / "tonk.db"
    files = [str(db), f"{db}-wal"]

    async def chattr(flag: str) -> None:
        done = await asyncio.to_thread(
            subprocess.run, ["chattr", flag, *files], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.skip(f"chattr {flag} does not work here: {done.stderr.strip()}")

    async with server_process(db) as server:
        try:
            f = await through_a_fault(server, lambda: chattr("+i"), lambda: chattr("-i"), "")
        finally:
            subprocess.run(["chattr", "-i", *files], capture_output=True)
        await nothing_lost(db, f)


LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def write_locked(db: Path) -> Iterator[None]:
    """A write lock on `db` held by a connection of the test's own, until the block ends."""
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        locker.execute("ROLLBACK")
        locker.close()


async def lock_the_database(db: Path) -> asyncio.subprocess.Process:
    """Another program holding a write lock on `db` until its stdin is closed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LOCKER,
        str(db),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await proc.stdout.readline() == b"locked\n"
    return proc


async def test_a_database_locked_by_another_program_pauses_every_table_until_released(tmp_path):
    db = tmp_path / "tonk.db"
    locker: list[asyncio.subprocess.Process] = []

    async def make_fault() -> None:
        locker.append(await lock_the_database(db))

    async def heal() -> None:
        proc = locker[0]
        assert proc.stdin is not None
        proc.stdin.close()
        assert await proc.wait() == 0

    async with server_process(db) as server:
        try:
            f = await through_a_fault(server, make_fault, heal, "locked")
        finally:
            for proc in locker:
                if proc.returncode is None:
                    proc.kill()
        await nothing_lost(db, f)


async def move_db(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            os.replace(f"{src}{suffix}", f"{dst}{suffix}")


async def test_a_moved_or_replaced_database_pauses_play_until_it_is_back(tmp_path):
    db = tmp_path / "tonk.db"
    aside = tmp_path / "moved.db"
    ports: list[int] = []

    async def make_fault() -> None:
        await move_db(db, aside)

    async def heal() -> None:
        assert not db.exists()  # the server did not start a new, empty database
        # A different file in its place (an old copy, say) is not taken for it either.
        shutil.copy(aside, db)
        await asyncio.sleep(1.2)
        lobby = await NetClient.connect(ports[0], "Looker")
        listed = await lobby.request({"type": "list_tables"}, p.TABLES)
        assert all(t["paused"] for t in listed["tables"]), listed
        await lobby.close()
        db.unlink()
        await move_db(aside, db)

    async with server_process(db) as server:
        ports.append(server.port)
        f = await through_a_fault(server, make_fault, heal, "removed or replaced")
        # The players are told what is wrong, not where the host keeps the database.
        for client in f.at_tables:
            told = [str(m) for m in client.received if m["type"] in (p.ERROR, p.TABLE)]
            assert any("removed or replaced" in text for text in told), told
            assert not any(str(tmp_path) in text for text in told), told
        await nothing_lost(db, f)


async def start_another(db: Path) -> tuple[int, list[str], bytes]:
    """`tonk-server` started on `db`: its exit status, its stderr's lines and its stdout (it is
    expected to refuse; killed after 20 s if it does not)."""
    proc = await asyncio.create_subprocess_exec(
        *server_command(),
        *loopback_args(db),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 20)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, err.decode().splitlines(), out


async def test_a_second_server_on_the_same_database_refuses_to_start_in_one_line(tmp_path):
    db = tmp_path / "tonk.db"
    async with server_process(db) as first:
        table, players = await two_players(first.port)
        status, lines, out = await start_another(db)
        assert status == 1 and out == b""
        assert lines == [
            f"tonk-server: the database {db} is in use by another tonk-server "
            f"(pid {first.proc.pid}); stop it first, or give this one another --db"
        ]
        # The first plays on, untouched.
        await act_once(players)
        acked = last_view(players[0])
        first.kill()
        await first.wait()
    # Once the first is gone (even killed), the database is free again.
    async with server_process(db) as again:
        players, fulls = await take_seats_back(again.port, table, players)
        assert fulls[0]["view"] == acked


async def test_a_restart_beside_an_orphaned_wal_refuses_and_keeps_the_wal(tmp_path):
    db = tmp_path / "tonk.db"
    wal = Path(f"{db}-wal")
    async with server_process(db) as server:
        table, players = await two_players(server.port)
        db.unlink()  # deleted while the server runs: what it saved since is only in the WAL
        actor = to_act(players)
        await actor.play_turn_if_mine()
        await wait_for_all(players, told_paused, "the table told it is paused")
        assert "removed or replaced" in pause_notices(players[0])[0]["message"]
        server.kill()
        await server.wait()
    kept = wal.read_bytes()
    assert kept
    status, lines, out = await start_another(db)
    assert status == 1 and out == b""
    assert lines == [
        f"tonk-server: found the write-ahead log {wal} ({len(kept)} bytes) but no database "
        f"{db}: the database file was removed while a server was using it; put it back (or "
        "move the log away to start afresh)"
    ]
    assert not db.exists() and wal.read_bytes() == kept
    assert table == 1


async def test_a_server_stops_in_good_time_while_the_database_cannot_be_written(tmp_path):
    """The writes that wait for the storage are given up at shutdown (nobody was told they
    were saved), instead of keeping the server from stopping."""

    from netclient import start_server

    async with start_server(tmp_path) as server:
        bots = await start_playing_table(server.port, "bots")
        with write_locked(server.config.db_path):
            await wait_for_all([bots.watcher], told_paused, "the table told it is paused")
            assert server.storage_fault is not None
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(server.close(), 20)
            assert loop.time() - started < 10
    hand_ends = [m for m in bots.watcher.received if m["type"] == p.HAND_END]
    assert ledger_problems(server.config.db_path, bots.table, hand_ends) == []


async def test_a_player_whose_move_waits_for_the_storage_is_not_cut_for_silence(tmp_path):
    """The server reads nothing more from a connection while its request waits for the
    storage: that silence is the server's, and an idle timeout shorter than the fault does not
    cut the player; the move is saved and shown once the lock is released."""
    db = tmp_path / "tonk.db"
    limits = ["--limit", "heartbeat=0.5", "--limit", "idle_timeout=2"]
    async with server_process(db, *limits) as server:
        _, players = await seat_two(server.port, ("Alice", "Bob"), "t", 4, LiveClient)
        for client in players:
            client.pump()
        actor = to_act(players)
        count = actor.seat_view().event_count
        locker = await lock_the_database(db)
        try:
            await actor.send(an_action(actor))  # its write waits for the lock
            await wait_until(lambda: all(told_paused(c) for c in players), "told paused", 20)
            await asyncio.sleep(3)  # longer than the idle timeout
        finally:
            if locker.stdin is not None:
                locker.stdin.close()
            await locker.wait()
        await wait_until(
            lambda: all(
                any(m["type"] == p.UPDATE and m["view"]["event_count"] > count for m in c.received)
                for c in players
            ),
            "the move shown",
            20,
        )
        await asyncio.sleep(1)
        for client in players:
            await client.unpump()
            notices = pause_notices(client)
            errors = [m for m in client.received if m["type"] == p.ERROR and m not in notices]
            assert len(notices) == 1 and errors == [] and not client.eof, (client.name, errors)


async def test_after_a_storage_pause_the_seat_to_act_is_sent_a_fresh_deadline(tmp_path):
    """A turn timer does not run while play is paused, and the deadline the players were sent
    before the pause is wrong afterwards: once play carries on everybody at the table is sent
    the turn's new deadline (an update with no events), and the seat to act still has it."""

    from netclient import start_server

    turn_timer = 3.0
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        create = {"type": "create_table", "name": "timed", "seats": 2, "seed": 4}
        seated = await alice.request({**create, "turn_timer": turn_timer}, p.SEATED)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": seated["table"]}, p.SEATED)
        players = [alice, bob]
        for client in players:
            first = await client.expect(p.UPDATE)
            assert first["deadline"] is not None
        actor = to_act(players)
        count = actor.seat_view().event_count
        watcher = await NetClient.connect(server.port, "Watcher")
        await watcher.request({"type": "watch", "table": seated["table"]}, p.WATCHING)
        await watcher.expect(p.UPDATE)
        everybody = [*players, watcher]
        with write_locked(server.config.db_path):
            # Somebody in the lobby opens a table: its write waits for the lock, and every
            # table pauses.
            carol = await NetClient.connect(server.port, "Carol")
            await carol.send({"type": "create_table", "name": "new", "id": 1})
            await wait_for_all(everybody, told_paused, "the table told it is paused")
            await read_all(everybody, turn_timer + 0.5)  # longer than the turn
        await wait_for_all(everybody, told_resumed, "the table told play carries on")
        for client in everybody:
            refreshed = await client.expect(
                p.UPDATE, lambda m: m["events"] == [] and m["from"] == count
            )
            assert turn_timer / 2 < refreshed["deadline"] <= turn_timer, refreshed
            assert refreshed["view"]["event_count"] == count
            played = [m for m in client.received if m["type"] == p.UPDATE and m["from"] >= count]
            assert played == [refreshed], played  # nothing was played for the seat
        assert await actor.play_turn_if_mine()  # the turn is still the player's
        await actor.expect(p.UPDATE, lambda m: m["from"] == count and m["events"])
        assert (await carol.expect(p.SEATED))["reply_to"] == 1


async def test_a_move_saved_after_a_storage_pause_is_the_next_update_everybody_gets(tmp_path):
    """A move whose write waits out the pause is shown, once saved, by the next `update` of
    the hand, `from` the events each client holds (PROTOCOL.md, "update"): no update `from`
    past it, with no events, comes first for a move nobody has been shown yet."""

    from netclient import start_server

    async with start_server(tmp_path) as server:
        create = {"type": "create_table", "name": "timed", "seats": 2, "seed": 4}
        alice = await NetClient.connect(server.port, "Alice")
        seated = await alice.request({**create, "turn_timer": 30.0}, p.SEATED)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": "sit", "table": seated["table"]}, p.SEATED)
        players = [alice, bob]
        for client in players:
            await client.expect(p.UPDATE)
        watcher = await NetClient.connect(server.port, "Watcher")
        await watcher.request({"type": "watch", "table": seated["table"]}, p.WATCHING)
        await watcher.expect(p.UPDATE)
        everybody = [*players, watcher]
        actor = to_act(players)
        count = actor.seat_view().event_count
        with write_locked(server.config.db_path):
            await actor.send(an_action(actor))  # its write waits for the lock: play pauses
            await wait_for_all(everybody, told_paused, "the table told it is paused")
        await wait_for_all(everybody, told_resumed, "the table told play carries on")
        for client in everybody:
            following = await client.expect(p.UPDATE)
            assert following["from"] == count and following["events"], following
            assert following["deadline"] is not None


async def test_while_play_is_paused_what_must_be_saved_is_refused_and_the_rest_served(tmp_path):
    """PROTOCOL.md, "Storage faults", request by request: while the database cannot be
    written, `sit`, `add_bot`, `remove_bot` and `start` are refused at once with
    `storage_error` (answering them) and change nothing; `watch`, `list_tables`, `ping`,
    `chat` and `leave` are served."""

    from netclient import start_server

    async with start_server(tmp_path) as server:
        playing, players = await two_players(server.port)
        carol = await NetClient.connect(server.port, "Carol")
        waiting = await carol.request(
            {"type": "create_table", "name": "waiting", "seats": 4}, p.SEATED
        )
        await carol.send({"type": "add_bot"})
        await carol.expect(p.TABLE, lambda m: m["table"]["taken"] == 2)
        dave = await NetClient.connect(server.port, "Dave")
        await dave.expect(p.TABLES)
        with write_locked(server.config.db_path):
            eve = await NetClient.connect(server.port, "Eve")
            await eve.send({"type": "create_table", "name": "new"})  # waits for the lock
            await wait_for_all([carol, *players], told_paused, "every table told it is paused")
            for rid, (client, message) in enumerate(
                [
                    (dave, {"type": "sit", "table": waiting["table"]}),
                    (carol, {"type": "add_bot"}),
                    (carol, {"type": "remove_bot", "seat": 1}),
                    (carol, {"type": "start"}),
                ],
                900,
            ):
                await client.send({**message, "id": rid})
                refused = await client.expect(p.ERROR, lambda m, r=rid: m.get("reply_to") == r)
                assert refused["code"] == p.STORAGE_ERROR and not refused["fatal"], refused
            page = await dave.request({"type": "list_tables"}, p.TABLES)
            taken = {t["id"]: t["taken"] for t in page["tables"]}
            assert taken == {playing: 2, waiting["table"]: 2}, taken
            assert all(t["paused"] for t in page["tables"])
            assert (await dave.request({"type": "ping", "n": 5}, p.PONG))["n"] == 5
            await dave.request({"type": "watch", "table": playing}, p.WATCHING)
            full = await dave.expect(p.UPDATE)
            assert full["from"] == 0 and full["view"]["seat"] is None
            said = await carol.request({"type": "chat", "text": "still here"}, p.CHAT)
            assert said["text"] == "still here"
            await dave.request({"type": "leave"}, p.LEFT)
        await wait_for_all([carol, *players], told_resumed, "every table told play carries on")
        # Nothing refused was kept: the waiting table has its two seats, and takes a third now.
        await dave.request({"type": "sit", "table": waiting["table"]}, p.SEATED)
        table = await carol.expect(p.TABLE, lambda m: m["table"]["taken"] == 3)
        assert [pl["kind"] for pl in table["table"]["players"]][:3] == ["human", "bot", "human"]
