"""Metrics routes: node and pod usage (metrics.k8s.io), node disk (kubelet stats summary), the
metrics backend found, and graphs from that backend, else from the console's sampler
(``console.usage.graphs``). An absent source is an empty answer.

The sampler (and its background task) and the backend detections open in this group's cleanup
context, after the clusters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from common.errors import BadRequest
from common.openapi import validated
from console.http.clusterapi import target
from console.http.encode.usage import encode_backends, encode_disk, encode_graph, encode_usage
from console.keys import ACCESS_REVIEWS, CLUSTERS, METRICS_BACKENDS, SAMPLER, SETTINGS
from console.resources.kubeapi import KubeApi
from console.usage import graphs, prometheus, readings
from console.usage.sampler import Sampler

routes = web.RouteTableDef()
METRICS = "/clusters/{clusterId}/metrics"
#: What a graph target needs besides the cluster.
NEEDS = {
    "cluster": (),
    "node": ("name",),
    "namespace": ("namespace",),
    "pod": ("namespace", "name"),
}


def setup(app: web.Application) -> None:
    app.cleanup_ctx.append(_sampler)


async def _sampler(app: web.Application) -> AsyncIterator[None]:
    svc, registry = app[SETTINGS].sampler, app[CLUSTERS]

    async def api_for(cluster_id: str) -> KubeApi:
        return KubeApi(await registry.client(cluster_id))

    sampler = Sampler(
        api_for,
        interval=svc.interval_seconds,
        history=svc.history_minutes * 60,
        max_series=svc.max_series,
    )

    detections = prometheus.Detections()

    async def forget(cluster_id: str, _event: str) -> None:
        sampler.forget(cluster_id)
        detections.forget(cluster_id)

    registry.on_change(forget)
    async with sampler.running():
        app[SAMPLER] = sampler
        app[METRICS_BACKENDS] = detections
        yield


@routes.get(METRICS + "/nodes", name="nodeMetrics")
async def node_metrics(request: web.Request) -> web.Response:
    found = await target(request)
    return web.json_response([encode_usage(u) for u in await readings.nodes(found.api)])


@routes.get(METRICS + "/pods", name="podMetrics")
async def pod_metrics(request: web.Request) -> web.Response:
    found, namespace = await target(request), validated(request).query.get("namespace")
    return web.json_response([encode_usage(u) for u in await readings.pods(found.api, namespace)])


@routes.get(METRICS + "/nodes/disk", name="nodeDiskMetrics")
async def node_disk_metrics(request: web.Request) -> web.Response:
    found = await target(request)
    return web.json_response([encode_disk(d) for d in await readings.disks(found.api)])


@routes.get(METRICS + "/prometheus", name="metricsBackend")
async def metrics_backend(request: web.Request) -> web.Response:
    found = await target(request)
    candidates = await request.app[METRICS_BACKENDS].detect(found.cluster_id, found.api, fresh=True)
    return web.json_response(encode_backends(candidates))


@routes.get(METRICS + "/graph", name="metricsGraph")
async def metrics_graph(request: web.Request) -> web.Response:
    query = validated(request).query
    kind, minutes = query["target"], query["minutes"]
    missing = [field for field in NEEDS[kind] if not query.get(field)]
    if missing:
        raise BadRequest(f"target {kind} needs {' and '.join(missing)}")
    found = await target(request)
    key = (
        found.cluster_id,
        kind,
        query.get("namespace") if "namespace" in NEEDS[kind] else None,
        query.get("name") if "name" in NEEDS[kind] else None,
    )
    drawn = await graphs.graph(
        found.api,
        key,
        minutes,
        sampler=request.app[SAMPLER],
        detections=request.app[METRICS_BACKENDS],
        reviews=request.app[ACCESS_REVIEWS],
    )
    return web.json_response(encode_graph(drawn, key, minutes))
