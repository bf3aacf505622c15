"""MCP test support: the chart service on a real loopback server, reached with the official client.

``McpServer`` wraps a running ``create_app`` server; ``session(transport, key=...)`` opens an
initialized ``mcp.ClientSession`` over streamable HTTP (``/mcp``) or legacy SSE (``/sse``). The hub
fake hub answers in Artifact Hub's JSON (the packages of ``tests.chartsvc.test_hub``).
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import mcp.types as types
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pytest_aiohttp import AiohttpServer

from chartsvc.app import create_app
from tests.chartsvc.conftest import LOOPBACK, MakeSettings
from tests.chartsvc.test_hub import PACKAGES

TRANSPORTS = ("streamable-http", "sse")
KEY = "test-key"  # the key of tests.chartsvc.conftest.FULL


@attrs.frozen
class McpServer:
    server: TestServer
    prefix: str = ""  # where a host mounted the service

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/") + self.prefix

    @contextlib.asynccontextmanager
    async def session(
        self,
        transport: str = "streamable-http",
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[ClientSession]:
        headers = {**(headers or {}), **({"X-API-Key": key} if key is not None else {})}
        async with contextlib.AsyncExitStack() as stack:
            if transport == "streamable-http":
                http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                read, write = await stack.enter_async_context(
                    streamable_http_client(self.url + "/mcp", http_client=http)
                )
            else:
                read, write = await stack.enter_async_context(
                    sse_client(self.url + "/sse", headers=headers)
                )
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            yield session


MakeMcp = Callable[..., Awaitable[McpServer]]


@pytest.fixture
def make_mcp(aiohttp_server: AiohttpServer, make_settings: MakeSettings) -> MakeMcp:
    """Chart services with ``--set`` style overrides on loopback; the fakes' loopback allowed.

    A fixture: import it into the test module and list it in ``__all__``.
    """

    async def make(*overrides: str) -> McpServer:
        app = create_app(make_settings(*overrides), address_allow=LOOPBACK)
        return McpServer(await aiohttp_server(app))

    return make


async def start_hub(aiohttp_server: AiohttpServer) -> TestServer:
    """A loopback Artifact Hub answering searches with ``PACKAGES``."""

    async def search(request: web.Request) -> web.Response:
        limit = int(request.query.get("limit", "20"))
        body = {"packages": PACKAGES[:limit], "facets": None}
        return web.json_response(body, headers={"Pagination-Total-Count": str(len(PACKAGES))})

    app = web.Application()
    app.router.add_get("/api/v1/packages/search", search)
    server: TestServer = await aiohttp_server(app)
    return server


def hub_setting(hub: TestServer) -> str:
    return f"chartsvc.hub.base-url={str(hub.make_url('/')).rstrip('/')}"


class ProgressLog:
    """A ``progress_callback`` for ``call_tool`` keeping each report as (progress, total, message)."""

    def __init__(self) -> None:
        self.reports: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.reports.append((progress, total, message))


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def json_of(result: types.CallToolResult) -> Any:
    """The REST-equivalent JSON of a result, after checking text and structured content agree."""
    body = json.loads(text_of(result))
    wrapped = body if isinstance(body, dict) else {"result": body}
    assert result.structured_content == wrapped
    return body


def problem_of(result: types.CallToolResult, status: int, code: str | None = None) -> Any:
    assert result.is_error, result
    problem = json.loads(text_of(result))
    assert result.structured_content == problem
    assert problem["status"] == status, problem
    assert problem["message"] == problem["detail"]
    if code is not None:
        assert problem["code"] == code, problem
    return problem


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def archive_of(result: types.CallToolResult) -> tuple[str, bytes]:
    """The file name and bytes of an archive answer: a line of text and an embedded blob."""
    assert not result.is_error, result
    text, resource = result.content
    assert isinstance(text, types.TextContent)
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.BlobResourceContents)
    assert resource.resource.mime_type == "application/gzip"
    data = base64.b64decode(resource.resource.blob, validate=True)
    filename = text.text.split(" ")[0]
    assert text.text == f"{filename} ({len(data)} bytes)"
    assert str(resource.resource.uri) == f"chart:///{filename}"
    return filename, data
