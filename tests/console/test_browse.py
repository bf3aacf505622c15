"""Browse endpoints against the simulators: nav, counts, columns, search, diagnostics, overview,
events, schema, and the problems for an unknown cluster, kind or category and for bad input."""

from __future__ import annotations

from typing import Any

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.resources_support import (
    create,
    create_all,
    deployment,
    eventually,
    fresh_namespace,
    kube,
    kube_in_new_namespace,
    namespace,
    seed,
    unique,
    widget_crd,
)
from tests.crds import OPEN, crd
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"


def gateway_crd(kind: str) -> dict[str, Any]:
    return crd("gateway.networking.k8s.io", kind, schema=OPEN)


def config_map(ns: str, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}}}  # fmt: skip


def service(ns: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}  # fmt: skip


def kinds_of(nav: dict[str, Any], category: str) -> list[str]:
    found = [c for c in nav["categories"] if c["id"] == category]
    return [k["resourceId"] for k in found[0]["kinds"]] if found else []


async def test_nav_sorts_builtin_and_custom_kinds_and_adds_gateway_when_served(
    client: Client, sim_b: Simulator
) -> None:
    resp = await client.get("/api/v1/clusters/beta/nav")
    nav = await resp.json()
    assert resp.status == 200
    assert [c["id"] for c in nav["categories"]][:3] == ["cluster", "workloads", "autoscaling"]
    assert kinds_of(nav, "workloads")[:3] == ["pods", "deployments", "daemonsets"]
    assert "events.events.k8s.io" in kinds_of(nav, "cluster")  # core events keep the short id
    assert "gateway" not in [c["id"] for c in nav["categories"]]
    assert nav["gateway"] is False
    async with kube(sim_b) as api:
        await create_all(api, [widget_crd(), gateway_crd("Gateway"),
                               gateway_crd("HTTPRoute")])  # fmt: skip
    nav = await (await client.get("/api/v1/clusters/beta/nav")).json()
    assert nav["gateway"] is True
    assert kinds_of(nav, "gateway") == [
        "gateways.gateway.networking.k8s.io",
        "httproutes.gateway.networking.k8s.io",
    ]
    custom = [k for c in nav["categories"] if c["id"] == "custom-resources" for k in c["kinds"]]
    widget = next(k for k in custom if k["kind"] == "Widget")
    assert widget == {
        "resourceId": "widgets.example.com",
        "kind": "Widget",
        "group": "example.com",
        "version": "v1",
        "apiVersion": "example.com/v1",
        "resource": "widgets",
        "namespaced": True,
        "builtin": False,
        "verbs": sorted(widget["verbs"]),
        "shortNames": [],
    }
    assert "list" in widget["verbs"]
    columns = await client.get("/api/v1/clusters/beta/resources/widgets.example.com/columns")
    assert await columns.json() == [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 0},
        {"name": "Colour", "type": "string", "jsonPath": ".spec.colour", "priority": 1,
         "description": "what it looks like"},
    ]  # fmt: skip
    builtin = await client.get("/api/v1/clusters/beta/resources/deployments/columns")
    assert await builtin.json() == []


async def test_counts_use_the_remaining_count_and_say_how_exact_they_are(
    client: Client, sim: Simulator
) -> None:
    ns = await fresh_namespace(sim, "counts")
    seed(sim, "Secret", ns, [{"metadata": {"name": f"s-{i}"}} for i in range(7)])
    resp = await client.get(f"{BASE}/counts", params={"namespace": ns})
    body = await resp.json()
    by_id = {c["resourceId"]: c for c in body["counts"]}
    assert body["namespace"] == ns
    assert by_id["secrets"] == {
        "resourceId": "secrets", "count": 7, "exact": False, "source": "remainingItemCount"
    }  # fmt: skip
    assert by_id["pods"] == {"resourceId": "pods", "count": 0, "exact": True, "source": "complete"}
    assert by_id["namespaces"]["count"] >= 5  # cluster-scoped kinds count cluster-wide
    assert body["failed"] == []
    everything = await (await client.get(f"{BASE}/counts")).json()
    assert {c["resourceId"] for c in everything["counts"]} >= {"configmaps", "nodes", "secrets"}
    assert {c["resourceId"]: c["count"] for c in everything["counts"]}["nodes"] == 1


async def test_search_ranks_counts_everything_and_says_what_it_searched(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "search") as (api, ns):
        await create_all(
            api,
            [
                config_map(ns, "needle"),
                config_map(ns, "needle-two"),
                service(ns, "a-needle-inside"),
                config_map(ns, "plain", {"tool": "needle"}),
            ],
        )
    resp = await client.get(f"{BASE}/search", params={"q": "NEEDLE", "namespace": ns})
    body = await resp.json()
    assert resp.status == 200
    assert [(h["name"], h["score"], h["matched"]) for h in body["hits"]] == [
        ("needle", 100, "name"),
        ("needle-two", 80, "name"),
        ("a-needle-inside", 60, "name"),
        ("plain", 40, "label"),
    ]
    assert body["total"] == 4
    assert body["truncated"] is False
    assert {"configmaps", "services", "deployments"} <= set(body["searched"])
    assert "nodes" not in body["searched"]  # cluster-scoped kinds are skipped within a namespace
    assert {"nodes", "roles"} <= set(body["notSearched"])
    assert body["failed"] == []
    limited = await (
        await client.get(f"{BASE}/search", params={"q": "needle", "namespace": ns, "limit": "2"})
    ).json()
    assert [h["name"] for h in limited["hits"]] == ["needle", "needle-two"]
    assert limited["total"] == 4
    assert limited["truncated"] is True


async def test_search_input_is_checked(client: Client) -> None:
    await assert_problem(await client.get(f"{BASE}/search"), 400, code="invalid-request")
    resp = await client.get(f"{BASE}/search", params={"q": "x", "limit": "0"})
    body = await assert_problem(resp, 400, code="invalid-request")
    assert body["errors"][0]["field"] == "limit"


async def test_diagnostics_report_each_probe_on_its_own(client: Client) -> None:
    resp = await client.get(f"{BASE}/diagnostics")
    body = await resp.json()
    assert resp.status == 200
    assert body["kubernetesVersion"] == "v1.32.4"
    assert body["discovery"]["healthy"] is True
    assert body["discovery"]["kinds"] > 40
    caps = {c["name"]: c for c in body["capabilities"]}
    assert caps["metrics-api"]["available"] is True
    assert caps["prometheus"]["available"] is False
    assert caps["custom-resources"]["available"] is True
    checks = {(c["verb"], c["resource"], c.get("subresource", "")): c
              for c in body["identity"]["checks"]}  # fmt: skip
    assert ("create", "pods", "exec") in checks
    assert ("create", "pods", "eviction") in checks
    assert all(c["allowed"] is True for c in checks.values())  # the simulator grants all
    assert body["identity"]["username"] == "kubesim-admin"
    assert body["identity"]["rules"]["available"] is True


async def test_overview_names_what_needs_attention(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "overview") as (api, ns):
        await create_all(
            api,
            [
                deployment(ns, "idle", replicas=0),
                deployment(ns, "paused", paused=True),
                deployment(ns, "fine"),
            ],
        )

    async def settled() -> Any:
        resp = await client.get(f"{BASE}/overview/workloads", params={"namespace": ns})
        assert resp.status == 200
        body = await resp.json()
        found = next(s for s in body["summaries"] if s["resourceId"] == "deployments")
        return found if found["ok"] == 1 else None

    deployments = await eventually(settled, what="the fine deployment to be ready")
    assert deployments["total"] == 3
    states = {o["name"]: o["state"] for o in deployments["objects"]}
    assert states == {"idle": "IDLE", "paused": "SUSPENDED"}
    assert deployments["ok"] == 1
    await assert_problem(await client.get(f"{BASE}/overview/bogus"), 404)


async def test_events_newest_first_and_for_one_object(client: Client, sim: Simulator) -> None:
    ns = unique("events")

    def event(name: str, obj: str, stamp: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": obj, "namespace": ns},
            "reason": "Pulled",
            "message": f"{name} happened",
            "type": "Normal",
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }

    async with kube(sim) as api:
        await create(api, namespace(ns))
        await create_all(
            api,
            [
                event("old", "web", "2025-01-01T00:00:00Z"),
                event("new", "web", "2025-01-03T00:00:00Z"),
                event("other", "db", "2025-01-02T00:00:00Z"),
            ],
        )
    body = await (await client.get(f"{BASE}/events", params={"namespace": ns})).json()
    assert [e["name"] for e in body] == ["new", "other", "old"]
    scoped = await client.get(
        f"{BASE}/events", params={"namespace": ns, "kind": "pods", "name": "web"}
    )
    assert [e["name"] for e in await scoped.json()] == ["new", "old"]
    newest = await client.get(f"{BASE}/events", params={"namespace": ns, "limit": "2"})
    assert [e["name"] for e in await newest.json()] == ["new", "other"]


async def test_schema_is_the_clusters_own_and_self_contained(client: Client) -> None:
    resp = await client.get(f"{BASE}/schema", params={"resource": "deployments"})
    body = await resp.json()
    assert resp.status == 200
    assert (body["apiVersion"], body["kind"]) == ("apps/v1", "Deployment")
    assert "spec" in body["schema"]["properties"]
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        "urn:answer", DRAFT202012.create_resource(body)
    )
    schema = {"$ref": f"urn:answer#/components/schemas/{body['name']}"}
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    good = deployment("ns", "web", replicas=2)
    assert list(validator.iter_errors(good)) == []
    assert list(validator.iter_errors({**good, "spec": {**good["spec"], "replicas": "two"}}))


async def test_unknown_cluster_and_kind_are_404(client: Client) -> None:
    await assert_problem(await client.get("/api/v1/clusters/nope/nav"), 404, code="unknown-cluster")
    await assert_problem(
        await client.get("/api/v1/clusters/nope/counts"), 404, code="unknown-cluster"
    )
    await assert_problem(
        await client.get(f"{BASE}/resources/gizmos/columns"), 404, code="unknown-resource"
    )
    await assert_problem(
        await client.get(f"{BASE}/schema", params={"resource": "gizmos"}),
        404,
        code="unknown-resource",
    )
