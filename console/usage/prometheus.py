"""Which metrics backend a cluster has: a Prometheus-compatible query service, found by its
Service (name or ``app.kubernetes.io/name`` label), the way Lens and Headlamp look for one.

Known backends, most specific first: Thanos Query, VictoriaMetrics (vmselect / single), Prometheus
(server or operator-managed). The answer names the chosen one, where it is (namespace, Service,
port, and the API-server proxy path a client can query through), and the other candidates found.
"""

from __future__ import annotations

from typing import Any

import attrs

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

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.kind,
            "namespace": self.namespace,
            "service": self.service,
            "port": self.port,
            "proxyPath": self.proxy_path,
        }


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
