"""The store's page size: a new database gets small pages (each commit writes less); a database
made before keeps its own, and both are written, checkpointed and read back alike."""

from __future__ import annotations

import sqlite3

import pytest
from tonk.server.store import store as st


def pragma(path, name: str) -> object:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]


async def fill(store: st.Store, tables: int, actions: int) -> None:
    for table in range(1, tables + 1):
        await store.write([st.insert_table(table, f"t{table}", {}, 0.0, None)])
    for index in range(actions):
        await store.write(
            [
                st.insert_action(table, 1, index, {"type": "discard", "seat": index % 4})
                for table in range(1, tables + 1)
            ]
        )


@pytest.mark.parametrize("made_before_with", [None, 4096])
async def test_pages_of_a_new_database_are_small_and_an_old_one_keeps_its_own(
    tmp_path, made_before_with
):
    path = tmp_path / "s.db"
    if made_before_with is not None:
        with sqlite3.connect(path) as conn:
            conn.execute(f"PRAGMA page_size={made_before_with}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(st.SCHEMA)
    store = st.Store(path)
    store.open()
    # Enough for several checkpoints: 20 tables x 400 actions.
    await fill(store, tables=20, actions=400)
    await store.close()
    expected = made_before_with or st.PAGE_SIZE
    assert pragma(path, "page_size") == expected
    assert pragma(path, "journal_mode") == "wal"
    assert pragma(path, "integrity_check") == "ok"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM actions").fetchone() == (20 * 400,)
    reopened = st.Store(path)
    assert [t.hand for t in reopened.open()] == [None] * 20  # every table read back
    conn = reopened._connect()
    try:
        (every,) = conn.execute("PRAGMA wal_autocheckpoint").fetchone()
        assert every * expected == st.CHECKPOINT_BYTES
    finally:
        conn.close()
    await reopened.close()
