"""The repository and hub calls: add, list, remove, update, listings, pull, push, hub search."""

from __future__ import annotations

from chartsvc.calls.base import Reply, Services, call
from chartsvc.calls.form import ChartForm
from chartsvc.encoders import (
    encode_chart_version,
    encode_hub_result,
    encode_repository,
    encode_update,
)
from chartsvc.hub import clamp_results
from common.openapi import Validated


@call("addRepository")
async def add_repository(s: Services, v: Validated) -> Reply:
    repo, created = await s.repos.add(v.body["name"], v.body["url"])
    return Reply(encode_repository(repo), status=201 if created else 200)


@call("listRepositories")
async def list_repositories(s: Services, v: Validated) -> Reply:
    # Repositories are frozen and replaced when the file is read again: the same objects,
    # the same reply.
    return s.repo_listing(await s.repos.configured())


@call("removeRepository")
async def remove_repository(s: Services, v: Validated) -> Reply:
    await s.repos.remove(v.path["name"])
    return Reply(status=204)


@call("updateRepository")
async def update_repository(s: Services, v: Validated) -> Reply:
    return Reply(encode_update(await s.repos.update(v.path["name"])))


@call("updateAllRepositories")
async def update_all_repositories(s: Services, v: Validated) -> Reply:
    return Reply([encode_update(r) for r in await s.repos.update_all()])


@call("listRepositoryCharts")
async def list_repository_charts(s: Services, v: Validated) -> Reply:
    return Reply([encode_chart_version(c) for c in await s.repos.charts(v.path["name"])])


@call("listChartVersions")
async def list_chart_versions(s: Services, v: Validated) -> Reply:
    entries = await s.repos.versions(v.path["name"], v.path["chart"])
    return Reply([encode_chart_version(e) for e in entries])


@call("pullChart")
async def pull_chart(s: Services, v: Validated) -> Reply:
    ref, version = v.body["chart"], v.body.get("version")
    if v.body.get("verify"):
        data, filename, _ = await s.charts.verified(
            ref, version, v.body.get("keyId"), field="chart"
        )
    else:
        data, filename = await s.charts.pull(ref, version, field="chart")
    return Reply(archive=data, filename=filename)


@call("pushChart")
async def push_chart(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    return Reply(await s.charts.push(form.archive(), form.text("remote") or ""))


@call("searchHub")
async def search_hub(s: Services, v: Validated) -> Reply:
    results = await s.hub.search(v.query["keyword"], clamp_results(v.query["maxResults"]))
    return Reply([encode_hub_result(r) for r in results])
