"""The server's garbage collector: young collections rarer than CPython's default, the
objects of the start-up frozen, so that a full collection does not go through them again, and
no message kept alive longer than it is needed."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from netclient import NetClient, start_server
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p


def test_the_server_tunes_the_collector_and_freezes_what_it_started_with() -> None:
    probe = (
        "import gc\n"
        "from tonk.server.commands.cli import GC_THRESHOLDS, tune_garbage_collector\n"
        "assert gc.get_freeze_count() == 0\n"
        "tune_garbage_collector()\n"
        "print(gc.get_threshold() == GC_THRESHOLDS, gc.get_freeze_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    tuned, frozen = out.stdout.split()
    assert tuned == "True"
    assert int(frozen) > 10_000  # the modules the server loaded, their classes and functions


async def test_a_message_is_not_kept_alive_until_the_connections_next_one(tmp_path: Path) -> None:
    """What a message was read into goes once it is answered: kept until the connection's next
    message (seconds, at a table), it would still be young and alive at the collector's next
    pass, and lengthen it (BENCHMARKS.md, "The server's instructions per action")."""

    def alive() -> bool:  # (this test's own request: other tests may leave theirs)
        return any(
            type(each) is m.ListTables and each.after == 987_654 for each in gc.get_objects()
        )

    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        assert not alive()
        await alice.request({"type": p.LIST_TABLES, "after": 987_654, "id": 7}, p.TABLES)
        assert not alive()  # read, handed on as a request, answered: gone
        await alice.close()
