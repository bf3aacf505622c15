"""Kubeconfigs whose user is the real exec plugin ``tests/execplugin.py``, and what it recorded.

``grant(sim, "ns/name")`` makes a ServiceAccount that may do everything (bound to
``cluster-admin``) for the plugin to mint tokens of; ``exec_kubeconfig(sim, folder, ...)`` writes a
kubeconfig whose only context (``sim.context``) authenticates through the plugin. The simulator
must accept short TokenRequests (``Simulator(min_token_seconds=1)``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
import yaml

from kubesim import Simulator

PLUGIN = Path(__file__).with_name("execplugin.py")
V1 = "client.authentication.k8s.io/v1"
#: Who the plugin's client certificates (``mode="cert"``) name; in group ``system:masters``.
CERT_USER = "plugin-certificate-user"
#: The service account the plugins speak for, bound to cluster-admin on :func:`sim`.
ACCOUNT = "creds/plugin"


@attrs.frozen
class Plugin:
    """Where the plugin leaves its traces."""

    folder: Path

    @property
    def runs_file(self) -> Path:
        return self.folder / "runs"

    @property
    def info_file(self) -> Path:
        return self.folder / "exec-info.json"

    def runs(self) -> int:
        try:
            return len(self.runs_file.read_text().splitlines())
        except FileNotFoundError:
            return 0

    def info(self) -> Any:
        return json.loads(self.info_file.read_text())


async def status_of(client: Any, path: str = "/api/v1/namespaces") -> int:
    """The status a kubernetes_asyncio ``client`` gets for ``GET path`` with its bearer token."""
    resp = await client.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False)
    resp.release()
    return int(resp.status)


async def sim_request(sim: Simulator, method: str, path: str, body: Any = None) -> Any:
    """One admin request to the simulator over HTTPS; the answer's JSON (2xx or 409 only)."""
    context = ssl.create_default_context(cafile=str(sim.ca_path))
    headers = {"Authorization": f"Bearer {sim.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, sim.url + path, json=body, headers=headers, ssl=context) as resp,
    ):
        assert resp.status < 300 or resp.status == 409, await resp.text()
        return await resp.json()


async def grant(sim: Simulator, account: str) -> None:
    """A ServiceAccount ``namespace/name`` bound to ``cluster-admin`` (and its namespace)."""
    namespace, name = account.split("/")
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    await sim_request(sim, "POST", "/api/v1/namespaces", ns)
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    await sim_request(sim, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", sa)
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{namespace}-{name}-admin"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    await sim_request(
        sim, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding
    )


@pytest.fixture
def plugin(tmp_path: Path) -> Plugin:
    """A test's own plugin traces (the plugin itself is ``exec_user``'s command)."""
    return Plugin(tmp_path / "plugin")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """A simulator of short-lived tokens that also issues client certificates, with ACCOUNT."""
    folder = tmp_path_factory.mktemp("sim")
    with Simulator(folder, context="creds", min_token_seconds=1, client_certificates=True) as s:
        asyncio.run(grant(s, ACCOUNT))
        yield s


def exec_user(
    sim: Simulator,
    plugin: Plugin,
    *,
    account: str,
    seconds: int = 2,
    claim: int | None = None,
    mode: str = "",
    api_version: str = V1,
    interactive_mode: str | None = "Never",
) -> dict[str, Any]:
    """A kubeconfig user running the plugin."""
    plugin.folder.mkdir(parents=True, exist_ok=True)
    env = {
        "EXECPLUGIN_RUNS": str(plugin.runs_file),
        "EXECPLUGIN_INFO": str(plugin.info_file),
        "EXECPLUGIN_SA": account,
        "EXECPLUGIN_SECONDS": str(seconds),
        "EXECPLUGIN_CLAIM": "" if claim is None else str(claim),
        "EXECPLUGIN_MODE": mode,
        "EXECPLUGIN_ADMIN_TOKEN": sim.token,
        "EXECPLUGIN_SIM_DIR": str(sim.directory),
        "EXECPLUGIN_CERT_USER": CERT_USER,
    }
    entry: dict[str, Any] = {
        "apiVersion": api_version,
        "command": sys.executable,
        "args": [str(PLUGIN)],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "provideClusterInfo": True,
    }
    if interactive_mode is not None:
        entry["interactiveMode"] = interactive_mode
    return {"exec": entry}


def exec_kubeconfig(sim: Simulator, path: Path, user: dict[str, Any]) -> Path:
    """A kubeconfig at ``path`` with ``sim``'s cluster and ``user`` as its only context."""
    ca = base64.b64encode(sim.ca_path.read_bytes()).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": sim.context,
        "clusters": [
            {"name": sim.context, "cluster": {"server": sim.url, "certificate-authority-data": ca}}
        ],
        "users": [{"name": "plugin", "user": user}],
        "contexts": [{"name": sim.context, "context": {"cluster": sim.context, "user": "plugin"}}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    path.chmod(0o600)
    return path
