"""Which metrics backend a cluster has, and range queries to it through the API server.

A Prometheus-compatible query service is found by its Service (name or ``app.kubernetes.io/name``
label), the way Lens and Headlamp look for one. Known backends, most specific first: Thanos Query,
VictoriaMetrics (vmselect / single), Prometheus (server or operator-managed). The answer names the
chosen one, where it is (namespace, Service, port, and the API-server proxy path a client can query
through), and the other candidates found. :class:`Detections` keeps each cluster's answer briefly,
so graphs do not list every Service of the cluster on each request.

Queries go through the API server's service proxy (``services/proxy``, as Lens and Headlamp's
plugin do), never straight to the Service: the console need not reach the cluster network.
"""

from __future__ import annotations

import json
import time
from typing import Any

import attrs

from common.errors import BadGateway
from console.resources.kubeapi import KubeApi, path_of

#: (backend, name fragments) in order of preference.
BACKENDS = (
    ("thanos", ("thanos-query", "thanos-querier")),
    ("victoria-metrics", ("vmselect", "victoria-metrics", "vmsingle")),
    ("prometheus", ("prometheus",)),
)
#: Ports a query API listens on, by preference.
QUERY_PORTS = (9090, 8428, 8481, 10902, 80)
_NOT_QUERY = ("alertmanager", "pushgateway", "node-exporter", "operator", "kube-state")


@attrs.frozen
class Backend:
    kind: str
    namespace: str
    service: str
    port: int

    @property
    def proxy_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/services/{self.service}:{self.port}/proxy"


async def detect(api: KubeApi) -> list[Backend]:
    """Every candidate, the preferred first; empty when there is none."""
    services = await api.list_all(path_of("", "v1", "services"))
    found = [b for s in services if (b := _backend(s)) is not None]
    order = [kind for kind, _ in BACKENDS]
    return sorted(found, key=lambda b: (order.index(b.kind), b.namespace, b.service))


def _backend(service: dict[str, Any]) -> Backend | None:
    meta = service.get("metadata") or {}
    name = str(meta.get("name", ""))
    label = str((meta.get("labels") or {}).get("app.kubernetes.io/name", ""))
    words = f"{name} {label}".lower()
    if any(skip in words for skip in _NOT_QUERY):
        return None
    kind = next((k for k, frags in BACKENDS if any(f in words for f in frags)), None)
    if kind is None:
        return None
    ports = [int(p.get("port", 0)) for p in (service.get("spec") or {}).get("ports") or []]
    port = next((p for p in QUERY_PORTS if p in ports), ports[0] if ports else None)
    if port is None:
        return None
    return Backend(kind, str(meta.get("namespace", "")), name, port)


#: How long a cluster's detected backends are reused by graphs.
DETECTION_TTL_S = 30.0
#: A query to the backend that takes longer than this is given up (the graph falls back).
QUERY_TIMEOUT_S = 10.0


@attrs.define
class Detections:
    """Each cluster's backends, detected at most every ``ttl`` seconds, always with the console's
    own identity: the answer is shared by everyone, so no one person's rights may decide it (a
    person's queries to the backend are then made as that person)."""

    ttl: float = DETECTION_TTL_S
    _found: dict[str, tuple[float, list[Backend]]] = attrs.field(factory=dict)

    async def detect(self, cluster: str, api: KubeApi, *, fresh: bool = False) -> list[Backend]:
        known = self._found.get(cluster)
        if known is not None and not fresh and time.monotonic() - known[0] < self.ttl:
            return known[1]
        found = await detect(api.own())
        self._found[cluster] = (time.monotonic(), found)
        return found

    def forget(self, cluster: str) -> None:
        self._found.pop(cluster, None)


async def query_range(
    api: KubeApi, backend: Backend, query: str, *, start: float, end: float, step: float
) -> list[tuple[float, float]]:
    """The points of the one series ``query`` yields (none when it yields nothing), oldest first.

    BadGateway when the backend fails or answers anything but a Prometheus matrix."""
    params = [
        ("query", query),
        ("start", f"{start:.3f}"),
        ("end", f"{end:.3f}"),
        ("step", f"{step:g}"),
    ]
    raw = await api.read(
        "GET", backend.proxy_path + "/api/v1/query_range", query=params, timeout_s=QUERY_TIMEOUT_S
    )
    try:
        body = json.loads(raw)
        if body.get("status") != "success" or body["data"]["resultType"] != "matrix":
            raise ValueError(str(body.get("error", "not a matrix"))[:200])
        series = body["data"]["result"]
        if not series:
            return []
        return [(float(t), float(v)) for t, v in series[0]["values"]]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise BadGateway(f"{backend.kind} answered no usable series: {exc}") from None
