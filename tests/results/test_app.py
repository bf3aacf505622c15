"""The assembled results app: spec parity, start-up without I/O, health, docs and settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common.app import build_app
from common.config import describe, load_settings
from common.openapi import Spec, load_document
from results.app import API_ROUTES, SPEC_PATH, create_app, load_spec
from results.runs import Visibility
from results.settings import MissingDataPolicy, Settings
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.results.support import settings_for


def test_every_operation_has_a_route_and_every_route_an_operation() -> None:
    app = build_app(service="results", spec=load_spec(), api_routes=API_ROUTES)
    assert app is not None  # build_app raises on drift in either direction


def test_the_spec_is_valid_yaml_with_problem_responses() -> None:
    document = load_document(SPEC_PATH)  # the file and its fragments, as served
    Spec.from_document(document)
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method == "parameters":  # shared by the path's operations
                continue
            codes = set(op["responses"])
            takes_input = bool(
                op.get("parameters") or item.get("parameters") or "requestBody" in op
            )
            assert {"401", "500"} | ({"400"} if takes_input else set()) <= codes, (method, path)


def test_create_app_does_no_io(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    create_app(settings)
    assert not settings.results.data_dir.exists()


def test_defaults() -> None:
    svc = load_settings(Settings).results
    assert svc.db_path == Path("var/results/results.db")
    assert svc.security.open_mode is True
    assert svc.security.require_ingest_token is False
    assert svc.projects.default_visibility is Visibility.PUBLIC
    assert svc.gate.base_branch == "main"
    assert svc.gate.max_coverage_drop_pct == 1.0
    assert svc.gate.min_line_coverage is None
    assert svc.gate.on_zero_tests is MissingDataPolicy.FAIL
    keys_ = {info.key for info in describe(Settings)}
    assert {"results.db.path", "results.security.open-mode"} <= keys_


def test_the_database_path_can_be_set(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, f"results.db.path={tmp_path / 'x' / 'r.db'}")
    assert settings.results.db_path == tmp_path / "x" / "r.db"


async def test_health_reports_the_database(api_client: ApiClient, tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    client = await api_client(create_app(settings))
    assert settings.results.db_path.exists()
    resp = await client.get("/actuator/health/readiness")
    body = await resp.json()
    assert resp.status == 200
    assert body["components"]["database"]["status"] == "UP"


async def test_api_docs_are_served(api_client: ApiClient, tmp_path: Path) -> None:
    client = await api_client(create_app(settings_for(tmp_path)))
    resp = await client.get("/v3/api-docs")
    doc: dict[str, Any] = await resp.json()
    assert {"/ingest", "/gate"} <= set(doc["paths"])
    assert doc["servers"] == [{"url": "/api/v1"}]


async def test_unknown_paths_and_methods_are_problems(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await api_client(create_app(settings_for(tmp_path)))
    await assert_problem(await client.get("/api/v1/nothing"), 404, code="not-found")
    await assert_problem(await client.get("/api/v1/ingest"), 405, code="method-not-allowed")
