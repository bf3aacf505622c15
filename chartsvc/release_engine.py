"""The helm_python side of releases: install, upgrade, uninstall, rollback, test, computed values.

Every call runs in a worker thread of the engine's own pool (helm_python blocks; ctypes lets the
threads overlap). One
``helm_python.Config`` per cluster and namespace, since Helm binds its release storage to a
namespace; a Config keeps its Kubernetes client and discovery warm, so configs are pooled, and one
is closed only once it is evicted *and* no thread still uses it. Release records are read elsewhere
(``chartsvc.release_reads``, from Helm's own Secrets); charts arrive as bytes already fetched and
checked. This module knows nothing of HTTP and does not serialise writes: the caller does.

Helm reports a cluster's refusal as text, so its status is recovered from the Kubernetes message
shapes (``... is forbidden``, ``... is invalid``, ``connection refused``): see ``release_errors``.

The discovery cache: helm-c's Go runtime reads the environment the process *started* with, so
``KUBECACHEDIR`` set from Python after start-up never reaches it; it can only be set by whoever
starts the process (otherwise Helm uses ``$HOME/.kube/cache``, as kubectl does).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import attrs
import helm_python as helm

from chartsvc import release_writes
from chartsvc.clusters import ClusterTarget
from chartsvc.engine import ChartCache
from chartsvc.handles import HandlePool
from chartsvc.release_errors import translate

T = TypeVar("T")

#: Helm's own default for hooks and waits (``--timeout 5m0s``).
DEFAULT_TIMEOUT_S = 300


@attrs.frozen
class Installed:
    """What Helm answered to a write: its release summary and the chart it installed."""

    summary: dict[str, Any]
    chart: dict[str, Any]


@attrs.frozen
class TestRun:
    """A ``helm test`` run: the pods' logs as Helm prints them, and Helm's error when one failed."""

    logs: str
    error: str | None


class ConfigPool:
    """``helm_python.Config`` handles by (cluster, namespace), least recently used out first."""

    def __init__(self, max_configs: int = 64) -> None:
        self._pool: HandlePool[tuple[str, str], helm.Config] = HandlePool(max_count=max_configs)

    @contextmanager
    def use(self, target: ClusterTarget, namespace: str) -> Iterator[helm.Config]:
        key = (target.key, namespace)
        with self._pool.use(key, lambda: _new_config(target, namespace)) as config:
            yield config

    def close(self) -> None:
        self._pool.close()


#: Client-side rate limit of one Config's Kubernetes client. client-go's default (5 per second,
#: bursts of 10) is meant for one CLI run; a service config serves concurrent installs of many
#: releases, which would queue behind it. The API server's own priority and fairness still applies.
QPS = 200.0
BURST = 400


def _new_config(target: ClusterTarget, namespace: str) -> helm.Config:
    # No kubeconfig: helm_python falls back to the in-cluster service account, as kubectl does.
    return helm.Config(
        kubeconfig_content=target.kubeconfig,
        kube_context=target.context,
        namespace=namespace,
        qps=QPS,
        burst_limit=BURST,
    )


#: Helm calls in flight at once. They mostly wait on the cluster (ctypes releases the GIL), so the
#: default executor's few threads (cores + 4) would make concurrent installs of different releases
#: queue behind each other for no reason.
MAX_CALLS = 64


@attrs.define
class HelmEngine:
    charts: ChartCache
    configs: ConfigPool = attrs.field(factory=ConfigPool)
    executor: ThreadPoolExecutor = attrs.field(
        factory=lambda: ThreadPoolExecutor(MAX_CALLS, thread_name_prefix="helm")
    )

    async def _run(
        self,
        target: ClusterTarget,
        namespace: str,
        name: str,
        call: Callable[[helm.Config], T],
    ) -> T:
        def work() -> T:
            try:
                with self.configs.use(target, namespace) as config:
                    return call(config)
            except helm.HelmError as exc:
                raise translate(exc, cluster=target.name, namespace=namespace, name=name) from exc

        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.executor, contextvars.copy_context().run, work)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            # A thread cannot be stopped, so Helm goes on; the caller (and its hold on the
            # release's lock) waits for it, or the next write to the release would overlap.
            await asyncio.wait([future])
            raise

    async def install(
        self,
        target: ClusterTarget,
        namespace: str,
        name: str,
        archive: bytes,
        *,
        values: dict[str, Any],
        dry_run: bool,
    ) -> Installed:
        def call(config: helm.Config) -> Installed:
            with self.charts.use(archive) as chart:
                summary = release_writes.write(
                    "install",
                    config,
                    chart,
                    name,
                    values,
                    namespace=namespace,
                    dry_run=_dry(dry_run),
                )
                return Installed(summary, chart.metadata)

        return await self._run(target, namespace, name, call)

    async def upgrade(
        self,
        target: ClusterTarget,
        namespace: str,
        name: str,
        archive: bytes,
        *,
        values: dict[str, Any] | None,
        dry_run: bool,
    ) -> Installed:
        """``helm upgrade``; with no values Helm reuses the release's (its CLI default)."""

        def call(config: helm.Config) -> Installed:
            with self.charts.use(archive) as chart:
                summary = release_writes.write(
                    "upgrade",
                    config,
                    chart,
                    name,
                    values or None,
                    namespace=namespace,
                    dry_run=_dry(dry_run),
                )
                return Installed(summary, chart.metadata)

        return await self._run(target, namespace, name, call)

    async def uninstall(self, target: ClusterTarget, namespace: str, name: str) -> str:
        """``helm uninstall``; returns Helm's info text (resources it kept, if any)."""
        result = await self._run(target, namespace, name, lambda c: c.uninstall(name))
        return str(result.get("info") or "")

    async def rollback(
        self, target: ClusterTarget, namespace: str, name: str, revision: int | None
    ) -> None:
        """``helm rollback``; ``revision`` None (or 0) is the previous one, as in Helm."""
        await self._run(target, namespace, name, lambda c: c.rollback(name, version=revision))

    async def test(
        self, target: ClusterTarget, namespace: str, name: str, *, timeout: int
    ) -> TestRun:
        """``helm test --logs``; a failing or timed-out test is a result, not an error."""

        def call(config: helm.Config) -> TestRun:
            try:
                result = config.test(name, timeout=timeout, logs=True)
            except (helm.HelmReleaseError, helm.HelmCancelledError) as exc:
                return TestRun(logs="", error=str(exc)[:2000])
            return TestRun(logs=str(result.get("logs") or ""), error=None)

        return await self._run(target, namespace, name, call)

    async def computed_values(
        self, target: ClusterTarget, namespace: str, name: str
    ) -> dict[str, Any]:
        """``helm get values --all``: the chart's defaults coalesced with the user's values."""
        return await self._run(
            target, namespace, name, lambda c: c.get_values(name, all_values=True)
        )

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.configs.close()


def _dry(dry_run: bool) -> str | None:
    # "server": rendered and sent to the API server with dryRun=All; nothing is stored or changed.
    return "server" if dry_run else None
