"""Log routes: a container's tail (current and previous run) as text, one container followed live,
and the multi-source stream of a pod or of every pod a workload selects, with its source list.

Everything that can be refused is checked before a stream starts (unknown pod or container, a
container not started, no previous run, a workload without selector), so those are problem
responses, never a Status body sent as log text. Streams send ``log`` events (id: the line's
timestamp, so ``Last-Event-ID`` resumes after it) and ``sources`` events.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from common import sse
from common.errors import BadRequest
from common.openapi import validated
from console.http.clusterapi import Target, target
from console.http.encode import event_data
from console.http.encode.logs import encode_line, encode_sources
from console.keys import WATCHES
from console.streams import logs
from console.streams.logmux import LogMux, Selection, Sources, plan, select

routes = web.RouteTableDef()
POD_LOG = "/clusters/{clusterId}/pods/{namespace}/{pod}/log"


@routes.get(POD_LOG, name="getPodLog")
async def get_pod_log(request: web.Request) -> web.Response:
    return await _tail(request, previous=False)


@routes.get(POD_LOG + "/previous", name="getPreviousPodLog")
async def get_previous_pod_log(request: web.Request) -> web.Response:
    return await _tail(request, previous=True)


async def _tail(request: web.Request, *, previous: bool) -> web.Response:
    found = await target(request)
    args = validated(request)
    path, query = args.path, args.query
    text = await logs.read_log(
        found.api,
        path["namespace"],
        path["pod"],
        query.get("container"),
        tail_lines=query["tailLines"],
        previous=previous,
    )
    return web.Response(body=text, content_type="text/plain", charset="utf-8")


@routes.get(POD_LOG + "/stream", name="streamPodLog")
async def stream_pod_log(request: web.Request) -> web.StreamResponse:
    found = await target(request)
    args = validated(request)
    namespace, pod = args.path["namespace"], args.path["pod"]
    obj = await found.api.get(logs.pod_path(namespace, pod))
    container = logs.pick_container(obj, args.query.get("container"))
    mux = LogMux(found.api, namespace, args.query["tailLines"], container=container)
    return await _stream(request, found, mux, Selection(pod=pod))


@routes.get("/clusters/{clusterId}/logs/stream", name="streamLogs")
async def stream_logs(request: web.Request) -> web.StreamResponse:
    found = await target(request)
    query = validated(request).query
    selection = await _selection(found, query)
    mux = LogMux(found.api, query["namespace"], query["tailLines"], init=query["initContainers"])
    return await _stream(request, found, mux, selection)


@routes.get("/clusters/{clusterId}/logs/sources", name="listLogSources")
async def list_logencode_sources(request: web.Request) -> web.Response:
    found = await target(request)
    query = validated(request).query
    selection = await _selection(found, query)
    pods = await selection.pods(found.api, query["namespace"])
    return web.json_response(encode_sources(plan(pods, init=query["initContainers"])))


async def _selection(found: Target, query: Any) -> Selection:
    if query.get("pod"):
        return Selection(pod=query["pod"])
    if not (query.get("resourceId") and query.get("name")):
        raise BadRequest("give either pod, or resourceId and name")
    kind = await found.catalogs.kind(found.api, query["resourceId"])
    return await select(found.api, kind, query["namespace"], query["name"])


async def _stream(
    request: web.Request, found: Target, mux: LogMux, selection: Selection
) -> web.StreamResponse:
    pods = await selection.pods(found.api, mux.namespace)  # refusals come before the stream
    pod_kind = await found.catalogs.kind(found.api, "pods")
    mux.after = request.headers.get("Last-Event-ID") or None
    hub = request.app[WATCHES]
    watcher: asyncio.Task[None] | None = None
    try:
        for pod in pods:
            mux.offer(pod)
        async with hub.subscribe(found.cluster_id, pod_kind, mux.namespace, found.api) as changes:
            watcher = asyncio.create_task(mux.watch_pods(changes, selection.selects))
            async with sse.event_stream(request) as stream:
                async for item in mux.lines():
                    if isinstance(item, Sources):
                        await stream.send(event_data(encode_sources(item)), event="sources")
                    else:
                        data = event_data(encode_line(item))
                        await stream.send(data, event="log", event_id=item.time)
            watcher.cancel()
    finally:
        await mux.close(*([watcher] if watcher is not None else []))
    return stream.response
