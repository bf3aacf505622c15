"""No chartsvc secret reaches a log line or an answer: the API key (right, wrong, over HTTP and over
the MCP tool server) and a private repository's password (given in its URL, accepted, refused and
in an OCI reference)."""

from __future__ import annotations

import mcp.types as types
import pytest
from aiohttp.test_utils import TestServer

from tests.chartsvc.conftest import ChartRepo, MakeClient
from tests.chartsvc.mcp_support import McpServer
from tests.leaks import LeakScan


async def test_no_secret_in_the_chartsvc_logs_or_answers(
    make_client: MakeClient, chart_repo: ChartRepo, caplog: pytest.LogCaptureFixture
) -> None:
    scan = LeakScan(caplog)
    key = scan.secret("API key", "leak-scan-api-key-31f9")
    wrong = scan.secret("a wrong key", "leak-scan-api-key-31f8")
    password = scan.secret("repository password", "repo-pass-7Hq2x")
    bad_password = scan.secret("a wrong repository password", "repo-pass-WRONG-1")
    client = await make_client("chartsvc.security.mode=FULL", f"chartsvc.security.api-key={key}")
    chart_repo.basic_auth = f"reader:{password}"
    with_password = chart_repo.url.replace("://", f"://reader:{password}@", 1)
    with_bad_password = chart_repo.url.replace("://", f"://reader:{bad_password}@", 1)

    add = {"name": "private", "url": with_password}
    for headers, status in (({}, 401), ({"X-API-Key": wrong}, 401), ({"X-API-Key": key}, 201)):
        resp = await scan.send(client, "POST", "/api/v1/repos", json=add, headers=headers)
        assert resp.status == status, await resp.text()
    resp = await scan.send(
        client,
        "POST",
        "/api/v1/repos",
        json={"name": "refused", "url": with_bad_password},
        headers={"X-API-Key": key},
    )
    assert resp.status >= 400  # the repository answers 401 to the wrong password
    for path in ("/api/v1/repos", "/api/v1/repos/private/charts"):
        resp = await scan.send(client, "GET", path)
        assert resp.status == 200, path
    resp = await scan.send(
        client, "POST", "/api/v1/repos/private/update", headers={"X-API-Key": key}
    )
    assert resp.status == 200, await resp.text()
    resp = await scan.send(
        client,
        "POST",
        "/api/v1/repos/pull",
        json={"chart": f"oci://reader:{password}@127.0.0.1:9/charts/app", "version": "1.0.0"},
        headers={"X-API-Key": key},
    )
    assert resp.status >= 400

    assert isinstance(client.server, TestServer)
    server = McpServer(client.server)
    async with server.session(key=key) as session:
        tools = await session.list_tools()
        scan.record("MCP tools/list", tools.model_dump_json())
        result = await session.call_tool("listRepositories", {})
        scan.record("MCP listRepositories", result.model_dump_json())
        assert not result.is_error
        assert any(isinstance(c, types.TextContent) and "private" in c.text for c in result.content)
    scan.assert_clean()
