"""The short soak: bench/soak.py with 10 tables of bot clients for 10 s against a real
tonk-server process, with disconnects, reconnects by seat token and takeovers; then its ledger
audit, shown to catch ledgers that do not add up. (The long soak is a benchmark: BENCHMARKS.md.)
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e

BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import soak  # noqa: E402


@pytest.fixture(scope="module")
def soaked(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    db = tmp_path_factory.mktemp("soak") / "soak.db"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "soak.py"),
            "--tables",
            "10",
            "--seconds",
            "10",
            "--drop-every",
            "4",
            "--db",
            str(db),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout), db


@pytest.mark.slow
def test_short_soak_plays_hands_with_reconnects_and_no_unexpected_error(soaked):
    code, report, _ = soaked
    errors = report["errors"]
    assert errors["unexpected"] == {}, errors
    assert errors["failures"] == []
    assert errors["stalled_tables"] == []
    assert errors["server_log"] == []
    assert errors["server_exit"] == 0
    assert set(errors["expected"]) <= soak.EXPECTED_ERRORS
    assert report["hands"] > 0
    assert report["reconnects"] > 0
    assert sum(report["drops"].values()) > 0
    assert code == 0, report["checks"]


@pytest.mark.slow
def test_short_soak_ledgers_sum_to_zero_on_disk(soaked):
    _, report, db = soaked
    assert report["ledger"]["problems"] == []
    assert report["ledger"]["tables"] == 10
    assert report["ledger"]["replayed"] == report["hands"] > 0
    with sqlite3.connect(db) as conn:
        sums = conn.execute(
            "SELECT table_id, SUM(balance), COUNT(*) FROM balances GROUP BY table_id"
        ).fetchall()
    assert sums, "no balances on disk"
    for table_id, total, players in sums:
        assert total == 0, f"table {table_id} sums to {total}"
        assert players == 4


def test_short_soak_memory_stays_within_its_bound(soaked):
    _, report, _ = soaked
    memory = report["memory_mib"]
    assert memory["bound"] >= soak.MEMORY_SLACK_MIB
    assert memory["end"] - memory["start"] == pytest.approx(memory["growth"])
    assert memory["growth"] <= memory["bound"], memory


def problems_when_planted(db: Path, tmp_path: Path, sql: str) -> list[str]:
    """What the soak's ledger audit finds in a copy of `db` after `sql` changed one row of it."""
    copy = tmp_path / "planted.db"
    shutil.copy(db, copy)
    with sqlite3.connect(copy) as conn:
        assert conn.execute(sql).rowcount == 1
    problems: list[str] = soak.check_ledgers(copy)["problems"]
    return problems


def test_the_audit_catches_a_ledger_that_does_not_sum_to_zero(soaked, tmp_path):
    _, _, db = soaked
    problems = problems_when_planted(
        db,
        tmp_path,
        "UPDATE balances SET balance = balance + 1 WHERE rowid = (SELECT MIN(rowid) FROM balances)",
    )
    assert any("sum to 1" in problem for problem in problems), problems


def test_the_audit_catches_balances_that_do_not_match_the_payments(soaked, tmp_path):
    _, _, db = soaked
    problems = problems_when_planted(
        db,
        tmp_path,
        "UPDATE payments SET amount = amount + 1 WHERE rowid = (SELECT MIN(rowid) FROM payments)",
    )
    assert any("the payments add up to" in problem for problem in problems), problems


def test_the_audit_catches_a_settlement_the_record_does_not_replay_to(soaked, tmp_path):
    _, _, db = soaked
    with sqlite3.connect(db) as conn:
        settlement = conn.execute(
            "SELECT settlement FROM hands WHERE settlement IS NOT NULL LIMIT 1"
        ).fetchone()[0]
    data = json.loads(settlement)
    data["next_multiplier"] = data["next_multiplier"] + 7
    problems = problems_when_planted(
        db,
        tmp_path,
        "UPDATE hands SET settlement = '"
        + json.dumps(data).replace("'", "''")
        + "' WHERE rowid = (SELECT MIN(rowid) FROM hands WHERE settlement IS NOT NULL)",
    )
    assert any("replay" in problem for problem in problems), problems
