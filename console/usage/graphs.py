"""Graphs of a cluster, node, namespace or pod: from the detected Prometheus, else the sampler.

With a metrics backend detected (``prometheus``), a graph is two range queries through the API
server's service proxy, over the cAdvisor series every Prometheus of a Kubernetes cluster scrapes:
``container_cpu_usage_seconds_total`` (as a 5-minute rate) and
``container_memory_working_set_bytes``; a node and the cluster are the root cgroups (``id="/"``),
a namespace and a pod the sum of their containers (``container!=""``). Without a backend, or when
it fails (said in ``warning``), the graph comes from the console's own sampler. Nothing to show is
an empty graph (``source`` ``none``), never an error.

Who sees what: the backend's queries go through the API server as the person (the cluster decides
whether they may reach the backend's service proxy). The sampler's history is the console's own,
shared by everyone, so before a person is shown any of it the cluster is asked (a
SubjectAccessReview, as for shared watches: ``console.resources.access``) whether they may list
the metrics it was sampled from: ``pods.metrics.k8s.io`` in the namespace for a namespace or pod
graph, ``nodes.metrics.k8s.io`` for a node or the cluster. A refusal is the cluster's 403
(``cluster-refused``), as a live reading of the same metrics would be. Which backend a cluster has
is detected with the console's own identity, so one person's rights never decide it for another.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

import attrs

from common.errors import WharfError
from console.resources.access import AccessReviews
from console.resources.kubeapi import KubeApi
from console.usage import prometheus
from console.usage.sampler import Sampler, SeriesKey

logger = logging.getLogger(__name__)

#: Most points a graph asks of the backend; the step grows with the span, never below 15 s.
MAX_POINTS = 240
MIN_STEP_S = 15.0
CPU = "container_cpu_usage_seconds_total"
MEMORY = "container_memory_working_set_bytes"

Points = list[tuple[float, float]]


@attrs.frozen
class Graph:
    source: str  # prometheus, sampler or none
    interval: float  # seconds between points
    cpu: Points  # cores
    memory: Points  # bytes
    backend: prometheus.Backend | None = None
    warning: str | None = None


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def queries(key: SeriesKey) -> tuple[str, str]:
    """The PromQL of the CPU (cores) and memory (bytes) series of ``key``."""
    _, kind, namespace, name = key
    if kind in ("cluster", "node"):
        matchers = ['id="/"'] + ([f"node={_quoted(name or '')}"] if kind == "node" else [])
    else:
        matchers = [f"namespace={_quoted(namespace or '')}", 'container!=""']
        if kind == "pod":
            matchers.insert(1, f"pod={_quoted(name or '')}")
    labels = "{" + ",".join(matchers) + "}"
    return f"sum(rate({CPU}{labels}[5m]))", f"sum({MEMORY}{labels})"


async def from_backend(
    api: KubeApi, backend: prometheus.Backend, key: SeriesKey, minutes: int, now: float
) -> Graph:
    span = minutes * 60.0
    step = max(MIN_STEP_S, math.ceil(span / MAX_POINTS))
    start = now - span
    cpu_query, memory_query = queries(key)
    cpu, memory = await asyncio.gather(
        prometheus.query_range(api, backend, cpu_query, start=start, end=now, step=step),
        prometheus.query_range(api, backend, memory_query, start=start, end=now, step=step),
    )
    source = "prometheus" if cpu or memory else "none"
    return Graph(source, step, cpu, memory, backend)


async def graph(
    api: KubeApi,
    key: SeriesKey,
    minutes: int,
    *,
    sampler: Sampler,
    detections: prometheus.Detections,
    reviews: AccessReviews,
) -> Graph:
    cluster = key[0]
    backends = await detections.detect(cluster, api)
    warning = None
    if backends:
        try:
            return await from_backend(api, backends[0], key, minutes, time.time())
        except WharfError as exc:
            warning = f"{backends[0].kind} {backends[0].service} failed: {exc.detail}"[:300]
            logger.info("graph of cluster %r from the sampler: %s", cluster, warning)
    await may_see_history(api, key, reviews)
    await sampler.watch(cluster)
    points = sampler.points(key, minutes)
    return Graph(
        "sampler" if points else "none",
        sampler.interval,
        [(t, round(c, 6)) for t, c, _ in points],
        [(t, float(m)) for t, _, m in points],
        warning=warning,
    )


async def may_see_history(api: KubeApi, key: SeriesKey, reviews: AccessReviews) -> None:
    """Raise the cluster's 403 unless the person ``api`` acts for may list the metrics the
    sampler's series ``key`` is made of (nothing to ask when it acts as the console)."""
    if api.acting_as is None:
        return
    _, kind, namespace, _ = key
    resource, where = ("pods", namespace) if kind in ("namespace", "pod") else ("nodes", None)
    await reviews.require(
        api, api.acting_as, ("list",), group="metrics.k8s.io", resource=resource, namespace=where
    )
