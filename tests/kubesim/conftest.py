"""Fixtures for the simulator tests: a running Simulator and real clients pointed at it."""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import helm_python
import pytest
import yaml
from kubernetes_asyncio import config
from kubernetes_asyncio.client import ApiClient, Configuration
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.stream import WsApiClient

from kubesim import Simulator
from tests.crds import crd

KUBECTL = "/usr/bin/kubectl"
C = TypeVar("C", bound=ApiClient)


def crd_manifest(group: str, kind: str, spec: Mapping[str, Any]) -> str:
    """:func:`crd` as YAML for ``kubectl``."""
    return yaml.safe_dump(crd(group, kind, spec), sort_keys=False)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """One API server per test module (no nodes, so no controllers: what envtest gives);
    tests keep to their own namespaces."""
    with Simulator(tmp_path_factory.mktemp("kubesim"), bookmark_interval=0.5, nodes=0) as s:
        yield s


@pytest.fixture(scope="module")
def kubectl(sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(sim, tmp_path_factory.mktemp("kubectl-cache"))


class Kubectl:
    """Runs the real kubectl against a simulator, with its own cache directory."""

    def __init__(self, sim: Simulator, cache: Path) -> None:
        self.sim = sim
        self.cache = cache

    def run(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        cmd = [
            KUBECTL,
            f"--kubeconfig={self.sim.kubeconfig_path}",
            f"--cache-dir={self.cache}",
            *args,
        ]
        env = {**os.environ, "KUBECACHEDIR": str(self.cache), "HOME": str(self.cache)}
        proc = subprocess.run(
            cmd, input=input, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n"
                f"{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)


@pytest.fixture
def ns() -> str:
    """A fresh namespace name for one test (not created: Helm creates it when asked)."""
    return f"h-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def helm(
    sim: Simulator, ns: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[helm_python.Config]:
    """helm_python on the module's simulator and ``ns``, with its caches in the test's tmp dir."""
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path / "kubecache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = helm_python.Config(kubeconfig_path=str(sim.kubeconfig_path), namespace=ns)
    yield cfg
    cfg.close()


@pytest.fixture
async def api(sim: Simulator) -> AsyncIterator[ApiClient]:
    """A kubernetes-asyncio ApiClient configured from the simulator's kubeconfig."""
    async with api_client(sim, ApiClient) as client:
        yield client


@pytest.fixture
async def ws_api(sim: Simulator) -> AsyncIterator[WsApiClient]:
    """A kubernetes-asyncio client that speaks WebSocket (exec, attach, port-forward)."""
    async with api_client(sim, WsApiClient) as client:
        yield client


def refusal(error: ApiException) -> dict[str, Any]:
    """The Status object a refused kubernetes-asyncio call answered with (kept as JSON text)."""
    assert error.body is not None, error
    status: dict[str, Any] = json.loads(error.body)
    return status


@contextlib.asynccontextmanager
async def api_client(sim: Simulator, kind: type[C]) -> AsyncIterator[C]:
    """A kubernetes-asyncio client of class ``kind`` configured from the simulator's kubeconfig."""
    cfg = Configuration()
    await config.load_kube_config(config_file=str(sim.kubeconfig_path), client_configuration=cfg)
    async with kind(cfg) as client:
        yield client


class Raw:
    """Plain HTTP requests to a simulator (what curl would send), decoded as JSON."""

    def __init__(self, sim: Simulator, session: aiohttp.ClientSession) -> None:
        self.sim = sim
        self.session = session
        self.ssl = ssl.create_default_context(cafile=str(sim.ca_path)) if sim.tls else False

    async def __call__(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        token: str | None = None,
        **params: str,
    ) -> tuple[int, Any, Mapping[str, str]]:
        headers = {"Authorization": f"Bearer {token or self.sim.token}"}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes | str) else json.dumps(body)
            headers["Content-Type"] = content_type
        async with self.session.request(
            method, self.sim.url + path, data=data, headers=headers, params=params, ssl=self.ssl
        ) as resp:
            text = await resp.text()
            try:
                decoded = json.loads(text)
            except ValueError:
                decoded = text
            return resp.status, decoded, resp.headers

    def stream(
        self, path: str, **params: str
    ) -> contextlib.AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """A GET whose response is left unread, for a watch or a followed log to be read as it
        comes: ``async with raw.stream(path, watch="true") as resp``."""
        headers = {"Authorization": f"Bearer {self.sim.token}"}
        return self.session.get(self.sim.url + path, params=params, headers=headers, ssl=self.ssl)


@pytest.fixture
async def raw(sim: Simulator) -> AsyncIterator[Raw]:
    async with aiohttp.ClientSession() as session:
        yield Raw(sim, session)


async def create_namespace(raw: Raw) -> str:
    """A new namespace no other test uses (the simulator lives for the whole module)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    status, _, _ = await raw("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201
    return name


@pytest.fixture
async def namespace(raw: Raw) -> str:
    """A new namespace for this test."""
    return await create_namespace(raw)


def write_chart(root: Path, chart: str, values: str, templates: Mapping[str, str]) -> Path:
    """A chart directory at ``root``: ``Chart.yaml``, ``values.yaml`` and ``templates/<name>.yaml``."""
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(chart)
    (root / "values.yaml").write_text(values)
    for name, text in templates.items():
        (root / "templates" / f"{name}.yaml").write_text(text)
    return root
