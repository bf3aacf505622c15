"""The SQLite cluster store: private file, WAL, migrations by user_version, round trips."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from console.clusters.model import StoredCluster
from console.clusters.store import MIGRATIONS, SqlClusterStore


async def test_round_trip_and_private_file(tmp_path: Path) -> None:
    store = SqlClusterStore(f"sqlite:{tmp_path / 'sub' / 'clusters.db'}")
    await store.open()
    try:
        row = StoredCluster("gamma", "Gamma", "ctx", "kind: Config\n")
        await store.insert(row)
        await store.update(StoredCluster("gamma", "G", "ctx2", "kind: Config\n# new\n"))
        [back] = await store.all()
        assert (back.id, back.name, back.context, back.kubeconfig) == (
            "gamma",
            "G",
            "ctx2",
            "kind: Config\n# new\n",
        )
        assert "kind" not in repr(back)
        await store.delete("gamma")
        assert await store.all() == []
    finally:
        await store.close()
    mode = stat.S_IMODE((tmp_path / "sub" / "clusters.db").stat().st_mode)
    assert mode == 0o600
    with sqlite3.connect(tmp_path / "sub" / "clusters.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "clusters.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    store = SqlClusterStore(f"sqlite:{path}")
    with pytest.raises(RuntimeError, match="newer"):
        await store.open()
