"""Fixtures shared by the test files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tonk.server.store import Store


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
