"""Server-side apply on custom resources honours the CRD's list markers: ``x-kubernetes-list-type:
map`` lists merge item by key and ``set`` lists value by value, per manager, as real kubectl sees."""

from __future__ import annotations

import uuid

from tests.crds import LISTS
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
