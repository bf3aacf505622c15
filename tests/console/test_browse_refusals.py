"""Refusals keep the cluster's own status (``cluster-refused``); an unreachable cluster is 502."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN
from tests.guards import assert_problem


def broken_kubeconfig(sim: Simulator, path: Path) -> Path:
    """Contexts ``badtoken`` (the simulator, a wrong token) and ``dead`` (nothing listening)."""
    doc = yaml.safe_load(sim.kubeconfig_path.read_text("utf-8"))
    cluster = doc["clusters"][0]["cluster"]
    doc["clusters"] = [
        {"name": "sim", "cluster": cluster},
        {"name": "dead", "cluster": {**cluster, "server": "https://127.0.0.1:9"}},
    ]
    doc["users"] = [{"name": "wrong", "user": {"token": "not-the-token"}}]
    doc["contexts"] = [
        {"name": "badtoken", "context": {"cluster": "sim", "user": "wrong"}},
        {"name": "dead", "context": {"cluster": "dead", "user": "wrong"}},
    ]
    doc["current-context"] = "badtoken"
    path.write_text(yaml.safe_dump(doc), "utf-8")
    return path


async def test_a_refusal_keeps_the_clusters_status_and_reason(
    console_app: ConsoleApp, sim: Simulator, tmp_path: Path
) -> None:
    kubeconfig = broken_kubeconfig(sim, tmp_path / "broken")
    client = await console_app(environ={"KUBECONFIG": str(kubeconfig)})
    for path in ("nav", "counts", "resources/pods", "search?q=x"):
        resp = await client.get(f"/api/v1/clusters/badtoken/{path}")
        body = await assert_problem(resp, 401, code="cluster-refused")
        assert body["detail"] == "Unauthorized"


async def test_an_unreachable_cluster_is_a_502(
    console_app: ConsoleApp, sim: Simulator, tmp_path: Path
) -> None:
    kubeconfig = broken_kubeconfig(sim, tmp_path / "broken")
    client = await console_app(environ={"KUBECONFIG": str(kubeconfig)})
    resp = await client.get("/api/v1/clusters/dead/nav")
    body = await assert_problem(resp, 502, code="cluster-refused")
    assert "could not be reached" in body["detail"]


async def test_closed_mode_needs_the_admin_for_browsing_too(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    await assert_problem(await client.get("/api/v1/clusters/alpha/nav"), 401)
    await assert_problem(await client.get("/api/v1/clusters/alpha/resources/pods/objects"), 401)
    resp = await client.get("/api/v1/clusters/alpha/nav", headers=ADMIN)
    assert resp.status == 200
    open_client = await console_app()
    assert (await open_client.get("/api/v1/clusters/alpha/nav")).status == 200
