"""One read of the cluster state a diagnosis looks at: a list per kind, all at once.

Pods, events, Services, Endpoints, PersistentVolumeClaims, Jobs, ReplicaSets and nodes (nodes only
for a whole-cluster diagnosis) are listed concurrently in chunks; nothing is read twice. Secrets are
never read. Previous-log excerpts are fetched afterwards, one per finding that wants one, and a log
the cluster will not give (a container that never ran) is simply left out.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from common.errors import WharfError
from console.resources.kubeapi import KubeApi, path_of

Obj = dict[str, Any]
#: Lines of the previous run's log kept as evidence, and their byte cap.
LOG_LINES = 20
LOG_BYTES = 4096

_KINDS = {
    "pods": ("", "v1", "pods"),
    "events": ("", "v1", "events"),
    "services": ("", "v1", "services"),
    "endpoints": ("", "v1", "endpoints"),
    "claims": ("", "v1", "persistentvolumeclaims"),
    "jobs": ("batch", "v1", "jobs"),
    "replicasets": ("apps", "v1", "replicasets"),
}


@attrs.frozen
class Snapshot:
    namespace: str | None
    pods: list[Obj]
    events: list[Obj]
    services: list[Obj]
    endpoints: list[Obj]
    claims: list[Obj]
    jobs: list[Obj]
    replicasets: list[Obj]
    nodes: list[Obj]


async def read(api: KubeApi, namespace: str | None) -> Snapshot:
    async def listed(group: str, version: str, plural: str, ns: str | None) -> list[Obj]:
        return await api.list_all(path_of(group, version, plural, namespace=ns))

    names = list(_KINDS)
    lists = [listed(*_KINDS[n], namespace) for n in names]
    if namespace is None:
        names.append("nodes")
        lists.append(listed("", "v1", "nodes", None))
    results = await asyncio.gather(*lists)
    found = dict(zip(names, results, strict=True))
    found.setdefault("nodes", [])
    return Snapshot(namespace=namespace, **found)


async def log_tail(
    api: KubeApi, namespace: str, pod: str, container: str, *, previous: bool
) -> str | None:
    """The tail of ``container``'s log (its previous run's with ``previous``), or None when the
    cluster has none to give."""
    path = path_of("", "v1", "pods", namespace=namespace, name=pod, subresource="log")
    query = [
        ("container", container),
        ("previous", "true" if previous else "false"),
        ("tailLines", str(LOG_LINES)),
        ("limitBytes", str(LOG_BYTES)),
    ]
    try:
        raw = await api.read("GET", path, query=query, accept="text/plain")
    except WharfError:
        return None
    return raw.decode("utf-8", "replace")[-LOG_BYTES:] or None
