"""Helm v4 against a living cluster: ``wait="legacy"`` needs real ReplicaSets, ``test`` real pods."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import helm_python
import pytest

from kubesim import Simulator
from kubesim.http.state import State
from tests.kubesim.conftest import write_chart
from tests.kubesim.live import FAST

CHART = "apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: '1.27'\n"
VALUES = "replicas: 2\ntarget: web\n"
TEMPLATES = {
    "deployment": """apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}-web}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{name: http, containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: http}}
""",
    "service": """apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-web}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: http}]
""",
    "test-connection": """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test-connection
  annotations: {"helm.sh/hook": test}
spec:
  restartPolicy: Never
  containers:
  - name: wget
    image: busybox
    command: [wget]
    args: ['-qO-', '{{ .Release.Name }}-{{ .Values.target }}:80/']
""",
}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("kubesim"), nodes=2, timings=FAST) as s:
        yield s


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_chart(tmp_path_factory.mktemp("chart") / "web", CHART, VALUES, TEMPLATES)


async def test_legacy_wait_and_test_hooks(
    chart: Path, helm: helm_python.Config, sim: Simulator, ns: str
) -> None:
    await asyncio.to_thread(
        helm.install, str(chart), "shop", create_namespace=True, wait="legacy", timeout=60
    )

    def replica_sets(state: State) -> list[int]:
        return [
            int((r.get("status") or {}).get("readyReplicas") or 0)
            for r in state.objects.store.list(("apps", "replicasets"), ns)
        ]

    # legacy wait returned only once the new ReplicaSet was ready
    assert sim.call(replica_sets) == [2]
    release = await asyncio.to_thread(helm.test, "shop", timeout=60, logs=True)
    assert release["release"]["status"] == "deployed"
    assert release["logs"].startswith("POD LOGS: shop-test-connection\n")
    assert "<h1>Welcome to nginx!</h1>" in release["logs"]  # wget really reached nginx
    await asyncio.to_thread(
        helm.upgrade, str(chart), "shop", {"target": "missing"}, wait="legacy", timeout=60
    )
    with pytest.raises(Exception, match="shop-test-connection"):
        await asyncio.to_thread(helm.test, "shop", timeout=60)
    await asyncio.to_thread(
        helm.install, str(chart), "watched", {"replicas": 3}, wait="watcher", timeout=60
    )
    assert sorted(sim.call(replica_sets)) == [2, 3]
    await asyncio.to_thread(helm.uninstall, "watched", wait="watcher", timeout=60)
