"""The Helm adapter: the only package that imports ``helm_python``.

:class:`Helm` is the adapter as one object: one pool of worker threads (``runner``), the loaded-chart
cache, the render worker processes (``sandbox``: every render within its time and size limits),
chart actions (``charts``: render, show, create, package) and release actions (``releases``:
install, upgrade, uninstall, rollback, test, computed values, each on a release given as a
:class:`~chartsvc.clusters.ReleaseRef`: its cluster, namespace and name). Helm's failures leave it as our errors
(``chartsvc.helm.errors``), never as helm_python's. Nothing here reads settings, fetches charts or
knows HTTP; whoever opens a :class:`Helm` closes it.
"""

from __future__ import annotations

from pathlib import Path

from chartsvc.helm.charts import MAX_CREATE_NAME, ChartCache, ChartEngine, ShowFormat
from chartsvc.helm.errors import (
    ChartInvalid,
    ClusterUnreachable,
    HelmFailed,
    NamespaceNotFound,
    ProvenanceFailed,
    ReleaseExists,
    ReleaseFailed,
    ReleaseNotFound,
    RenderFailed,
    RenderTimedOut,
    RenderTooLarge,
    RevisionNotFound,
)
from chartsvc.helm.releases import (
    DEFAULT_TIMEOUT_S,
    ConfigPool,
    Installed,
    ReleaseEngine,
    TestRun,
)
from chartsvc.helm.runner import MAX_CALLS, HelmRunner, Observer
from chartsvc.helm.sandbox import RenderLimits, RenderPool
from chartsvc.helm.writes import WriteOptions

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MAX_CALLS",
    "MAX_CREATE_NAME",
    "ChartCache",
    "ChartEngine",
    "ChartInvalid",
    "ClusterUnreachable",
    "Helm",
    "HelmFailed",
    "HelmRunner",
    "Installed",
    "NamespaceNotFound",
    "Observer",
    "ProvenanceFailed",
    "ReleaseEngine",
    "ReleaseExists",
    "ReleaseFailed",
    "ReleaseNotFound",
    "RenderFailed",
    "RenderLimits",
    "RenderPool",
    "RenderTimedOut",
    "RenderTooLarge",
    "RevisionNotFound",
    "ShowFormat",
    "TestRun",
    "WriteOptions",
]


class Helm:
    """The adapter: one runner, one chart cache, the chart and release engines over them."""

    def __init__(
        self,
        *,
        temp_dir: Path | None = None,
        credentials_dir: Path,
        max_calls: int = MAX_CALLS,
        observer: Observer | None = None,
        render_limits: RenderLimits | None = None,
    ) -> None:
        self.runner = HelmRunner(max_calls, observer=observer)
        self.cache = ChartCache()
        self.renders = RenderPool(render_limits or RenderLimits())
        self.charts = ChartEngine(self.runner, self.cache, self.renders, temp_dir)
        self.releases = ReleaseEngine(
            self.runner, self.cache, self.renders, ConfigPool(credentials_dir)
        )
        #: Where cluster clients of the release reads write certificates while loading them.
        self.credentials_dir = credentials_dir

    def close(self) -> None:
        """Wait for the calls in flight, then close every Helm handle and render worker
        (blocking)."""
        self.runner.close()
        self.renders.close()
        self.releases.close()
        self.cache.close()
