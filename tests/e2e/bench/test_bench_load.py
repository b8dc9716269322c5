"""The server load generator (bench/load.py) runs from a checkout and measures both servers in
flat-out mode: tonk-server and the echo ceiling. Figures are not checked (the machine is
shared); that each server was driven and answered, without errors, is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e


def load_py(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load.py"), *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def test_flat_out_measures_tonk_and_the_echo_ceiling(tmp_path: Path) -> None:
    report_file = tmp_path / "BENCHMARKS.md"
    run = load_py(
        "flat",
        "--tables",
        "2",
        "--seconds",
        "1",
        "--warmup",
        "0.5",
        "--procs",
        "1",
        "--json",
        "--write",
        str(report_file),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("\n{") + 1 :])
    (size,) = report["flat_sizes"]
    tonk, echo = size["flat"], size["echo"]
    for result in (tonk, echo):
        assert result["actions"] > 0
        assert result["errors"] == {}
    assert tonk["server_exit"] == 0
    assert 50 < tonk["mean_frame_bytes"] < 2000
    assert size["share_percent"] == 100 * tonk["actions_per_second"] / echo["actions_per_second"]
    written = report_file.read_text()
    assert "## Server" in written
    assert "bare asyncio + msgpack echo (the ceiling)" in written
    assert "Best share of the ceiling" in written
    # The same section is written again from the saved report, without measuring anything.
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(report))
    again = tmp_path / "AGAIN.md"
    rerun = load_py("all", "--from-json", str(saved), "--write", str(again), cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert again.read_text() == written
