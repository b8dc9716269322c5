"""The server's garbage collector: young collections rarer than CPython's default, and the
objects of the start-up frozen, so that a full collection does not go through them again."""

from __future__ import annotations

import subprocess
import sys


def test_the_server_tunes_the_collector_and_freezes_what_it_started_with() -> None:
    probe = (
        "import gc\n"
        "from tonk.server.cli import GC_THRESHOLDS, tune_garbage_collector\n"
        "assert gc.get_freeze_count() == 0\n"
        "tune_garbage_collector()\n"
        "print(gc.get_threshold() == GC_THRESHOLDS, gc.get_freeze_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    tuned, frozen = out.stdout.split()
    assert tuned == "True"
    assert int(frozen) > 10_000  # the modules the server loaded, their classes and functions
