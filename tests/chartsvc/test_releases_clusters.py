"""Which cluster release calls reach: the default one found as kubectl finds it, none (no release
group at all), or a host's per-request resolver routing between two simulators."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from aiohttp.typedefs import Handler
from pytest_aiohttp import AiohttpClient

import kubeclient
from chartsvc.app import create_app
from chartsvc.clusters import ClusterTarget, default_target
from chartsvc.settings import KubeSettings
from common.config import ConfigError
from common.openapi import check_responses
from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, LOOPBACK, RELEASE_WRITES, MakeClient, MakeSettings
from tests.chartsvc.fixtures_cluster import API, build_chart, create_namespace, upload_form
from tests.conftest import ApiClient
from tests.guards import assert_problem

CLUSTER_HEADER = "X-Tenant-Cluster"


@pytest.fixture(scope="module")
def two_sims(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Simulator]]:
    with (
        Simulator(tmp_path_factory.mktemp("east"), context="east") as east,
        Simulator(tmp_path_factory.mktemp("west"), context="west") as west,
    ):
        yield [east, west]


def tenant_host(chartsvc: web.Application) -> web.Application:
    """A host app that mounts the service and, in its own middleware, turns the caller's tenant
    into a cluster header, as an embedding application would after its own authentication."""
    tenants = {"alice": "east", "bob": "west"}

    @web.middleware
    async def tenant_routing(request: web.Request, handler: Handler) -> web.StreamResponse:
        headers = request.headers.copy()
        headers.popall(CLUSTER_HEADER, None)  # callers cannot pick a cluster themselves
        tenant = request.headers.get("X-Tenant", "")
        if tenant in tenants:
            headers[CLUSTER_HEADER] = tenants[tenant]
        return await handler(request.clone(headers=headers))

    host = web.Application(middlewares=[tenant_routing])
    host.add_subapp("/svc", chartsvc)
    return host


async def test_resolver_routes_each_request_to_its_cluster(
    aiohttp_client: AiohttpClient,
    make_settings: MakeSettings,
    two_sims: list[Simulator],
    tmp_path: Path,
) -> None:
    targets = {sim.context: ClusterTarget.from_file(sim.kubeconfig_path) for sim in two_sims}
    consulted: list[str | None] = []

    def by_header(request: web.Request) -> ClusterTarget | None:
        consulted.append(request.headers.get(CLUSTER_HEADER))
        return targets.get(request.headers.get(CLUSTER_HEADER, ""))

    app = create_app(make_settings(*FULL), address_allow=LOOPBACK, cluster_resolver=by_header)
    check_responses(app)
    client = await aiohttp_client(tenant_host(app))
    archive = build_chart(tmp_path)
    for tenant in ("alice", "bob"):
        resp = await client.post(
            f"/svc{API}/releases/upload",
            data=upload_form(archive, {"releaseName": f"app-{tenant}"}),
            headers={**KEY, "X-Tenant": tenant},
        )
        assert resp.status == 201, await resp.text()
    assert consulted == ["east", "west"]  # once per request

    for tenant, expected in (("alice", ["app-alice"]), ("bob", ["app-bob"])):
        resp = await client.get(f"/svc{API}/releases", headers={"X-Tenant": tenant})
        assert [r["name"] for r in await resp.json()] == expected
    resp = await client.get(f"/svc{API}/releases/app-bob", headers={"X-Tenant": "alice"})
    await assert_problem(resp, 404)
    drift = await client.get(f"/svc{API}/releases/app-bob/drift", headers={"X-Tenant": "bob"})
    assert (await drift.json())["summary"]["in_sync"] == 1  # bob's ConfigMap, on west
    drift = await client.get(f"/svc{API}/releases/app-bob/drift", headers={"X-Tenant": "alice"})
    await assert_problem(drift, 404)

    resp = await client.get(
        f"/svc{API}/releases", headers={"X-Tenant": "mallory", CLUSTER_HEADER: "east"}
    )
    body = await assert_problem(resp, 500, code="cluster-resolver-failed")
    assert "by_header" in body["detail"]
    assert "returned None" in body["detail"]


async def test_async_resolver_is_awaited(
    make_settings: MakeSettings, api_client: ApiClient, two_sims: list[Simulator]
) -> None:
    west = ClusterTarget.from_file(two_sims[1].kubeconfig_path)

    async def resolve(request: web.Request) -> ClusterTarget:
        return west

    app = create_app(make_settings(), address_allow=LOOPBACK, cluster_resolver=resolve)
    client = await api_client(app)
    resp = await client.get(f"{API}/releases")
    assert resp.status == 200, await resp.text()


async def test_without_a_cluster_the_release_group_is_absent(make_client: MakeClient) -> None:
    client = await make_client(*FULL)
    await assert_problem(await client.get(f"{API}/releases"), 404)
    await assert_problem(await client.post(f"{API}/releases/x/test", headers=KEY), 404)
    assert (await client.get(f"{API}/repos")).status == 200
    document = await (await client.get("/v3/api-docs")).json()
    assert not [p for p in document["paths"] if p.startswith("/releases")]
    assert "releases" not in {t["name"] for t in document["tags"]}


async def test_with_a_cluster_the_spec_documents_the_release_operations(
    make_client: MakeClient, two_sims: list[Simulator]
) -> None:
    client = await make_client(f"chartsvc.kube.kubeconfig={two_sims[0].kubeconfig_path}")
    document = await (await client.get("/v3/api-docs")).json()
    ops = {
        op["operationId"]: op
        for path, item in document["paths"].items()
        if path.startswith("/releases")
        for method, op in item.items()
        if method in ("get", "post", "put", "delete")
    }
    assert len(ops) == 15 + 2  # the contract's fifteen, the upgrade preview and drift
    mutating = {k for k, op in ops.items() if op["x-mutating"]}
    assert mutating == RELEASE_WRITES
    for op_id, op in ops.items():
        assert op["summary"], op_id
        assert {"400", "404", "500"} <= set(op["responses"]), op_id
        assert ({"401", "403"} <= set(op["responses"])) == (op_id in mutating), op_id
    namespace = document["components"]["parameters"]["ReleaseNamespace"]
    assert namespace["schema"]["default"] == "default"
    test_params = {p.get("name"): p for p in ops["testRelease"]["parameters"]}
    assert test_params["timeoutSeconds"]["schema"]["default"] == 300


def write_kubeconfig(path: Path, sim: Simulator, *, context: str, current: bool = True) -> Path:
    config = yaml.safe_load(sim.kubeconfig_path.read_text())
    config["contexts"][0]["name"] = context
    config["current-context"] = context if current else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path


def test_default_cluster_is_found_as_kubectl_finds_it(
    tmp_path: Path, two_sims: list[Simulator]
) -> None:
    east, west = two_sims
    home = tmp_path / "home"
    write_kubeconfig(home / ".kube" / "config", east, context="home-ctx")
    listed = write_kubeconfig(tmp_path / "listed", west, context="listed-ctx")
    none = KubeSettings()
    assert default_target(none, {}) is None
    assert default_target(none, {"HOME": str(home)}).context == "home-ctx"  # type: ignore[union-attr]
    env = {"HOME": str(home), "KUBECONFIG": f"{tmp_path / 'missing'}:{listed}"}
    assert default_target(none, env).context == "listed-ctx"  # type: ignore[union-attr]
    explicit = KubeSettings(kubeconfig=home / ".kube" / "config")
    assert default_target(explicit, env).context == "home-ctx"  # type: ignore[union-attr]

    no_current = write_kubeconfig(tmp_path / "no-current", east, context="only", current=False)
    assert default_target(none, {"KUBECONFIG": str(no_current)}) is None
    chosen = KubeSettings(context="only")
    target = default_target(chosen, {"KUBECONFIG": str(no_current)})
    assert target is not None
    assert target.context == "only"
    assert "token" not in repr(target)
    with pytest.raises(ConfigError, match=r"chartsvc\.kube\.context"):
        default_target(KubeSettings(context="nope"), {"KUBECONFIG": str(no_current)})
    with pytest.raises(ConfigError, match=r"chartsvc\.kube\.kubeconfig"):
        default_target(KubeSettings(kubeconfig=tmp_path / "absent"), {})


async def test_kubeconfig_from_the_environment_turns_the_group_on(
    api_client: ApiClient, make_settings: MakeSettings, two_sims: list[Simulator], tmp_path: Path
) -> None:
    path = write_kubeconfig(tmp_path / "kubeconfig", two_sims[0], context="env-ctx")
    app = create_app(make_settings(), environ={"KUBECONFIG": str(path)})
    client = await api_client(app)
    assert (await client.get(f"{API}/releases")).status == 200


class LocalCharts:
    """A chart source of one local archive, as a host without repositories would supply one."""

    def __init__(self, archive: bytes) -> None:
        self.archive_bytes = archive

    async def archive(self, ref: str, version: str | None) -> bytes:
        assert ref == "local/probe"
        return self.archive_bytes

    async def checked(self, upload: bytes) -> bytes:
        return upload


async def test_the_release_domain_serves_any_cluster_without_chartsvc_settings(
    two_sims: list[Simulator], tmp_path: Path
) -> None:
    """What the console's per-cluster Helm endpoints build on: ``chartsvc.helm`` and
    ``chartsvc.releases``, a cluster given as kubeconfig text and context on each call."""
    from chartsvc.helm import Helm
    from chartsvc.releases import (
        InstallRequest,
        ReleaseNotFound,
        ReleaseRef,
        ReleaseService,
        UpgradeRequest,
    )

    east, west = (
        ClusterTarget.from_kubeconfig(
            kubeclient.parse(sim.kubeconfig_path.read_text()), sim.context
        )
        for sim in two_sims
    )
    await create_namespace(two_sims[0], "dom")
    helm = Helm(temp_dir=tmp_path, credentials_dir=tmp_path / "credentials")
    service = ReleaseService(engine=helm.releases, charts=LocalCharts(build_chart(tmp_path)))
    try:
        request = InstallRequest(
            release_name="dom", namespace="dom", chart_ref="local/probe", values={"a": 1}
        )
        installed = await service.install(east, request)
        assert (installed.name, installed.version, installed.status) == ("dom", 1, "deployed")
        dom = ReleaseRef(east, "dom", "dom")
        upgraded = await service.upgrade(
            dom, UpgradeRequest(chart_ref="local/probe", values={"a": 2})
        )
        assert upgraded.version == 2
        assert [r.version for r in await service.history(dom)] == [1, 2]
        assert await service.values(dom, all_values=False) == {"a": 2}
        kinds = [r.kind for r in await service.resources(dom)]
        assert kinds == ["ConfigMap"]
        with pytest.raises(ReleaseNotFound):
            await service.status(ReleaseRef(west, "dom", "dom"))
        await service.uninstall(dom)
        assert await service.list_releases(east, "dom") == []
    finally:
        await service.close()
        await asyncio.to_thread(helm.close)
