"""The cost of a deal anyone can check (bench/deal_check.py) runs from a checkout: every hand
it deals from a seal and plays to its end checks, from seat 0's events, as a client's would.
The times themselves are not checked against a figure; that they were taken is."""

from __future__ import annotations

import re
import subprocess
import sys

from checkout import ROOT

BENCH = ROOT / "bench" / "deal_check.py"


def test_the_bench_deals_plays_and_checks_every_hand() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--hands", "30", "--players", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr  # (a hand that did not check fails an assert)
    assert run.stdout.startswith("30 hands, 3 players")
    figures = re.findall(r"^(server|client)[^:]*:\s+([\d.]+)\s+([\d.]+)$", run.stdout, re.M)
    assert [side for side, _, _ in figures] == ["server", "server", "client"]
    assert all(0 < float(median) <= float(p99) for _, median, p99 in figures)
