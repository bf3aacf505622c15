"""The cluster store: SQLite (private file, WAL, migrations), PostgreSQL (kubeconfigs encrypted)."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from common.config import ConfigError, load_settings
from console.app import make_store
from console.clusters.model import StoredCluster
from console.clusters.store import (
    MIGRATIONS,
    ClusterStoreKeyMismatch,
    Sealer,
    SqlClusterStore,
)
from console.settings import Settings


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


async def test_on_postgresql_kubeconfigs_are_stored_encrypted(pg_url: str) -> None:
    store = SqlClusterStore(pg_url, sealer=Sealer("k" * 32))
    wrong_key = SqlClusterStore(pg_url, sealer=Sealer("x" * 32))
    await store.open()
    await wrong_key.open()
    try:
        kubeconfig = "kind: Config\nusers: [{user: {token: s3cret-token}}]\n"
        await store.insert(StoredCluster("gamma", "Gamma", "ctx", kubeconfig))
        [back] = await store.all()
        assert (back.id, back.kubeconfig) == ("gamma", kubeconfig)
        [raw] = [tuple(row) for row in await store.db.fetchall("SELECT * FROM clusters")]
        assert "s3cret-token" not in repr(raw)
        assert "kind: Config" not in repr(raw)
        with pytest.raises(ClusterStoreKeyMismatch):
            await wrong_key.all()
        assert store.location is not None
        assert store.location.startswith("//wharf@127.0.0.1:")  # no password, shown as backend:
    finally:
        await wrong_key.close()
        await store.close()


def test_a_postgresql_store_needs_an_encryption_key(tmp_path: Path) -> None:
    url = "postgresql://wharf@127.0.0.1:1/none"
    settings = load_settings(Settings, overrides=[f"console.clusters.store.url={url}"])
    with pytest.raises(ConfigError, match=r"encryption-key"):
        make_store(settings.console)
    short = load_settings(
        Settings,
        overrides=[f"console.clusters.store.url={url}", "console.clusters.store.encryption-key=x"],
    )
    with pytest.raises(ConfigError, match=r"32 random characters"):
        make_store(short.console)
