"""What the read side (API and pages) needs from a store, as one interface.

Each read module declares its own needs (``browse.BrowseStore``, ``trends.TrendStore``,
``history.HistoryStore``, ``compare.CompareStore``); ``results.store.reads`` implements them all
for SQLite, and a PostgreSQL store would implement this. This module must not do anything else.
"""

from __future__ import annotations

from typing import Protocol

from results.compare import CompareStore
from results.trends import TrendStore


class ReadStore(CompareStore, TrendStore, Protocol):
    """Everything the read API and the dashboard ask of a store."""
