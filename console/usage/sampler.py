"""The console's own time series: a bounded in-memory sampler of ``metrics.k8s.io``.

Clusters are sampled only while someone looks at their graphs: a graph request marks its cluster
as watched for ``history`` seconds, and the background task samples watched clusters every
``interval`` seconds (a first request samples at once, so it never answers with nothing). Each
sample records the cluster total, every node, every namespace and every pod; each series keeps
the last ``history`` seconds, and at most ``max_series`` series are kept (the least recently
updated go first). Memory is therefore bounded whatever the clusters hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs

from common import tasks
from console.resources.kubeapi import KubeApi
from console.usage import readings

logger = logging.getLogger(__name__)

#: (cluster, target, namespace, name) - target one of cluster, node, namespace, pod.
SeriesKey = tuple[str, str, str | None, str | None]
#: (unix time, cpu cores, memory bytes)
Point = tuple[float, float, int]
ApiFor = Callable[[str], Awaitable[KubeApi]]


@attrs.define
class Sampler:
    api_for: ApiFor
    interval: float = 30.0
    history: float = 3600.0
    max_series: int = 5000
    _series: OrderedDict[SeriesKey, deque[Point]] = attrs.field(factory=OrderedDict)
    _watched: dict[str, float] = attrs.field(factory=dict)
    _locks: dict[str, asyncio.Lock] = attrs.field(factory=dict)

    def points(self, key: SeriesKey, minutes: int) -> list[Point]:
        since = time.time() - minutes * 60
        return [p for p in self._series.get(key, ()) if p[0] >= since]

    async def watch(self, cluster: str) -> None:
        """Mark ``cluster`` watched; sample it now if it has never been sampled."""
        first = cluster not in self._watched
        self._watched[cluster] = time.monotonic()
        if first:
            await self.sample(cluster)

    def forget(self, cluster: str) -> None:
        self._watched.pop(cluster, None)
        for key in [k for k in self._series if k[0] == cluster]:
            del self._series[key]

    async def sample(self, cluster: str) -> None:
        lock = self._locks.setdefault(cluster, asyncio.Lock())
        async with lock:
            api = await self.api_for(cluster)
            nodes, pods = await asyncio.gather(readings.nodes(api), readings.pods(api, None))
        now = time.time()
        if nodes:
            self._add((cluster, "cluster", None, None), now, nodes)
        for node in nodes:
            self._add((cluster, "node", None, node.name), now, [node])
        by_namespace: dict[str, list[readings.Usage]] = {}
        for pod in pods:
            by_namespace.setdefault(pod.namespace or "", []).append(pod)
            self._add((cluster, "pod", pod.namespace, pod.name), now, [pod])
        for namespace, members in by_namespace.items():
            self._add((cluster, "namespace", namespace, None), now, members)

    def _add(self, key: SeriesKey, now: float, usages: list[readings.Usage]) -> None:
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = deque()
        self._series.move_to_end(key)
        series.append((now, sum(u.cpu for u in usages), sum(u.memory for u in usages)))
        while series and series[0][0] < now - self.history:
            series.popleft()
        while len(self._series) > self.max_series:
            self._series.popitem(last=False)

    async def run(self) -> None:
        """Sample every watched cluster each ``interval``; stop watching idle ones."""
        while True:
            await asyncio.sleep(self.interval)
            now = time.monotonic()
            for cluster, seen in list(self._watched.items()):
                if now - seen > self.history:
                    self._watched.pop(cluster, None)
                    continue
                try:
                    await self.sample(cluster)
                except Exception as exc:  # a cluster that went away: its graph just stops
                    logger.info("no metrics sample of cluster %r: %s", cluster, type(exc).__name__)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Sampler]:
        task = asyncio.create_task(self.run())
        try:
            yield self
        finally:
            await tasks.cancel(task)
