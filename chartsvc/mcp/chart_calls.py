"""The chart, repository, hub and dependency tools: each calls what its REST route calls."""

from __future__ import annotations

from chartsvc.charts import RenderRequest
from chartsvc.encoders import (
    encode_chart_version,
    encode_hub_result,
    encode_repository,
    encode_update,
)
from chartsvc.helm import ShowFormat
from chartsvc.hub import clamp_results
from chartsvc.mcp.services import Call, Reply, Services, registrar
from common.openapi import Validated

CALLS: dict[str, Call] = {}
call = registrar(CALLS)


# --- charts -------------------------------------------------------------------------------------


@call("templateChart")
async def template_chart(s: Services, v: Validated) -> Reply:
    render = RenderRequest.from_body(v.body)
    return Reply(text=await s.charts.template(v.body["chartRef"], v.body.get("version"), render))


def _show(what: ShowFormat) -> Call:
    async def show(s: Services, v: Validated) -> Reply:
        return Reply(text=await s.charts.show(v.query["chartRef"], v.query.get("version"), what))

    return show


call("showChart")(_show("all"))
call("showChartValues")(_show("values"))
call("showChartReadme")(_show("readme"))
call("showChartMetadata")(_show("chart"))
call("showChartCrds")(_show("crds"))


# --- repositories -------------------------------------------------------------------------------


@call("addRepository")
async def add_repository(s: Services, v: Validated) -> Reply:
    repo, created = await s.repos.add(v.body["name"], v.body["url"])
    return Reply(encode_repository(repo), status=201 if created else 200)


@call("listRepositories")
async def list_repositories(s: Services, v: Validated) -> Reply:
    return Reply([encode_repository(r) for r in await s.repos.configured()])


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


# --- hub and dependencies -----------------------------------------------------------------------


@call("searchHub")
async def search_hub(s: Services, v: Validated) -> Reply:
    results = await s.hub.search(v.query["keyword"], clamp_results(v.query["maxResults"]))
    return Reply([encode_hub_result(r) for r in results])


@call("resolveDependencies")
async def resolve_dependencies(s: Services, v: Validated) -> Reply:
    lock = await s.charts.resolve_dependencies(v.body["chartRef"], v.body.get("version"))
    return Reply(text=lock)
