"""Release errors over HTTP: unknown, existing and invalid names, cluster refusals and an unreachable
cluster; the access gate on mutating release operations; writes to one release serialised."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml
from kubernetes_asyncio.client import CoreV1Api, V1ConfigMap, V1ObjectMeta

from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, MakeClient
from tests.chartsvc.fixtures_cluster import (
    API,
    INVALID_SERVICE,
    build_chart,
    create_namespace,
    install,
    install_upload,
    kube_api,
    namespace,
    releases,
    sim,
    upgrade_upload,
    upload_form,
)
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]


async def test_unknown_release_is_404_everywhere(releases: Client, namespace: str) -> None:
    where = f"?namespace={namespace}"
    for method, path in [
        ("GET", "/releases/ghost"),
        ("GET", "/releases/ghost/history"),
        ("GET", "/releases/ghost/values"),
        ("GET", "/releases/ghost/values?all=true&namespace=" + namespace),
        ("GET", "/releases/ghost/manifest"),
        ("GET", "/releases/ghost/notes"),
        ("GET", "/releases/ghost/hooks"),
        ("GET", "/releases/ghost/resources"),
        ("DELETE", "/releases/ghost"),
        ("POST", "/releases/ghost/rollback"),
        ("POST", "/releases/ghost/test"),
    ]:
        url = API + path + ("" if "?" in path else where)
        resp = await releases.request(method, url, headers=KEY)
        body = await assert_problem(resp, 404)
        assert "ghost" in body["detail"], (method, path)
    resp = await releases.put(
        f"{API}/releases/ghost{where}", json={"chartRef": "r/demo"}, headers=KEY
    )
    await assert_problem(resp, 404, code="release-not-found")


async def test_install_over_existing_release_is_409(releases: Client, namespace: str) -> None:
    assert (await install(releases, namespace)).status == 201
    await assert_problem(await install(releases, namespace), 409, code="release-exists")


async def test_invalid_names_and_missing_fields_are_400(releases: Client, namespace: str) -> None:
    # Helm's rules are the spec's ReleaseName and Namespace: refused naming the field.
    for name in ("Bad_Name", "x" * 54, "-lead", "web\n"):
        resp = await install(releases, namespace, name)
        body = await assert_problem(resp, 400, code="invalid-request")
        assert [e["field"] for e in body["errors"]] == ["releaseName"], name
    resp = await install(releases, "Not.A.Label")
    body = await assert_problem(resp, 400, code="invalid-request")
    assert [e["field"] for e in body["errors"]] == ["namespace"]
    resp = await releases.get(f"{API}/releases?namespace=UPPER")
    body = await assert_problem(resp, 400, code="invalid-request")
    assert [e["field"] for e in body["errors"]] == ["namespace"]
    resp = await releases.get(f"{API}/releases/Bad_Name")
    body = await assert_problem(resp, 400, code="invalid-request")
    assert [e["field"] for e in body["errors"]] == ["name"]
    resp = await releases.post(f"{API}/releases", json={"releaseName": "x"}, headers=KEY)
    body = await assert_problem(resp, 400)
    assert "chartRef" in body["message"]
    resp = await releases.post(f"{API}/releases", json={"chartRef": "r/demo"}, headers=KEY)
    assert "releaseName" in (await assert_problem(resp, 400))["message"]
    resp = await releases.post(
        f"{API}/releases/web/test?timeoutSeconds=0&namespace={namespace}", headers=KEY
    )
    assert "timeoutSeconds" in (await assert_problem(resp, 400))["message"]


async def test_upload_errors(releases: Client, namespace: str, tmp_path: Path) -> None:
    archive = build_chart(tmp_path)
    resp = await releases.post(
        f"{API}/releases/upload", data=upload_form(archive, {"namespace": namespace}), headers=KEY
    )
    assert "releaseName" in (await assert_problem(resp, 400))["message"]
    resp = await releases.post(
        f"{API}/releases/upload",
        data=upload_form(archive, {"releaseName": "u", "dryRun": "yes"}),
        headers=KEY,
    )
    assert "request.dryRun" in (await assert_problem(resp, 400))["message"]
    resp = await install_upload(releases, b"not a chart", namespace, "u")
    await assert_problem(resp, 400, code="invalid-chart")


async def test_missing_namespace_is_404(releases: Client) -> None:
    resp = await install(releases, "no-such-namespace")
    body = await assert_problem(resp, 404, code="namespace-not-found")
    assert "no-such-namespace" in body["detail"]


async def test_cluster_refusals_keep_their_status(
    releases: Client, namespace: str, sim: Simulator, tmp_path: Path
) -> None:
    chart = build_chart(tmp_path, name="bad", templates={"svc.yaml": INVALID_SERVICE})
    resp = await install_upload(releases, chart, namespace, "bad")
    body = await assert_problem(resp, 422, code="cluster-invalid")
    assert "is invalid" in body["detail"]
    assert "spec.ports[0].port" in body["detail"]
    status = await releases.get(f"{API}/releases/bad?namespace={namespace}")
    assert (await status.json())["info"]["status"] == "failed"  # Helm recorded the failure

    closing = f"{namespace}-closing"
    await create_namespace(sim, closing)
    async with kube_api(sim) as api:
        core = CoreV1Api(api)
        held = V1ObjectMeta(name="held", finalizers=["example.com/hold"])
        await core.create_namespaced_config_map(closing, V1ConfigMap(metadata=held))
        await core.delete_namespace(closing)
    body = await assert_problem(await install(releases, closing), 403, code="cluster-forbidden")
    assert "being terminated" in body["detail"]


LOOKS_UP = """{{- $found := lookup "v1" "ConfigMap" .Release.Namespace "settings" }}
apiVersion: v1
kind: ConfigMap
metadata: {name: looked-up}
"""


async def test_unreachable_cluster_is_502(
    make_client: MakeClient, sim: Simulator, tmp_path: Path
) -> None:
    config = yaml.safe_load(sim.kubeconfig_path.read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(yaml.safe_dump(config))
    client = await make_client(*FULL, f"chartsvc.kube.kubeconfig={dead}")
    await assert_problem(await client.get(f"{API}/releases"), 502, code="cluster-unreachable")
    await assert_problem(await client.get(f"{API}/releases/x"), 502, code="cluster-unreachable")
    resp = await client.post(
        f"{API}/releases/upload",
        data=upload_form(build_chart(tmp_path), {"releaseName": "x"}),
        headers=KEY,
    )
    body = await assert_problem(resp, 502, code="cluster-unreachable")
    assert "token" not in body["detail"]
    # a chart whose lookup cannot reach the cluster: the same 502, not the bounded render's 400
    looker = build_chart(tmp_path, templates={"cm.yaml": LOOKS_UP})
    resp = await client.post(
        f"{API}/releases/upload", data=upload_form(looker, {"releaseName": "x"}), headers=KEY
    )
    await assert_problem(resp, 502, code="cluster-unreachable")


async def test_gate_covers_every_mutating_release_operation(
    make_client: MakeClient, sim: Simulator, namespace: str
) -> None:
    kube = f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}"
    writes = [
        ("POST", "/releases"),
        ("POST", "/releases/upload"),
        ("PUT", "/releases/web"),
        ("POST", "/releases/web/upgrade/upload"),
        ("DELETE", "/releases/web"),
        ("POST", "/releases/web/rollback"),
        ("POST", "/releases/web/test"),
    ]
    read_only = await make_client(kube)
    for method, path in writes:
        await assert_problem(
            await read_only.request(method, API + path), 403, code="mutations-disabled"
        )
    assert (await read_only.get(f"{API}/releases?namespace={namespace}")).status == 200
    full = await make_client(*FULL, kube)
    for method, path in writes:
        resp = await full.request(method, API + path, headers={"X-API-Key": "wrong"})
        await assert_problem(resp, 401, code="invalid-api-key")
    resp = await full.delete(f"{API}/releases/web?namespace={namespace}", headers=KEY)
    await assert_problem(resp, 404)  # the key lets the request through to the release


async def test_writes_to_one_release_are_serialised(releases: Client, namespace: str) -> None:
    assert (await install(releases, namespace)).status == 201
    url = f"{API}/releases/web?namespace={namespace}"

    async def upgrade(count: int) -> int:
        body = {"chartRef": "r/demo", "version": "0.1.0", "values": {"replicaCount": count}}
        resp = await releases.put(url, json=body, headers=KEY)
        assert resp.status == 200, await resp.text()  # Helm refuses overlapping writes (409)
        version: int = (await resp.json())["version"]
        return version

    versions = await asyncio.gather(*(upgrade(n) for n in range(2, 7)))
    assert sorted(versions) == [2, 3, 4, 5, 6]
    history = await (await releases.get(f"{API}/releases/web/history?namespace={namespace}")).json()
    assert [h["info"]["status"] for h in history] == ["superseded"] * 5 + ["deployed"]


UNKNOWN_FIELD = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
bogusField: 1
data:
  a: b
"""


async def test_an_unknown_field_is_refused_by_the_cluster_on_install_and_upgrade(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    # Helm's client-side OpenAPI pass is off (chartsvc.helm.writes): the cluster still refuses.
    bad = build_chart(tmp_path, name="typo", templates={"cm.yaml": UNKNOWN_FIELD})
    resp = await install_upload(releases, bad, namespace, "typo")
    body = await assert_problem(resp, 400, code="cluster-bad-request")
    assert ".bogusField: field not declared in schema" in body["detail"]

    assert (await install(releases, namespace, "fine")).status == 201
    resp = await upgrade_upload(releases, bad, namespace, "fine", {})
    body = await assert_problem(resp, 400, code="cluster-bad-request")
    assert ".bogusField: field not declared in schema" in body["detail"]
