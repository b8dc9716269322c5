"""The client start benchmark (bench/client_start.py) runs from a checkout: it times fresh
interpreters importing the client (and starting it, `--screen`), against another interpreter too,
and says when one cannot.
Figures are not checked (the machine is shared); that each run was timed and reported is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e

BENCH = str(ROOT / "bench" / "client_start.py")


def test_the_start_benchmark_times_both_interpreters_pair_by_pair() -> None:
    run = subprocess.run(
        [sys.executable, BENCH, "--runs", "2", "--warmup", "0", "--vs", sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 3
    for line in lines[:2]:
        cpu, peak = re.findall(r"(?:CPU|peak) ([0-9.]+) ", line)
        assert float(cpu) > 0 and float(peak) > 5  # an interpreter with Textual loaded
    assert lines[2].startswith("CPU, this / --vs, pair by pair: ")


def test_the_start_to_the_first_screen_is_timed_too() -> None:
    run = subprocess.run(
        [sys.executable, BENCH, "--runs", "1", "--warmup", "0", "--screen"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    (line,) = run.stdout.splitlines()
    cpu, peak = (float(x) for x in re.findall(r"(?:CPU|peak) ([0-9.]+) ", line))
    imported = subprocess.run(
        [sys.executable, BENCH, "--runs", "1", "--warmup", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    imported_peak = float(re.findall(r"peak ([0-9.]+) ", imported.stdout)[0])
    assert cpu > 0 and peak > imported_peak  # (an app was started: more memory than its import)


def test_an_interpreter_without_the_client_is_reported(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'No module named tonk' >&2\nexit 1\n")
    fake.chmod(0o755)
    run = subprocess.run(
        [sys.executable, BENCH, "--runs", "1", "--warmup", "0", "--vs", str(fake)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "could not import the client" in run.stderr
    assert "No module named tonk" in run.stderr
