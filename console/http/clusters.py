"""Routes of the clusters group: list, add, edit, remove, config view, contexts of a kubeconfig."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from common.app import encoded_json
from common.errors import BadRequest
from common.memo import Remade
from common.openapi import validated
from console import audit
from console.about import PROBE_BUDGET_S
from console.clusters import Cluster, ClusterDefinition
from console.clusters.kubeconfigs import parse_posted
from console.http.encode.clusters import encode_cluster, encode_cluster_config, encode_contexts
from console.keys import CLUSTERS

routes = web.RouteTableDef()


def _list_body(clusters: Sequence[Cluster]) -> bytes:
    return json.dumps([encode_cluster(c) for c in clusters]).encode()


#: The list's JSON, made again only when a cluster was added, changed or removed: every change
#: replaces the registry's (frozen) Cluster objects. Scripts and dashboards poll this list.
LIST_BODY = web.AppKey("console.cluster_list_body", Remade[Cluster, bytes])


def install(app: web.Application) -> None:
    app[LIST_BODY] = Remade(_list_body)


@routes.get("/clusters", name="listClusters")
async def list_clusters(request: web.Request) -> web.Response:
    app = request.app  # a property: read once
    return encoded_json(app[LIST_BODY](app[CLUSTERS].list()))


@routes.post("/clusters", name="addCluster")
async def add_cluster(request: web.Request) -> web.Response:
    body = validated(request).body
    target = body.get("id") or body.get("context")
    with audit.audited(request, action="cluster.add", cluster=target, target=target):
        cluster = await request.app[CLUSTERS].add(_definition(body, body.get("id")))
    return web.json_response(encode_cluster(cluster), status=201)


@routes.put("/clusters/{clusterId}", name="updateCluster")
async def update_cluster(request: web.Request) -> web.Response:
    given = validated(request)
    cluster_id = given.path["clusterId"]
    if given.body.get("id", cluster_id) != cluster_id:
        raise BadRequest("id in the body must equal the cluster id in the path")
    with audit.audited(request, action="cluster.update", cluster=cluster_id, target=cluster_id):
        cluster = await request.app[CLUSTERS].update(
            cluster_id, _definition(given.body, cluster_id)
        )
    return web.json_response(encode_cluster(cluster))


@routes.delete("/clusters/{clusterId}", name="removeCluster")
async def remove_cluster(request: web.Request) -> web.Response:
    cluster_id = validated(request).path["clusterId"]
    with audit.audited(request, action="cluster.remove", cluster=cluster_id, target=cluster_id):
        await request.app[CLUSTERS].remove(cluster_id)
    return web.Response(status=204)


@routes.get("/clusters/{clusterId}/config", name="getClusterConfig")
async def get_cluster_config(request: web.Request) -> web.Response:
    registry = request.app[CLUSTERS]
    cluster = registry.get(validated(request).path["clusterId"])
    await registry.probe(cluster.id, timeout=PROBE_BUDGET_S)  # server version, simulator or not
    # Where runtime clusters are stored is shown here to every caller; only /about withholds.
    return web.json_response(encode_cluster_config(registry, cluster))


@routes.post("/clusters/contexts", name="listKubeconfigContexts")
async def list_kubeconfig_contexts(request: web.Request) -> web.Response:
    body = validated(request).body
    text = body["kubeconfig"] if isinstance(body, dict) else await request.text()
    return web.json_response(encode_contexts(parse_posted(text)))


def _definition(body: dict[str, Any], cluster_id: str | None) -> ClusterDefinition:
    return ClusterDefinition(
        id=cluster_id,
        name=body.get("name"),
        context=body.get("context"),
        kubeconfig=body.get("kubeconfig"),
        impersonate=body.get("impersonate"),
    )
