"""Cluster fixtures for the release tests: a simulator, a namespace per test, the service pointed at it.

Each test module that imports ``sim`` gets its own simulator (module scope); tests keep to their own
namespaces. The service reaches the simulator through ``chartsvc.kube.kubeconfig``, the way an
operator would point it at a cluster, and the loopback chart repository of the chart tests is added
as ``r``. ``helm_config`` is helm_python itself on the same cluster and namespace, to check that
what one side does the other sees. Import the fixtures explicitly and list them in ``__all__``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml
from aiohttp import ClientResponse, FormData
from kubernetes_asyncio import config as kconfig
from kubernetes_asyncio.client import (
    ApiClient,
    Configuration,
    CoreV1Api,
    V1Namespace,
    V1ObjectMeta,
)

from chartsvc.releases.reads import decode_record
from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, ChartRepo, MakeClient
from tests.typing_support import Client

API = "/api/v1"

TEST_HOOK = """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    "helm.sh/hook": test
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox
      command: ["sh", "-c", {{ .Values.testScript | quote }}]
"""
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
"""
NOTES = "Greeting is {{ .Values.greeting }} in {{ .Release.Namespace }}.\n"
#: A template the cluster refuses: the port is out of range.
#: A template bomb: renders for minutes (a hundred million numbers) unless stopped.
#: A template that renders for ever in little memory: the time limit, not the memory bound, stops
#: it (the issue's own bomb, which prints every number, is BALLOON's kind: it grows without bound).
LOOP = "{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n"

INVALID_SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  ports:
    - port: 99999
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """A live cluster (one node: pods run, test hooks finish, logs are served)."""
    with Simulator(tmp_path_factory.mktemp("kubesim"), nodes=1) as running:
        yield running


@contextlib.asynccontextmanager
async def kube_api(sim: Simulator) -> AsyncIterator[ApiClient]:
    """A kubernetes-asyncio client of ``sim``, to look at the cluster behind the service's back."""
    configuration = Configuration()
    await kconfig.load_kube_config(
        config_file=str(sim.kubeconfig_path), client_configuration=configuration
    )
    async with ApiClient(configuration) as api:
        yield api


async def create_namespace(sim: Simulator, name: str) -> None:
    async with kube_api(sim) as api:
        await CoreV1Api(api).create_namespace(V1Namespace(metadata=V1ObjectMeta(name=name)))


@pytest.fixture
async def namespace(sim: Simulator) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    await create_namespace(sim, name)
    return name


@pytest.fixture
async def releases(make_client: MakeClient, sim: Simulator, chart_repo: ChartRepo) -> Client:
    """The service in FULL mode (send ``KEY``) on ``sim``, with the loopback repository as ``r``."""
    client: Client = await make_client(*FULL, f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}")
    resp = await client.post(f"{API}/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY)
    assert resp.status == 201, await resp.text()
    return client


@pytest.fixture
def helm_config(sim: Simulator, namespace: str) -> Iterator[helm.Config]:
    config = helm.Config(kubeconfig_path=str(sim.kubeconfig_path), namespace=namespace)
    yield config
    config.close()


def build_chart(
    workdir: Path,
    name: str = "probe",
    *,
    version: str = "0.1.0",
    templates: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> bytes:
    """A small packaged chart: a ConfigMap, NOTES.txt and a test hook, unless ``templates`` say."""
    root = workdir / f"{name}-{version}-{uuid.uuid4().hex[:6]}" / name
    (root / "templates").mkdir(parents=True)
    chart = {"apiVersion": "v2", "name": name, "version": version, "appVersion": "1.0"}
    (root / "Chart.yaml").write_text(yaml.safe_dump(chart))
    defaults = {"greeting": "hello", "testScript": "echo checked"} | (values or {})
    (root / "values.yaml").write_text(yaml.safe_dump(defaults))
    files = templates or {"configmap.yaml": CONFIGMAP, "NOTES.txt": NOTES, "test.yaml": TEST_HOOK}
    for path, text in files.items():
        (root / "templates" / path).write_text(text)
    return Path(helm.package(root, destination=root.parent)).read_bytes()


async def install(
    client: Client, namespace: str, name: str = "web", **extra: Any
) -> ClientResponse:
    """POST an install of ``r/demo`` 0.1.0 as ``name``; ``extra`` adds request fields."""
    body = {"chartRef": "r/demo", "version": "0.1.0", "releaseName": name, "namespace": namespace}
    return await client.post(f"{API}/releases", json=body | extra, headers=KEY)


async def install_upload(
    client: Client, archive: bytes, namespace: str, name: str, **extra: Any
) -> ClientResponse:
    """POST an install of the uploaded ``archive`` as ``name``; ``extra`` adds request fields."""
    request = {"releaseName": name, "namespace": namespace} | extra
    return await client.post(
        f"{API}/releases/upload", data=upload_form(archive, request), headers=KEY
    )


async def upgrade_upload(
    client: Client,
    archive: bytes,
    namespace: str,
    name: str,
    request: dict[str, Any] | None = None,
) -> ClientResponse:
    """POST an upgrade of ``name`` to the uploaded ``archive``, with ``request`` as its request part
    (none without it)."""
    return await client.post(
        f"{API}/releases/{name}/upgrade/upload?namespace={namespace}",
        data=upload_form(archive, request),
        headers=KEY,
    )


def upload_form(archive: bytes, request: dict[str, Any] | None = None) -> FormData:
    form = FormData()
    form.add_field("chart", archive, filename="chart.tgz", content_type="application/gzip")
    if request is not None:
        form.add_field("request", json.dumps(request), content_type="application/json")
    return form


async def rewrite_record(
    sim: Simulator,
    namespace: str,
    name: str,
    change: Callable[[dict[str, Any]], None],
    *,
    version: int = 1,
    status: str | None = None,
) -> None:
    """Helm's stored record of revision ``version`` of ``name``, changed by ``change`` as a writer
    around the service could (the helm CLI, a killed write); ``status`` also relabels it."""
    async with kube_api(sim) as api:
        core = CoreV1Api(api)
        secret_name = f"sh.helm.release.v1.{name}.v{version}"
        secret = await core.read_namespaced_secret(secret_name, namespace)
        record = decode_record(secret.data["release"])
        change(record)
        packed = base64.b64encode(gzip.compress(json.dumps(record).encode()))
        secret.data["release"] = base64.b64encode(packed).decode()
        if status is not None:
            secret.metadata.labels["status"] = status
        await core.replace_namespaced_secret(secret_name, namespace, secret)


async def leave_pending(sim: Simulator, namespace: str, name: str) -> None:
    """Helm's record of ``name`` as a writer killed mid-install leaves it (issue 39 item 13)."""

    def pending(record: dict[str, Any]) -> None:
        record["info"]["status"] = "pending-install"

    await rewrite_record(sim, namespace, name, pending, status="pending-install")


async def stuck_details(client: Client, component: str = "releases") -> dict[str, Any]:
    """The health details of the stuck-release component once no cluster is still ``checking``
    (the first probe waits for the first reading at most a second; a loaded machine may take
    longer, and the reading lands for a later probe)."""
    details: dict[str, Any] = {}
    for _ in range(100):
        resp = await client.get("/actuator/health")
        assert resp.status == 200, await resp.text()
        health = await resp.json()
        assert health["status"] == "UP"
        found = health["components"]["readiness"]["components"][component]
        assert found["status"] == "UP"
        details = found["details"]
        if all(c.get("reason") != "checking" for c in details["clusters"].values()):
            return details
        await asyncio.sleep(0.1)
    raise AssertionError(f"no cluster reading within 10 s: {details}")
