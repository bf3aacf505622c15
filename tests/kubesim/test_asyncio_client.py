"""kubernetes-asyncio against the simulator: typed and dynamic clients, watches, 410 Gone."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.dynamic import DynamicClient

from kubesim import Simulator
from tests.kubesim.conftest import api_client, refusal

MINE = {"t": "1"}  # selects the test's objects, not kube-root-ca.crt that clusters add


async def new_namespace(api: ApiClient) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    await client.CoreV1Api(api).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=name))
    )
    return name


async def test_typed_crud_and_conflict(api: ApiClient) -> None:
    core = client.CoreV1Api(api)
    ns = await new_namespace(api)
    cm = await core.create_namespaced_config_map(
        ns,
        client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="one", labels={"tier": "a"}), data={"k": "v"}
        ),
    )
    assert cm.metadata.uid
    assert cm.metadata.resource_version
    with pytest.raises(ApiException) as exc:
        await core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="one"))
        )
    assert exc.value.status == 409
    assert refusal(exc.value)["reason"] == "AlreadyExists"

    cm.data = {"k": "v2"}
    updated = await core.replace_namespaced_config_map("one", ns, cm)
    assert int(updated.metadata.resource_version) > int(cm.metadata.resource_version)
    cm.data = {"k": "stale"}
    with pytest.raises(ApiException) as exc:
        await core.replace_namespaced_config_map("one", ns, cm)  # stale resourceVersion
    assert exc.value.status == 409
    assert refusal(exc.value)["reason"] == "Conflict"

    patched = await core.patch_namespaced_config_map("one", ns, {"data": {"extra": "x"}})
    assert patched.data == {"k": "v2", "extra": "x"}
    listed = await core.list_namespaced_config_map(ns, label_selector="tier=a")
    assert [i.metadata.name for i in listed.items] == ["one"]
    await core.delete_namespaced_config_map("one", ns)
    with pytest.raises(ApiException) as exc:
        await core.read_namespaced_config_map("one", ns)
    assert exc.value.status == 404
    assert refusal(exc.value)["reason"] == "NotFound"


async def test_missing_namespace_is_refused(api: ApiClient) -> None:
    with pytest.raises(ApiException) as exc:
        await client.CoreV1Api(api).create_namespaced_config_map(
            "no-such-ns", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="x"))
        )
    assert exc.value.status == 404
    assert 'namespaces "no-such-ns" not found' in refusal(exc.value)["message"]


async def test_generation_changes_with_spec_only(api: ApiClient) -> None:
    apps = client.AppsV1Api(api)
    ns = await new_namespace(api)
    labels = {"app": "web"}
    dep = await apps.create_namespaced_deployment(
        ns,
        client.V1Deployment(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1DeploymentSpec(
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]),
                ),
            ),
        ),
    )
    assert dep.metadata.generation == 1
    dep = await apps.patch_namespaced_deployment("web", ns, {"metadata": {"labels": {"a": "b"}}})
    assert dep.metadata.generation == 1
    dep = await apps.patch_namespaced_deployment("web", ns, {"spec": {"replicas": 3}})
    assert dep.metadata.generation == 2
    status = await apps.patch_namespaced_deployment_status(
        "web", ns, {"status": {"replicas": 3, "observedGeneration": 2}}
    )
    assert status.status.replicas == 3
    assert status.metadata.generation == 2


async def test_paging_with_continue(api: ApiClient) -> None:
    core = client.CoreV1Api(api)  # pod templates: no controller adds any behind the test's back
    ns = await new_namespace(api)
    template = client.V1PodTemplateSpec(
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")])
    )
    for i in range(7):
        await core.create_namespaced_pod_template(
            ns,
            client.V1PodTemplate(metadata=client.V1ObjectMeta(name=f"pt-{i}"), template=template),
        )
    page = await core.list_namespaced_pod_template(ns, limit=3)
    names = [i.metadata.name for i in page.items]
    assert page.metadata.remaining_item_count == 4
    while page.metadata._continue:
        page = await core.list_namespaced_pod_template(
            ns, limit=3, _continue=page.metadata._continue
        )
        names += [i.metadata.name for i in page.items]
    assert names == [f"pt-{i}" for i in range(7)]


async def test_watch_stream_and_resume(api: ApiClient) -> None:
    core = client.CoreV1Api(api)
    ns = await new_namespace(api)
    await core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="a", labels=MINE))
    )
    seen = []
    resume_from = None
    w = watch.Watch()
    async with w.stream(
        core.list_namespaced_config_map, ns, label_selector="t=1", timeout_seconds=5
    ) as stream:
        async for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 1:
                await core.create_namespaced_config_map(
                    ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="b", labels=MINE))
                )
            if len(seen) == 2:
                resume_from = event["object"].metadata.resource_version
                w.stop()
    assert seen == [("ADDED", "a"), ("ADDED", "b")]
    assert resume_from
    await core.delete_namespaced_config_map("a", ns)
    events = []
    async with watch.Watch().stream(
        core.list_namespaced_config_map,
        ns,
        label_selector="t=1",
        resource_version=resume_from,
        timeout_seconds=1,
    ) as stream:
        async for event in stream:
            events.append((event["type"], event["object"].metadata.name))
    assert events == [("DELETED", "a")]


async def test_watch_410_after_history_expiry(tmp_path: Path) -> None:
    async with (
        Simulator(tmp_path, history=5, nodes=0) as small,
        api_client(small, ApiClient) as api,
    ):
        core = client.CoreV1Api(api)
        first = await core.create_namespaced_config_map(
            "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c0"))
        )
        for i in range(1, 8):
            await core.create_namespaced_config_map(
                "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"c{i}"))
            )
        stream = watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=first.metadata.resource_version,
            timeout_seconds=2,
        )
        with pytest.raises(ApiException) as exc:
            await _drain(stream)
        assert exc.value.status == 410
        assert exc.value.reason is not None
        assert "Expired" in exc.value.reason


async def _drain(stream: Any) -> None:
    async with stream:
        async for _ in stream:
            pass


async def test_dynamic_client(api: ApiClient) -> None:
    ns = await new_namespace(api)
    dyn = await DynamicClient(api)
    secrets = await dyn.resources.get(api_version="v1", kind="Secret")
    await secrets.create(body={"metadata": {"name": "s"}, "stringData": {"a": "b"}}, namespace=ns)
    got = await secrets.get(name="s", namespace=ns)
    assert got.type == "Opaque"
    cms = await dyn.resources.get(api_version="v1", kind="ConfigMap")
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "applied"},
        "data": {"a": "1"},
    }
    await dyn.server_side_apply(cms, body=body, namespace=ns, field_manager="tool")
    body["data"] = {"b": "2"}  # "a" is dropped by its only manager, so it goes
    applied = await dyn.server_side_apply(cms, body=body, namespace=ns, field_manager="tool")
    assert applied.data.to_dict() == {"b": "2"}
    deployments = await dyn.resources.get(api_version="apps/v1", kind="Deployment")
    listed = await deployments.get(namespace=ns)
    assert listed.items == []


async def test_bookmarks_and_watchlist(sim: Simulator, api: ApiClient) -> None:
    core = client.CoreV1Api(api)
    ns = await new_namespace(api)
    await core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="x", labels=MINE))
    )
    resp = await api.call_api(
        f"/api/v1/namespaces/{ns}/configmaps",
        "GET",
        query_params=[
            ("watch", "1"),
            ("labelSelector", "t=1"),
            ("sendInitialEvents", "true"),
            ("resourceVersionMatch", "NotOlderThan"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", "2"),
        ],
        auth_settings=["BearerToken"],
        _preload_content=False,
    )
    types = []
    async with asyncio.timeout(5):
        while line := await resp.content.readline():
            event = json.loads(line)
            ann = event["object"]["metadata"].get("annotations", {})
            types.append((event["type"], ann.get("k8s.io/initial-events-end")))
            if len(types) == 3:
                break
    resp.close()
    assert types[0] == ("ADDED", None)
    assert types[1] == ("BOOKMARK", "true")
    assert types[2] == ("BOOKMARK", None)  # the periodic one (interval 0.5 s in tests)
