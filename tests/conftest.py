"""Fixtures shared by the test files, and how pytest-xdist spreads the files over its workers."""

from __future__ import annotations

import ast
import functools
import logging
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from checkout import ROOT
from ptyterm import Term
from sshkit import DoorServer, door_server
from tonk.server.doors.door_template import SessionTemplate
from tonk.server.store.store import Store
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling
from xdist.workermanage import WorkerController

#: The files with end-to-end tests whose processes wait on no timer and load no more than one
#: core (a command's output read, bench/'s scripts timed or counted under valgrind, tonk-sim):
#: like the files of tests in the test's own process, they run side by side.
NO_TIMERS = frozenset(
    {
        "test_bench_client_start.py",
        "test_bench_server_instructions.py",
        "test_server_audit.py",
        "test_server_help.py",
        "test_sim.py",
    }
)


#: The two units of end-to-end tests, each run one test after another on a worker of its own,
#: of about equal time (about 5 minutes each on two quiet cores): the terminal client's (the
#: folders of TERMINAL_UNIT) and the doors' (SSH, web, and the end-to-end tests of the other
#: folders).
E2E_UNITS = ("e2e: terminal", "e2e: doors")
TERMINAL_UNIT = ("tests/e2e/tcp/", "tests/e2e/bench/")


@functools.cache
def e2e_tests(file: str) -> frozenset[str] | None:
    """The names of the end-to-end tests of `file` (a path from the checkout's top): those
    marked `@pytest.mark.e2e`, or None where the whole module is (`pytestmark`)."""
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and "pytestmark" in map(ast.unparse, node.targets):
            if "e2e" in ast.unparse(node.value):
                return None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            "mark.e2e" in ast.unparse(decorator) for decorator in node.decorator_list
        ):
            names.add(node.name)
    return frozenset(names)


@functools.cache
def has_slow_tests(file: str) -> bool:
    """Whether `file` (a path from the checkout's top) marks any of its tests `slow`."""
    path = ROOT / file
    return path.is_file() and "mark.slow" in path.read_text(encoding="utf-8")


class FileScheduling(LoadFileScheduling):
    """The tests run on a worker a core (pyproject.toml's addopts: `-n auto --dist loadfile`),
    each file's tests in order on one worker and its module fixtures made once: the tests in
    the test's own process side by side, the end-to-end tests in two units of work (E2E_UNITS),
    each one test after another, and both started first, one a worker: their processes wait on
    timers, and two such tests at once are what two cores carry (a third set could starve
    them; NO_TIMERS aside). A file with some end-to-end tests has those in its unit, the others
    side by side. The files that load the machine in the test's own process (a thousand
    connections or hands: test_leaks_many, test_hostile_clients, test_server_lobby, ...) run
    side by side too, once a worker is done with its unit: one process keeps at most one core
    busy."""

    def __init__(self, config: pytest.Config, log: Producer, e2e: bool) -> None:
        super().__init__(config, log)
        self.e2e = e2e
        self._slow_first = False  # the files with slow tests moved to the queue's front

    def _split_scope(self, nodeid: str) -> str:
        file = super()._split_scope(nodeid)
        if not self.e2e or Path(file).name in NO_TIMERS:
            return file
        marked = e2e_tests(file)
        test = nodeid.split("::")[1].split("[")[0] if "::" in nodeid else ""
        if marked is not None and test not in marked:
            return file
        return E2E_UNITS[0] if file.startswith(TERMINAL_UNIT) else E2E_UNITS[1]

    def _assign_work_unit(self, node: WorkerController) -> None:
        """The next unit to `node`: an end-to-end unit while one is waiting, then the files
        with slow tests (xdist's queue is ordered by the number of tests a unit has, not by
        its time: a thousand hands' leak check, 17 to 21 s in 4 tests, came 1,700th of 1,709
        in the inner loop, and one core idled under it at the end)."""
        if not self._slow_first:
            self._slow_first = True
            for unit in [unit for unit in self.workqueue if has_slow_tests(unit)][::-1]:
                self.workqueue.move_to_end(unit, last=False)
        for unit in reversed(E2E_UNITS):
            if unit in self.workqueue:
                self.workqueue.move_to_end(unit, last=False)
        super()._assign_work_unit(node)


def leaves_out_e2e(config: pytest.Config) -> bool:
    """Whether `-m` leaves the end-to-end tests out (the inner loops)."""
    return "not e2e" in config.getoption("markexpr")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`'s workers: one a core, and one more where `-m` leaves the end-to-end tests
    out. The tests in the test's own process wait on timers and sockets about a quarter of
    their time (the inner loop, 2026-12-07, two cores: 249 s of test time on 199 s of CPU), and
    a third worker fills it: 134 s with two workers, 106 with three, 108 with four
    (CONTRIBUTING.md). With end-to-end tests, a core a worker (FileScheduling); and xdist's
    own count wherever PYTEST_XDIST_AUTO_NUM_WORKERS sets it."""
    if not leaves_out_e2e(config) or os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # (xdist's own count)
    return len(os.sched_getaffinity(0)) + 1


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """The scheduler for `--dist loadfile`; xdist's own for any other way asked for. Where
    `-m` leaves the end-to-end tests out, the files that have some run side by side too."""
    if config.getoption("dist") != "loadfile":
        return None
    return FileScheduling(config, log, e2e=not leaves_out_e2e(config))


@pytest.fixture
async def opened_store(tmp_path: Path) -> AsyncIterator[Store]:
    """A store opened on a new database, tmp_path / "s.db"; closed after the test (a test
    that reads the file itself closes it first: closing again does nothing)."""
    store = Store(tmp_path / "s.db")
    assert store.open() == []
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """What an in-process server logs at INFO and above, as the host reads it (`.text`). The
    handler goes on the server's logger itself: a practice table run earlier in this process
    may have stopped it passing records up to the root logger."""
    logger = logging.getLogger("tonk.server")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="tonk.server"):
            yield caplog
    finally:
        logger.removeHandler(caplog.handler)


@pytest.fixture
def term() -> Iterator[Term]:
    """An 80x24 pseudo-terminal with a screen behind it; whatever the test runs on it is
    ended after the test."""
    terminal = Term(80, 24)
    try:
        yield terminal
    finally:
        terminal.close()


@pytest.fixture
def door(tmp_path: Path) -> Iterator[DoorServer]:
    """`tonk-server` with its SSH door on free ports (skipped, naming the package, where
    OpenSSH's client is missing)."""
    with door_server(tmp_path) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def template() -> AsyncIterator[SessionTemplate]:
    """The door sessions' template, started once for a module's tests (it takes a second to
    import the table app), each test's door forking its sessions from it and leaving it
    running; closed after the module's last test. A test that uses it runs in the module's
    event loop, which the template runs in: @pytest.mark.asyncio(loop_scope="module")."""
    shared = SessionTemplate()
    await shared.start()
    try:
        yield shared
    finally:
        await shared.close()
