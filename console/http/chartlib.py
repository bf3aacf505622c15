"""The embedded chart library under ``/api/v1/helm``: repositories, chart show and hub search.

Each operation is chartsvc's own call of the same operationId (``chartsvc.calls``), run over the
console's chart library (the desk's), so the console answers exactly as chartsvc does; this module
only renders the reply, audits the writes and adds the console's one operation of its own,
``refreshRepository`` (re-index one repository and evict its cached charts). Every outbound fetch
goes through the library's address policy (``common.netguard``).
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from chartsvc.calls import CALLS, Reply
from common.openapi import validated
from console.audit import audited
from console.http.encode.helm import encode_refreshed
from console.keys import HELM

routes = web.RouteTableDef()
#: (method, path, operationId, audit action or None) of chartsvc's calls served here.
LIBRARY = (
    ("GET", "/helm/repos", "listRepositories", None),
    ("POST", "/helm/repos", "addRepository", "helm.repo.add"),
    ("DELETE", "/helm/repos/{name}", "removeRepository", "helm.repo.remove"),
    ("GET", "/helm/charts/show", "showChart", None),
    ("GET", "/helm/charts/show/values", "showChartValues", None),
    ("GET", "/helm/charts/show/readme", "showChartReadme", None),
    ("GET", "/helm/charts/show/crds", "showChartCrds", None),
    ("GET", "/helm/hub/search", "searchHub", None),
)


def _render(reply: Reply) -> web.Response:
    if reply.text is not None:
        return web.Response(text=reply.text, content_type=reply.media, status=reply.status)
    if reply.body is None:
        return web.Response(status=reply.status)
    return web.json_response(reply.body, status=reply.status)


def _handler(operation_id: str, action: str | None) -> Handler:
    call = CALLS[operation_id]

    async def handle(request: web.Request) -> web.StreamResponse:
        args = validated(request)
        if action is None:
            return _render(await call(request.app[HELM].calls, args))
        target = args.path.get("name") or args.body["name"]  # removing, else adding
        with audited(request, action=action, target=target):
            reply = await call(request.app[HELM].calls, args)
        return _render(reply)

    return handle


for _method, _path, _operation_id, _action in LIBRARY:
    routes.route(_method, _path, name=_operation_id)(_handler(_operation_id, _action))


@routes.post("/helm/repos/{name}/refresh", name="refreshRepository")
async def refresh_repository(request: web.Request) -> web.Response:
    name = validated(request).path["name"]
    with audited(request, action="helm.repo.refresh", target=name):
        refreshed = await request.app[HELM].library.charts.refresh(name)
    return web.json_response(encode_refreshed(refreshed))
