"""Metrics (``spec/console.usage.yaml``): usage readings, node disks, the backend, graphs."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from console.usage.graphs import Graph, Points
from console.usage.prometheus import Backend
from console.usage.readings import DiskUsage, Usage
from console.usage.sampler import SeriesKey


class ContainerUsage(TypedDict):
    name: str
    cpuMillicores: int
    memoryBytes: int


class UsageEntry(TypedDict):
    name: str
    cpuCores: float
    cpuMillicores: int
    memoryBytes: int
    timestamp: str | None
    window: str | None
    namespace: NotRequired[str | None]
    containers: NotRequired[list[ContainerUsage]]


class DiskEntry(TypedDict):
    node: str
    capacityBytes: int | None
    usedBytes: int | None
    availableBytes: int | None
    usedFraction: float | None
    imageFsUsedBytes: int | None


class MetricsBackend(TypedDict):
    backend: str
    namespace: str
    service: str
    port: int
    proxyPath: str


class BackendFound(TypedDict):
    found: bool
    chosen: MetricsBackend | None
    candidates: list[MetricsBackend]


class Series(TypedDict):
    metric: str
    unit: str
    points: list[list[float]]


class GraphBody(TypedDict):
    target: str
    namespace: str | None
    name: str | None
    minutes: int
    source: str
    backend: MetricsBackend | None
    warning: str | None
    intervalSeconds: float
    series: list[Series]


def encode_usage(usage: Usage) -> UsageEntry:
    body: UsageEntry = {
        "name": usage.name,
        "cpuCores": round(usage.cpu, 6),
        "cpuMillicores": round(usage.cpu * 1000),
        "memoryBytes": usage.memory,
        "timestamp": usage.timestamp,
        "window": usage.window,
    }
    if usage.kind == "Pod":
        body["namespace"] = usage.namespace
        body["containers"] = [
            {"name": n, "cpuMillicores": round(c * 1000), "memoryBytes": m}
            for n, c, m in usage.containers
        ]
    return body


def encode_disk(disk: DiskUsage) -> DiskEntry:
    share = disk.used / disk.capacity if disk.used is not None and disk.capacity else None
    return {
        "node": disk.node,
        "capacityBytes": disk.capacity,
        "usedBytes": disk.used,
        "availableBytes": disk.available,
        "usedFraction": round(share, 4) if share is not None else None,
        "imageFsUsedBytes": disk.image_fs_used,
    }


def encode_backend(backend: Backend) -> MetricsBackend:
    return {
        "backend": backend.kind,
        "namespace": backend.namespace,
        "service": backend.service,
        "port": backend.port,
        "proxyPath": backend.proxy_path,
    }


def encode_backends(candidates: list[Backend]) -> BackendFound:
    """The preferred backend (the first candidate) and every candidate found."""
    return {
        "found": bool(candidates),
        "chosen": encode_backend(candidates[0]) if candidates else None,
        "candidates": [encode_backend(c) for c in candidates],
    }


def encode_graph(drawn: Graph, key: SeriesKey, minutes: int) -> GraphBody:
    """The graph of ``key`` (cluster, target, namespace, name) over the last ``minutes``."""
    _, target, namespace, name = key
    return {
        "target": target,
        "namespace": namespace,
        "name": name,
        "minutes": minutes,
        "source": drawn.source,
        "backend": encode_backend(drawn.backend) if drawn.backend is not None else None,
        "warning": drawn.warning,
        "intervalSeconds": drawn.interval,
        "series": [_series("cpu", "cores", drawn.cpu), _series("memory", "bytes", drawn.memory)],
    }


def _series(metric: str, unit: str, points: Points) -> Series:
    return {"metric": metric, "unit": unit, "points": [list(p) for p in points]}
