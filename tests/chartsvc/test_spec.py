"""The served OpenAPI document: the file itself, parity with the routes, shared errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chartsvc.app import SPEC_PATH, load_operations
from chartsvc.charts import SPEC_PATTERNS
from common.openapi import load_document
from tests.chartsvc.conftest import MakeClient, MakeSettings
from tests.conftest import ApiClient

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


async def test_the_served_document_is_the_file(make_client: MakeClient) -> None:
    served = await spec_of(make_client)
    on_disk = load_document(SPEC_PATH, exclude=("releases",), patterns=SPEC_PATTERNS)
    assert served["paths"] == on_disk["paths"]
    assert served["components"] == on_disk["components"]
    assert served["info"] == on_disk["info"]


async def test_every_operation_documents_summary_and_shared_errors(make_client: MakeClient) -> None:
    declared = load_operations()
    ops = operations(await spec_of(make_client))
    assert set(ops) == set(declared)
    assert len(ops) == 14 + 9 + 1 + 1  # the contract's eight chart paths, lint, package, verify
    for op_id, (_, _, op) in ops.items():
        assert op["summary"] == declared[op_id].summary
        assert {"400", "404", "500"} <= set(op["responses"]), op_id
        gated = {"401", "403"} <= set(op["responses"])
        assert gated == declared[op_id].mutating == bool(op.get("security")), op_id


async def test_routes_match_the_spec_both_ways(make_client: MakeClient) -> None:
    client = await make_client()
    app = client.app
    named = {
        route.name: (route.method, route.resource.canonical.removeprefix("/api/v1"))
        for route in app.router.routes()
        if route.name and route.name in load_operations() and route.resource is not None
    }
    ops = operations(await spec_of(make_client))
    assert {k: (m, p) for k, (m, p, _) in ops.items()} == named


async def test_base_path_is_configurable(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.rest.base-path=/helm")
    assert (await client.get("/helm/repos")).status == 200
    assert (await client.get("/api/v1/repos")).status == 404
    document = await (await client.get("/v3/api-docs")).json()
    assert document["servers"] == [{"url": "/helm"}]


async def test_readiness_reports_repositories(make_client: MakeClient, tmp_path: Path) -> None:
    client = await make_client()
    body = await (await client.get("/actuator/health/readiness")).json()
    assert body["components"]["repositories"] == {"status": "UP", "details": {"configured": 0}}
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "repositories.yaml").write_text("repositories: {broken")
    resp = await client.get("/actuator/health/readiness")
    assert resp.status == 503


async def test_a_host_may_replace_the_document_info(
    api_client: ApiClient, make_settings: MakeSettings
) -> None:
    from chartsvc.app import create_app

    app = create_app(make_settings(), api_info={"title": "Acme Helm API", "version": "7"})
    client = await api_client(app)
    info = (await (await client.get("/v3/api-docs")).json())["info"]
    assert info["title"] == "Acme Helm API"
    assert info["version"] == "7"
    assert info["license"]["name"] == "Apache-2.0"  # what the host did not replace stays
    assert "contact" in info


async def test_a_host_may_replace_a_group(
    api_client: ApiClient, make_settings: MakeSettings
) -> None:
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
