"""The lobby benchmark (bench/lobby.py) runs from a checkout at a tiny size: tables play, the
lobby connections are sent pages and changes, and the section is written. Figures are not
checked (the machine is shared); that everything was driven and answered, without errors, is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e


@pytest.mark.slow
def test_the_lobby_benchmark_drives_tables_and_lobby_connections(tmp_path: Path) -> None:
    report_file = tmp_path / "BENCHMARKS.md"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "lobby.py"),
            *("--tables", "3", "--honest", "1", "--lobby", "4", "--seconds", "1.5"),
            *("--warmup", "0.5", "--procs", "1", "--json", "--write", str(report_file)),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("\n{") + 1 :])
    assert report["server_exit"] == 0 and report["errors"] == {}
    assert report["lobby_welcomed"] == 4
    windows = report["windows"]
    assert list(windows) == ["before", "lobby", "after"]
    for window in windows.values():
        assert window["latency_ms"]["count"] > 0
    lobby = windows["lobby"]
    assert lobby["lobby_pages_per_second"] > 0 and lobby["lobby_errors"] == 0
    written = report_file.read_text()
    assert "## Lobby" in written and "honest gap max" in written
    # The same section is written again from the saved output, without measuring anything.
    saved = tmp_path / "run.txt"
    saved.write_text(run.stdout)
    again = tmp_path / "AGAIN.md"
    rerun = subprocess.run(
        [
            *(sys.executable, str(ROOT / "bench" / "lobby.py")),
            *("--from-json", str(saved), "--write", str(again)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert again.read_text() == written
