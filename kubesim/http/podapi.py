"""The HTTP doors into the living cluster: ``pods/log``, ``exec``, ``attach``, ``portforward``,
``metrics.k8s.io`` and the node and Service proxies (``proxy``), registered in ``State.subresource_handlers`` by :func:`install`.

Each handler resolves the pod, refuses with a ``Status`` the way a real API server (or the kubelet
behind it) does, and delegates: ``logs`` for log semantics, ``streams`` for exec/attach,
``portforward`` for tunnels, ``metrics`` for usage.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from kubesim.api.params import Target
from kubesim.cluster import LiveCluster
from kubesim.http import attach, logs, portforward, proxy, streams
from kubesim.http.responses import encode_one, json_response, transformed_list
from kubesim.http.state import State
from kubesim.kubelet import metrics
from kubesim.machinery.selectors import field_matcher, label_matcher
from kubesim.machinery.status import KubeError, not_found
from kubesim.store import Obj

Handler = Callable[[web.Request, State, Target], Awaitable[web.StreamResponse]]


def _pod(state: State, target: Target) -> Obj:
    pod = state.objects.store.get(("", "pods"), target.namespace, target.name)
    if pod is None:
        raise not_found("", "pods", target.name)
    return pod


def _log(live: LiveCluster) -> Handler:
    async def handler(request: web.Request, state: State, target: Target) -> web.StreamResponse:
        pod = _pod(state, target)
        opts = logs.LogOptions.parse(request.query, time.time())
        container = logs.container_of(pod, live.kubelet, opts.container)
        run = logs.run_of(pod, container, opts.previous)
        if not opts.follow:
            return web.Response(body=logs.read(run, opts), content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        uid = pod["metadata"]["uid"]

        def alive() -> bool:
            current = state.objects.store.get(("", "pods"), target.namespace, target.name)
            return current is not None and current["metadata"]["uid"] == uid

        with contextlib.suppress(ConnectionError):
            await logs.follow(run, opts, response.write, alive)
            await response.write_eof()
        return response

    return handler


def _stream(
    live: LiveCluster,
    fn: Callable[[web.Request, LiveCluster, str, str], Awaitable[web.StreamResponse]],
) -> Handler:
    async def handler(request: web.Request, state: State, target: Target) -> web.StreamResponse:
        return await fn(request, live, target.namespace, target.name)

    return handler


def _metrics(live: LiveCluster) -> Handler:
    async def handler(request: web.Request, state: State, target: Target) -> web.StreamResponse:
        now = time.time()
        rt, objs = target.rt, state.objects
        nodes = rt.plural == "nodes"
        items = (
            metrics.node_metrics(objs, live.kubelet, now)
            if nodes
            else metrics.pod_metrics(objs, live.kubelet, target.namespace or None, now)
        )
        if target.name:
            found = next((i for i in items if i["metadata"]["name"] == target.name), None)
            if found is None:
                what = target.name if nodes else f"{target.namespace}/{target.name}"
                kind = "nodemetrics" if nodes else "podmetrics"
                raise KubeError(
                    404,
                    f'{kind}.metrics.k8s.io "{what}" not found',
                    details={"name": target.name, "group": "metrics.k8s.io", "kind": rt.plural},
                )
            return json_response(encode_one(request, target, found))
        labels = label_matcher(request.query.get("labelSelector"))
        fields = field_matcher(request.query.get("fieldSelector"), rt.group, rt.plural, custom=True)
        items = [i for i in items if labels(i) and fields(i)]
        transformed = transformed_list(request, rt, items, {})
        if transformed is not None:
            return json_response(transformed)
        return json_response(
            {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}, "items": items}
        )

    return handler


def install(state: State, live: LiveCluster) -> None:
    """Serve the living cluster's subresources on this API server, and stop the stand-in."""
    state.instant_rollout = False
    handlers = state.subresource_handlers
    handlers[("", "pods", "log")] = _log(live)
    handlers[("", "pods", "exec")] = _stream(live, streams.exec_handler)
    handlers[("", "pods", "attach")] = _stream(live, attach.handler)
    handlers[("", "pods", "portforward")] = _stream(live, portforward.handler)
    handlers[("metrics.k8s.io", "nodes", "")] = _metrics(live)
    handlers[("metrics.k8s.io", "pods", "")] = _metrics(live)
    handlers[("", "nodes", "proxy")] = proxy.node_proxy(live)
    handlers[("", "services", "proxy")] = proxy.service_proxy(live)
