"""chartsvc's own series in the service's Prometheus registry (``common.metrics``): how long each
Helm operation takes and whether it failed, and repository index refreshes, sizes and memory.

Only numbers and configured repository names: never URLs (they may carry credentials) or values.
"""

from __future__ import annotations

from chartsvc.helm import Observer
from chartsvc.repos.service import RepoService
from common.metrics import Metrics

#: Seconds; Helm calls run from milliseconds (render) to minutes (install --wait).
HELM_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


def helm_observer(metrics: Metrics, name: str = "chartsvc_helm_operation_seconds") -> Observer:
    """Helm call times into ``name`` (the console, which runs the same engine, names its own)."""
    seconds = metrics.histogram(
        name,
        "Time Helm operations took, by operation and outcome (success, failure).",
        ("operation", "outcome"),
        buckets=HELM_BUCKETS,
    )

    def observe(operation: str, elapsed: float, succeeded: bool) -> None:
        seconds.labels(operation, "success" if succeeded else "failure").observe(elapsed)

    return observe


def watch_repositories(metrics: Metrics, repos: RepoService) -> None:
    refreshes = metrics.counter(
        "chartsvc_repository_refreshes",
        "Repository index downloads, by outcome (updated, not-modified, failed).",
        ("outcome",),
    )
    for outcome in ("updated", "not-modified", "failed"):
        refreshes.labels(outcome)  # every outcome present from the start, at 0
    repos.on_refresh = lambda outcome: refreshes.labels(outcome).inc()
    metrics.gauge(
        "chartsvc_repository_indexes_cached",
        "Repository indexes held in memory.",
        lambda: repos.index_memory()[0],
    )
    metrics.gauge(
        "chartsvc_repository_index_memory_bytes",
        "Bytes of repository indexes held in memory.",
        lambda: repos.index_memory()[1],
    )
    metrics.gauge_by(
        "chartsvc_repository_index_chart_versions",
        "Chart versions in each repository's index at its last refresh.",
        "repository",
        lambda: [(r.name, r.versions) for r in repos.last_updates() if r.error is None],
    )
