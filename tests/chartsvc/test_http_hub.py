"""Hub search over HTTP against a loopback server answering in Artifact Hub's JSON shape."""

from __future__ import annotations

import attrs
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from tests.chartsvc.conftest import MakeClient
from tests.chartsvc.mcp_support import hub_setting
from tests.chartsvc.test_hub import PACKAGES
from tests.guards import assert_problem


@attrs.frozen
class RecordingHub:
    """A loopback Artifact Hub keeping each search's query; a ``status`` other than 200 fails them."""

    server: TestServer
    queries: list[dict[str, str]]
    state: dict[str, int]


@pytest.fixture
async def hub(aiohttp_server: AiohttpServer) -> RecordingHub:
    queries: list[dict[str, str]] = []
    state = {"status": 200}

    async def search(request: web.Request) -> web.Response:
        queries.append(dict(request.query))
        if state["status"] != 200:
            return web.json_response({"message": "boom"}, status=state["status"])
        limit = int(request.query.get("limit", "20"))
        body = {"packages": PACKAGES[:limit], "facets": None}
        return web.json_response(body, headers={"Pagination-Total-Count": str(len(PACKAGES))})

    app = web.Application()
    app.router.add_get("/api/v1/packages/search", search)
    return RecordingHub(await aiohttp_server(app), queries, state)


async def test_search_maps_fields_and_clamps(make_client: MakeClient, hub: RecordingHub) -> None:
    client = await make_client(hub_setting(hub.server))
    resp = await client.get("/api/v1/hub/search", params={"keyword": "nginx"})
    assert resp.status == 200
    results = await resp.json()
    assert results[0] == {
        "name": "nginx",
        "version": "18.2.4",
        "appVersion": "1.27.2",
        "repoName": "bitnami",
        "repoUrl": "oci://registry-1.docker.io/bitnamicharts/nginx",
        "description": PACKAGES[0]["description"],
    }
    assert hub.queries[-1]["limit"] == "20"
    assert hub.queries[-1]["kind"] == "0"
    assert hub.queries[-1]["ts_query_web"] == "nginx"
    await client.get("/api/v1/hub/search", params={"keyword": "nginx", "maxResults": "500"})
    assert hub.queries[-1]["limit"] == "60"


async def test_search_errors(make_client: MakeClient, hub: RecordingHub) -> None:
    client = await make_client(hub_setting(hub.server))
    body = await assert_problem(await client.get("/api/v1/hub/search"), 400)
    assert "keyword" in body["detail"]
    await assert_problem(
        await client.get("/api/v1/hub/search", params={"keyword": "x", "maxResults": "zero"}), 400
    )
    hub.state["status"] = 500
    await assert_problem(await client.get("/api/v1/hub/search", params={"keyword": "x"}), 502)


async def test_hub_on_a_metadata_address_is_refused(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.hub.base-url=http://169.254.169.254")
    body = await assert_problem(
        await client.get("/api/v1/hub/search", params={"keyword": "x"}), 400
    )
    assert body["addressClass"] == "metadata"
