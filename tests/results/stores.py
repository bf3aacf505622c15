"""The store as fixtures: ``store`` on each engine in turn, ``sqlite_store`` on SQLite alone (for its
query plans). A module imports them explicitly and lists them in ``__all__``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from results.store import SqlStore, open_store


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    """The store on each engine in turn."""
    async with open_store(db_url) as opened:
        yield opened


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqlStore]:
    """For SQLite's query plans."""
    async with open_store(tmp_path / "db" / "results.db") as opened:
        yield opened
