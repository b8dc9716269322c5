"""Fixtures shared by the test files, and how pytest-xdist spreads the files over its workers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from ptyterm import Term
from sshkit import DoorServer, door_server
from tonk.server.doors.door_template import SessionTemplate
from tonk.server.store.store import Store
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

#: The test files that load the machine on purpose (thousands of connections, a thousand hands
#: or pages of the longest tables in the test's own process, a benchmark run flat out): they
#: run one after another on one worker, so that two of them never run side by side.
HEAVY = frozenset(
    {
        "test_hostile_clients.py",
        "test_leaks_many.py",
        "test_server_backlog.py",
        "test_server_leaks.py",
        "test_server_lobby.py",
        "test_soak_short.py",
        "test_bench_load.py",
        "test_bench_lobby.py",
        "test_bench_standings.py",
    }
)


class FileScheduling(LoadFileScheduling):
    """The tests run side by side a file at a time (pyproject.toml's addopts: `-n auto --dist
    loadfile`), each file's tests in order on one worker and its module fixtures made once;
    the heavy files are one unit of work together (most tests first, as xdist orders units)."""

    def _split_scope(self, nodeid: str) -> str:
        file = super()._split_scope(nodeid)
        return "heavy" if Path(file).name in HEAVY else file


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """The scheduler for `--dist loadfile`; xdist's own for any other way asked for."""
    if config.getoption("dist") != "loadfile":
        return None
    return FileScheduling(config, log)


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
