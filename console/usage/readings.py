"""Readings from the cluster: ``metrics.k8s.io`` (metrics-server's API) and the kubelet's stats
summary, each turned into plain numbers. An API the cluster does not serve (404, 503 of an
unavailable aggregated API) is an empty reading; any other refusal propagates.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from common.errors import WharfError
from console.resources.kubeapi import KubeApi, is_status, path_of
from console.usage import quantity

METRICS_GROUP = ("metrics.k8s.io", "v1beta1")
#: Node stats summaries read at once.
SUMMARY_CONCURRENCY = 8
_ABSENT = (404, 503)


@attrs.frozen
class Usage:
    """One object's usage: CPU in cores, memory (working set) in bytes."""

    kind: str
    namespace: str | None
    name: str
    cpu: float
    memory: int
    timestamp: str | None
    window: str | None
    containers: tuple[tuple[str, float, int], ...] = ()


@attrs.frozen
class DiskUsage:
    node: str
    capacity: int | None
    used: int | None
    available: int | None
    image_fs_used: int | None


async def _items(api: KubeApi, path: str) -> list[dict[str, Any]]:
    try:
        return await api.list_all(path)
    except WharfError as exc:
        if is_status(exc, *_ABSENT):
            return []
        raise


async def nodes(api: KubeApi) -> list[Usage]:
    items = await _items(api, path_of(*METRICS_GROUP, "nodes"))
    return sorted((_node(i) for i in items), key=lambda u: u.name)


async def pods(api: KubeApi, namespace: str | None) -> list[Usage]:
    items = await _items(api, path_of(*METRICS_GROUP, "pods", namespace=namespace))
    return sorted((_pod(i) for i in items), key=lambda u: (u.namespace or "", u.name))


def _node(item: dict[str, Any]) -> Usage:
    usage = item.get("usage") or {}
    meta = item.get("metadata") or {}
    return Usage(
        "Node",
        None,
        str(meta.get("name", "")),
        quantity.cores(usage.get("cpu", "0")),
        quantity.size_bytes(usage.get("memory", "0")),
        item.get("timestamp"),
        item.get("window"),
    )


def _pod(item: dict[str, Any]) -> Usage:
    meta = item.get("metadata") or {}
    containers = tuple(
        (
            str(c.get("name", "")),
            quantity.cores((c.get("usage") or {}).get("cpu", "0")),
            quantity.size_bytes((c.get("usage") or {}).get("memory", "0")),
        )
        for c in item.get("containers") or []
    )
    return Usage(
        "Pod",
        meta.get("namespace"),
        str(meta.get("name", "")),
        sum(c[1] for c in containers),
        sum(c[2] for c in containers),
        item.get("timestamp"),
        item.get("window"),
        containers,
    )


async def disks(api: KubeApi) -> list[DiskUsage]:
    """Each node's root filesystem from ``/api/v1/nodes/{node}/proxy/stats/summary``; nodes whose
    kubelet does not answer are left out."""
    listed = await api.list_all(path_of("", "v1", "nodes"))
    names = sorted(str((n.get("metadata") or {}).get("name", "")) for n in listed)
    gate = asyncio.Semaphore(SUMMARY_CONCURRENCY)

    async def one(node: str) -> DiskUsage | None:
        path = path_of("", "v1", "nodes", name=node, subresource="proxy/stats/summary")
        async with gate:
            try:
                summary = await api.get(path)
            except WharfError:
                return None  # no kubelet stats for this node: nothing to report
        fs = ((summary or {}).get("node") or {}).get("fs") or {}
        image_fs = (((summary or {}).get("node") or {}).get("runtime") or {}).get("imageFs") or {}
        return DiskUsage(
            node,
            fs.get("capacityBytes"),
            fs.get("usedBytes"),
            fs.get("availableBytes"),
            image_fs.get("usedBytes"),
        )

    found = await asyncio.gather(*(one(n) for n in names))
    return [d for d in found if d is not None]
