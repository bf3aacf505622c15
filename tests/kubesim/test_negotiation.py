"""Content negotiation as kube-apiserver does it: protobuf answers for built-in kinds (which
kubectl's typed clients ask for first and decode), JSON or 406 for custom resources, and the
``>``/``<`` label-selector operators."""

from __future__ import annotations

import uuid
from typing import Any

from kubesim.encoding import protobuf_kinds
from tests.crds import crd
from tests.kubesim.conftest import Kubectl, Raw

PROTOBUF = "application/vnd.kubernetes.protobuf"


async def get_protobuf(raw: Raw, path: str) -> dict[str, Any]:
    """``path`` read as kubectl's typed clients read it (protobuf only), decoded."""
    async with raw.session.get(
        raw.sim.url + path,
        headers={"Authorization": f"Bearer {raw.sim.token}", "Accept": PROTOBUF},
        ssl=raw.ssl,
    ) as resp:
        assert (resp.status, resp.content_type) == (200, PROTOBUF)
        decoded: dict[str, Any] = protobuf_kinds.decode(await resp.read())
        return decoded


def test_kubectl_typed_clients_decode_protobuf_answers(kubectl: Kubectl) -> None:
    ns = f"pb-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", ns)
    proc = kubectl.run("-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "-v=8")
    assert proc.stdout.strip() == "deployment.apps/web created"
    answered = [line for line in proc.stderr.splitlines() if "Content-Type:" in line]
    assert answered[-1].endswith(f"Content-Type: {PROTOBUF}")
    again = kubectl.run("-n", ns, "create", "deployment", "web", "--image=nginx:1.27", check=False)
    assert again.stderr.strip() == (
        'error: failed to create deployment: deployments.apps "web" already exists'
    )


async def test_protobuf_get_and_list_carry_the_same_object(raw: Raw) -> None:
    name = f"pb-{uuid.uuid4().hex[:8]}"
    body = {
        "metadata": {"name": name, "labels": {"tier": "web"}, "annotations": {"a": "b"}},
        "data": {"key": "value", "other": ""},
    }
    path = "/api/v1/namespaces/default/configmaps"
    assert (await raw("POST", path, body))[0] == 201
    as_json = (await raw("GET", f"{path}/{name}"))[1]
    decoded = await get_protobuf(raw, f"{path}/{name}")
    for key in ("name", "namespace", "uid", "resourceVersion", "labels", "annotations"):
        assert decoded["metadata"][key] == as_json["metadata"][key]
    assert decoded["metadata"]["creationTimestamp"] == as_json["metadata"]["creationTimestamp"]
    assert decoded["data"] == {"key": "value", "other": ""}
    async with raw.session.get(
        raw.sim.url + path,
        headers={"Authorization": f"Bearer {raw.sim.token}", "Accept": PROTOBUF},
        ssl=raw.ssl,
    ) as resp:
        assert resp.content_type == PROTOBUF
        assert (await resp.read())[:4] == b"k8s\x00"


async def test_custom_resources_fall_back_to_json_or_refuse(raw: Raw) -> None:
    headers = {"Authorization": f"Bearer {raw.sim.token}"}
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    definition = crd(group, "Thing")
    assert (
        await raw("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", definition)
    )[0] == 201
    things = raw.sim.url + f"/apis/{group}/v1/namespaces/default/things"
    body: dict[str, Any] = {}  # the last answer: protobuf only is not acceptable
    for accept, status, kind in (
        (f"{PROTOBUF},application/json", 200, "application/json"),
        (PROTOBUF, 406, "application/json"),
    ):
        async with raw.session.get(
            things, headers={**headers, "Accept": accept}, ssl=raw.ssl
        ) as resp:
            assert (resp.status, resp.content_type) == (status, kind)
            body = await resp.json()
    assert body["reason"] == "NotAcceptable"
    assert body["message"] == (
        "only the following media types are accepted: application/json, application/yaml"
    )
    # Watches are streamed as JSON only here, so a protobuf-only watch is refused, not garbled.
    watch = raw.sim.url + "/api/v1/namespaces/default/configmaps?watch=true"
    async with raw.session.get(watch, headers={**headers, "Accept": PROTOBUF}, ssl=raw.ssl) as resp:
        assert resp.status == 406


def test_greater_and_less_than_label_selectors(kubectl: Kubectl) -> None:
    ns = f"gt-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", ns)
    for name, tier in (("low", "1"), ("high", "3"), ("word", "x")):
        kubectl.run("-n", ns, "create", "configmap", name)
        kubectl.run("-n", ns, "label", "configmap", name, f"tier={tier}")
    assert kubectl.run("-n", ns, "get", "cm", "-l", "tier>2", "-o", "name").stdout.split() == [
        "configmap/high"
    ]
    assert kubectl.run("-n", ns, "get", "cm", "-l", "tier<2", "-o", "name").stdout.split() == [
        "configmap/low"
    ]
    bad = kubectl.run("-n", ns, "get", "cm", "-l", "tier>x", check=False)
    assert (
        'unable to parse requirement: values[0]: Invalid value: "x": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    ) in bad.stderr


async def test_protobuf_keeps_the_names_of_inline_references(raw: Raw) -> None:
    """A key selector, an env source and a volume source embed ``LocalObjectReference`` inline:
    its ``name`` is a field of the parent in JSON and a nested message in protobuf. kubectl's
    ``rollout undo`` copies a ReplicaSet's template read this way, so a lost name breaks pods."""
    name = f"pb-{uuid.uuid4().hex[:8]}"
    container = {
        "name": "app",
        "image": "busybox:1.36",
        "env": [
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
        ],
        "envFrom": [{"configMapRef": {"name": "c"}}, {"secretRef": {"name": "s"}}],
        "volumeMounts": [{"name": "conf", "mountPath": "/etc/conf"}],
    }
    body = {
        "metadata": {"name": name},
        "spec": {
            "containers": [container],
            "volumes": [{"name": "conf", "configMap": {"name": "c"}}],
        },
    }
    path = "/api/v1/namespaces/default/pods"
    assert (await raw("POST", path, body))[0] == 201
    as_json = (await raw("GET", f"{path}/{name}"))[1]
    decoded = await get_protobuf(raw, f"{path}/{name}")
    got, sent = decoded["spec"], as_json["spec"]
    assert got["containers"][0]["env"] == sent["containers"][0]["env"]
    assert got["containers"][0]["envFrom"] == sent["containers"][0]["envFrom"]
    assert got["volumes"] == sent["volumes"]
