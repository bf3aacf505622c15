"""Helm v4 (through helm_python) against the simulator: the release lifecycle end to end.

Every Helm call runs in a worker thread: helm_python blocks, and the simulator runs on its own
thread anyway, so nothing here can deadlock.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
from pathlib import Path
from typing import Any

import helm_python
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from kubesim import Simulator
from tests.kubesim.conftest import write_chart
from tests.webchart import DEPLOYMENT, SERVICE

CHART_YAML = "apiVersion: v2\nname: demo\nversion: 0.1.0\nappVersion: '1.0'\n"
VALUES = "replicas: 1\nextra: false\nmessage: hello\n"
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
"""
EXTRA = """{{- if .Values.extra }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data: {a: b}
{{- end }}
"""


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    templates = {
        "configmap": CONFIGMAP,
        "deployment": DEPLOYMENT,
        "service": SERVICE,
        "extra": EXTRA,
    }
    return write_chart(tmp_path_factory.mktemp("chart") / "demo", CHART_YAML, VALUES, templates)


async def _release_configmaps(core: client.CoreV1Api, ns: str) -> list[str]:
    """The chart's ConfigMaps (a real cluster also keeps kube-root-ca.crt in every namespace)."""
    listed = await core.list_namespaced_config_map(ns)
    return [c.metadata.name for c in listed.items if c.metadata.name != "kube-root-ca.crt"]


async def _release_secret(api: ApiClient, ns: str, name: str, revision: int) -> dict[str, Any]:
    secret = await client.CoreV1Api(api).read_namespaced_secret(
        f"sh.helm.release.v1.{name}.v{revision}", ns
    )
    raw = base64.b64decode(base64.b64decode(secret.data["release"]))
    return {
        "labels": secret.metadata.labels,
        "type": secret.type,
        "release": json.loads(gzip.decompress(raw)),
    }


async def test_release_lifecycle(
    chart: Path, helm: helm_python.Config, ns: str, api: ApiClient
) -> None:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    await asyncio.to_thread(helm.install, str(chart), "demo", create_namespace=True)
    assert (await core.read_namespace(ns)).status.phase == "Active"
    cm = await core.read_namespaced_config_map("demo-config", ns)
    assert cm.data == {"message": "hello"}
    assert [m.operation for m in cm.metadata.managed_fields] == ["Apply"]
    stored = await _release_secret(api, ns, "demo", 1)
    assert stored["type"] == "helm.sh/release.v1"
    assert stored["labels"]["status"] == "deployed"
    assert stored["release"]["name"] == "demo"

    listed = await asyncio.to_thread(helm.list)
    assert [r["name"] for r in listed] == ["demo"]
    status = await asyncio.to_thread(helm.status, "demo")
    assert status["status"] == "deployed"

    await asyncio.to_thread(helm.upgrade, str(chart), "demo", {"extra": True, "replicas": 3})
    assert (await core.read_namespaced_config_map("demo-extra", ns)).data == {"a": "b"}
    assert (await apps.read_namespaced_deployment("demo-web", ns)).spec.replicas == 3
    values = await asyncio.to_thread(helm.get_values, "demo")
    assert values == {"extra": True, "replicas": 3}

    await asyncio.to_thread(helm.upgrade, str(chart), "demo", {"extra": False})
    with pytest.raises(client.ApiException) as exc:
        await core.read_namespaced_config_map("demo-extra", ns)
    assert exc.value.status == 404

    await asyncio.to_thread(helm.rollback, "demo", version=2)
    assert (await core.read_namespaced_config_map("demo-extra", ns)).data == {"a": "b"}
    history = await asyncio.to_thread(helm.history, "demo")
    assert [r["revision"] for r in history] == [1, 2, 3, 4]
    assert history[-1]["status"] == "deployed"
    assert (await _release_secret(api, ns, "demo", 3))["labels"]["status"] == "superseded"

    await asyncio.to_thread(helm.uninstall, "demo")
    assert await asyncio.to_thread(helm.list) == []
    secrets = await core.list_namespaced_secret(ns, label_selector="owner=helm")
    assert secrets.items == []
    with pytest.raises(client.ApiException):
        await apps.read_namespaced_deployment("demo-web", ns)


async def test_dry_run_server_and_wait_watcher(
    chart: Path, helm: helm_python.Config, ns: str, api: ApiClient
) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    await asyncio.to_thread(helm.install, str(chart), "dry", dry_run="server")
    assert not await _release_configmaps(core, ns)
    await asyncio.to_thread(helm.install, str(chart), "waited", wait="watcher", timeout=20)
    status = await asyncio.to_thread(helm.status, "waited")
    assert status["status"] == "deployed"
    await asyncio.to_thread(helm.uninstall, "waited", wait="watcher", timeout=20)
    assert not await _release_configmaps(core, ns)


async def test_wait_watcher_with_the_living_cluster(
    chart: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nodes, real controllers and a kubelet roll the Deployment out; Helm waits for it."""
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path / "kubecache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    async with Simulator(tmp_path / "sim", nodes=1) as live:
        cfg = helm_python.Config(kubeconfig_path=str(live.kubeconfig_path), namespace="apps")
        try:
            await asyncio.to_thread(
                cfg.install, str(chart), "live", create_namespace=True, wait="watcher", timeout=30
            )
            assert (await asyncio.to_thread(cfg.status, "live"))["status"] == "deployed"
        finally:
            cfg.close()
