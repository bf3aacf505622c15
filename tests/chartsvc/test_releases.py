"""The release lifecycle over HTTP against the simulator, and helm_python seeing the same releases.

Install from the loopback repository and from an upload, upgrade with new values, read history,
values, manifest, notes, hooks and resources, roll back, uninstall; then the same lifecycle started
with helm_python directly and read (and continued) through the service.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml
from kubernetes_asyncio.client import CoreV1Api

from kubesim import Simulator
from tests.chartsvc.conftest import KEY
from tests.chartsvc.fixtures_cluster import (
    API,
    INVALID_SERVICE,
    build_chart,
    helm_config,
    install,
    install_upload,
    kube_api,
    namespace,
    releases,
    sim,
    upgrade_upload,
)
from tests.guards import assert_json
from tests.typing_support import Client

__all__ = ["helm_config", "namespace", "releases", "sim"]


async def test_install_from_repository_then_the_whole_lifecycle(
    releases: Client, namespace: str, sim: Simulator
) -> None:
    ns = f"?namespace={namespace}"
    installed = await assert_json(
        await install(releases, namespace, values={"replicaCount": 2}), 201
    )
    assert installed["version"] == 1
    assert installed["info"]["status"] == "deployed"
    assert installed["info"]["description"] == "Install complete"
    assert installed["info"]["first_deployed"] == installed["info"]["last_deployed"]
    assert installed["chart"]["metadata"]["name"] == "demo"
    assert installed["chart"]["metadata"]["version"] == "0.1.0"
    assert installed["config"] == {"replicaCount": 2}
    assert "kind: Deployment" in installed["manifest"]
    assert "replicas: 2" in installed["manifest"]

    upgrade = {"chartRef": "r/demo", "version": "0.1.0", "values": {"replicaCount": 3}}
    upgraded = await assert_json(
        await releases.put(f"{API}/releases/web{ns}", json=upgrade, headers=KEY)
    )
    assert (upgraded["version"], upgraded["info"]["description"]) == (2, "Upgrade complete")
    assert upgraded["info"]["first_deployed"] == installed["info"]["first_deployed"]
    async with kube_api(sim) as api:
        deployment = await api.call_api(
            f"/apis/apps/v1/namespaces/{namespace}/deployments/web-demo",
            "GET",
            auth_settings=["BearerToken"],
            response_types_map={200: "object"},
            _return_http_data_only=True,
        )
    assert deployment["spec"]["replicas"] == 3

    values = await assert_json(await releases.get(f"{API}/releases/web/values{ns}"))
    assert values == {"replicaCount": 3}
    merged = await assert_json(await releases.get(f"{API}/releases/web/values{ns}&all=true"))
    assert merged["replicaCount"] == 3
    assert merged["image"]["repository"] == "nginx"

    manifest = await releases.get(f"{API}/releases/web/manifest{ns}")
    assert manifest.content_type == "text/plain"
    kinds = {doc["kind"] for doc in yaml.safe_load_all(await manifest.text()) if doc}
    assert kinds == {"ServiceAccount", "Service", "Deployment"}
    notes = await releases.get(f"{API}/releases/web/notes{ns}")
    assert "Get the application URL" in await notes.text()
    hooks = await assert_json(await releases.get(f"{API}/releases/web/hooks{ns}"))
    assert [(h["name"], h["kind"], h["events"]) for h in hooks] == [
        ("web-demo-test-connection", "Pod", ["test"])
    ]
    resources = await assert_json(await releases.get(f"{API}/releases/web/resources{ns}"))
    assert {(r["kind"], r["name"], r["namespace"]) for r in resources} == {
        ("ServiceAccount", "web-demo", namespace),
        ("Service", "web-demo", namespace),
        ("Deployment", "web-demo", namespace),
    }
    assert all(isinstance(r["ready"], bool) and r["message"] for r in resources)

    rolled = await assert_json(
        await releases.post(f"{API}/releases/web/rollback{ns}", json={"revision": 1}, headers=KEY)
    )
    assert (rolled["version"], rolled["info"]["description"]) == (3, "Rollback to 1")
    assert rolled["config"] == {"replicaCount": 2}
    history = await assert_json(await releases.get(f"{API}/releases/web/history{ns}"))
    assert [(h["version"], h["info"]["status"], h["info"]["description"]) for h in history] == [
        (1, "superseded", "Install complete"),
        (2, "superseded", "Upgrade complete"),
        (3, "deployed", "Rollback to 1"),
    ]
    listed = await assert_json(await releases.get(f"{API}/releases{ns}"))
    assert [(r["name"], r["version"]) for r in listed] == [("web", 3)]

    gone = await assert_json(await releases.delete(f"{API}/releases/web{ns}", headers=KEY))
    assert gone["release"]["info"]["status"] == "uninstalled"
    assert gone["release"]["info"]["description"] == "Uninstallation complete"
    assert await assert_json(await releases.get(f"{API}/releases{ns}")) == []
    assert (await releases.get(f"{API}/releases/web{ns}")).status == 404
    async with kube_api(sim) as api:
        secrets = await CoreV1Api(api).list_namespaced_secret(
            namespace, label_selector="owner=helm"
        )
    assert secrets.items == []


async def test_install_and_upgrade_from_uploads(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    archive = build_chart(tmp_path)
    resp = await install_upload(releases, archive, namespace, "up", values={"greeting": "hi"})
    installed = await assert_json(resp, 201)
    assert installed["chart"]["metadata"] == {
        "apiVersion": "v2",
        "name": "probe",
        "version": "0.1.0",
        "appVersion": "1.0",
    }
    notes = await releases.get(f"{API}/releases/up/notes?namespace={namespace}")
    assert await notes.text() == f"Greeting is hi in {namespace}.\n"

    newer = build_chart(tmp_path, version="0.2.0")
    resp = await upgrade_upload(releases, newer, namespace, "up", {"values": {"greeting": "hey"}})
    upgraded = await assert_json(resp)
    assert upgraded["chart"]["metadata"]["version"] == "0.2.0"
    assert upgraded["config"] == {"greeting": "hey"}
    assert 'greeting: "hey"' in upgraded["manifest"]

    # Without values an upgrade keeps the release's values, as `helm upgrade` does.
    resp = await upgrade_upload(releases, newer, namespace, "up")
    assert (await assert_json(resp))["config"] == {"greeting": "hey"}


async def test_dry_run_renders_and_changes_nothing(
    releases: Client, namespace: str, sim: Simulator
) -> None:
    body = {"chartRef": "r/demo", "releaseName": "dry", "namespace": namespace, "dryRun": True}
    dry = await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY))
    assert dry["info"]["status"] == "pending-install"
    assert dry["info"]["description"] == "Dry run complete"
    assert "kind: Deployment" in dry["manifest"]
    assert (await releases.get(f"{API}/releases/dry?namespace={namespace}")).status == 404
    async with kube_api(sim) as api:
        services = await CoreV1Api(api).list_namespaced_service(namespace)
    assert services.items == []

    body["dryRun"] = False
    await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 201)
    upgrade = {"chartRef": "r/demo", "values": {"replicaCount": 5}, "dryRun": True}
    resp = await releases.put(
        f"{API}/releases/dry?namespace={namespace}", json=upgrade, headers=KEY
    )
    preview = await assert_json(resp)
    assert preview["version"] == 2
    assert "replicas: 5" in preview["manifest"]
    history = await assert_json(
        await releases.get(f"{API}/releases/dry/history?namespace={namespace}")
    )
    assert [h["version"] for h in history] == [1]


async def test_helm_sees_what_the_service_installed(
    releases: Client,
    namespace: str,
    helm_config: helm.Config,
    sim: Simulator,
    chart_archives: dict[str, Path],
) -> None:
    body: dict[str, Any] = {"chartRef": "r/demo", "releaseName": "svc", "namespace": namespace}
    body["values"] = {"service": {"port": 8080}}
    await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 201)
    listed = await asyncio.to_thread(helm_config.list)
    assert [(r["name"], r["revision"], r["status"]) for r in listed] == [("svc", 1, "deployed")]
    values = await asyncio.to_thread(helm_config.get_values, "svc")
    assert values == {"service": {"port": 8080}}
    async with kube_api(sim) as api:
        secret = await CoreV1Api(api).read_namespaced_secret("sh.helm.release.v1.svc.v1", namespace)
    stored = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(secret.data["release"]))))
    assert stored["config"] == {"service": {"port": 8080}}

    demo = str(chart_archives["demo-0.1.0"])
    await asyncio.to_thread(helm_config.upgrade, demo, "svc", {"replicaCount": 4})
    status = await assert_json(await releases.get(f"{API}/releases/svc?namespace={namespace}"))
    assert (status["version"], status["config"]) == (2, {"replicaCount": 4})
    await assert_json(
        await releases.delete(f"{API}/releases/svc?namespace={namespace}", headers=KEY)
    )
    assert await asyncio.to_thread(helm_config.list) == []


async def test_service_reads_and_continues_what_helm_installed(
    releases: Client, namespace: str, helm_config: helm.Config, tmp_path: Path
) -> None:
    chart = tmp_path / "probe.tgz"
    chart.write_bytes(build_chart(tmp_path, values={"greeting": "from helm"}))
    await asyncio.to_thread(helm_config.install, str(chart), "direct", {"greeting": "helm"})
    await asyncio.to_thread(helm_config.upgrade, str(chart), "direct", {"greeting": "again"})
    ns = f"?namespace={namespace}"

    listed = await assert_json(await releases.get(f"{API}/releases{ns}"))
    assert [(r["name"], r["version"], r["info"]["status"]) for r in listed] == [
        ("direct", 2, "deployed")
    ]
    status = await assert_json(await releases.get(f"{API}/releases/direct{ns}"))
    assert listed[0] == {key: status[key] for key in listed[0]}
    assert status["config"] == {"greeting": "again"}
    history = await assert_json(await releases.get(f"{API}/releases/direct/history{ns}"))
    assert [h["info"]["description"] for h in history] == ["Install complete", "Upgrade complete"]
    assert await assert_json(await releases.get(f"{API}/releases/direct/values{ns}")) == {
        "greeting": "again"
    }
    merged = await assert_json(await releases.get(f"{API}/releases/direct/values{ns}&all=true"))
    assert merged == {"greeting": "again", "testScript": "echo checked"}
    notes = await releases.get(f"{API}/releases/direct/notes{ns}")
    assert await notes.text() == f"Greeting is again in {namespace}.\n"
    resources = await assert_json(await releases.get(f"{API}/releases/direct/resources{ns}"))
    assert resources == [
        {
            "api_version": "v1",
            "kind": "ConfigMap",
            "name": "direct-settings",
            "namespace": namespace,
            "status": "Current",
            "ready": True,
            "message": "exists",
        }
    ]
    hooks = await assert_json(await releases.get(f"{API}/releases/direct/hooks{ns}"))
    assert [h["name"] for h in hooks] == ["direct-check"]

    resp = await releases.post(f"{API}/releases/direct/rollback{ns}", headers=KEY)
    assert (await assert_json(resp))["config"] == {"greeting": "helm"}  # the previous revision
    history = await asyncio.to_thread(helm_config.history, "direct")
    assert [(h["revision"], h["status"]) for h in history] == [
        (1, "superseded"),
        (2, "superseded"),
        (3, "deployed"),
    ]
    await assert_json(await releases.delete(f"{API}/releases/direct{ns}", headers=KEY))
    assert await asyncio.to_thread(helm_config.list) == []


async def test_list_matches_helm_list(
    releases: Client, namespace: str, helm_config: helm.Config, tmp_path: Path
) -> None:
    good = tmp_path / "good.tgz"
    good.write_bytes(build_chart(tmp_path))
    for name in ("b-second", "a-first"):
        await asyncio.to_thread(helm_config.install, str(good), name)
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(build_chart(tmp_path, name="bad", templates={"svc.yaml": INVALID_SERVICE}))
    with contextlib.suppress(helm.HelmError):  # recorded as failed
        await asyncio.to_thread(helm_config.install, str(bad), "c-failed")
    await asyncio.to_thread(helm_config.uninstall, "b-second", keep_history=True)
    expected = [(r["name"], r["status"]) for r in await asyncio.to_thread(helm_config.list)]
    listed = await assert_json(await releases.get(f"{API}/releases?namespace={namespace}"))
    assert [(r["name"], r["info"]["status"]) for r in listed] == expected
    assert expected == [
        ("a-first", "deployed"),
        ("b-second", "uninstalled"),
        ("c-failed", "failed"),
    ]


async def test_test_hooks_report_phase_and_logs(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    ns = f"?namespace={namespace}"
    for name, script in (("ok", "echo checked"), ("broken", "echo cannot reach it; exit 3")):
        values = {"testScript": script}
        resp = await install_upload(releases, build_chart(tmp_path), namespace, name, values=values)
        assert resp.status == 201, await resp.text()

    ns += "&timeoutSeconds=60"
    passed = await assert_json(await releases.post(f"{API}/releases/ok/test{ns}", headers=KEY))
    assert [(r["name"], r["kind"], r["phase"], r["logs"]) for r in passed] == [
        ("ok-check", "Pod", "Succeeded", "checked\n")
    ]
    assert passed[0]["started_at"] <= passed[0]["completed_at"]
    assert "message" not in passed[0]

    failed = await assert_json(await releases.post(f"{API}/releases/broken/test{ns}", headers=KEY))
    assert [(r["name"], r["phase"]) for r in failed] == [("broken-check", "Failed")]
    assert "cannot reach it" in failed[0]["logs"]
    assert "broken-check" in failed[0]["message"]
    hooks = await assert_json(
        await releases.get(f"{API}/releases/broken/hooks?namespace={namespace}")
    )
    assert hooks[0]["last_run"]["phase"] == "Failed"


async def test_test_hooks_that_outlast_the_timeout(
    releases: Client, namespace: str, tmp_path: Path
) -> None:
    values = {"testScript": "echo started; sleep 600"}
    resp = await install_upload(releases, build_chart(tmp_path), namespace, "slow", values=values)
    assert resp.status == 201, await resp.text()
    url = f"{API}/releases/slow/test?namespace={namespace}&timeoutSeconds=1"
    results = await assert_json(await releases.post(url, headers=KEY))
    assert [r["name"] for r in results] == ["slow-check"]
    assert results[0]["phase"] == "Failed"  # Helm gave up on it
    assert "deadline" in results[0]["message"]
    assert results[0]["logs"] == "started\n"  # read from the pod, still running


async def test_writes_leave_validation_to_the_cluster(
    releases: Client,
    namespace: str,
    helm_config: helm.Config,
    sim: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Installs and upgrades skip Helm's client-side OpenAPI pass (``chartsvc.helm.writes``): the
    cluster's OpenAPI documents are never read. Helm with its defaults reads them."""
    openapi = sim.call(lambda state: state.openapi)
    reads: list[str] = []
    document = openapi.document

    def counted(key: str) -> tuple[bytes, str]:
        reads.append(key)
        return document(key)

    monkeypatch.setattr(openapi, "document", counted)
    body = {"chartRef": "r/demo", "releaseName": "quiet", "namespace": namespace}
    await assert_json(await releases.post(f"{API}/releases", json=body, headers=KEY), 201)
    upgrade = {"chartRef": "r/demo", "values": {"replicaCount": 3}}
    where = f"?namespace={namespace}"
    await assert_json(await releases.put(f"{API}/releases/quiet{where}", json=upgrade, headers=KEY))
    assert reads == []

    chart = tmp_path / "probe.tgz"
    chart.write_bytes(build_chart(tmp_path))
    await asyncio.to_thread(helm_config.install, str(chart), "checked", None)
    assert reads  # the counter sees what the service's writes skip
