"""Two console replicas on one PostgreSQL database: runtime clusters added, renamed and removed on
one are served by the other within its sync interval (well under the 5 s the contract allows),
sessions work on both (a sign-out on one ends the other's streams of that session), and the
durable audit trail keeps the actions of both."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from common.db import open_database
from console.clusters.store import SCHEMA
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, kubeconfig_text
from tests.console.test_stream_revocation import ended, session_of, watching
from tests.typing_support import Client


async def clusters(client: Client) -> dict[str, str]:
    resp = await client.get("/api/v1/clusters")
    return {c["id"]: c["name"] for c in await resp.json()}


async def until(check: Any, client: Client) -> dict[str, str]:
    """The other replica's clusters once ``check`` holds for them; fails after 5 s."""
    async with asyncio.timeout(5):
        while not check(found := await clusters(client)):
            await asyncio.sleep(0.05)
    return found


async def test_runtime_clusters_are_shared_by_replicas(
    console_app: ConsoleApp, sim_b: Simulator, pg_url: str, tmp_path: Path
) -> None:
    shared = (
        f"clusters.store.url={pg_url}",
        "clusters.store.encryption-key=" + "k" * 32,
        "clusters.store.sync-seconds=0.1",
    )
    a = await console_app(*shared, data_dir=tmp_path / "a")
    b = await console_app(*shared, data_dir=tmp_path / "b")
    body = {"id": "gamma", "name": "Gamma", "kubeconfig": kubeconfig_text(sim_b)}
    resp = await a.post("/api/v1/clusters", json=body, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    assert (await until(lambda found: "gamma" in found, b))["gamma"] == "Gamma"
    counts = await b.get("/api/v1/clusters/gamma/counts")
    assert counts.status == 200, await counts.text()  # browsed through B's own client
    resp = await a.put("/api/v1/clusters/gamma", json={"name": "G"}, headers=ADMIN)
    assert resp.status == 200, await resp.text()
    await until(lambda found: found.get("gamma") == "G", b)
    resp = await b.delete("/api/v1/clusters/gamma", headers=ADMIN)
    assert resp.status == 204
    await until(lambda found: "gamma" not in found, a)
    async with open_database(pg_url, SCHEMA) as db, asyncio.timeout(5):
        sql = "SELECT username, cluster, action, outcome FROM audit ORDER BY id"
        while len(trail := [tuple(row) for row in await db.fetchall(sql)]) < 3:
            await asyncio.sleep(0.05)
    assert [entry[2] for entry in trail] == ["cluster.add", "cluster.update", "cluster.remove"]
    assert {entry[0] for entry in trail} == {"admin"}


async def closed_replicas(console_app: ConsoleApp, pg_url: str, tmp_path: Path) -> tuple[Any, Any]:
    """Two replicas in closed mode sharing the store at ``pg_url``."""
    shared = (
        f"clusters.store.url={pg_url}",
        "clusters.store.encryption-key=" + "k" * 32,
        "security.open-mode=false",
    )
    a = await console_app(*shared, data_dir=tmp_path / "a")
    return a, await console_app(*shared, data_dir=tmp_path / "b")


async def test_a_session_works_on_every_replica_and_ends_everywhere(
    console_app: ConsoleApp, pg_url: str, tmp_path: Path
) -> None:
    a, b = await closed_replicas(console_app, pg_url, tmp_path)
    signed_in = await a.post("/api/v1/auth/session", headers=ADMIN)
    assert signed_in.status == 200, await signed_in.text()
    cookie = {"Cookie": f"JSESSIONID={signed_in.cookies['JSESSIONID'].value}"}
    assert (await b.get("/api/v1/clusters", headers=cookie)).status == 200
    assert (await b.delete("/api/v1/auth/session", headers=cookie)).status == 204
    assert (await a.get("/api/v1/clusters", headers=cookie)).status == 401


async def test_signing_out_on_one_replica_ends_streams_on_another(
    console_app: ConsoleApp, sim: Simulator, pg_url: str, tmp_path: Path
) -> None:
    a, b = await closed_replicas(console_app, pg_url, tmp_path)
    cookie = await session_of(a)
    on_b = await watching(b, cookie)
    assert (await a.delete("/api/v1/auth/session", headers=cookie)).status == 204
    await ended(on_b)  # told through NOTIFY: replica b never looked the session up again
