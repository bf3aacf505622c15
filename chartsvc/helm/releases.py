"""Helm's release actions: install, upgrade, uninstall, rollback, test, computed values.

One ``helm_python.Config`` per cluster and namespace, since Helm binds its release storage to a
namespace; a Config keeps its Kubernetes client and discovery warm, so configs are pooled, and one
is closed only once it is evicted *and* no thread still uses it. The release, with its cluster, is
a parameter of every call (a :class:`~chartsvc.clusters.ReleaseRef`: a
:class:`~chartsvc.clusters.ClusterTarget`, namespace and name), never a setting. Release
records are read elsewhere (``chartsvc.releases.reads``, from Helm's own Secrets); charts arrive as
bytes already fetched and checked. This module knows nothing of HTTP and does not serialise writes:
the caller does.

The discovery cache: helm-c's Go runtime reads the environment the process *started* with, so
``KUBECACHEDIR`` set from Python after start-up never reaches it; it can only be set by whoever
starts the process (otherwise Helm uses ``$HOME/.kube/cache``, as kubectl does).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import attrs
import helm_python as helm

from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.helm import writes
from chartsvc.helm.charts import ChartCache
from chartsvc.helm.errors import RenderFailed, RenderTimedOut, RenderTooLarge, without_paths
from chartsvc.helm.handles import HandlePool
from chartsvc.helm.runner import HelmRunner
from chartsvc.helm.sandbox import RenderPool
from chartsvc.helm.writes import WriteOptions
from common import private

T = TypeVar("T")

#: Helm's own default for hooks and waits (``--timeout 5m0s``).
DEFAULT_TIMEOUT_S = 300

#: Client-side rate limit of one Config's Kubernetes client. client-go's default (5 per second,
#: bursts of 10) is meant for one CLI run; a service config serves concurrent installs of many
#: releases, which would queue behind it. The API server's own priority and fairness still applies.
QPS = 200.0
BURST = 400


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
    """``helm_python.Config`` handles by (cluster, namespace), least recently used out first.

    Each Config reads its kubeconfig from a file of ours under ``credentials_dir`` (0600 in a 0700
    folder), removed when the Config is closed; helm_python's own ``kubeconfig_content`` would put
    it in the system temp folder, where a killed process leaves it. The kubeconfig keeps an
    ``exec`` plugin or a ``tokenFile`` as it is: Helm's Kubernetes client (client-go) runs the
    plugin itself and renews the token before it expires and after a 401, and re-reads the token
    file, so an install that outlives a token keeps going.
    """

    def __init__(self, credentials_dir: Path, max_configs: int = 64) -> None:
        self.credentials_dir = credentials_dir
        self._pool: HandlePool[tuple[str, str], _Configured] = HandlePool(max_count=max_configs)

    @contextmanager
    def use(self, target: ClusterTarget, namespace: str) -> Iterator[helm.Config]:
        with self.held(target, namespace) as configured:
            yield configured.config

    @contextmanager
    def held(self, target: ClusterTarget, namespace: str) -> Iterator[_Configured]:
        """The Config with its kubeconfig file, which stays while it is held."""
        key = (target.key, namespace)
        make = lambda: _Configured.open(target, namespace, self.credentials_dir)  # noqa: E731
        with self._pool.use(key, make) as configured:
            yield configured

    def close(self) -> None:
        self._pool.close()


@attrs.define
class _Configured:
    """A Helm Config and the private folder of the kubeconfig file it reads."""

    config: helm.Config
    folder: Path | None
    context: str | None = None

    @property
    def cluster(self) -> dict[str, str | None]:
        """The cluster as a render worker reaches it (``RenderPool.render``'s ``cluster``): this
        kubeconfig file (None: the in-cluster account) and context."""
        path = None if self.folder is None else str(self.folder / "kubeconfig")
        return {"kubeconfig": path, "context": self.context}

    @classmethod
    def open(cls, target: ClusterTarget, namespace: str, credentials_dir: Path) -> _Configured:
        folder = path = None
        if target.kubeconfig is not None:
            folder = private.private_temp_dir(credentials_dir, "helm-")
            path = folder / "kubeconfig"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(target.kubeconfig)
        try:
            # No kubeconfig: helm_python falls back to the in-cluster service account, as
            # kubectl does.
            config = helm.Config(
                kubeconfig_path=path,
                kube_context=target.context,
                namespace=namespace,
                qps=QPS,
                burst_limit=BURST,
            )
        except BaseException:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        return cls(config, folder, target.context)

    def close(self) -> None:
        try:
            self.config.close()
        finally:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)


class ReleaseEngine:
    """Release actions on the runner's pool; charts are loaded through ``cache``, and rendered in
    ``renders`` (within the render limits) before Helm's own install or upgrade renders them."""

    def __init__(
        self, runner: HelmRunner, cache: ChartCache, renders: RenderPool, configs: ConfigPool
    ) -> None:
        self.runner = runner
        self.cache = cache
        self.renders = renders
        self.configs = configs

    async def run(
        self, release: ReleaseRef, call: Callable[[helm.Config], T], *, operation: str
    ) -> T:
        """``call`` with the Config of ``release``'s cluster and namespace."""

        def work() -> T:
            with self.configs.use(release.target, release.namespace) as config:
                return call(config)

        return await self.runner.run(work, operation=operation, release=release)

    async def write(
        self,
        action: writes.Action,
        release: ReleaseRef,
        archive: bytes,
        *,
        values: dict[str, Any] | None,
        options: WriteOptions,
        render_values: dict[str, Any] | None = None,
    ) -> Installed:
        """``helm install`` or ``helm upgrade``; an upgrade with no values reuses the release's
        (Helm's CLI default).

        Helm's render inside the action cannot be stopped, so the chart is first rendered within
        the render limits, as Helm will render it: with the cluster (``lookup`` reads live
        objects) and ``render_values``, the user values Helm will use (default ``values``; an
        upgrade that reuses the release's passes them merged). A template bomb is refused
        before Helm runs it."""
        name, namespace = release.name, release.namespace
        bounded = {"namespace": namespace, f"is_{action}": True}
        rendered = render_values if render_values is not None else values or {}

        def work() -> Installed:
            with self.configs.held(release.target, namespace) as configured:
                try:
                    self.renders.render(
                        archive, rendered, name=name, options=bounded, cluster=configured.cluster
                    )
                except (RenderTimedOut, RenderTooLarge):
                    raise
                except RenderFailed:
                    # Helm's own render fails the same way, and says why in the release's
                    # context: a lookup the cluster refused stays 403, one it never answered 502
                    pass
                with self.cache.use(archive) as chart:
                    summary = writes.write(
                        action,
                        configured.config,
                        chart,
                        name,
                        values,
                        namespace=namespace,
                        options=options,
                    )
                    return Installed(summary, chart.metadata)

        return await self.runner.run(work, operation=action, release=release)

    async def coalesced_values(self, archive: bytes, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` coalesced over the chart's defaults, as Helm computes a release's values."""

        def call() -> dict[str, Any]:
            with self.cache.use(archive) as chart:
                return chart.merge_values(values)

        return await self.runner.run(call, operation="coalesced-values")

    async def uninstall(self, release: ReleaseRef) -> str:
        """``helm uninstall``; returns Helm's info text (resources it kept, if any)."""
        result = await self.run(release, lambda c: c.uninstall(release.name), operation="uninstall")
        return str(result.get("info") or "")

    async def rollback(
        self, release: ReleaseRef, revision: int | None, *, dry_run: bool = False
    ) -> None:
        """``helm rollback``; ``revision`` None (or 0) is the previous one, as in Helm.
        ``dry_run``: Helm's server-side dry run (``--dry-run=server``), nothing is stored."""
        mode = "server" if dry_run else None
        await self.run(
            release,
            lambda c: c.rollback(release.name, version=revision, dry_run=mode),
            operation="rollback",
        )

    async def test(self, release: ReleaseRef, *, timeout: int) -> TestRun:
        """``helm test --logs``; a failing or timed-out test is a result, not an error."""

        def call(config: helm.Config) -> TestRun:
            try:
                result = config.test(release.name, timeout=timeout, logs=True)
            except (helm.HelmReleaseError, helm.HelmCancelledError) as exc:
                return TestRun(logs="", error=without_paths(str(exc))[:2000])
            return TestRun(logs=str(result.get("logs") or ""), error=None)

        return await self.run(release, call, operation="test")

    async def computed_values(self, release: ReleaseRef) -> dict[str, Any]:
        """``helm get values --all``: the chart's defaults coalesced with the user's values."""
        return await self.run(
            release,
            lambda c: c.get_values(release.name, all_values=True),
            operation="get-values",
        )

    def close(self) -> None:
        self.configs.close()
