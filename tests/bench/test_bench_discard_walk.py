"""The walk of a discard (bench/discard_walk.py): how it counts, on stacks made up here, and the
walk itself run as a process, from the key to the hand drawn, through the server's read loop in
server/connection.py."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from checkout import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from discard_walk import walk_of

A = ("a.py", "a")
B = ("b.py", "b")
C = ("c.py", "c")
D = ("d.py", "d")


def test_a_stack_is_walked_in_and_the_next_from_where_it_parts() -> None:
    # a → b → c, back to b, on to d; then a new task's stack (nothing shared): out to a, in.
    stacks = [[A, B, C], [A, B, D], [("e.py", "e"), ("f.py", "f")]]
    walk = walk_of(stacks)
    assert [f for f, _ in walk] == [
        "a.py",
        "b.py",
        "c.py",
        "b.py",
        "d.py",
        "b.py",
        "a.py",
        "e.py",
        "f.py",
    ]


def test_a_stack_inside_the_last_one_goes_back_to_where_it_is() -> None:
    assert [f for f, _ in walk_of([[A, B, C], [A, B], [A, D]])] == [
        "a.py",
        "b.py",
        "c.py",
        "b.py",
        "a.py",
        "d.py",
    ]


def test_a_files_stops_one_after_another_are_one_stop() -> None:
    same = ("a.py", "other")
    assert walk_of([[A], [same]]) == [A]


@pytest.mark.e2e
@pytest.mark.slow
def test_the_walk_runs_from_the_key_to_the_hand_through_the_read_loop() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "discard_walk.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = run.stdout.splitlines()
    stops = [line.split()[1:3] for line in lines if re.match(r"\s*\d+ \S+\.py  ", line)]
    assert stops[0][0] == "client/keys.py"
    assert stops[1] == ["client/screens/table.py", "TableScreen.action_discard"]
    assert stops[-1] == ["client/widgets/table.py", "HandView.render"]
    assert ["server/connection.py", "Connection.serve"] in stops
    assert ["shared/wire/link.py", "ServerProtocol.next_events"] in stops
    assert ["shared/game/legality.py", "check"] in stops
    # The server's app is where the connection's task starts, not its read loop's hub.
    assert [f for f, _ in stops].count("server/app.py") == 2
    hops, files = lines[-2].split()[0], lines[-2].split()[3]
    assert int(hops) == len(stops) - 1
    assert int(files) == len({f for f, _ in stops})
