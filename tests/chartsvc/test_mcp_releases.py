"""The release tools against the cluster simulator, in FULL mode with the key, over the official client.

Install (with progress), status, upgrade, history, values, manifest, test, rollback and uninstall
over /mcp, each compared with the REST route's answer on the same service, and a lifecycle over
stdio with no key; the release tools exist only with a cluster, and only the read ones without FULL
mode and a key; a host's cluster resolver chooses by the HTTP request that carried the call.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession as HttpSession
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from chartsvc.app import create_app
from chartsvc.clusters import ClusterTarget
from kubesim import Simulator
from tests.chartsvc.conftest import (
    FULL,
    LOOPBACK,
    RELEASE_WRITES,
    ChartRepo,
    MakeSettings,
    index_document,
)
from tests.chartsvc.fixtures_cluster import build_chart, namespace, sim
from tests.chartsvc.mcp_support import (
    KEY,
    TRANSPORTS,
    MakeMcp,
    McpServer,
    ProgressLog,
    b64,
    json_of,
    make_mcp,
    problem_of,
    text_of,
)
from tests.chartsvc.test_mcp_stdio import ALLOWED, stdio_session

__all__ = ["make_mcp", "namespace", "sim"]

RELEASE_READS = {
    "listReleases",
    "getReleaseStatus",
    "getReleaseHistory",
    "getReleaseValues",
    "getReleaseManifest",
    "getReleaseNotes",
    "getReleaseHooks",
    "getReleaseResources",
    "getReleaseDrift",
    "previewReleaseUpgrade",
}


@pytest.fixture
async def cluster_mcp(
    make_mcp: MakeMcp, sim: Simulator, chart_repo: ChartRepo, tmp_path: Path
) -> McpServer:
    """FULL mode with the key on ``sim``; the loopback repository (with a test-hook chart) is ``r``."""
    probe = tmp_path / "probe-0.1.0.tgz"
    probe.write_bytes(build_chart(tmp_path))
    chart_repo.archives["probe-0.1.0"] = probe
    chart_repo.set_index(index_document(chart_repo.archives), etag='"with-probe"')
    server = await make_mcp(*FULL, f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}")
    async with server.session(key=KEY) as session:
        added = await session.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        assert not added.is_error, added
    return server


async def rest_get(server: McpServer, path: str) -> Any:
    async with HttpSession() as http:
        resp = await http.get(server.url + "/api/v1" + path)
        return await (resp.json(content_type=None) if "json" in resp.content_type else resp.text())


async def test_the_release_lifecycle_through_mcp(cluster_mcp: McpServer, namespace: str) -> None:
    progress = ProgressLog()

    where = {"name": "web", "namespace": namespace}
    q = f"?namespace={namespace}"
    async with cluster_mcp.session(key=KEY) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert tools >= RELEASE_READS | RELEASE_WRITES
        install = {
            "chartRef": "r/probe",
            "releaseName": "web",
            "namespace": namespace,
            "values": {"greeting": "hi"},
            "timeout": 440.0,  # an integer to JSON Schema: read as 440, never a 500
        }
        installed = await s.call_tool("installRelease", install, progress_callback=progress)
        assert installed.meta == {"httpStatus": 201}
        body = json_of(installed)
        assert (body["version"], body["info"]["status"]) == (1, "deployed")
        assert progress.reports[0][2] == "Install a chart: started"
        assert progress.reports[-1][0] == progress.reports[-1][1]
        assert progress.reports[-1][2] == "Install a chart: done"

        status = json_of(await s.call_tool("getReleaseStatus", where))
        assert status == await rest_get(cluster_mcp, f"/releases/web{q}")
        assert status["config"] == {"greeting": "hi"}

        progress.reports.clear()
        upgrade = {**where, "chartRef": "r/probe", "values": {"greeting": "hello again"}}
        upgraded = json_of(await s.call_tool("upgradeRelease", upgrade, progress_callback=progress))
        assert (upgraded["version"], upgraded["info"]["description"]) == (2, "Upgrade complete")
        assert progress.reports[-1][2] == "Upgrade a release: done"
        assert json_of(await s.call_tool("getReleaseValues", where)) == {"greeting": "hello again"}
        manifest = text_of(await s.call_tool("getReleaseManifest", where))
        assert manifest == await rest_get(cluster_mcp, f"/releases/web/manifest{q}")
        assert "hello again" in manifest
        notes = text_of(await s.call_tool("getReleaseNotes", where))
        assert notes == f"Greeting is hello again in {namespace}.\n"

        test = {**where, "timeoutSeconds": 30}
        tested = json_of(await s.call_tool("testRelease", test, progress_callback=progress))
        assert [(r["name"], r["phase"]) for r in tested] == [("web-check", "Succeeded")]

        rolled = json_of(await s.call_tool("rollbackRelease", {**where, "revision": 1}))
        assert rolled["version"] == 3
        assert rolled["config"] == {"greeting": "hi"}
        history = json_of(await s.call_tool("getReleaseHistory", where))
        assert [h["version"] for h in history] == [1, 2, 3]
        assert history == await rest_get(cluster_mcp, f"/releases/web/history{q}")
        listed = json_of(await s.call_tool("listReleases", {"namespace": namespace}))
        assert [r["name"] for r in listed] == ["web"]

        uninstalled = json_of(await s.call_tool("uninstallRelease", where))
        assert uninstalled["release"]["info"]["status"] == "uninstalled"
        gone = problem_of(await s.call_tool("getReleaseStatus", where), 404)
        assert gone == await rest_get(cluster_mcp, f"/releases/web{q}")


async def test_install_and_upgrade_from_uploaded_archives(
    cluster_mcp: McpServer, namespace: str, tmp_path: Path
) -> None:
    """The upload tools take the archive in base64 and the ``request`` part as an object."""
    first = build_chart(tmp_path, "upl", values={"greeting": "one"})
    second = build_chart(tmp_path, "upl", version="0.2.0", values={"greeting": "two"})
    where = {"name": "upl", "namespace": namespace}
    progress = ProgressLog()

    async with cluster_mcp.session(key=KEY) as s:
        request = {"releaseName": "upl", "namespace": namespace}
        installed = await s.call_tool(
            "installReleaseUpload",
            {"chart": b64(first), "request": request},
            progress_callback=progress,
        )
        assert installed.meta == {"httpStatus": 201}
        assert json_of(installed)["chart"]["metadata"]["version"] == "0.1.0"
        assert progress.reports[-1][2] == "Install an uploaded chart archive: done"
        upgrade = {**where, "chart": b64(second), "request": {"values": {"extra": "yes"}}}
        upgraded = json_of(await s.call_tool("upgradeReleaseUpload", upgrade))
        assert (upgraded["version"], upgraded["chart"]["metadata"]["version"]) == (2, "0.2.0")
        status = json_of(await s.call_tool("getReleaseStatus", where))
        assert status == await rest_get(cluster_mcp, f"/releases/upl?namespace={namespace}")
        assert status["config"] == {"extra": "yes"}
        notes = text_of(await s.call_tool("getReleaseNotes", where))
        assert notes == f"Greeting is two in {namespace}.\n"
        unnamed = await s.call_tool("installReleaseUpload", {"chart": b64(first), "request": {}})
        assert problem_of(unnamed, 400)["errors"] == [
            {"in": "body", "field": "request.releaseName", "message": "is required"}
        ]


async def test_release_errors_are_tool_errors(cluster_mcp: McpServer, namespace: str) -> None:
    async with cluster_mcp.session("sse", key=KEY) as s:
        missing = await s.call_tool(
            "installRelease", {"chartRef": "r/probe", "namespace": namespace}
        )
        assert problem_of(missing, 400)["errors"][0]["field"] == "releaseName"
        bad = await s.call_tool("getReleaseStatus", {"name": "Not_A_Name", "namespace": namespace})
        problem_of(bad, 400)
        assert json_of(await s.call_tool("listReleases", {"namespace": namespace})) == []


async def test_helm_options_and_the_upgrade_preview_through_mcp(cluster_mcp: McpServer) -> None:
    fresh = f"mcp-{uuid.uuid4().hex[:6]}"
    where = {"name": "opt", "namespace": fresh}
    async with cluster_mcp.session(key=KEY) as s:
        install = {
            "chartRef": "r/probe",
            "releaseName": "opt",
            "namespace": fresh,
            "createNamespace": True,
            "wait": "watcher",
            "timeout": 60,
            "description": "through mcp",
            "values": {"greeting": "hi"},
        }
        installed = json_of(await s.call_tool("installRelease", install))
        assert installed["info"]["description"] == "through mcp"
        typo = await s.call_tool("installRelease", {**install, "creatNamespace": True})
        assert problem_of(typo, 400)["errors"][0]["field"] == "creatNamespace"
        change = {**where, "chartRef": "r/probe", "values": {"greeting": "bye"}}
        preview = json_of(await s.call_tool("previewReleaseUpgrade", change))
        assert "-greeting: hi\n+greeting: bye\n" in preview["values"]["diff"]
        (configmap,) = preview["manifests"]
        assert configmap["kind"] == "ConfigMap"
        assert '+  greeting: "bye"' in configmap["diff"]
        history = json_of(await s.call_tool("getReleaseHistory", where))
        assert [h["version"] for h in history] == [1]


async def test_without_the_key_only_release_reads_are_tools(
    make_mcp: MakeMcp, sim: Simulator
) -> None:
    server = await make_mcp(f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}")
    async with server.session() as session:
        tools = {t.name for t in (await session.list_tools()).tools}
    assert tools >= RELEASE_READS
    assert not RELEASE_WRITES & tools


async def test_a_hosts_resolver_picks_the_cluster_from_the_calls_http_request(
    aiohttp_server: AiohttpServer, make_settings: MakeSettings, sim: Simulator, namespace: str
) -> None:
    """Mounted in a host app (as ``/svc``): the legacy SSE message endpoint keeps the prefix."""
    target = ClusterTarget.from_file(sim.kubeconfig_path)
    consulted: list[tuple[str, str | None]] = []

    def by_header(request: web.Request) -> ClusterTarget | None:
        consulted.append((request.path, request.headers.get("X-Cluster")))
        return target if request.headers.get("X-Cluster") == "main" else None

    service = create_app(make_settings(), address_allow=LOOPBACK, cluster_resolver=by_header)
    host = web.Application()
    host.add_subapp("/svc", service)
    server = McpServer(await aiohttp_server(host), prefix="/svc")
    listing = {"namespace": namespace}
    for transport in TRANSPORTS:
        async with server.session(transport, headers={"X-Cluster": "main"}) as session:
            assert json_of(await session.call_tool("listReleases", listing)) == []
        async with server.session(transport) as session:
            refused = await session.call_tool("listReleases", listing)
            assert "by_header" in problem_of(refused, 500, "cluster-resolver-failed")["detail"]
    assert consulted == [
        ("/svc/mcp", "main"),
        ("/svc/mcp", None),
        ("/svc/messages/", "main"),
        ("/svc/messages/", None),
    ]


async def test_the_release_lifecycle_over_stdio(
    tmp_path: Path, chart_repo: ChartRepo, sim: Simulator, namespace: str
) -> None:
    cluster = f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}"
    where = {"name": "api", "namespace": namespace}
    async with stdio_session(tmp_path, *FULL, cluster, module=ALLOWED) as s:  # no key presented
        await s.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        install = {"chartRef": "r/demo", "version": "0.1.0", "releaseName": "api"}
        installed = await s.call_tool("installRelease", {**install, "namespace": namespace})
        assert (installed.meta, json_of(installed)["version"]) == ({"httpStatus": 201}, 1)
        assert json_of(await s.call_tool("getReleaseStatus", where))["info"]["status"] == "deployed"
        upgrade = {**where, "chartRef": "r/demo", "values": {"replicaCount": 2}}
        assert json_of(await s.call_tool("upgradeRelease", upgrade))["version"] == 2
        rolled = json_of(await s.call_tool("rollbackRelease", {**where, "revision": 1}))
        assert (rolled["version"], rolled["config"]) == (3, {})
        assert json_of(await s.call_tool("uninstallRelease", where))["release"]["name"] == "api"
        problem_of(await s.call_tool("getReleaseStatus", where), 404)
