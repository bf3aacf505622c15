"""Object actions compared with kubectl: each is run by the console on one object and by kubectl
on its twin, and the cluster state they leave is compared. Also auth, audit and bad input."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiohttp import ClientResponse

from console.actions.objects import INSTANTIATE, job_from_cronjob
from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    Kubectl,
    create,
    create_all,
    cronjob,
    deployment,
    fresh_namespace,
    kube,
    read,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture
async def ns(sim: Simulator) -> str:
    return await fresh_namespace(sim, "act")


async def act(client: Client, path: str, **params: str) -> ClientResponse:
    return await client.post(f"{BASE}/{path}", params=params, headers=ADMIN)


async def current(sim: Simulator, obj: dict[str, Any]) -> dict[str, Any]:
    async with kube(sim) as api:
        return await read(api, obj)


async def last_audit(client: Client) -> dict[str, Any]:
    entries = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    return dict(entries[0])


async def test_scale_as_kubectl_scale(
    client: Client, sim: Simulator, kubectl: Kubectl, ns: str
) -> None:
    async with kube(sim) as api:
        await create_all(
            api, [deployment(ns, "ours", app="twin"), deployment(ns, "theirs", app="twin")]
        )
    resp = await act(client, f"resources/deployments/{ns}/ours/scale", replicas="4")
    body = await resp.json()
    assert resp.status == 200, body
    assert body["message"] == "deployment.apps/ours scaled"
    assert body["row"]["name"] == "ours"
    kubectl.run("scale", "-n", ns, "deployment/theirs", "--replicas=4")
    ours = await current(sim, deployment(ns, "ours"))
    theirs = await current(sim, deployment(ns, "theirs"))
    assert ours["spec"] == theirs["spec"]
    assert ours["spec"]["replicas"] == 4
    entry = await last_audit(client)
    assert (entry["action"], entry["target"], entry["cluster"]) == (
        "scale",
        f"deployments/{ns}/ours",
        "alpha",
    )
    resp = await act(client, f"resources/configmaps/{ns}/x/scale", replicas="1")
    await assert_problem(resp, 400, code="invalid-request")
    resp = await act(client, f"resources/deployments/{ns}/ours/scale", replicas="-1")
    await assert_problem(resp, 400, code="invalid-request")
    resp = await act(client, f"resources/deployments/{ns}/ours/scale")
    await assert_problem(resp, 400, code="invalid-request")


async def test_restart_as_kubectl_rollout_restart(
    client: Client, sim: Simulator, kubectl: Kubectl, ns: str
) -> None:
    async with kube(sim) as api:
        await create_all(
            api,
            [deployment(ns, "ours", app="twin"), deployment(ns, "theirs", app="twin"),
             deployment(ns, "paused", paused=True)],
        )  # fmt: skip
    resp = await act(client, f"resources/deployments/{ns}/ours/restart")
    assert resp.status == 200
    assert (await resp.json())["message"] == "deployment.apps/ours restarted"
    kubectl.run("rollout", "restart", "-n", ns, "deployment/theirs")
    ours = (await current(sim, deployment(ns, "ours")))["spec"]["template"]
    theirs = (await current(sim, deployment(ns, "theirs")))["spec"]["template"]
    key = "kubectl.kubernetes.io/restartedAt"
    stamp = ours["metadata"]["annotations"].pop(key)
    assert RFC3339.match(stamp)
    assert theirs["metadata"]["annotations"].pop(key)
    assert ours == theirs
    resp = await act(client, f"resources/deployments/{ns}/paused/restart")
    body = await assert_problem(resp, 409)
    assert "can't restart paused deployment (run rollout resume first)" in body["detail"]
    failed = await last_audit(client)
    assert (failed["action"], failed["outcome"]) == ("restart", "failure")
    resp = await act(client, f"resources/cronjobs/{ns}/x/restart")
    await assert_problem(resp, 400, code="invalid-request")


async def test_suspend_and_resume(client: Client, sim: Simulator, ns: str) -> None:
    async with kube(sim) as api:
        await create(api, cronjob(ns, "nightly"))
    resp = await act(client, f"resources/cronjobs/{ns}/nightly/suspend")
    assert (await resp.json())["row"]["status"] == "Suspended"
    assert (await current(sim, cronjob(ns, "nightly")))["spec"]["suspend"] is True
    resp = await act(client, f"resources/cronjobs/{ns}/nightly/suspend", suspend="false")
    body = await resp.json()
    assert (body["action"], body["message"]) == ("resume", "cronjob.batch/nightly resumed")
    assert (await current(sim, cronjob(ns, "nightly")))["spec"]["suspend"] is False
    assert (await last_audit(client))["action"] == "resume"


def without_empty(node: Any) -> Any:
    """Go's JSON of a typed object writes nulls and empty structs where ours leaves keys out."""
    if isinstance(node, dict):
        kept = {k: without_empty(v) for k, v in node.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [])}
    if isinstance(node, list):
        return [without_empty(v) for v in node]
    return node


async def test_trigger_as_kubectl_create_job_from(
    client: Client, sim: Simulator, kubectl: Kubectl, ns: str
) -> None:
    async with kube(sim) as api:
        await create(api, cronjob(ns, "report", labels={"team": "data"},
                                  annotations={"owner": "ana", INSTANTIATE: "template-wins"}))  # fmt: skip
    resp = await act(client, f"resources/cronjobs/{ns}/report/trigger")
    body = await resp.json()
    assert resp.status == 200, body
    created = body["created"]
    assert re.match(r"^report-manual-[a-z0-9]{5}$", created["name"])
    assert (created["kind"], created["resourceId"], created["namespace"]) == ("Job", "jobs", ns)
    assert body["message"] == f"job.batch/{created['name']} created from cronjob.batch/report"
    # kubectl's own Job for the same CronJob (the simulator cannot decode kubectl's protobuf
    # Job, so kubectl prints the Job it would send instead of sending it).
    theirs = kubectl.json("create", "job", "-n", ns, created["name"], "--from=cronjob/report",
                          "--dry-run=client")  # fmt: skip
    stored_cronjob = await current(sim, cronjob(ns, "report"))
    ours = job_from_cronjob(stored_cronjob, created["name"])
    assert without_empty(ours) == without_empty(theirs)
    async with kube(sim) as api:
        job = await read(api, {"apiVersion": "batch/v1", "kind": "Job",
                               "metadata": {"name": created["name"], "namespace": ns}})  # fmt: skip
    assert job["metadata"]["annotations"] == {INSTANTIATE: "template-wins", "owner": "ana"}
    assert job["metadata"]["labels"]["team"] == "data"
    assert job["metadata"]["ownerReferences"] == [
        {"apiVersion": "batch/v1", "kind": "CronJob", "name": "report",
         "uid": stored_cronjob["metadata"]["uid"], "controller": True}
    ]  # fmt: skip
    resp = await act(client, f"resources/deployments/{ns}/x/trigger")
    await assert_problem(resp, 400, code="invalid-request")


async def test_delete_and_force_delete_as_kubectl(
    client: Client, sim: Simulator, kubectl: Kubectl, ns: str
) -> None:
    def held(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "finalizers": ["example.com/hold"]},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip

    async with kube(sim) as api:
        await create_all(api, [held("ours"), held("theirs"), deployment(ns, "gone")])
    resp = await act(client, f"resources/pods/{ns}/ours/delete", force="true")
    body = await resp.json()
    assert resp.status == 200, body
    assert body["message"].startswith('pod "ours" deleted')
    assert body["row"] is None
    kubectl.run("delete", "pod", "-n", ns, "theirs", "--force", "--grace-period=0", "--wait=false")
    ours = (await current(sim, held("ours")))["metadata"]
    theirs = (await current(sim, held("theirs")))["metadata"]
    assert ours["deletionGracePeriodSeconds"] == theirs["deletionGracePeriodSeconds"] == 0
    resp = await act(client, f"resources/deployments/{ns}/gone/delete")
    assert resp.status == 200
    async with kube(sim) as api:
        missing = await api.list_all(f"/apis/apps/v1/namespaces/{ns}/deployments")
    assert missing == []
    resp = await act(client, f"resources/deployments/{ns}/gone/delete")
    await assert_problem(resp, 404, code="cluster-refused")
    failed = await last_audit(client)
    assert (failed["action"], failed["outcome"]) == ("delete", "failure")


async def test_actions_need_the_admin_and_a_known_cluster(client: Client, ns: str) -> None:
    resp = await client.post(f"{BASE}/resources/deployments/{ns}/x/restart")
    await assert_problem(resp, 401)
    resp = await client.post(
        f"/api/v1/clusters/nope/resources/deployments/{ns}/x/restart", headers=ADMIN
    )
    await assert_problem(resp, 404, code="unknown-cluster")
    resp = await act(client, f"resources/gizmos/{ns}/x/delete")
    await assert_problem(resp, 404, code="unknown-resource")
