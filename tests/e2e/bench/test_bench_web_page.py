"""The web page's benchmark (bench/web_page.py) runs from a checkout, one run in headless
Chromium at a phone's size: a first visit, a reload, the lobby opened twice and a tap each
way. Times are not checked (the machine is shared); the bytes are, and that every step came."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT
from webkit import require_browser

pytestmark = pytest.mark.e2e


def test_the_web_page_benchmark_loads_reloads_and_taps(tmp_path: Path) -> None:
    require_browser()
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "web_page.py"), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    said = run.stdout
    first = re.search(r"first visit \(form and table pages\): (\d+) KiB fetched", said)
    again = re.search(r"reload of the table's page: ([\d.]+) KiB fetched", said)
    assert first is not None and again is not None, said
    assert 100 < int(first.group(1)) < 700, said  # compressed: well under 700 KB
    assert float(again.group(1)) < 20, said  # the page alone
    for step in ("nothing cached", "files cached", "tap Help", "tap Close"):
        assert re.search(rf"{step}.*: p50 \d+ ms", said), (step, said)
