"""Rollback compared with ``kubectl rollout undo``: twin workloads are rolled out twice by the
simulator's controllers (which write the ReplicaSet or ControllerRevision history), then the console
undoes one and kubectl the other, and the templates they leave must match."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from console.resources.kubeapi import STRATEGIC_PATCH, KubeApi
from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    Kubectl,
    create,
    deployment,
    eventually,
    fresh_namespace,
    kube,
    obj_path,
    read,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"


REVISION = "deployment.kubernetes.io/revision"


@pytest.fixture
async def ns(sim: Simulator) -> str:
    return await fresh_namespace(sim, "undo")


def workload(kind: str, ns: str, name: str, image: str) -> dict[str, Any]:
    labels = {"app": f"{name}-app"}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "app", "image": image}]}},
    }  # fmt: skip
    if kind == "StatefulSet":
        spec.update(serviceName=name, replicas=1)
    if kind == "Deployment":
        spec["replicas"] = 1
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": ns}, "spec": spec}  # fmt: skip


async def history(api: KubeApi, obj: dict[str, Any]) -> list[str]:
    """The images of the workload's recorded revisions, oldest first."""
    ns, uid = obj["metadata"]["namespace"], obj["metadata"]["uid"]
    order: Callable[[dict[str, Any]], int]
    image: Callable[[dict[str, Any]], str]
    if obj["kind"] == "Deployment":
        items = await api.list_all(f"/apis/apps/v1/namespaces/{ns}/replicasets")
        order = lambda i: int(i["metadata"].get("annotations", {}).get(REVISION, 0))  # noqa: E731
        image = lambda i: i["spec"]["template"]["spec"]["containers"][0]["image"]  # noqa: E731
    else:
        items = await api.list_all(f"/apis/apps/v1/namespaces/{ns}/controllerrevisions")
        order = lambda i: int(i.get("revision", 0))  # noqa: E731
        image = lambda i: i["data"]["spec"]["template"]["spec"]["containers"][0]["image"]  # noqa: E731
    owned = [
        i
        for i in items
        if any(r.get("uid") == uid for r in i["metadata"].get("ownerReferences") or [])
    ]
    return [image(i) for i in sorted(owned, key=order)]


async def rolled_out_twice(api: KubeApi, kind: str, ns: str, name: str) -> dict[str, Any]:
    """Created with app:1, then changed to app:2, both revisions recorded by the controller."""
    made = await create(api, workload(kind, ns, name, "nginx:1.26"))
    await eventually(lambda: history(api, made), what=f"{name}'s first revision")
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}
    }
    await api.send("PATCH", obj_path(made, name=True), patch, content_type=STRATEGIC_PATCH)

    async def both() -> bool:
        return await history(api, made) == ["nginx:1.26", "nginx:1.27"]

    await eventually(both, what=f"{name}'s second revision")
    return made


@pytest.mark.parametrize(
    ("kind", "rid"),
    [("Deployment", "deployments"), ("StatefulSet", "statefulsets"), ("DaemonSet", "daemonsets")],
)
async def test_rollback_as_kubectl_rollout_undo(
    client: Client, sim: Simulator, kubectl: Kubectl, ns: str, kind: str, rid: str
) -> None:
    async with kube(sim) as api:
        ours = await rolled_out_twice(api, kind, ns, "ours")
        theirs = await rolled_out_twice(api, kind, ns, "theirs")
    resp = await client.post(f"{BASE}/resources/{rid}/{ns}/ours/rollback", headers=ADMIN)
    body = await resp.json()
    assert resp.status == 200, body
    assert body["message"] == f"{kind.lower()}.apps/ours rolled back"
    kubectl.run("rollout", "undo", "-n", ns, f"{kind.lower()}/theirs")
    async with kube(sim) as api:
        ours, theirs = await read(api, ours), await read(api, theirs)
    ours_template, theirs_template = ours["spec"]["template"], theirs["spec"]["template"]
    assert ours_template["metadata"]["labels"] == {"app": "ours-app"}
    ours_template["metadata"]["labels"] = theirs_template["metadata"]["labels"]
    assert ours_template == theirs_template
    assert ours_template["spec"]["containers"][0]["image"] == "nginx:1.26"
    entry = (await (await client.get("/api/v1/audit", headers=ADMIN)).json())[0]
    assert (entry["action"], entry["target"]) == ("rollback", f"{rid}/{ns}/ours")


async def test_no_history_and_paused_are_refused(client: Client, sim: Simulator, ns: str) -> None:
    async with kube(sim) as api:
        fresh = await create(api, deployment(ns, "fresh"))
        await create(api, deployment(ns, "held", paused=True))
        await eventually(lambda: history(api, fresh), what="the first revision")
    resp = await client.post(f"{BASE}/resources/deployments/{ns}/fresh/rollback", headers=ADMIN)
    body = await assert_problem(resp, 409)
    assert body["detail"] == 'no rollout history found for deployment "fresh"'
    resp = await client.post(f"{BASE}/resources/deployments/{ns}/held/rollback", headers=ADMIN)
    body = await assert_problem(resp, 409)
    assert "cannot rollback a paused deployment" in body["detail"]
    resp = await client.post(f"{BASE}/resources/configmaps/{ns}/x/rollback", headers=ADMIN)
    await assert_problem(resp, 400, code="invalid-request")
