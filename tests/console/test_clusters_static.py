"""Static clusters: one per kubeconfig context as kubectl finds it, and the ``default`` fallback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from common.errors import BadGateway
from console.clusters import ClusterDefinition
from console.errors import UnknownCluster
from console.keys import CLUSTERS
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, kubeconfig_text, merged_kubeconfig
from tests.guards import assert_problem
from tests.typing_support import Client


async def entries(client: Client) -> list[dict[str, Any]]:
    return list(await (await client.get("/api/v1/clusters")).json())


async def test_kubeconfig_list_merges_like_kubectl(
    console_app: ConsoleApp, sim: Simulator, sim_b: Simulator, tmp_path: Path
) -> None:
    first = merged_kubeconfig([sim], tmp_path / "first")
    second = merged_kubeconfig([sim_b], tmp_path / "second")
    missing = tmp_path / "missing"
    client = await console_app(environ={"KUBECONFIG": f"{missing}:{first}:{second}"})
    assert [e["id"] for e in await entries(client)] == ["alpha", "beta"]


async def test_home_kube_config_when_no_kubeconfig_variable(
    console_app: ConsoleApp, sim_b: Simulator, tmp_path: Path
) -> None:
    (tmp_path / "home" / ".kube").mkdir(parents=True)
    merged_kubeconfig([sim_b], tmp_path / "home" / ".kube" / "config")
    client = await console_app(environ={"HOME": str(tmp_path / "home")})
    assert [e["id"] for e in await entries(client)] == ["beta"]


async def test_the_setting_overrides_the_environment(
    console_app: ConsoleApp, sim_b: Simulator, kubeconfig: Path, tmp_path: Path
) -> None:
    only_beta = merged_kubeconfig([sim_b], tmp_path / "beta-only")
    client = await console_app(f"kubeconfig={only_beta}", environ={"KUBECONFIG": str(kubeconfig)})
    assert [e["id"] for e in await entries(client)] == ["beta"]


@pytest.mark.parametrize("case", ["none", "no contexts", "unparsable", "not a config"])
async def test_default_only_as_a_fallback(
    console_app: ConsoleApp, tmp_path: Path, case: str
) -> None:
    path = tmp_path / "fallback-kubeconfig"
    if case == "no contexts":
        path.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    elif case == "unparsable":
        path.write_text("clusters: [unclosed")
    elif case == "not a config":
        path.write_text("kind: Pod\n")
    client = await console_app(environ={"KUBECONFIG": str(path)})
    assert await entries(client) == [
        {"id": "default", "name": "default", "masterUrl": None, "origin": "STATIC"}
    ]
    config = await (await client.get("/api/v1/clusters/default/config")).json()
    assert config["context"] is None
    assert config["contexts"] == []
    assert config["kubeconfigStored"] is False
    with pytest.raises(BadGateway) as caught:  # no service account in this process either
        await client.app[CLUSTERS].client("default")
    assert caught.value.code == "cluster-refused"


async def test_in_cluster_fallback_names_the_service_address(console_app: ConsoleApp) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    client = await console_app(environ=env)
    assert (await entries(client))[0]["masterUrl"] == "https://10.0.0.1:443"


async def test_a_static_context_without_a_server_is_refused_at_use(
    console_app: ConsoleApp, sim: Simulator, tmp_path: Path
) -> None:
    doc = yaml.safe_load(kubeconfig_text(sim))
    doc["contexts"].append({"name": "dangling", "context": {"cluster": "nowhere", "user": "x"}})
    path = tmp_path / "dangling-kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    client = await console_app(environ={"KUBECONFIG": str(path)})
    assert [e["id"] for e in await entries(client)] == ["alpha", "dangling"]
    with pytest.raises(BadGateway):
        await client.app[CLUSTERS].client("dangling")


async def test_clients_are_shared_closed_on_removal_and_replaced_on_repoint(
    console_app: ConsoleApp, sim: Simulator, sim_b: Simulator
) -> None:
    client = await console_app()
    registry = client.app[CLUSTERS]
    events: list[tuple[str, str]] = []

    async def listen(cluster_id: str, event: str) -> None:
        events.append((cluster_id, event))

    registry.on_change(listen)
    assert await registry.client("alpha") is await registry.client("alpha")
    await registry.add(ClusterDefinition("gamma", None, None, kubeconfig_text(sim_b)))
    first = await registry.client("gamma")
    await registry.update("gamma", ClusterDefinition(None, None, None, kubeconfig_text(sim)))
    second = await registry.client("gamma")
    assert second is not first
    assert first.rest_client.pool_manager.closed
    await registry.remove("gamma")
    assert second.rest_client.pool_manager.closed
    assert events == [("gamma", "repointed"), ("gamma", "removed")]
    with pytest.raises(UnknownCluster):
        await registry.client("gamma")
    resp = await client.delete("/api/v1/clusters/gamma", headers=ADMIN)
    await assert_problem(resp, 404, code="unknown-cluster")


async def test_a_rename_keeps_the_client_and_needs_no_server(
    console_app: ConsoleApp, sim_b: Simulator
) -> None:
    client = await console_app()
    registry = client.app[CLUSTERS]
    await registry.add(ClusterDefinition("gamma", None, None, kubeconfig_text(sim_b)))
    before = await registry.client("gamma")
    resp = await client.put("/api/v1/clusters/gamma", json={"name": "Gamma"}, headers=ADMIN)
    assert (await resp.json())["name"] == "Gamma"
    assert await registry.client("gamma") is before
    assert not before.rest_client.pool_manager.closed
