"""A release a killed writer left pending (issue 39 item 13): health names it (on the default
cluster and on those a host's resolver routes to, from a background refresh), a write answers 409
with the recovery, and the recovery works. The pending record is Helm's own Secret, rewritten to
the state a ``helm install`` killed mid-write leaves (status ``pending-install``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_aiohttp import AiohttpClient

from chartsvc.app import create_app
from chartsvc.clusters import ClusterTarget
from chartsvc.keys import STUCK
from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, LOOPBACK, MakeSettings
from tests.chartsvc.fixtures_cluster import (
    API,
    build_chart,
    install,
    install_upload,
    leave_pending,
    namespace,
    releases,
    sim,
    stuck_details,
)
from tests.guards import assert_json, assert_problem
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]


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

    details = await stuck_details(releases)
    # "fine", deployed, is not listed
    assert details["stuck"] == [
        {"cluster": "kubesim", "namespace": namespace, "name": "web", "status": "pending-install"}
    ]
    assert details["clusters"] == {"kubesim": {"checked": True}}
    assert "rollback" in details["recovery"]

    resp = await releases.delete(where, headers=KEY)  # the recovery the detail names
    assert resp.status == 200, await resp.text()
    await assert_json(await install(releases, namespace), 201)


async def test_health_names_stuck_releases_on_the_resolvers_clusters_from_a_background_refresh(
    aiohttp_client: AiohttpClient,
    make_settings: MakeSettings,
    sim: Simulator,
    namespace: str,
    tmp_path: Path,
) -> None:
    target = ClusterTarget.from_file(sim.kubeconfig_path, name="tenant-a")
    app = create_app(
        make_settings(*FULL), address_allow=LOOPBACK, cluster_resolver=lambda request: target
    )
    client = await aiohttp_client(app)

    async def details() -> dict[str, Any]:
        health = await assert_json(await client.get("/actuator/health"))
        found: dict[str, Any] = health["components"]["readiness"]["components"]["releases"]
        assert found["status"] == "UP"
        return dict(found["details"])

    assert await details() == {"stuck": [], "clusters": {}}  # the resolver has named none yet
    await assert_json(await install_upload(client, build_chart(tmp_path), namespace, "web"), 201)
    await leave_pending(sim, namespace, "web")
    # health reads what the refresh found (none then); a new round finds the pending release
    assert (await details())["clusters"] == {"tenant-a": {"checked": False, "reason": "checking"}}
    await app[STUCK].refresh()
    found = await stuck_details(client)
    assert found["stuck"] == [
        {"cluster": "tenant-a", "namespace": namespace, "name": "web", "status": "pending-install"}
    ]
    assert found["clusters"] == {"tenant-a": {"checked": True}}
