"""The server's instruction count (bench/server_instructions.py) runs from a checkout, under a
real valgrind: two servers given the same seeds play exactly the same actions, and each is
counted. The counts themselves are not checked against a figure; that they were taken is."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT
from termkit import require_tool

pytestmark = pytest.mark.e2e

BENCH = str(ROOT / "bench" / "server_instructions.py")


@pytest.mark.slow
def test_two_servers_given_the_same_seeds_are_counted_on_the_same_actions() -> None:
    require_tool("valgrind", "valgrind")
    baseline = shlex.join([sys.executable, "-m", "tonk.server"])
    run = subprocess.run(
        [sys.executable, BENCH, "--hands", "1,3", "--baseline", baseline, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout[run.stdout.index("{") :])
    assert report["same_actions"] is True
    for label in ("baseline", "this tree"):
        entry = report["runs"][label]
        short, long = entry["runs"]
        assert 0 < short["actions"] < long["actions"]  # three hands hold more than one
        assert short["answered"] == short["actions"] and long["answered"] == long["actions"]
        assert short["errors"] == {} and long["errors"] == {}
        assert short["server_exit"] == 0 and long["server_exit"] == 0
        # The start alone is hundreds of millions of instructions; an action, thousands.
        assert long["instructions"] > short["instructions"] > 10**8
        assert entry["per_action"] > 1000
    assert f"this tree / baseline: {report['ratio']:.3f}" in run.stdout


def test_without_valgrind_it_says_which_package_brings_it(tmp_path: Path) -> None:
    (tmp_path / "python3").symlink_to(sys.executable)  # a PATH with Python and no valgrind
    run = subprocess.run(
        [sys.executable, BENCH, "--hands", "1,2"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": str(tmp_path)},
    )
    assert run.returncode != 0
    assert "needs valgrind (Debian package: valgrind)" in run.stderr
