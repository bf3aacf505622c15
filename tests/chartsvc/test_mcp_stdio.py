"""``wharf mcp``: the MCP tool server over stdio, spawned as a real process by the official client.

``wharf mcp`` gets no loopback allow-list (no setting feeds one), so its fetches to the loopback
fakes are refused: the repository state it serves is written beforehand, into the same data
directory, by an in-process service that may reach the loopback repository. The calls that must
reach the fakes themselves go to ``tests.chartsvc.mcp_stdio_server``: the same stdio server with the
allow-list, spawned the same way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pytest_aiohttp import AiohttpServer

from tests.chartsvc.conftest import FULL, KEY, ChartRepo, MakeClient
from tests.chartsvc.mcp_support import (
    archive_of,
    b64,
    hub_setting,
    json_of,
    problem_of,
    start_hub,
    text_of,
)
from tests.chartsvc.test_mcp_http import MUTATING, READS

REPO_ROOT = Path(__file__).resolve().parents[2]
ALLOWED = "tests.chartsvc.mcp_stdio_server"


@contextlib.asynccontextmanager
async def stdio_session(
    tmp_path: Path, *overrides: str, module: str = "wharf"
) -> AsyncIterator[ClientSession]:
    """An MCP session with ``python -m wharf mcp`` (or the loopback-allowed test module)."""
    command = ["-m", module, "mcp"] if module == "wharf" else ["-m", module]
    settings = [
        f"chartsvc.data-dir={tmp_path / 'data'}",
        f"chartsvc.rest.temp-dir={tmp_path / 'tmp'}",
        *overrides,
    ]
    params = StdioServerParameters(
        command=sys.executable,
        args=[*command, *(a for s in settings for a in ("--set", s))],
        cwd=REPO_ROOT,
        env={"HOME": str(tmp_path)},  # no ~/.kube/config: no cluster, no release tools
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.fixture
async def populated(make_client: MakeClient, chart_repo: ChartRepo) -> Any:
    """Repository ``r`` added (index cached) by an in-process service that may reach loopback."""
    client = await make_client(*FULL)
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 201
    return await (await client.get("/api/v1/repos/r/charts")).json()


async def test_read_only_over_stdio(tmp_path: Path, populated: Any) -> None:
    async with stdio_session(tmp_path, "chartsvc.hub.base-url=http://127.0.0.1:9") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == READS
        assert tools["templateChart"].input_schema["required"] == ["chartRef"]
        charts = await session.call_tool("listRepositoryCharts", {"name": "r"})
        assert json_of(charts) == populated
        refused = await session.call_tool("searchHub", {"keyword": "nginx"})
        assert problem_of(refused, 400, "address-refused")["addressClass"] == "loopback"


async def test_stdio_needs_no_key_for_the_writes_the_settings_enable(
    tmp_path: Path, populated: Any
) -> None:
    async with stdio_session(tmp_path, *FULL) as session:
        assert {t.name for t in (await session.list_tools()).tools} == READS | MUTATING
        removed = await session.call_tool("removeRepository", {"name": "r"})
        assert (removed.is_error, removed.meta) == (False, {"httpStatus": 204})
        assert json_of(await session.call_tool("listRepositories", {})) == []


async def test_the_chart_tools_over_stdio(
    tmp_path: Path, chart_repo: ChartRepo, aiohttp_server: AiohttpServer
) -> None:
    hub = await start_hub(aiohttp_server)
    async with stdio_session(tmp_path, *FULL, hub_setting(hub), module=ALLOWED) as session:
        found = await session.call_tool("searchHub", {"keyword": "nginx", "maxResults": 1})
        assert [r["name"] for r in json_of(found)] == ["nginx"]
        added = await session.call_tool("addRepository", {"name": "r", "url": chart_repo.url})
        assert added.meta == {"httpStatus": 201}
        charts = json_of(await session.call_tool("listRepositoryCharts", {"name": "r"}))
        assert [c["name"] for c in charts] == ["r/demo", "r/other"]
        args = {"chartRef": "r/demo", "releaseName": "web", "values": {"replicaCount": 4}}
        assert "replicas: 4" in text_of(await session.call_tool("templateChart", args))
        values = text_of(await session.call_tool("showChartValues", {"chartRef": "r/demo"}))
        assert "replicaCount: 1" in values
        lock = await session.call_tool("resolveDependencies", {"chartRef": "r/demo"})
        assert "dependencies: []" in text_of(lock)
        pulled = await session.call_tool("pullChart", {"chart": "r/demo", "version": "0.1.0"})
        name, archive = archive_of(pulled)
        assert name == "demo-0.1.0.tgz"
        upload = {
            "chart": b64(archive),
            "request": {"releaseName": "web", "values": {"replicaCount": 4}},
        }
        rendered = text_of(await session.call_tool("templateChartUpload", upload))
        assert rendered == text_of(
            await session.call_tool("templateChart", {**args, "version": "0.1.0"})
        )
