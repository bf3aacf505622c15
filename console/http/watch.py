"""Watch routes: a kind's changes as Server-Sent Events, projected objects or summary rows.

Every stream of one (cluster, resource, namespace) shares one upstream watch (``console.streams.
watches``). The subscription is taken before the response starts, so an unknown kind or a refused
first list is still a problem response; after that, failures travel in-band as ``event: error``
(data: a problem object) and the stream ends. ``setup`` gives the app its hub, tied to the
cluster registry (a removed or re-pointed cluster ends its watches) and closed at shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from aiohttp import web

from common import sse
from common.errors import BadRequest, WharfError
from common.openapi import validated
from console.http.clusterapi import target_kind
from console.http.encode import event_data
from console.keys import ACCESS_REVIEWS, CLUSTERS, METRICS, WATCHES
from console.resources import rows
from console.resources.catalog import Kind
from console.streams.watches import Change, Resync, WatchHub

routes = web.RouteTableDef()
Encode = Callable[[Change], str]


@routes.get("/clusters/{clusterId}/resources/{resourceId}/objects/watch", name="watchObjects")
async def watch_objects(request: web.Request) -> web.StreamResponse:
    return await _watch(request, lambda kind: lambda c: event_data(c.obj), "objects")


@routes.get("/clusters/{clusterId}/resources/{resourceId}/watch", name="watchRows")
async def watch_rows(request: web.Request) -> web.StreamResponse:
    return await _watch(
        request, lambda kind: lambda c: event_data(rows.row(c.obj, kind=kind.kind)), "rows"
    )


async def _watch(
    request: web.Request, encoder: Callable[[Kind], Encode], form: str
) -> web.StreamResponse:
    found, kind = await target_kind(request)
    if "watch" not in kind.verbs:
        raise BadRequest(f"{kind.id} cannot be watched on this cluster")
    namespace = validated(request).query.get("namespace")
    encode = encoder(kind)
    hub = request.app[WATCHES]
    async with (
        hub.subscribe(found.cluster_id, kind, namespace, found.api) as changes,
        sse.event_stream(request) as stream,
    ):
        await _pump(stream, changes, encode, form, request.path)
    return stream.response


async def _pump(
    stream: sse.EventStream,
    changes: AsyncIterator[Change | Resync],
    encode: Encode,
    form: str,
    path: str,
) -> None:
    try:
        async for item in changes:
            if isinstance(item, Resync):
                await stream.send(event_data({"reason": item.reason}), event="RESYNC")
                continue
            data = item.encoded.get(form)
            if data is None:
                data = item.encoded[form] = encode(item)
            await stream.send(data, event=item.type)
    except WharfError as exc:
        await stream.send(event_data(exc.to_problem(instance=path)), event="error")


def setup(app: web.Application) -> None:
    async def watches(app: web.Application) -> AsyncIterator[None]:
        # Closed within a third of a keepalive interval after the last subscriber left, so a
        # page reload reuses it and a departed client frees it within one interval.
        linger = app[sse.STREAMS].interval / 3
        hub = WatchHub(linger_s=linger, reviews=app[ACCESS_REVIEWS])
        app[WATCHES] = hub
        app[CLUSTERS].on_change(hub.cluster_changed)
        app[METRICS].gauge(
            "console_watches_upstream", "Upstream watches open to clusters.", hub.upstream_count
        )
        try:
            yield
        finally:
            await hub.close()

    app.cleanup_ctx.append(watches)
