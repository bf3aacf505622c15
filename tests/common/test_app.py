"""The assembled app: problem details, validation, request ids, docs and health."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp import FormData, web
from pytest_aiohttp import AiohttpClient

from common import documents, openapi
from common.app import build_app
from common.openapi import SPEC, Spec
from tests.common.sample import DOCUMENT, make_app
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.typing_support import Client


@pytest.fixture
async def client(api_client: ApiClient) -> Client:
    return await api_client(make_app())


async def test_valid_json_body_reaches_the_handler(client: Client) -> None:
    resp = await client.post("/api/v1/things", json={"chartRef": "repo/nginx", "replicas": 2})
    assert resp.status == 201
    assert await resp.json() == {"chartRef": "repo/nginx", "replicas": 2}


async def test_missing_required_field_is_named(client: Client) -> None:
    resp = await client.post("/api/v1/things", json={"replicas": 1})
    body = await assert_problem(resp, 400, code="invalid-request")
    assert "chartRef" in body["detail"]
    assert body["errors"] == [{"in": "body", "field": "chartRef", "message": "is required"}]


async def test_every_bad_field_is_listed(client: Client) -> None:
    resp = await client.post("/api/v1/things", json={"replicas": -1, "values": "x"})
    body = await assert_problem(resp, 400)
    assert {e["field"] for e in body["errors"]} == {"chartRef", "replicas", "values"}


async def test_rejected_values_are_not_echoed(client: Client) -> None:
    resp = await client.post("/api/v1/things", json={"chartRef": "s3cr3t-value-xyz" * 0 or 5})
    text = await resp.text()
    assert resp.status == 400
    assert "must be of type string" in text


@pytest.mark.parametrize("levels", [101, 1_000, 100_000])
async def test_json_nested_past_the_limit_is_400_naming_it(client: Client, levels: int) -> None:
    deep = "[" * levels + "]" * levels
    body = '{"chartRef": "r/x", "values": {"a": ' + deep + "}}"
    resp = await client.post(
        "/api/v1/things", data=body, headers={"Content-Type": "application/json"}
    )
    problem = await assert_problem(resp, 400, code="invalid-request")
    assert problem["errors"] == [{"in": "body", "field": "body", "message": documents.TOO_DEEP}]
    assert "100 levels" in documents.TOO_DEEP


async def test_json_nested_up_to_the_limit_is_taken(client: Client) -> None:
    deep: Any = "leaf"
    for _ in range(documents.MAX_DEPTH - 2):  # the body object and "values" are two levels
        deep = {"k": deep}
    resp = await client.post("/api/v1/things", json={"chartRef": "r/x", "values": deep})
    assert resp.status == 201, await resp.text()


async def test_invalid_json_and_wrong_content_type(client: Client) -> None:
    resp = await client.post(
        "/api/v1/things", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["message"] == "is not valid JSON"
    resp = await client.post(
        "/api/v1/things", data=b"chartRef=x", headers={"Content-Type": "text/plain"}
    )
    body = await assert_problem(resp, 415, code="unsupported-media-type")
    assert body["detail"] == "Content-Type must be application/json"
    resp = await client.post("/api/v1/things")
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["field"] == "body"


async def test_query_coercion_and_defaults(client: Client) -> None:
    resp = await client.get("/api/v1/things")
    assert await resp.json() == {"namespace": "default", "limit": 20, "all": False}
    resp = await client.get(
        "/api/v1/things", params={"limit": "7", "all": "true", "namespace": "x"}
    )
    assert await resp.json() == {"namespace": "x", "limit": 7, "all": True}


async def test_bad_query_values(client: Client) -> None:
    resp = await client.get("/api/v1/things", params={"limit": "seven", "all": "maybe"})
    body = await assert_problem(resp, 400)
    assert {(e["field"], e["message"]) for e in body["errors"]} == {
        ("limit", "must be an integer"),
        ("all", "must be true or false"),
    }
    resp = await client.get("/api/v1/things", params={"limit": "61"})
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["message"] == "must be <= 60"
    resp = await client.get("/api/v1/things", params={"limit": str(2**63)})
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["message"] == f"must be between {-(2**63)} and {2**63 - 1}"


async def test_path_parameter_pattern(client: Client) -> None:
    resp = await client.get("/api/v1/things/UPPER")
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["field"] == "name"


async def test_domain_errors_keep_their_status_and_code(client: Client) -> None:
    resp = await client.get("/api/v1/things/taken")
    body = await assert_problem(resp, 409, code="thing-conflict")
    assert body["detail"] == "thing taken exists"


async def test_aiohttp_404_and_405_are_problems(client: Client) -> None:
    await assert_problem(await client.get("/api/v1/nothing-here"), 404, code="not-found")
    resp = await client.delete("/api/v1/things")
    body = await assert_problem(resp, 405, code="method-not-allowed")
    assert "DELETE" in body["detail"]
    assert "GET" in resp.headers["Allow"]


async def test_405_names_exactly_the_documented_methods_of_a_concrete_path(client: Client) -> None:
    """``/things/special`` documents POST only: a GET there is not ``getThing`` of a thing named
    "special" (a concrete path is matched before a templated one), and HEAD is not served."""
    assert (await client.post("/api/v1/things/special")).status == 204
    for method in ("GET", "DELETE", "HEAD", "OPTIONS"):
        resp = await client.request(method, "/api/v1/things/special")
        assert (resp.status, resp.headers["Allow"]) == (405, "POST"), method
    for method in ("HEAD", "PUT"):
        resp = await client.request(method, "/api/v1/things")
        assert (resp.status, resp.headers["Allow"]) == (405, "GET,POST"), method
    assert (await client.get("/api/v1/things/ordinary")).status == 200


async def test_unknown_exception_is_500_with_request_id_and_logged(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        resp = await client.get("/api/v1/boom", headers={"X-Request-Id": "req-42"})
    body = await assert_problem(resp, 500, code="internal-error")
    assert body["requestId"] == "req-42"
    assert "secret-internal-detail" not in await resp.text()
    assert any("secret-internal-detail" in (r.exc_text or "") or r.exc_info for r in caplog.records)


async def test_an_error_page_answers_for_the_errors_it_takes(
    api_client: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A service with pages shows the errors it chooses as a page (with the request id); the
    others stay problems; a page that fails to render leaves the problem, logged."""

    def error_page(request: web.Request, exc: Exception) -> web.Response | None:
        if request.path.endswith("/nothing-here"):
            raise RuntimeError("the template is broken")
        if isinstance(exc, web.HTTPNotFound) and not request.path.startswith("/api/"):
            return web.Response(text="<p>no such page</p>", status=404, content_type="text/html")
        return None

    client = await api_client(make_app(error_page=error_page))
    resp = await client.get("/somewhere", headers={"X-Request-Id": "req-7"})
    assert (resp.status, resp.content_type) == (404, "text/html")
    assert await resp.text() == "<p>no such page</p>"
    assert resp.headers["X-Request-Id"] == "req-7"
    await assert_problem(await client.get("/api/v1/nowhere"), 404, code="not-found")
    await assert_problem(await client.get("/api/v1/boom"), 500, code="internal-error")
    with caplog.at_level(logging.ERROR):
        resp = await client.get("/nothing-here")
    await assert_problem(resp, 404, code="not-found")
    assert any(
        "the error page for GET /nothing-here failed" in r.getMessage() for r in caplog.records
    )


async def test_request_id_is_generated_or_kept(client: Client) -> None:
    resp = await client.get("/api/v1/things")
    assert len(resp.headers["X-Request-Id"]) == 32
    resp = await client.get("/api/v1/things", headers={"X-Request-Id": "bad id\twith spaces"})
    assert resp.headers["X-Request-Id"] != "bad id\twith spaces"


async def test_multipart_required_parts_and_caps(client: Client) -> None:
    form = FormData()
    form.add_field("request", '{"a": 1}', content_type="application/json")
    form.add_field("archive", b"x" * 100, filename="c.tgz", content_type="application/gzip")
    resp = await client.post("/api/v1/uploads", data=form)
    assert await resp.json() == {"request": '{"a": 1}', "size": 100}

    form = FormData()
    form.add_field("request", "{}", content_type="application/json")
    body = await assert_problem(await client.post("/api/v1/uploads", data=form), 400)
    assert body["errors"] == [{"in": "body", "field": "archive", "message": "part is required"}]

    form = FormData()
    form.add_field("archive", b"x" * 2000, filename="c.tgz", content_type="application/gzip")
    body = await assert_problem(await client.post("/api/v1/uploads", data=form), 413)
    assert "archive" in body["detail"]

    form = FormData()
    for i in range(5):
        form.add_field(f"f{i}", "v", content_type="text/plain")
    await assert_problem(await client.post("/api/v1/uploads", data=form), 413)


async def test_api_docs_json_yaml_and_ui(aiohttp_client: AiohttpClient) -> None:
    client = await aiohttp_client(make_app(base_path="/custom/v2", ui_path="/docs"))
    doc = await (await client.get("/v3/api-docs")).json()
    assert doc["servers"] == [{"url": "/custom/v2"}]
    assert "/things" in doc["paths"]
    yaml_resp = await client.get("/v3/api-docs.yaml")
    assert yaml_resp.content_type == "application/yaml"
    assert "createThing" in await yaml_resp.text()
    page = await client.get("/docs")
    assert "/docs/swagger-ui-bundle.js" in await page.text()
    assert "script-src 'self';" in page.headers["Content-Security-Policy"]
    assert "<script>" not in await page.text()  # the policy allows no inline script
    init = await (await client.get("/docs/swagger-initializer.js")).text()
    assert '"url": "/v3/api-docs"' in init
    asset = await client.get("/docs/swagger-ui-bundle.js")
    assert asset.status == 200
    assert 'PACKAGE_VERSION:"5.' in await asset.text()  # Swagger UI 5 reads OpenAPI 3.1
    # The package also carries Swagger Editor; only the UI's own files are served.
    assert (await client.get("/docs/swagger-editor-bundle.js")).status == 404
    assert (await client.get("/docs/LICENSE")).status == 404
    assert (await client.get("/custom/v2/things")).status == 200


async def test_health_endpoints(aiohttp_client: AiohttpClient) -> None:
    async def db_ok(app: web.Application) -> dict[str, Any]:
        return {"database": "ok"}

    async def db_down(app: web.Application) -> None:
        raise ConnectionError("refused")

    client = await aiohttp_client(
        make_app(readiness={"db": db_ok}, info={"build": {"commit": "x"}})
    )
    assert (await (await client.get("/actuator/health/liveness")).json()) == {"status": "UP"}
    ready = await (await client.get("/actuator/health/readiness")).json()
    assert ready["components"]["db"] == {"status": "UP", "details": {"database": "ok"}}
    info = await (await client.get("/actuator/info")).json()
    assert info["app"]["service"] == "sample"
    assert info["build"] == {"commit": "x"}

    down = await aiohttp_client(make_app(readiness={"db": db_down}))
    resp = await down.get("/actuator/health/readiness")
    assert resp.status == 503
    assert (await resp.json())["components"]["db"]["status"] == "DOWN"
    assert (await down.get("/actuator/health")).status == 503


def test_spec_route_drift_refuses_to_start() -> None:
    document = {
        **DOCUMENT,
        "paths": {
            **DOCUMENT["paths"],
            "/extra": {"get": {"operationId": "extra", "responses": {}}},
        },
    }
    from tests.common import sample

    spec = Spec.from_document(document)
    with pytest.raises(RuntimeError, match="extra"):
        build_app(service="s", spec=spec, api_routes=[sample.routes])
    stray = web.RouteTableDef()

    @stray.get("/stray", name="stray")
    async def stray_handler(request: web.Request) -> web.Response:
        return web.Response()

    spec = Spec.from_document(DOCUMENT)
    with pytest.raises(RuntimeError, match="stray"):
        build_app(service="s", spec=spec, api_routes=[sample.routes, stray])


async def test_response_validation_catches_undeclared_status(api_client: ApiClient) -> None:
    client = await api_client(make_app())
    resp = await client.get("/api/v1/boom")
    assert resp.status == 500  # errors raised before a response exist are not checked


def test_spec_fragments_are_merged_and_duplicates_refused(tmp_path: Path) -> None:
    import yaml

    main = {k: v for k, v in DOCUMENT.items() if k != "paths"} | {
        "paths": {"/things": DOCUMENT["paths"]["/things"]}
    }
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(main))
    rest = {p: v for p, v in DOCUMENT["paths"].items() if p != "/things"}
    (tmp_path / "svc.more.yaml").write_text(
        yaml.safe_dump({"paths": rest, "components": {"schemas": {"Extra": {"type": "string"}}}})
    )
    spec = Spec.load(tmp_path / "svc.yaml")
    assert set(spec.operations) == {
        "createThing",
        "listThings",
        "getThing",
        "specialThing",
        "upload",
        "boom",
    }
    assert "Extra" in spec.document["components"]["schemas"]
    (tmp_path / "svc.dup.yaml").write_text(
        yaml.safe_dump({"paths": {"/boom": DOCUMENT["paths"]["/boom"]}})
    )
    with pytest.raises(ValueError, match="get /boom is already defined"):
        Spec.load(tmp_path / "svc.yaml")


def test_a_service_states_the_pattern_of_a_named_schema(tmp_path: Path) -> None:
    """The server's own check is the spec's pattern: stated at load, never written twice."""
    import yaml

    def with_schemas(schemas: dict[str, Any]) -> dict[str, Any]:
        kept = DOCUMENT["components"]["schemas"]  # the operations refer to them
        return DOCUMENT | {"components": DOCUMENT["components"] | {"schemas": kept | schemas}}

    document = with_schemas({"Name": {"type": "string"}})
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(document))
    spec = Spec.load(tmp_path / "svc.yaml", patterns={"Name": "^[a-z]+$"})
    assert spec.document["components"]["schemas"]["Name"]["pattern"] == "^[a-z]+$"
    for wrong in ("Missing", "Name"):  # no such schema; one that has a pattern already
        name = {"Name": {"type": "string", "pattern": "x"}} if wrong == "Name" else {}
        (tmp_path / "svc.yaml").write_text(yaml.safe_dump(with_schemas(name)))
        with pytest.raises(ValueError, match=f"no string schema {wrong}"):
            Spec.load(tmp_path / "svc.yaml", patterns={wrong: "^a$"})


def test_a_parameter_keeps_the_default_written_beside_its_named_schema() -> None:
    """``{$ref: Flag, default: default}``: the named schema's rule and the parameter's default."""
    document = {
        "openapi": "3.1.0",
        "info": {"title": "s", "version": "1"},
        "paths": {
            "/x": {
                "get": {
                    "operationId": "getX",
                    "parameters": [
                        {
                            "name": "flag",
                            "in": "query",
                            "schema": {"$ref": "#/components/schemas/Flag", "default": "main"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {"schemas": {"Flag": {"type": "string", "pattern": "^[a-z]+$"}}},
    }
    (param,) = Spec.from_document(document).operations["getX"].params
    assert param.default == "main"
    assert not list(param.validator.iter_errors("main"))
    assert list(param.validator.iter_errors("Main!"))


def test_spec_fragments_can_be_left_out(tmp_path: Path) -> None:
    import yaml

    main = {k: v for k, v in DOCUMENT.items() if k != "paths"} | {
        "paths": {"/things": DOCUMENT["paths"]["/things"]}
    }
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(main))
    rest = {p: v for p, v in DOCUMENT["paths"].items() if p != "/things"}
    (tmp_path / "svc.more.yaml").write_text(yaml.safe_dump({"paths": rest}))
    assert set(Spec.load(tmp_path / "svc.yaml", exclude=("more",)).operations) == {
        "createThing",
        "listThings",
    }
    assert "getThing" in Spec.load(tmp_path / "svc.yaml").operations
    with pytest.raises(ValueError, match="no fragment to exclude named typo"):
        Spec.load(tmp_path / "svc.yaml", exclude=("typo",))


async def test_a_repeated_query_is_validated_once_and_kept_read_only(
    api_client: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI polls the same URL: its validation is kept per request target as sent, read-only,
    bounded."""
    app = make_app()
    client = await api_client(app)
    ops = app[SPEC].operations
    memo = ops["listThings"].memo
    assert memo is not None
    assert ops["createThing"].memo is None  # a body: validated every time
    for _ in range(2):
        resp = await client.get("/api/v1/things?namespace=x&all=true")
        assert await resp.json() == {"namespace": "x", "limit": 20, "all": True}
    assert len(memo) == 1
    # The same text once decoded, another query once parsed: the key is the string as sent.
    resp = await client.get("/api/v1/things?namespace=x%26all%3Dtrue")
    assert await resp.json() == {"namespace": "x&all=true", "limit": 20, "all": False}
    # A refused query is refused again, never kept.
    for _ in range(2):
        await assert_problem(await client.get("/api/v1/things?limit=seven"), 400)
    assert len(memo) == 2
    kept = next(iter(memo.values()))
    with pytest.raises(TypeError):
        kept.query["namespace"] = "y"  # type: ignore[index]
    # The path's values are part of what is kept: each name its own.
    for name in ("one", "two", "one"):
        assert await (await client.get(f"/api/v1/things/{name}")).json() == {"name": name}
    assert len(ops["getThing"].memo or {}) == 2
    monkeypatch.setattr(openapi, "MEMO_LIMIT", 3)
    for limit in range(10):
        assert (await client.get(f"/api/v1/things?limit={limit}")).status == 200
    assert len(memo) <= 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (7, "must be of type string or null"),  # a type none of the alternatives takes
        ("Bad_Name", "must be a DNS-1123 label"),  # the string alternative's own rule
        ([], "must be of type string or null"),
    ],
)
def test_a_value_fitting_no_alternative_is_named_by_the_closest(value: Any, message: str) -> None:
    import jsonschema

    title = "a DNS-1123 label"
    label = {"type": "string", "pattern": "^[a-z0-9-]+$", "title": title}
    schema = {"properties": {"namespace": {"anyOf": [label, {"type": "null"}]}}}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors({"namespace": value}))
    assert [openapi._message(e) for e in errors] == [message]
