"""The MCP tool server over streamable HTTP (/mcp) and legacy SSE (/sse), with the official client.

Calls are compared with what the REST route answers for the same input: one implementation, two
doors. The repository and hub are loopback fakes, reached through the explicit allow-list.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import mcp.types as types
import pytest
import yaml
from aiohttp import ClientSession as HttpSession
from aiohttp.test_utils import TestServer
from mcp.shared.exceptions import MCPError
from multidict import CIMultiDict
from pytest_aiohttp import AiohttpServer

from chartsvc.mcp.sessions import Sessions
from chartsvc.mcp.state import MCP
from tests.chartsvc.conftest import FULL, ChartRepo, index_document
from tests.chartsvc.mcp_support import (
    KEY,
    TRANSPORTS,
    MakeMcp,
    McpServer,
    ProgressLog,
    hub_setting,
    json_of,
    make_mcp,
    problem_of,
    start_hub,
    text_of,
)
from tests.chartsvc.test_http_deps import app_chart
from tests.guards import assert_problem

__all__ = ["make_mcp"]

MUTATING = {"addRepository", "removeRepository", "pushChart"}
READS = {
    "templateChart",
    "templateChartUpload",
    "createChart",
    "lintChart",
    "lintChartUpload",
    "packageChart",
    "packageChartUpload",
    "pullChart",
    "showChart",
    "showChartValues",
    "showChartReadme",
    "showChartMetadata",
    "showChartCrds",
    "listRepositories",
    "updateRepository",
    "listRepositoryCharts",
    "listChartVersions",
    "updateAllRepositories",
    "searchHub",
    "resolveDependencies",
    "verifyChart",
    "verifyChartUpload",
}


@pytest.fixture
async def hub(aiohttp_server: AiohttpServer) -> TestServer:
    return await start_hub(aiohttp_server)


async def rest(server: McpServer, method: str, path: str, **kwargs: Any) -> Any:
    async with HttpSession() as http:
        resp = await http.request(method, server.url + "/api/v1" + path, **kwargs)
        return await (resp.json(content_type=None) if "json" in resp.content_type else resp.text())


async def tool_names(server: McpServer, transport: str = "streamable-http", **kw: Any) -> set[str]:
    async with server.session(transport, **kw) as session:
        return {t.name for t in (await session.list_tools()).tools}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_hub_search_answers_as_rest_does(
    transport: str, make_mcp: MakeMcp, hub: TestServer
) -> None:
    server = await make_mcp(hub_setting(hub))
    async with server.session(transport) as session:
        result = await session.call_tool("searchHub", {"keyword": "nginx", "maxResults": 1})
    assert json_of(result) == await rest(server, "GET", "/hub/search?keyword=nginx&maxResults=1")
    assert json_of(result)[0]["name"] == "nginx"
    assert result.meta == {"httpStatus": 200}


@pytest.mark.parametrize(
    ("overrides", "key", "expected"),
    [
        ((), None, READS),
        (("chartsvc.security.mode=FULL",), None, READS),  # no key: deny by default
        (("chartsvc.security.api-key=test-key",), KEY, READS),  # a key alone enables nothing
        (FULL, KEY, READS | MUTATING),
        # The HTTP access interceptor switched off must not open MCP writes without a key.
        (
            ("chartsvc.security.mode=FULL", "chartsvc.rest.access-interceptor.enabled=false"),
            None,
            READS,
        ),
    ],
)
async def test_the_tool_set_follows_the_security_mode(
    make_mcp: MakeMcp, overrides: tuple[str, ...], key: str | None, expected: set[str]
) -> None:
    server = await make_mcp(*overrides)
    assert await tool_names(server, key=key) == expected
    assert await tool_names(server, "sse", key=key) == expected


async def test_schemas_and_annotations_come_from_the_spec(make_mcp: MakeMcp) -> None:
    server = await make_mcp(*FULL)
    async with server.session(key=KEY) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    template = tools["templateChart"].input_schema
    assert set(template["properties"]) == {
        "chartRef",
        "version",
        "releaseName",
        "namespace",
        "values",
        "verify",
        "keyId",
    }
    assert template["required"] == ["chartRef"]
    assert template["properties"]["values"]["type"] == "object"
    assert not any("chartPath" in t.input_schema["properties"] for t in tools.values())
    show = tools["showChartValues"]
    assert show.input_schema["properties"]["chartRef"]["description"].startswith("`<repo>/<chart>`")
    assert show.description is not None
    assert show.description.startswith("Show a chart's default")
    assert show.output_schema is None  # a text answer (values.yaml)
    search = tools["searchHub"].input_schema
    assert search["properties"]["maxResults"] == {
        "type": "integer",
        "default": 20,
        "minimum": 1,
        "maximum": 2**63 - 1,  # integer parameters carry the range the server holds them to
    }
    listing = tools["listRepositoryCharts"]
    assert listing.output_schema is not None
    assert listing.output_schema["properties"]["result"]["type"] == "array"
    assert "$ref" not in str(listing.output_schema)
    hints = {name: tools[name].annotations for name in ("listRepositoryCharts", "addRepository")}
    assert hints["listRepositoryCharts"] == types.ToolAnnotations(
        title="List a repository's charts (latest version of each)",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
    )
    add = hints["addRepository"]
    assert add is not None
    assert (add.read_only_hint, add.destructive_hint, add.idempotent_hint) == (False, False, True)
    remove = tools["removeRepository"].annotations
    assert remove is not None
    assert remove.destructive_hint is True
    update = tools["updateRepository"].annotations
    assert update is not None
    assert (update.read_only_hint, update.destructive_hint) == (False, False)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_repository_and_chart_tools_answer_as_rest_does(
    transport: str, make_mcp: MakeMcp, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    chart_repo.archives["shop-0.1.0"] = app_chart(tmp_path, chart_repo.url, "~0.1.0")
    chart_repo.set_index(index_document(chart_repo.archives), etag='"with-shop"')
    server = await make_mcp(*FULL)
    progress = ProgressLog()

    async with server.session(transport, key=KEY) as s:
        added = await s.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        assert json_of(added) == {"name": "r", "url": chart_repo.url}
        assert added.meta == {"httpStatus": 201}
        again = await s.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        assert again.meta == {"httpStatus": 200}
        assert json_of(await s.call_tool("listRepositories", {})) == await rest(
            server, "GET", "/repos"
        )
        charts = json_of(await s.call_tool("listRepositoryCharts", {"name": "r"}))
        assert charts == await rest(server, "GET", "/repos/r/charts")
        assert [c["name"] for c in charts] == ["r/demo", "r/other", "r/shop"]
        versions = await s.call_tool("listChartVersions", {"name": "r", "chart": "demo"})
        assert json_of(versions) == await rest(server, "GET", "/repos/r/charts/demo/versions")
        updated = await s.call_tool("updateRepository", {"name": "r"}, progress_callback=progress)
        assert json_of(updated)["name"] == "r"
        args = {
            "chartRef": "r/demo",
            "version": "0.1.0",
            "releaseName": "web",
            "values": {"replicaCount": 3},
        }
        manifest = text_of(await s.call_tool("templateChart", args))
        assert manifest == await rest(server, "POST", "/charts/template", json=args)
        assert "replicas: 3" in manifest
        values = text_of(await s.call_tool("showChartValues", {"chartRef": "r/demo"}))
        assert values == await rest(server, "GET", "/charts/show/values?chartRef=r/demo")
        lock = yaml.safe_load(
            text_of(await s.call_tool("resolveDependencies", {"chartRef": "r/shop"}))
        )
        rest_lock = yaml.safe_load(
            await rest(server, "POST", "/dependencies/resolve", json={"chartRef": "r/shop"})
        )
        assert lock.pop("generated")
        assert rest_lock.pop("generated")
        assert lock == rest_lock
        assert lock["dependencies"][0]["name"] == "demo"
        removed = await s.call_tool("removeRepository", {"name": "r"})
        assert (removed.content, removed.meta, removed.is_error) == ([], {"httpStatus": 204}, False)
    assert progress.reports[0][:2] == (0, None)
    assert "started" in str(progress.reports[0][2])
    assert progress.reports[-1][0] == progress.reports[-1][1]  # done: progress reaches the total


async def test_failures_are_tool_errors_with_the_rest_problem(
    make_mcp: MakeMcp, chart_repo: ChartRepo
) -> None:
    server = await make_mcp(*FULL)
    async with server.session(key=KEY) as s:
        missing = problem_of(
            await s.call_tool("listRepositoryCharts", {"name": "nope"}), 404, "repository-not-found"
        )
        assert missing == await rest(server, "GET", "/repos/nope/charts")
        bad = problem_of(await s.call_tool("searchHub", {"maxResults": 0}), 400)
        assert bad["errors"] == [
            {"in": "query", "field": "keyword", "message": "is required"},
            {"in": "query", "field": "maxResults", "message": "must be >= 1"},
        ]
        unknown = problem_of(await s.call_tool("listRepositories", {"chartPath": "/etc"}), 400)
        assert unknown["errors"] == [
            {"in": "arguments", "field": "chartPath", "message": "is not a known field"}
        ]
        wrong_type = problem_of(
            await s.call_tool("templateChart", {"chartRef": "r/x", "values": []}), 400
        )
        assert wrong_type["errors"][0]["field"] == "values"
        refused = problem_of(
            await s.call_tool("addRepository", {"name": "m", "url": "http://169.254.169.254/"}),
            400,
            "address-refused",
        )
        assert refused["addressClass"] == "metadata"
        with pytest.raises(MCPError, match="unknown tool"):
            await s.call_tool("installChartPath", {})


async def test_read_only_mode_offers_no_write_to_call(make_mcp: MakeMcp) -> None:
    server = await make_mcp()
    async with server.session() as session:
        with pytest.raises(MCPError, match="unknown tool"):
            await session.call_tool("addRepository", {"name": "r", "url": "https://x.example"})


async def test_a_configured_key_guards_every_mcp_endpoint(make_mcp: MakeMcp) -> None:
    server = await make_mcp(*FULL)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    async with HttpSession() as http:
        for headers in ({}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}):
            resp = await http.post(
                server.url + "/mcp", json=initialize, headers={**accept, **headers}
            )
            body = await assert_problem(resp, 401, code="invalid-api-key")
            assert "test-key" not in str(body)
            assert resp.headers["WWW-Authenticate"] == 'ApiKey header="X-API-Key"'
            await assert_problem(await http.get(server.url + "/sse", headers=headers), 401)
            resp = await http.post(server.url + "/messages/?session_id=x", json={}, headers=headers)
            await assert_problem(resp, 401)
        twice = CIMultiDict([*accept.items(), ("X-API-Key", KEY), ("X-API-Key", "wrong")])
        resp = await http.post(server.url + "/mcp", json=initialize, headers=twice)
        await assert_problem(resp, 401, code="repeated-credential")
    with pytest.raises(ExceptionGroup) as refused:  # the official client, with the wrong key
        await tool_names(server, key="wrong")
    assert refused.group_contains(MCPError, match="error response")
    with pytest.raises(httpx2.HTTPStatusError, match="401"):
        await tool_names(server, "sse", key="wrong")
    assert await tool_names(server, key=KEY) == READS | MUTATING


async def test_without_a_key_any_header_is_ignored(make_mcp: MakeMcp) -> None:
    server = await make_mcp("chartsvc.security.mode=FULL")
    assert await tool_names(server, key="anything") == READS


async def test_the_tool_server_is_open_once_the_service_has_started(make_mcp: MakeMcp) -> None:
    server = await make_mcp()  # started, and no MCP request yet
    assert isinstance(server.server.app[MCP].sessions, Sessions)


async def test_shutdown_ends_open_event_streams(make_mcp: MakeMcp) -> None:
    server = await make_mcp()
    async with HttpSession() as http:
        resp = await http.get(server.url + "/sse")
        assert resp.status == 200
        assert (await resp.content.readline()).startswith(b"event: endpoint")
        async with asyncio.timeout(5):  # not the server's shutdown timeout
            await server.server.close()
        assert await resp.content.read() is not None


async def test_odd_requests_get_the_sdks_answers_on_a_connection_that_stays_usable(
    make_mcp: MakeMcp,
) -> None:
    # A message may carry a 1 KiB archive in base64 (1368 bytes) and 4 KiB of other arguments.
    server = await make_mcp(
        "chartsvc.rest.max-upload-size=1024", "chartsvc.rest.max-json-size=4096"
    )
    mcp_json = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    too_large = b"larger than the limit of 5464 bytes"
    expected: list[tuple[str, str, dict[str, Any], int, bytes]] = [
        ("HEAD", "/mcp", {}, 405, b""),  # headers only: the next response must not read a body
        ("GET", "/mcp", {}, 400, b"Missing session ID"),
        ("PUT", "/mcp", {}, 405, b"Method Not Allowed"),
        ("POST", "/mcp", {"data": b"{", "headers": mcp_json}, 400, b"Parse error"),
        ("POST", "/mcp", {"data": b" " * 5465, "headers": mcp_json}, 413, too_large),
        ("POST", "/messages/?session_id=zz", {"data": b" " * 5465}, 413, too_large),
        ("POST", "/messages/?session_id=zz", {"json": {}}, 400, b"Invalid session ID"),
    ]
    connector = aiohttp.TCPConnector(limit=1)  # one connection for every request
    async with HttpSession(connector=connector) as http:
        for method, path, kwargs, status, fragment in expected:
            async with http.request(method, server.url + path, **kwargs) as resp:
                assert resp.status == status, (method, path)
                assert len(resp.headers["X-Request-Id"]) == 32  # as on every other response
                assert fragment in await resp.read(), (method, path)
