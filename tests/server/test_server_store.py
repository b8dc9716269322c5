"""The store: WAL and full sync, group commit where one failing write does not sink the others."""

from __future__ import annotations

import asyncio
import pathlib
import sqlite3

import pytest
from tonk.server.commands import audit
from tonk.server.store import store as st


async def test_writes_commit_alone_or_together_and_a_failing_one_fails_alone(tmp_path):
    store = st.Store(tmp_path / "s.db")
    assert store.open() == []
    ok = st.insert_table(1, "one", {}, 0.0, None)
    dup = st.insert_table(1, "dup", {}, 0.0, None)  # the same id: refused
    other = st.insert_table(2, "two", {}, 0.0, None)
    results = await asyncio.gather(
        store.write([ok]), store.write([dup]), store.write([other]), return_exceptions=True
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], st.StoreError)
    await store.close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT id, name FROM tables ORDER BY id").fetchall() == [
            (1, "one"),
            (2, "two"),
        ]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_a_write_is_all_or_nothing(tmp_path, opened_store):
    store = opened_store
    await store.write([st.insert_table(1, "one", {}, 0.0, None)])
    with pytest.raises(st.StoreError):
        await store.write(
            [st.update_table(1, name="renamed"), st.insert_table(1, "again", {}, 0.0, None)]
        )
    await store.close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT name FROM tables").fetchall() == [("one",)]


def test_tokens_are_stored_only_as_hashes():
    token = "secret-token"
    assert st.hash_token(token) != token and len(st.hash_token(token)) == 64


async def test_a_database_from_before_away_seats_were_kept_is_brought_up_to_date(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # the seats table as an older tonk-server made it
        conn.execute(
            "CREATE TABLE seats (table_id INTEGER NOT NULL, seat INTEGER NOT NULL,"
            " name TEXT NOT NULL, kind TEXT NOT NULL, strategy TEXT, token_hash TEXT,"
            " stake INTEGER NOT NULL, PRIMARY KEY (table_id, seat))"
        )
        conn.execute("INSERT INTO seats VALUES (1, 0, 'Alice', 'human', NULL, 'h', 1)")
    store = st.Store(path)
    store.open()
    await store.write([st.set_away(1, 0, True)])
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name, away FROM seats").fetchall() == [("Alice", 1)]


def test_a_database_from_before_the_ssh_door_opens_and_keeps_claims(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "old.db"
    store = st.Store(path)
    store.open()
    asyncio.run(store.close())
    with sqlite3.connect(path) as conn:  # as a server from before the door left it
        conn.execute("DROP TABLE ssh_names")
        conn.execute("DROP TABLE ssh_seats")
    store = st.Store(path)
    store.open()
    assert store.door_players() == ([], {})

    async def claim() -> None:
        name = st.SavedName("ann", "ssh-ed25519 AAAA", "SHA256:x", 1.0)
        seat = st.SavedDoorSeat(3, False, 2.0)
        await store.write([st.claim_name("ann", name), st.put_door_seat("ann", seat)])
        await store.close()

    asyncio.run(claim())
    store = st.Store(path)
    store.open()
    names, seats = store.door_players()
    assert [n.name for n in names] == ["ann"] and seats == {
        "ann": [st.SavedDoorSeat(3, False, 2.0)]
    }
    asyncio.run(store.close())


async def test_a_database_from_before_rematches_is_brought_up_to_date_and_read(tmp_path):
    path = tmp_path / "old.db"
    store = st.Store(path)
    store.open()
    await store.write([st.insert_table(1, "Friday", {"rules": {"preset": "classic"}}, 0.0, 0)])
    await store.close()
    with sqlite3.connect(path) as conn:  # as a server from before rematches left it
        conn.execute("ALTER TABLE tables DROP COLUMN rematch_of")
        conn.execute("DROP TABLE rematches")
        conn.execute("UPDATE tables SET state = 'finished'")
    # Read-only first, as `tonk-server ledger` reads it: no rematches, no error.
    with audit.read_only(path) as conn:
        (ledger,) = audit.ledgers(conn)
        assert ledger.rematch_of is None and ledger.earlier == []
    store = st.Store(path)
    assert store.open() == []  # a finished table with no rematch offered is not restored
    await store.write(
        [
            st.insert_table(2, "Friday", {}, 1.0, 0),
            st.update_table(2, rematch_of=1),
            st.put_rematch(1, {"names": [], "answers": [], "outcome": "started"}),
        ]
    )
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT id, rematch_of FROM tables ORDER BY id").fetchall() == [
            (1, None),
            (2, 1),
        ]
        assert conn.execute("SELECT table_id FROM rematches").fetchall() == [(1,)]
