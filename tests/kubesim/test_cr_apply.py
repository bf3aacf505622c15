"""Server-side apply on custom resources honours the CRD's list markers: ``x-kubernetes-list-type:
map`` lists merge item by key and ``set`` lists value by value, per manager, as real kubectl sees."""

from __future__ import annotations

import uuid

import yaml

from tests.crds import LISTS, crd
from tests.kubesim.conftest import Kubectl, crd_manifest


def _router(group: str, ports: str, tags: str = "") -> str:
    return (
        f"apiVersion: {group}/v1\nkind: Router\nmetadata: {{name: edge}}\n"
        f"spec: {{ports: {ports}{', tags: ' + tags if tags else ''}}}\n"
    )


def test_two_managers_share_map_and_set_lists(kubectl: Kubectl) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    ns = f"s-{uuid.uuid4().hex[:8]}"
    manifest = (
        crd_manifest(group, "Router", LISTS)
        + f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n"
    )
    kubectl.run("apply", "-f", "-", input=manifest)

    def apply(manager: str, doc: str, *flags: str) -> tuple[int, str]:
        done = kubectl.run(
            "-n",
            ns,
            "apply",
            "--server-side",
            f"--field-manager={manager}",
            *flags,
            "-f",
            "-",
            input=doc,
            check=False,
        )
        return done.returncode, done.stderr

    assert apply("alice", _router(group, "[{name: http, port: 80}]", "[blue]"))[0] == 0
    assert apply("bob", _router(group, "[{name: metrics, port: 9090}]", "[green]"))[0] == 0
    live = kubectl.json("-n", ns, "get", f"routers.{group}", "edge")
    assert live["spec"]["ports"] == [
        {"name": "http", "port": 80},
        {"name": "metrics", "port": 9090},
    ]
    assert live["spec"]["tags"] == ["blue", "green"]

    code, err = apply(
        "bob", _router(group, "[{name: metrics, port: 9090}, {name: http, port: 8080}]")
    )
    assert code == 1
    assert 'conflict with "alice": .spec.ports[name="http"].port' in err
    assert apply("bob", _router(group, "[{name: http, port: 8080}]"), "--force-conflicts")[0] == 0
    live = kubectl.json("-n", ns, "get", f"routers.{group}", "edge")
    # bob's forced apply takes http's port and drops what only bob held (metrics, green);
    # alice keeps her item's key and her tag
    assert live["spec"]["ports"] == [{"name": "http", "port": 8080}]
    assert live["spec"]["tags"] == ["blue"]
    kubectl.run("delete", "crd", f"routers.{group}")


def test_a_second_client_side_apply_of_a_custom_resource_sends_a_merge_patch(
    kubectl: Kubectl,
) -> None:
    """kubectl chooses the patch type from the OpenAPI v3 document (``gvkSupportsPatchOpenAPIV3``):
    a custom resource's PATCH lists JSON, merge and apply patch only (apiextensions-apiserver
    ``controller/openapi/builder`` ``buildRoute``), so the second apply sends a merge patch, which
    the server takes; were strategic merge patch listed, it would send one and get a 415."""
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    ns = f"c-{uuid.uuid4().hex[:8]}"
    kubectl.run(
        "apply",
        "-f",
        "-",
        input=crd_manifest(group, "Router", LISTS)
        + f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n",
    )
    first = _router(group, "[{name: http, port: 80}]", "[blue]")
    kubectl.run("-n", ns, "apply", "-f", "-", input=first)
    second = _router(group, "[{name: http, port: 8080}]", "[blue]")
    done = kubectl.run("-n", ns, "apply", "-f", "-", input=second, check=False)
    assert done.returncode == 0, done.stderr
    assert "configured" in done.stdout
    live = kubectl.json("-n", ns, "get", f"routers.{group}", "edge")
    assert live["spec"]["ports"] == [{"name": "http", "port": 8080}]


def test_kubectl_selects_custom_resources_by_a_crds_selectable_fields(kubectl: Kubectl) -> None:
    """``selectableFields`` (GA in 1.32, apiextensions-apiserver's ``customresource`` strategy
    ``GetAttrs``): ``kubectl get shirts --field-selector spec.color=blue`` lists by the field, and
    a field the CRD does not make selectable is refused."""
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    ns = f"f-{uuid.uuid4().hex[:8]}"
    definition = crd(group, "Shirt", {"type": "object", "properties": {
        "color": {"type": "string"}, "size": {"type": "string"}}})  # fmt: skip
    definition["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.color"}]
    kubectl.run(
        "apply",
        "-f",
        "-",
        input=yaml.safe_dump(definition)
        + f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n",
    )
    shirts = "".join(
        f"---\napiVersion: {group}/v1\nkind: Shirt\nmetadata: {{name: {name}}}\n"
        f"spec: {{color: {color}, size: M}}\n"
        for name, color in (("one", "blue"), ("two", "red"), ("three", "blue"))
    )
    kubectl.run("-n", ns, "apply", "-f", "-", input=shirts)
    listed = kubectl.json("-n", ns, "get", f"shirts.{group}", "--field-selector", "spec.color=blue")
    assert sorted(item["metadata"]["name"] for item in listed["items"]) == ["one", "three"]
    other = kubectl.json("-n", ns, "get", f"shirts.{group}", "--field-selector", "spec.color!=blue")
    assert [item["metadata"]["name"] for item in other["items"]] == ["two"]
    refused = kubectl.run(
        "-n", ns, "get", f"shirts.{group}", "--field-selector", "spec.size=M", check=False
    )
    assert refused.returncode == 1
    assert '"spec.size" is not a known field selector' in refused.stderr
