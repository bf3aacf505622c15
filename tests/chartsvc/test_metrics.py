"""chartsvc's Prometheus series: Helm operation times and failures, repository refreshes and sizes."""

from __future__ import annotations

from tests.chartsvc.conftest import KEY, ChartRepo
from tests.scrape import scrape, value
from tests.typing_support import Client


async def test_repository_refreshes_by_outcome(repo_client: Client, chart_repo: ChartRepo) -> None:
    await repo_client.post("/api/v1/repos/r/update", headers=KEY)  # 304: not modified
    chart_repo.etag = '"changed"'
    await repo_client.post("/api/v1/repos/r/update", headers=KEY)
    chart_repo.status, chart_repo.etag = 500, '"other"'
    await repo_client.post("/api/v1/repos/update-all", headers=KEY)
    samples = await scrape(repo_client)
    refreshes = "chartsvc_repository_refreshes_total"
    assert value(samples, refreshes, outcome="not-modified") == 1
    assert value(samples, refreshes, outcome="updated") == 1
    assert value(samples, refreshes, outcome="failed") == 1
    assert value(samples, "chartsvc_repository_index_chart_versions", repository="r") == 4
    assert value(samples, "chartsvc_repository_indexes_cached") >= 1
    assert value(samples, "chartsvc_repository_index_memory_bytes") > 0


async def test_helm_operations_are_timed_by_outcome(repo_client: Client) -> None:
    ok = {"chartRef": "r/demo", "releaseName": "web"}
    assert (await repo_client.post("/api/v1/charts/template", json=ok)).status == 200
    bad = {**ok, "values": {"ingress": {"enabled": True, "hosts": "not-a-list"}}}  # range fails
    bad_name = {**ok, "releaseName": "Not_A_Valid_Name"}
    statuses = [
        (await repo_client.post("/api/v1/charts/template", json=body)).status
        for body in (bad, bad_name)
    ]
    assert statuses[1] == 400  # refused by the spec's name rule: Helm never ran
    samples = await scrape(repo_client)
    seconds = "chartsvc_helm_operation_seconds_count"
    assert value(samples, seconds, operation="render", outcome="success") == 1
    assert value(samples, seconds, operation="render", outcome="failure") == 1, statuses
    template = {"method": "POST", "route": "/api/v1/charts/template", "status": "200"}
    assert value(samples, "http_server_requests_total", **template) >= 1
