"""The cluster list from a two-context kubeconfig (the fixture both groups build on)."""

from __future__ import annotations

from typing import Any


async def test_one_cluster_per_context(client: Any, sim: Any, sim_b: Any) -> None:
    resp = await client.get("/api/v1/clusters")
    assert resp.status == 200
    assert await resp.json() == [
        {"id": "alpha", "name": "alpha", "masterUrl": sim.url, "origin": "STATIC"},
        {"id": "beta", "name": "beta", "masterUrl": sim_b.url, "origin": "STATIC"},
    ]
