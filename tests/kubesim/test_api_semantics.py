"""API semantics over raw HTTP: Status errors, field validation, finalizers, collections, eviction."""

from __future__ import annotations

import asyncio
import time

import pytest

from kubesim import Simulator
from tests.kubesim.conftest import Raw, create_namespace


def cm(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


async def test_status_errors(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    status, body, _ = await raw("GET", base + "/nope")
    assert (status, body["reason"], body["details"]) == (
        404,
        "NotFound",
        {"name": "nope", "kind": "configmaps"},
    )
    assert body["kind"] == "Status"
    assert body["message"] == 'configmaps "nope" not found'

    status, body, _ = await raw("GET", base, token="wrong")
    assert (status, body["reason"]) == (401, "Unauthorized")

    status, body, _ = await raw("DELETE", "/api/v1/namespaces/kube-system")
    assert (status, body["reason"]) == (403, "Forbidden")

    status, body, _ = await raw("POST", base + "/x", cm("x"))
    assert (status, body["reason"]) == (405, "MethodNotAllowed")

    assert (await raw("POST", base, cm("a")))[0] == 201
    status, body, _ = await raw("POST", base, cm("a"))
    assert (status, body["reason"]) == (409, "AlreadyExists")
    status, body, _ = await raw(
        "PUT", base + "/a", cm("a", metadata={"name": "a", "resourceVersion": "1"})
    )
    assert (status, body["reason"]) == (409, "Conflict")

    status, body, _ = await raw("POST", base, "{not json")
    assert (status, body["reason"]) == (400, "BadRequest")
    status, body, _ = await raw("POST", base, b"\x00", content_type="application/x-thing")
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")
    status, body, _ = await raw("POST", base, cm("Bad_Name"))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "metadata.name"

    status, body, _ = await raw(
        "GET",
        base,
        labelSelector="a in (b",
    )
    assert status == 400


async def test_field_validation(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    bad = cm("v", data={"a": "b"}, dataa={"x": "y"})
    status, body, _ = await raw("POST", base, bad, fieldValidation="Strict")
    assert status == 400
    assert body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: unknown field "dataa"'
    )
    status, body, headers = await raw("POST", base, bad)  # default: Warn
    assert status == 201
    assert headers["Warning"] == '299 - "unknown field \\"dataa\\""'
    assert "dataa" not in body  # dropped, as decoding drops it
    assert body["data"] == {"a": "b"}
    status, _, headers = await raw("POST", base, cm("w", extra=1), fieldValidation="Ignore")
    assert status == 201
    assert "Warning" not in headers


async def test_finalizers_and_deletion_timestamp(raw: Raw) -> None:
    ns = await create_namespace(raw)
    path = f"/api/v1/namespaces/{ns}/configmaps/f"
    await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/configmaps",
        cm("f", metadata={"name": "f", "finalizers": ["example.com/hold"]}),
    )
    status, body, _ = await raw("DELETE", path)
    assert status == 200
    assert body["metadata"]["deletionTimestamp"]
    assert (await raw("GET", path))[0] == 200
    status, body, _ = await raw(
        "PATCH",
        path,
        {"metadata": {"finalizers": None}},
        content_type="application/merge-patch+json",
    )
    assert status == 200
    assert (await raw("GET", path))[0] == 404


async def test_namespace_lifecycle_waits_for_finalizers(raw: Raw) -> None:
    ns = await create_namespace(raw)
    held = cm("held", metadata={"name": "held", "finalizers": ["example.com/hold"]})
    await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", held)
    status, body, _ = await raw("DELETE", f"/api/v1/namespaces/{ns}")
    assert status == 200
    assert body["status"]["phase"] == "Terminating"
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", cm("new"))
    assert (status, body["reason"]) == (403, "Forbidden")
    await raw(
        "PATCH",
        f"/api/v1/namespaces/{ns}/configmaps/held",
        [{"op": "remove", "path": "/metadata/finalizers"}],
        content_type="application/json-patch+json",
    )
    async with asyncio.timeout(5):  # the namespace controller lags a little, as a real one
        while (await raw("GET", f"/api/v1/namespaces/{ns}"))[0] != 404:
            await asyncio.sleep(0.05)


async def test_deletecollection_and_dry_run(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await raw("POST", base, cm(name, metadata={"name": name, "labels": {"tier": tier}}))
    status, body, _ = await raw("POST", base, cm("d"), dryRun="All")
    assert status == 201
    assert (await raw("GET", base + "/d"))[0] == 404
    status, body, _ = await raw("DELETE", base, labelSelector="tier=x")
    assert status == 200
    assert sorted(i["metadata"]["name"] for i in body["items"]) == ["a", "b"]
    _, listed, _ = await raw("GET", base, labelSelector="tier")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["c"]


async def test_field_selectors(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for name in ("one", "two"):
        await raw("POST", base, cm(name))
    _, body, _ = await raw(
        "GET", base, fieldSelector="metadata.name!=one,metadata.name!=kube-root-ca.crt"
    )
    assert [i["metadata"]["name"] for i in body["items"]] == ["two"]
    status, body, _ = await raw("GET", base, fieldSelector="data.x=y")
    assert status == 400
    assert body["message"] == "field label not supported: data.x"


@pytest.mark.parametrize(("ready", "expected"), [(1, 429), (2, 201)])
async def test_eviction_respects_disruption_budget(raw: Raw, ready: int, expected: int) -> None:
    ns = await create_namespace(raw)
    await raw(
        "POST",
        f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        {
            "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        },
    )
    for i in range(2):
        await raw(
            "POST",
            f"/api/v1/namespaces/{ns}/pods",
            {
                "metadata": {"name": f"db-{i}", "labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
            },
        )
        if i < ready:
            await raw(
                "PATCH",
                f"/api/v1/namespaces/{ns}/pods/db-{i}/status",
                {
                    "status": {
                        "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True"}],
                    }
                },
                content_type="application/merge-patch+json",
            )
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "db-0", "namespace": ns},
    }
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods/db-0/eviction", eviction)
    assert status == expected, body
    if expected == 429:
        assert body["reason"] == "TooManyRequests"
        assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    else:
        assert (await raw("GET", f"/api/v1/namespaces/{ns}/pods/db-0"))[0] == 404


async def test_openapi_v3(raw: Raw) -> None:
    _, index, _ = await raw("GET", "/openapi/v3")
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    status, doc, _ = await raw("GET", url)
    assert status == 200
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "version": "v1",
        "kind": "Deployment",
    }
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    schema = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert schema["x-kubernetes-group-version-kind"][0]["kind"] == "Deployment"
    assert "io.k8s.api.core.v1.PodSpec" in doc["components"]["schemas"]


async def test_pods_on_a_node_terminate_gracefully(sim: Simulator, raw: Raw) -> None:
    sim.call(lambda state: setattr(state.objects, "graceful_pods", True))
    try:
        await _graceful(raw)
    finally:
        sim.call(lambda state: setattr(state.objects, "graceful_pods", False))


async def _graceful(raw: Raw) -> None:
    ns = await create_namespace(raw)
    await raw("POST", "/api/v1/nodes", {"metadata": {"name": f"node-{ns}"}})
    pods = f"/api/v1/namespaces/{ns}/pods"
    for name, node in (("bound", f"node-{ns}"), ("pending", None)):
        spec: dict[str, object] = {"containers": [{"name": "c", "image": "busybox"}]}
        if node:
            spec["nodeName"] = node
        await raw("POST", pods, {"metadata": {"name": name}, "spec": spec})
    assert (await raw("DELETE", pods + "/pending"))[0] == 200
    assert (await raw("GET", pods + "/pending"))[0] == 404
    status, body, _ = await raw("DELETE", pods + "/bound")
    assert status == 200
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await raw("GET", pods + "/bound"))[0] == 200  # waits for its kubelet
    assert (await raw("DELETE", pods + "/bound", gracePeriodSeconds="0"))[0] == 200
    assert (await raw("GET", pods + "/bound"))[0] == 404


async def test_binding_assigns_a_node_once(raw: Raw) -> None:
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"
    await raw(
        "POST",
        pods,
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    )
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "node-1"},
    }
    assert (await raw("POST", pods + "/p/binding", binding))[0] == 201
    _, pod, _ = await raw("GET", pods + "/p")
    assert pod["spec"]["nodeName"] == "node-1"
    status, body, _ = await raw("POST", f"/api/v1/namespaces/{ns}/bindings", binding)
    assert (status, body["reason"]) == (409, "Conflict")


async def test_terminating_namespace_survives_unrelated_updates(raw: Raw) -> None:
    ns = await create_namespace(raw)
    held = cm("held", metadata={"name": "held", "finalizers": ["example.com/hold"]})
    await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", held)
    await raw("DELETE", f"/api/v1/namespaces/{ns}")
    status, body, _ = await raw(
        "PATCH",
        f"/api/v1/namespaces/{ns}",
        {"metadata": {"labels": {"x": "y"}}},
        content_type="application/merge-patch+json",
    )
    assert status == 200
    assert body["status"]["phase"] == "Terminating"
    assert (await raw("GET", f"/api/v1/namespaces/{ns}"))[0] == 200


async def test_events_are_one_set_in_two_apis(raw: Raw) -> None:
    ns = await create_namespace(raw)
    core = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
        "reason": "Pulled",
        "message": "pulled the image",
        "type": "Normal",
        "count": 2,
    }
    assert (await raw("POST", f"/api/v1/namespaces/{ns}/events", core))[0] == 201
    _, listed, _ = await raw(
        "GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", fieldSelector="regarding.name=p"
    )
    [event] = listed["items"]
    assert listed["apiVersion"] == "events.k8s.io/v1"
    assert "apiVersion" not in event  # a real server's list items carry no type
    assert (event["note"], event["regarding"]["name"], event["deprecatedCount"]) == (
        "pulled the image",
        "p",
        2,
    )
    new = {
        "metadata": {"name": "e2"},
        "regarding": {"kind": "Pod", "name": "q"},
        "reason": "Started",
        "note": "started",
        "type": "Normal",
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "action": "Start",
        "reportingController": "kubelet",
        "reportingInstance": "node-1",
    }
    status, created, _ = await raw("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", new)
    assert status == 201, created
    assert created["note"] == "started"
    _, stored, _ = await raw("GET", f"/api/v1/namespaces/{ns}/events/e2")
    assert (stored["message"], stored["involvedObject"]["name"]) == ("started", "q")


async def test_yaml_responses(raw: Raw) -> None:
    async with raw.session.get(
        raw.sim.url + "/api/v1/namespaces/default",
        headers={"Authorization": f"Bearer {raw.sim.token}", "Accept": "application/yaml"},
        ssl=raw.ssl,
    ) as resp:
        assert resp.content_type == "application/yaml"
        assert "name: default" in await resp.text()


async def test_dry_run_on_every_write(raw: Raw) -> None:
    ns = await create_namespace(raw)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    _, created, _ = await raw(
        "POST", base, cm("d", metadata={"name": "d", "labels": {"k": "v"}}, data={"a": "1"})
    )
    rv = created["metadata"]["resourceVersion"]
    changed = {**created, "data": {"a": "2"}}
    assert (await raw("PUT", base + "/d", changed, dryRun="All"))[1]["data"] == {"a": "2"}
    merge = {"data": {"a": "3"}}
    status, body, _ = await raw(
        "PATCH", base + "/d", merge, dryRun="All", content_type="application/merge-patch+json"
    )
    assert (status, body["data"]) == (200, {"a": "3"})
    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "d"},
        "data": {"a": "4"},
    }
    status, body, _ = await raw(
        "PATCH",
        base + "/d",
        applied,
        dryRun="All",
        fieldManager="t",
        force="true",
        content_type="application/apply-patch+yaml",
    )
    assert (status, body["data"]) == (200, {"a": "4"})
    assert (await raw("DELETE", base + "/d", dryRun="All"))[0] == 200
    assert (await raw("DELETE", base, dryRun="All", labelSelector="k=v"))[0] == 200
    status, live, _ = await raw("GET", base + "/d")
    assert (status, live["data"], live["metadata"]["resourceVersion"]) == (200, {"a": "1"}, rv)
    status, body, _ = await raw("POST", base, cm("e"), dryRun="Bogus")
    assert status == 422  # ValidateCreateOptions


EVENTS = 200  # a page of one among them


def event(i: int) -> dict[str, object]:
    return {
        "metadata": {"name": f"e-{i:04d}"},
        "involvedObject": {"kind": "Pod", "name": f"p-{i}", "namespace": "x", "uid": f"u-{i}"},
        "reason": "Scheduled",
        "message": f"Successfully assigned x/p-{i} to node-{i % 3}",
        "source": {"component": "default-scheduler"},
        "type": "Normal",
        "count": 1,
    }


async def test_a_page_presents_only_the_objects_it_serves(raw: Raw) -> None:
    """A ``limit=1`` list of ``events.k8s.io/v1`` Events (each stored as a core Event and
    converted when served) costs about what the core list costs: only the page is converted."""
    namespace = await create_namespace(raw)
    posted = await asyncio.gather(
        *(raw("POST", f"/api/v1/namespaces/{namespace}/events", event(i)) for i in range(EVENTS))
    )
    assert {status for status, _, _ in posted} == {201}

    async def cpu_of(path: str) -> float:
        start = time.process_time()  # the simulator's thread and this one
        for _ in range(10):
            status, body, _ = await raw("GET", path, limit="1")
            assert status == 200, body
            assert [e["metadata"]["name"] for e in body["items"]] == ["e-0000"]
            assert body["metadata"]["remainingItemCount"] == EVENTS - 1
        return time.process_time() - start

    core = f"/api/v1/namespaces/{namespace}/events"
    v1 = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    rounds = [(await cpu_of(core), await cpu_of(v1)) for _ in range(3)]
    least_core, least_v1 = min(c for c, _ in rounds), min(v for _, v in rounds)
    assert least_v1 < 2 * least_core, (least_core, least_v1)  # 11x before the fix
