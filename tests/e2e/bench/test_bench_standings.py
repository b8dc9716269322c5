"""The standings benchmark (bench/standings.py) runs from a checkout at a tiny size: a database
is built through the store, each period is read and asked of a real server, and a table plays
alone and while the standings are asked. Figures are not checked (the machine is shared); that
everything was built, answered and written, is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e


def test_the_standings_benchmark_builds_reads_asks_and_plays(tmp_path: Path) -> None:
    report_file = tmp_path / "BENCHMARKS.md"
    report_file.write_text("# Benchmarks\n\n## Standings across nights\n\nold figures\n\n## Next\n")
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "standings.py"),
            *(
                "--hands",
                "120",
                "--reads",
                "3",
                "--seconds",
                "0.5",
                "--askers",
                "2",
                "--every",
                "0.05",
            ),
            *("--json", "--write", str(report_file)),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout[run.stdout.index("\n{") + 1 :])
    assert report["server_exit"] == 0
    assert report["database"]["hands"] == 120 and report["database"]["tables"] == 5
    for period in ("tonight", "week", "month", "all"):
        assert report["query"][period]["count"] == 3
        # (the first answer, read afresh, apart from the others: the server's kept one)
        assert report["round_trip"][period]["count"] == 2 and report["round_trip"][period]["first"]
    # Every bot and most people played at some time in a year of nights.
    assert report["query"]["all"]["people"] > 5 and report["query"]["all"]["bots"] >= 1
    alone, asked = report["table"]["alone"], report["table"]["asked"]
    assert alone["actions"]["count"] > 0 and asked["actions"]["count"] > 0
    assert alone["standings_answered"] == 0 and asked["standings_answered"] > 0
    written = report_file.read_text()
    assert written.count("## Standings across nights") == 1 and "old figures" not in written
    assert "| all |" in written and "| asked |" in written and written.endswith("## Next\n")
