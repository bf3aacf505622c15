"""Drift of a release installed into the simulator: changes made with kubectl show as ``modified``
with their paths, a deleted object as ``missing``, an object carrying the release's marks that its
manifest does not name as ``orphaned``; the server's defaults never show; a forced upgrade
(``force``) puts everything back, ``forceConflicts`` what another manager took over. Over REST and the official MCP client, and across a host's
cluster resolver."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kubesim import Simulator
from tests.chartsvc.conftest import FULL
from tests.chartsvc.fixtures_cluster import (
    API,
    build_chart,
    install_upload,
    namespace,
    releases,
    sim,
    upgrade_upload,
)
from tests.chartsvc.mcp_support import KEY, MakeMcp, b64, json_of, make_mcp
from tests.guards import assert_problem
from tests.typing_support import Client
from tests.webchart import DEPLOYMENT, SERVICE

__all__ = ["make_mcp", "namespace", "releases", "sim"]

CONFIGMAPS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: hello
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data:
  colour: blue
"""
SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-creds
stringData:
  password: s3cr3t-original
"""
TEMPLATES = {
    "deployment.yaml": DEPLOYMENT,
    "service.yaml": SERVICE,
    "configmaps.yaml": CONFIGMAPS,
    "secret.yaml": SECRET,
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return build_chart(tmp_path_factory.mktemp("drift"), "drifty", templates=TEMPLATES)


async def kubectl(sim: Simulator, cache: Path, *args: str) -> str:
    command = ["kubectl", f"--kubeconfig={sim.kubeconfig_path}", f"--cache-dir={cache}", *args]
    done = await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def drift_of(client: Client, namespace: str, name: str = "app") -> dict[str, Any]:
    resp = await client.get(f"{API}/releases/{name}/drift?namespace={namespace}")
    assert resp.status == 200, await resp.text()
    body: dict[str, Any] = await resp.json()
    return body


def states(drift: dict[str, Any]) -> dict[str, str]:
    return {f"{o['kind']}/{o['name']}": o["state"] for o in drift["objects"]}


def entry(drift: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        o for o in drift["objects"] if (o["kind"], o["name"]) == (kind, name)
    )
    return found


async def test_kubectl_changes_show_as_drift_until_put_back(
    releases: Client, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    resp = await install_upload(releases, archive, namespace, "app")
    assert resp.status == 201, await resp.text()
    fresh = await drift_of(releases, namespace)
    # The simulator defaulted revisionHistoryLimit, strategy, terminationMessagePath, clusterIP,
    # sessionAffinity...: none of it is drift.
    assert set(states(fresh).values()) == {"in-sync"}, json.dumps(fresh, indent=1)
    assert fresh["summary"] == {"in_sync": 5, "modified": 0, "missing": 0, "orphaned": 0}
    assert (fresh["name"], fresh["namespace"], fresh["revision"]) == ("app", namespace, 1)

    ns = f"--namespace={namespace}"
    live = json.loads(await kubectl(sim, tmp_path, ns, "get", "deployment/app-web", "-o", "json"))
    assert live["spec"]["revisionHistoryLimit"] == 10  # defaults the chart never set...
    container = live["spec"]["template"]["spec"]["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"  # ...and not drift
    await kubectl(sim, tmp_path, ns, "scale", "deployment/app-web", "--replicas=3")
    await kubectl(sim, tmp_path, ns, "label", "service/app-web", "team=blue")
    drifted = await drift_of(releases, namespace)
    assert states(drifted) == {
        "Deployment/app-web": "modified",
        "Service/app-web": "modified",
        "ConfigMap/app-settings": "in-sync",
        "ConfigMap/app-extra": "in-sync",
        "Secret/app-creds": "in-sync",
    }
    deployment = entry(drifted, "Deployment", "app-web")
    assert deployment["patch"] == [{"op": "replace", "path": "/spec/replicas", "value": 3}]
    assert "-  replicas: 1\n+  replicas: 3\n" in deployment["diff"]
    service = entry(drifted, "Service", "app-web")
    assert service["patch"] == [{"op": "add", "path": "/metadata/labels/team", "value": "blue"}]
    assert "+    team: blue\n" in service["diff"]
    assert drifted["summary"] == {"in_sync": 3, "modified": 2, "missing": 0, "orphaned": 0}

    await kubectl(sim, tmp_path, ns, "delete", "configmap/app-extra")
    gone = entry(await drift_of(releases, namespace), "ConfigMap", "app-extra")
    assert (gone["state"], gone["message"]) == ("missing", "not found")
    assert "patch" not in gone

    # The upgrade the docs recommend: Helm 4's server-side apply would neither take
    # spec.replicas back from kubectl's scale (a conflict) nor remove a label it never set;
    # force replaces each object with the chart's.
    resp = await upgrade_upload(releases, archive, namespace, "app", {"force": True})
    assert resp.status == 200, await resp.text()
    healed = await drift_of(releases, namespace)
    assert set(states(healed).values()) == {"in-sync"}, healed
    assert healed["revision"] == 2
    live = json.loads(await kubectl(sim, tmp_path, ns, "get", "service/app-web", "-o", "json"))
    assert "team" not in live["metadata"].get("labels", {})


async def test_secret_values_are_compared_but_never_shown(
    releases: Client, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    assert (await install_upload(releases, archive, namespace, "app")).status == 201
    patch = json.dumps({"stringData": {"password": "s3cr3t-changed", "token": "t0ken-added"}})
    await kubectl(
        sim, tmp_path, f"--namespace={namespace}", "patch", "secret/app-creds", "-p", patch
    )
    resp = await releases.get(f"{API}/releases/app/drift?namespace={namespace}")
    text = await resp.text()
    for value in ("s3cr3t", "t0ken", "czNjcjN0", "dDBrZW4"):  # plain and base64
        assert value not in text
    secret = entry(json.loads(text), "Secret", "app-creds")
    assert secret["patch"] == [
        {"op": "replace", "path": "/data/password", "value": "(redacted, changed)"},
        {"op": "add", "path": "/data/token", "value": "(redacted, changed)"},
    ]


async def test_a_marked_object_the_manifest_does_not_name_is_orphaned(
    releases: Client, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    assert (await install_upload(releases, archive, namespace, "app")).status == 201
    marks = {"app.kubernetes.io/managed-by": "Helm"}
    notes = {"meta.helm.sh/release-name": "app", "meta.helm.sh/release-namespace": namespace}
    for name, release in (("app-leftover", "app"), ("other-leftover", "other")):
        leftover = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": marks,
                "annotations": notes | {"meta.helm.sh/release-name": release},
            },
        }
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(leftover))
        await kubectl(sim, tmp_path, "create", "-f", str(path))
    drift = await drift_of(releases, namespace)
    assert states(drift)["ConfigMap/app-leftover"] == "orphaned"
    assert "ConfigMap/other-leftover" not in states(drift)  # another release's
    assert drift["summary"]["orphaned"] == 1
    assert drift["objects"][-1]["name"] == "app-leftover"  # after the manifest's objects


async def test_when_the_server_refuses_the_dry_run_only_declared_fields_count(
    releases: Client, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    assert (await install_upload(releases, archive, namespace, "app")).status == 201
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "no-more", "namespace": namespace},
        "spec": {"hard": {"configmaps": "0"}},  # refuses every ConfigMap create, dry or not
    }
    path = tmp_path / "quota.json"
    path.write_text(json.dumps(quota))
    await kubectl(sim, tmp_path, "create", "-f", str(path))
    ns = f"--namespace={namespace}"
    await kubectl(
        sim, tmp_path, ns, "patch", "configmap/app-settings", "-p", '{"data":{"greeting":"hi"}}'
    )
    await kubectl(sim, tmp_path, ns, "label", "configmap/app-extra", "team=blue")
    drift = await drift_of(releases, namespace)
    settings = entry(drift, "ConfigMap", "app-settings")
    assert settings["patch"] == [{"op": "replace", "path": "/data/greeting", "value": "hi"}]
    # Without the server's answer an added label cannot be told from one the server added.
    assert entry(drift, "ConfigMap", "app-extra")["state"] == "in-sync"
    assert entry(drift, "Deployment", "app-web")["state"] == "in-sync"


async def test_drift_of_an_unknown_release_is_404(releases: Client, namespace: str) -> None:
    resp = await releases.get(f"{API}/releases/nothing/drift?namespace={namespace}")
    assert resp.status == 404
    assert resp.content_type == "application/problem+json"


async def test_drift_of_an_uninstalled_release_is_404(
    releases: Client, namespace: str, archive: bytes
) -> None:
    # The kinds its last drift listed are listed again while the (now missing) record is read.
    assert (await install_upload(releases, archive, namespace, "app")).status == 201
    assert (await drift_of(releases, namespace))["summary"]["in_sync"] == 5
    gone = await releases.delete(
        f"{API}/releases/app?namespace={namespace}", headers={"X-API-Key": KEY}
    )
    assert gone.status == 200
    await assert_problem(await releases.get(f"{API}/releases/app/drift?namespace={namespace}"), 404)


async def test_drift_through_the_mcp_tool_matches_rest(
    make_mcp: MakeMcp, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    server = await make_mcp(*FULL, f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}")
    async with server.session(key=KEY) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["getReleaseDrift"].annotations is not None
        assert tools["getReleaseDrift"].annotations.read_only_hint is True
        form = {"chart": b64(archive), "request": {"releaseName": "app", "namespace": namespace}}
        installed = await session.call_tool("installReleaseUpload", form)
        assert not installed.is_error, installed
        await kubectl(
            sim, tmp_path, f"--namespace={namespace}", "scale", "deployment/app-web", "--replicas=2"
        )
        where = {"name": "app", "namespace": namespace}
        drift = json_of(await session.call_tool("getReleaseDrift", where))
        assert "forceConflicts" in tools["upgradeRelease"].input_schema["properties"]
        upgrade = {"chart": b64(archive), "request": {"forceConflicts": True}}
        upgraded = await session.call_tool("upgradeReleaseUpload", where | upgrade)
        assert not upgraded.is_error, upgraded
        healed = json_of(await session.call_tool("getReleaseDrift", where))
    assert entry(drift, "Deployment", "app-web")["patch"] == [
        {"op": "replace", "path": "/spec/replicas", "value": 2}
    ]
    assert drift["summary"]["modified"] == 1
    assert healed["summary"]["modified"] == 0


async def test_a_scaled_deployment_conflicts_until_the_upgrade_forces_conflicts(
    releases: Client, sim: Simulator, namespace: str, archive: bytes, tmp_path: Path
) -> None:
    assert (await install_upload(releases, archive, namespace, "app")).status == 201
    ns = f"--namespace={namespace}"
    await kubectl(sim, tmp_path, ns, "scale", "deployment/app-web", "--replicas=3")
    await kubectl(sim, tmp_path, ns, "label", "service/app-web", "team=blue")
    plain = await upgrade_upload(releases, archive, namespace, "app", {})
    problem = await assert_problem(plain, 409, code="apply-conflict")
    assert "forceConflicts: true" in problem["detail"]
    assert ".spec.replicas" in problem["detail"]
    both = await upgrade_upload(
        releases, archive, namespace, "app", {"force": True, "forceConflicts": True}
    )
    problem = await assert_problem(both, 400)
    assert {e["field"] for e in problem["errors"]} == {"force", "forceConflicts"}
    taken = await upgrade_upload(releases, archive, namespace, "app", {"forceConflicts": True})
    assert taken.status == 200, await taken.text()
    drift = await drift_of(releases, namespace)
    # replicas back to the chart's; a label the chart never set is not Helm's to remove
    assert states(drift)["Deployment/app-web"] == "in-sync"
    assert states(drift)["Service/app-web"] == "modified"
