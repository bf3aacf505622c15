"""The served OpenAPI document: parity with routes and with the operation table, shared errors."""

from __future__ import annotations

from typing import Any

import pytest

from chartsvc.operations import BY_ID
from tests.chartsvc.conftest import MakeClient

METHODS = ("get", "post", "put", "delete", "patch")


async def spec_of(make_client: MakeClient) -> dict[str, Any]:
    client = await make_client()
    resp = await client.get("/v3/api-docs")
    assert resp.status == 200
    document: dict[str, Any] = await resp.json()
    return document


def operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        op["operationId"]: (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if method in METHODS
    }


async def test_spec_holds_the_cluster_free_groups_whole(make_client: MakeClient) -> None:
    ops = operations(await spec_of(make_client))
    cluster_free = [op for op in BY_ID.values() if op.group != "releases"]
    assert {op.operation_id for op in cluster_free} <= set(ops)
    assert len(cluster_free) == 8 + 9 + 1 + 1
    for op_id, (method, path, _) in ops.items():
        assert (BY_ID[op_id].method, BY_ID[op_id].path) == (method, path)


async def test_every_operation_documents_summary_and_shared_errors(make_client: MakeClient) -> None:
    for op_id, (_, _, op) in operations(await spec_of(make_client)).items():
        assert op["summary"] == BY_ID[op_id].summary
        assert {"400", "404", "500"} <= set(op["responses"]), op_id
        gated = {"401", "403"} <= set(op["responses"])
        assert gated == BY_ID[op_id].mutating, op_id
        assert op["x-mutating"] == BY_ID[op_id].mutating


async def test_routes_match_the_spec_both_ways(make_client: MakeClient) -> None:
    client = await make_client()
    app = client.server.app
    named = {
        route.name: (route.method, route.resource.canonical.removeprefix("/api/v1"))
        for route in app.router.routes()
        if route.name and route.name in BY_ID and route.resource is not None
    }
    ops = operations(await spec_of(make_client))
    assert {k: (m, p) for k, (m, p, _) in ops.items()} == named


async def test_base_path_is_configurable(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.rest.base-path=/helm")
    assert (await client.get("/helm/repos")).status == 200
    assert (await client.get("/api/v1/repos")).status == 404
    document = await (await client.get("/v3/api-docs")).json()
    assert document["servers"] == [{"url": "/helm"}]


async def test_readiness_reports_repositories(make_client: MakeClient, tmp_path: Any) -> None:
    client = await make_client()
    body = await (await client.get("/actuator/health/readiness")).json()
    assert body["components"]["repositories"] == {"status": "UP", "details": {"configured": 0}}
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "repositories.yaml").write_text("repositories: {broken")
    resp = await client.get("/actuator/health/readiness")
    assert resp.status == 503


async def test_a_host_may_replace_the_document_info(api_client: Any, make_settings: Any) -> None:
    from chartsvc.app import create_app

    app = create_app(make_settings(), api_info={"title": "Acme Helm API", "version": "7"})
    client = await api_client(app)
    info = (await (await client.get("/v3/api-docs")).json())["info"]
    assert info["title"] == "Acme Helm API"
    assert info["version"] == "7"
    assert info["license"]["name"] == "Apache-2.0"  # what the host did not replace stays
    assert "contact" in info


async def test_a_host_may_replace_a_group(api_client: Any, make_settings: Any) -> None:
    from aiohttp import web

    from chartsvc.app import create_app

    own = web.RouteTableDef()

    @own.get("/hub/search", name="searchHub")
    async def search(request: web.Request) -> web.Response:
        return web.json_response([])

    client = await api_client(create_app(make_settings(), groups={"hub": own}))
    resp = await client.get("/api/v1/hub/search", params={"keyword": "x"})
    assert await resp.json() == []
    with pytest.raises(ValueError, match="no such group"):
        create_app(make_settings(), groups={"nope": own})
