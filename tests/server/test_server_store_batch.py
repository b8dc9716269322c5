"""The store's batches: runs of one-row inserts merged into multi-row inserts change nothing
but the number of statements, and a batch with a failing write still commits the others."""

from __future__ import annotations

import asyncio
import sqlite3

from tonk.server.store import store as st


def rows(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute("SELECT table_id, hand, idx, action FROM actions ORDER BY rowid").fetchall()


def run(ops: list[st.Op]) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(st.SCHEMA)
    for sql, params in ops:
        conn.execute(sql, params)
    return rows(conn)


def test_merged_inserts_give_the_same_rows_in_the_same_order():
    ops = [st.insert_action(1, 1, i, {"type": "drop", "seat": i}) for i in range(5)]
    ops.append(st.update_table(1, dealer=2))
    ops += [st.insert_action(2, 1, i, {"type": "draw_stock"}) for i in range(3)]
    ops.append(st.insert_hand(1, 2, {"deck": "x"}, ["a", "b"], 0.0))
    merged = st.merged(ops)
    assert len(merged) == 4  # 5 inserts, the update, 3 inserts, the other insert
    assert merged[0][0].count("(?, ?, ?, ?)") == 5
    assert merged[1] == ops[5]
    assert run(merged) == run(ops)
    assert len(run(ops)) == 8


def test_statements_that_are_not_plain_inserts_are_left_alone():
    ops = [
        st.put_seat(1, st.SavedSeat(0, "a", "human", None, "h", 1)),
        st.put_seat(1, st.SavedSeat(1, "b", "human", None, "h", 1)),
        *st.settle_hand(1, 1, {}, {}, 0.0, [("a", "b", 1)], {"a": -1, "b": 1}),
    ]
    assert st.merged(ops)[:2] == ops[:2]  # INSERT OR REPLACE is not merged
    assert st.merged(ops)[-2:] == ops[-2:]  # nor an upsert


def test_a_long_run_is_split_under_sqlites_parameter_limit():
    ops = [st.insert_action(1, 1, i, {}) for i in range(1000)]
    merged = st.merged(ops)
    assert all(len(params) <= 999 for _, params in merged)
    assert sum(len(params) for _, params in merged) == 4000
    assert run(merged) == run(ops)


async def test_one_failing_write_in_a_batch_of_merged_inserts_fails_alone(tmp_path, opened_store):
    store = opened_store
    await store.write([st.insert_action(1, 1, 0, {"n": 0})])
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    loop = asyncio.get_running_loop()
    batch = [
        ([st.insert_action(1, 1, 1, {"n": 1})], loop.create_future(), loop),
        ([st.insert_action(1, 1, 0, {"n": "dup"})], loop.create_future(), loop),  # taken
        ([st.insert_action(1, 1, 2, {"n": 2})], loop.create_future(), loop),
    ]
    results = store._commit(conn, batch)  # one batch, as the writer thread would commit it
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert [r[2:] for r in rows(conn)] == [(0, '{"n":0}'), (1, '{"n":1}'), (2, '{"n":2}')]
    conn.close()
    await store.close()
