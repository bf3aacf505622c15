"""The embedded chart library under /api/v1/helm: repositories, chart show, hub search, refresh.

Against real loopback servers: the chart tests' repository (``helm create`` scaffolds packaged by
the real engine, an index with ETags and digests) and a server answering in Artifact Hub's shape.
The console reaches them only because the test widens its address policy to loopback; without
that, the guard refuses them as it refuses any loopback address.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from tests.chartsvc.conftest import LOOPBACK, ChartRepo
from tests.chartsvc.conftest import chart_archives as chart_archives
from tests.chartsvc.conftest import chart_repo as chart_repo
from tests.chartsvc.test_http_hub import RecordingHub
from tests.chartsvc.test_http_hub import hub as hub
from tests.chartsvc.test_hub import PACKAGES
from tests.conftest import ApiClient
from tests.console.helm_support import write_repositories
from tests.console.support import ADMIN, make_settings
from tests.guards import assert_problem
from tests.typing_support import Client

API = "/api/v1/helm"


async def _library(
    api_client: ApiClient,
    tmp_path: Path,
    *overrides: str,
    repos: dict[str, str] | None = None,
    allow: bool = True,
) -> Client:
    data = tmp_path / "console"
    write_repositories(data, repos or {})
    settings = make_settings(data, "clusters.warm-up=false", *overrides)
    app = create_app(settings, environ={})
    if allow:
        app[OUTBOUND_ALLOW] = LOOPBACK
    return await api_client(app)


@pytest.fixture
async def library(api_client: ApiClient, tmp_path: Path, chart_repo: ChartRepo) -> Client:
    """The console in open mode whose chart library has the loopback repository as ``r``."""
    return await _library(api_client, tmp_path, repos={"r": chart_repo.url})


def _archive_fetches(repo: ChartRepo) -> int:
    return sum(1 for path, _ in repo.requests if path.startswith("/charts/"))


async def _audit(client: Client) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    return entries


async def test_repositories_are_listed_added_and_removed_by_the_admin(
    library: Client, chart_repo: ChartRepo
) -> None:
    assert await (await library.get(f"{API}/repos")).json() == [
        {"name": "r", "url": chart_repo.url}
    ]
    body = {"name": "s", "url": chart_repo.url + "/"}
    await assert_problem(await library.post(f"{API}/repos", json=body), 401)
    resp = await library.post(f"{API}/repos", json=body, headers=ADMIN)
    assert resp.status == 201, await resp.text()
    again = await library.post(f"{API}/repos", json=body, headers=ADMIN)
    assert again.status == 200  # the same name and URL: nothing changes
    other = {"name": "s", "url": "https://charts.example.org/stable"}
    await assert_problem(await library.post(f"{API}/repos", json=other, headers=ADMIN), 409)
    names = [r["name"] for r in await (await library.get(f"{API}/repos")).json()]
    assert names == ["r", "s"]

    await assert_problem(await library.delete(f"{API}/repos/s"), 401)
    assert (await library.delete(f"{API}/repos/s", headers=ADMIN)).status == 204
    await assert_problem(await library.delete(f"{API}/repos/s", headers=ADMIN), 404)
    assert [r["name"] for r in await (await library.get(f"{API}/repos")).json()] == ["r"]
    trail = [(e["action"], e["target"], e["outcome"]) for e in await _audit(library)]
    assert trail[:3] == [
        ("helm.repo.remove", "s", "failure"),
        ("helm.repo.remove", "s", "success"),
        ("helm.repo.add", "s", "failure"),
    ]
    assert ("helm.repo.add", "s", "success") in trail


async def test_a_repository_whose_index_cannot_be_read_is_not_added(
    library: Client, chart_repo: ChartRepo
) -> None:
    chart_repo.status = 500
    resp = await library.post(
        f"{API}/repos", json={"name": "t", "url": chart_repo.url}, headers=ADMIN
    )
    await assert_problem(resp, 502)
    assert [r["name"] for r in await (await library.get(f"{API}/repos")).json()] == ["r"]
    bad = {"name": "t", "url": "ftp://charts.example.org"}
    await assert_problem(await library.post(f"{API}/repos", json=bad, headers=ADMIN), 400)


async def test_loopback_repositories_are_refused_by_the_address_guard(
    api_client: ApiClient, tmp_path: Path, chart_repo: ChartRepo
) -> None:
    guarded = await _library(api_client, tmp_path, allow=False)
    resp = await guarded.post(
        f"{API}/repos", json={"name": "r", "url": chart_repo.url}, headers=ADMIN
    )
    await assert_problem(resp, 400, code="address-refused")
    assert chart_repo.requests == []  # nothing left the console
    assert await (await guarded.get(f"{API}/repos")).json() == []


async def test_chart_show_values_readme_and_crds(library: Client) -> None:
    ref = {"chartRef": "r/demo", "version": "0.2.0"}
    shown = await library.get(f"{API}/charts/show", params=ref)
    assert shown.status == 200
    text = await shown.text()
    for part in ("name: demo", "version: 0.2.0", "replicaCount:", "widgets.example.com"):
        assert part in text
    values = await (await library.get(f"{API}/charts/show/values", params=ref)).text()
    assert "replicaCount: 1" in values
    assert "name: demo" not in values
    readme = await (await library.get(f"{API}/charts/show/readme", params=ref)).text()
    assert readme.startswith("# demo")
    crds = await (await library.get(f"{API}/charts/show/crds", params=ref)).text()
    assert "widgets.example.com" in crds
    no_crds = await library.get(
        f"{API}/charts/show/crds", params={"chartRef": "r/demo", "version": "0.1.0"}
    )
    assert (no_crds.status, (await no_crds.text()).strip()) == (200, "")
    latest = await (await library.get(f"{API}/charts/show", params={"chartRef": "r/other"})).text()
    assert "version: 2.3.4" in latest

    await assert_problem(await library.get(f"{API}/charts/show", params={"chartRef": "nope"}), 400)
    missing = await library.get(f"{API}/charts/show", params={"chartRef": "r/absent"})
    await assert_problem(missing, 404, code="chart-not-found")
    unknown = await library.get(f"{API}/charts/show", params={"chartRef": "q/demo"})
    await assert_problem(unknown, 404, code="repository-not-found")
    await assert_problem(await library.get(f"{API}/charts/show"), 400)


async def test_refresh_reindexes_and_evicts_the_cached_charts(
    library: Client, chart_repo: ChartRepo
) -> None:
    ref = {"chartRef": "r/demo", "version": "0.1.0"}
    assert (await library.get(f"{API}/charts/show", params=ref)).status == 200
    assert (await library.get(f"{API}/charts/show/values", params=ref)).status == 200
    assert _archive_fetches(chart_repo) == 1  # the second show was served from the cache

    await assert_problem(await library.post(f"{API}/repos/r/refresh"), 401)
    index_gets = len([p for p, _ in chart_repo.requests if p == "/index.yaml"])
    resp = await library.post(f"{API}/repos/r/refresh", headers=ADMIN)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body == {
        "name": "r",
        "updated": True,
        "charts": 2,
        "versions": 4,
        "skipped": 1,
        "evicted": 1,
    }
    index_requests = [(p, etag) for p, etag in chart_repo.requests if p == "/index.yaml"]
    assert len(index_requests) == index_gets + 1
    assert index_requests[-1][1] == ""  # unconditional: the unchanged ETag cannot answer 304

    assert (await library.get(f"{API}/charts/show", params=ref)).status == 200
    assert _archive_fetches(chart_repo) == 2  # fetched again after the eviction
    again = await (await library.post(f"{API}/repos/r/refresh", headers=ADMIN)).json()
    assert again["evicted"] == 1

    await assert_problem(await library.post(f"{API}/repos/zz/refresh", headers=ADMIN), 404)
    chart_repo.status = 503
    await assert_problem(await library.post(f"{API}/repos/r/refresh", headers=ADMIN), 502)
    entries = await _audit(library)
    assert [(e["action"], e["target"], e["outcome"]) for e in entries[:2]] == [
        ("helm.repo.refresh", "r", "failure"),
        ("helm.repo.refresh", "zz", "failure"),
    ]
    assert (await library.get(f"{API}/charts/show", params=ref)).status == 200  # index kept


async def test_hub_search_through_the_library(
    api_client: ApiClient, tmp_path: Path, hub: RecordingHub
) -> None:
    base = str(hub.server.make_url("/")).rstrip("/")
    client = await _library(api_client, tmp_path, f"helm.hub.base-url={base}")
    resp = await client.get(f"{API}/hub/search", params={"keyword": "nginx", "maxResults": "500"})
    assert resp.status == 200
    results = await resp.json()
    assert results[0]["name"] == PACKAGES[0]["name"]
    assert results[0]["repoName"] == "bitnami"
    assert hub.queries[-1]["ts_query_web"] == "nginx"
    assert hub.queries[-1]["limit"] == "60"  # clamped to the hub's own limit
    await assert_problem(await client.get(f"{API}/hub/search"), 400)
    hub.state["status"] = 500
    await assert_problem(await client.get(f"{API}/hub/search", params={"keyword": "x"}), 502)
