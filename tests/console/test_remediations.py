"""Remediations on a live cluster: proposed from findings, previewed with dryRun=All (the cluster
does not change), applied only with confirm=true (it does, and the audit trail says so)."""

from __future__ import annotations

from typing import Any

from console.resources.kubeapi import STRATEGIC_PATCH
from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    create,
    deployment,
    eventually,
    kube_in_new_namespace,
    obj_path,
    read,
)
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"


def _image(obj: dict[str, Any]) -> str:
    image: str = obj["spec"]["template"]["spec"]["containers"][0]["image"]
    return image


async def _broken(sim: Simulator, client: Client, ns: str, code: str) -> list[dict[str, Any]]:
    async def check() -> list[dict[str, Any]] | None:
        body = await (await client.get(f"{BASE}/remediations", params={"namespace": ns})).json()
        proposals: list[dict[str, Any]] = body["proposals"]
        return proposals if any(p["finding"] == code for p in proposals) else None

    found: list[dict[str, Any]] = await eventually(check, timeout=20, what=f"a {code} finding")
    return found


async def test_rollback_of_a_crash_looping_revision(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "rem") as (api, ns):
        app = deployment(ns, "api", image="nginx:1.27.3")
        await create(api, app)
        await eventually(lambda: _revision(api, app, "1"), what="revision 1")
        bad = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "ghcr.io/wharf-demo/crashloop:1.0"}
        ]}}}}  # fmt: skip
        await api.send("PATCH", obj_path(app, name=True), bad, content_type=STRATEGIC_PATCH)
        proposals = await _broken(sim, client, ns, "crash-loop")
        actions = {(p["action"], p["target"]) for p in proposals}
        assert {("rollback", "Deployment/api"), ("restart", "Deployment/api")} <= actions
        assert any(a == "delete-pod" for a, _ in actions)

        order = {"namespace": ns, "action": "rollback", "target": "Deployment/api"}
        resp = await client.post(f"{BASE}/remediations/preview", json=order, headers=ADMIN)
        assert resp.status == 200, await resp.text()
        preview = await resp.json()
        assert preview["dryRun"] is True
        assert _image(preview["object"]) == "nginx:1.27.3"
        lines = preview["diff"].splitlines()
        assert any(x.startswith("-") and "image: ghcr.io/wharf-demo/crashloop" in x for x in lines)
        assert any(x.startswith("+") and "image: nginx:1.27.3" in x for x in lines)
        assert _image(await read(api, app)) == "ghcr.io/wharf-demo/crashloop:1.0"  # unchanged

        refused = await client.post(f"{BASE}/remediations/apply", json=order, headers=ADMIN)
        await assert_problem(refused, 400, code="confirmation-required")
        await assert_problem(await client.post(f"{BASE}/remediations/preview", json=order), 401)
        assert _image(await read(api, app)) == "ghcr.io/wharf-demo/crashloop:1.0"

        confirmed = {**order, "confirm": True}
        resp = await client.post(f"{BASE}/remediations/apply", json=confirmed, headers=ADMIN)
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["dryRun"] is False
        assert _image(await read(api, app)) == "nginx:1.27.3"
    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    assert (audit[0]["action"], audit[0]["target"]) == (
        "remediate.rollback",
        f"{ns}/Deployment/api",
    )


async def test_raise_the_memory_limit_of_an_oom_killed_workload(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "rem") as (api, ns):
        hog = deployment(ns, "hog")
        hog["spec"]["template"]["spec"]["containers"][0].update(
            image="ghcr.io/wharf-demo/oom-eater:2.1", resources={"limits": {"memory": "64Mi"}}
        )
        await create(api, hog)
        proposals = await _broken(sim, client, ns, "oom-killed")
        raise_it = next(p for p in proposals if p["action"] == "raise-memory-limit")
        assert raise_it["params"] == {"container": "app", "memory": "128Mi"}

        order = {k: raise_it[k] for k in ("namespace", "action", "target", "params")}
        preview = await (
            await client.post(f"{BASE}/remediations/preview", json=order, headers=ADMIN)
        ).json()
        limits = preview["object"]["spec"]["template"]["spec"]["containers"][0]["resources"]
        assert limits["limits"]["memory"] == "128Mi"
        assert any(x.startswith("+") and "memory: 128Mi" in x for x in preview["diff"].splitlines())
        live = await read(api, hog)
        assert live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
            "memory": "64Mi"
        }
        resp = await client.post(
            f"{BASE}/remediations/apply", json={**order, "confirm": True}, headers=ADMIN
        )
        assert resp.status == 200, await resp.text()
        live = await read(api, hog)
        assert live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {
            "memory": "128Mi"
        }


async def test_delete_pod_preview_keeps_the_pod(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "rem") as (api, ns):
        app = deployment(ns, "pull", image="ghcr.io/wharf-demo/no-such-image:0")
        await create(api, app)
        proposals = await _broken(sim, client, ns, "image-pull")
        delete = next(p for p in proposals if p["action"] == "delete-pod")
        order = {k: delete[k] for k in ("namespace", "action", "target")}
        pod_path = f"/api/v1/namespaces/{ns}/pods/{delete['target'].removeprefix('Pod/')}"
        resp = await client.post(f"{BASE}/remediations/preview", json=order, headers=ADMIN)
        assert resp.status == 200, await resp.text()
        assert (await api.get(pod_path))["metadata"].get("deletionTimestamp") is None
        bad = {**order, "target": "Deployment/pull"}
        await assert_problem(
            await client.post(f"{BASE}/remediations/preview", json=bad, headers=ADMIN), 400
        )
        resp = await client.post(
            f"{BASE}/remediations/apply", json={**order, "confirm": True}, headers=ADMIN
        )
        assert resp.status == 200, await resp.text()

        async def gone() -> bool:
            pods = (await api.get(f"/api/v1/namespaces/{ns}/pods"))["items"]
            return delete["target"].removeprefix("Pod/") not in {
                p["metadata"]["name"] for p in pods
            }

        await eventually(gone, what="the deleted pod gone")


async def _revision(api: Any, obj: dict[str, Any], wanted: str) -> bool:
    found = await read(api, obj)
    annotations = found["metadata"].get("annotations") or {}
    return bool(annotations.get("deployment.kubernetes.io/revision") == wanted)
