"""The API server's proxies: ``nodes/{node}/proxy/...`` to the kubelet and
``services/{[scheme:]name[:port]}/proxy/...`` to a Service's backend pod.

The kubelet answers ``/stats/summary`` (``kubelet.stats``) and ``/healthz``; anything else is its
plain ``404 page not found``. A Service proxy goes where kube-proxy would (the first ready endpoint,
the port resolved by number or name): a Prometheus container answers its query API
(``kubelet.promql``, GET query or POST form), any other container what ``kubelet.podhttp`` makes
it answer. No ready endpoint is 503, as from kube-apiserver.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from kubesim.api.params import Target
from kubesim.cluster import LiveCluster
from kubesim.http.responses import json_response
from kubesim.http.state import State
from kubesim.kubelet import podhttp, promql, stats
from kubesim.kubelet.network import ClusterNetwork
from kubesim.machinery.status import KubeError, not_found
from kubesim.store import Obj

Handler = Callable[[web.Request, State, Target], Awaitable[web.StreamResponse]]
#: A POST form to the query API larger than this is refused (Prometheus reads up to this much).
MAX_FORM = 64 * 1024


def _rest(request: web.Request, target: Target) -> str:
    """The path after ``…/{name}/proxy`` (``/`` when there is none)."""
    tail = request.match_info["tail"]
    marker = f"/{target.name}/proxy"
    at = tail.find(marker)
    return tail[at + len(marker) :] or "/" if at >= 0 else "/"


def node_proxy(live: LiveCluster) -> Handler:
    async def handler(request: web.Request, state: State, target: Target) -> web.StreamResponse:
        node = state.objects.store.get(("", "nodes"), "", target.name)
        if node is None:
            raise not_found("", "nodes", target.name)
        path = _rest(request, target)
        if request.method != "GET":
            return web.Response(status=405, text="405 method not allowed")
        if path in ("/stats/summary", "/stats/summary/"):
            return json_response(stats.summary(state.objects, live.kubelet, node, time.time()))
        if path == "/healthz":
            return web.Response(text="ok")
        return web.Response(status=404, text="404 page not found\n")

    return handler


def _service_port(svc: Obj, wanted: str) -> Obj:
    ports = (svc.get("spec") or {}).get("ports") or []
    if not wanted and ports:
        return dict(ports[0])
    for port in ports:
        if wanted in (str(port.get("port")), str(port.get("name", ""))):
            return dict(port)
    name = svc["metadata"]["name"]
    raise KubeError(
        503, f'no endpoints available for service "{name}"', reason="ServiceUnavailable"
    )


def service_proxy(live: LiveCluster) -> Handler:
    async def handler(request: web.Request, state: State, target: Target) -> web.StreamResponse:
        parts = target.name.split(":")
        if parts[0] in ("http", "https") and len(parts) > 1:
            parts = parts[1:]
        name, wanted = parts[0], parts[1] if len(parts) > 1 else ""
        svc = state.objects.store.get(("", "services"), target.namespace, name)
        if svc is None:
            raise not_found("", "services", name)
        network = ClusterNetwork(state.objects.store, target.namespace, "")
        pod, port = network.backend(svc, _service_port(svc, wanted))
        container = podhttp.declared_port(pod, port) if pod is not None else None
        if pod is None or container is None:
            raise KubeError(
                503, f'no endpoints available for service "{name}"', reason="ServiceUnavailable"
            )
        path = _rest(request, target)
        if promql.serves_query_api(container):
            params = dict(request.query)
            if request.method == "POST":
                if (request.content_length or 0) > MAX_FORM:
                    raise KubeError(413, "request body too large", reason="RequestEntityTooLarge")
                params.update({k: str(v) for k, v in (await request.post()).items()})
            source = promql.Source(state.objects, live.kubelet)
            status, body = promql.answer(source, path, params, time.time())
            return json_response(body, status=status)
        query = f"?{request.query_string}" if request.query_string else ""
        headers = {k.lower(): v for k, v in request.headers.items()}
        reply = podhttp.answer(pod, port, request.method, path + query, headers)
        media = dict(reply.headers).get("Content-Type", "text/plain")
        return web.Response(body=reply.body, status=reply.status, headers={"Content-Type": media})

    return handler
