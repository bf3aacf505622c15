"""A release a killed writer left pending (issue 39 item 13): health names it, a write answers 409
with the recovery, and the recovery works. The pending record is Helm's own Secret, rewritten to
the state a ``helm install`` killed mid-write leaves (status ``pending-install``)."""

from __future__ import annotations

import base64
import gzip
import json

from kubernetes_asyncio.client import CoreV1Api

from chartsvc.releases.reads import decode_record
from kubesim import Simulator
from tests.chartsvc.conftest import KEY
from tests.chartsvc.fixtures_cluster import API, install, kube_api, namespace, releases, sim
from tests.guards import assert_json, assert_problem
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]


async def leave_pending(sim: Simulator, namespace: str, name: str) -> None:
    """Helm's record of ``name`` as a writer killed mid-install leaves it."""
    async with kube_api(sim) as api:
        core = CoreV1Api(api)
        secret = await core.read_namespaced_secret(f"sh.helm.release.v1.{name}.v1", namespace)
        record = decode_record(secret.data["release"])
        record["info"]["status"] = "pending-install"
        packed = base64.b64encode(gzip.compress(json.dumps(record).encode()))
        secret.data["release"] = base64.b64encode(packed).decode()
        secret.metadata.labels["status"] = "pending-install"
        await core.replace_namespaced_secret(secret.metadata.name, namespace, secret)


async def test_a_release_left_pending_is_in_health_and_its_409_names_the_recovery(
    releases: Client, sim: Simulator, namespace: str
) -> None:
    await assert_json(await install(releases, namespace), 201)
    await assert_json(await install(releases, namespace, name="fine"), 201)
    await leave_pending(sim, namespace, "web")
    where = f"{API}/releases/web?namespace={namespace}"
    resp = await releases.put(where, json={"chartRef": "r/demo"}, headers=KEY)
    problem = await assert_problem(resp, 409, code="release-busy")
    assert "uninstall a pending install" in problem["detail"]

    health = await assert_json(await releases.get("/actuator/health"))
    assert health["status"] == "UP"
    details = health["components"]["readiness"]["components"]["releases"]["details"]
    # "fine", deployed, is not listed
    assert details["stuck"] == [
        {"namespace": namespace, "name": "web", "status": "pending-install"}
    ]
    assert "rollback" in details["recovery"]

    resp = await releases.delete(where, headers=KEY)  # the recovery the detail names
    assert resp.status == 200, await resp.text()
    await assert_json(await install(releases, namespace), 201)
