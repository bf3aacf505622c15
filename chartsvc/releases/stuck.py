"""Releases a stopped writer left pending, on every cluster a service knows, for its health details.

A Helm write killed mid-way (kill -9) leaves its release ``pending-install``, ``-upgrade`` or
``-rollback`` until someone rolls it back or uninstalls it. Finding those means reading every
release record of a cluster, too much for each health probe: a background task reads each known
cluster every ``STUCK_CHECK_S`` seconds (at most ``CONCURRENCY`` at once, each within
``CHECK_TIMEOUT_S``, at most ``MAX_CLUSTERS`` clusters), and a probe only reads what it found. The
task starts with the first report, which waits for the first round at most ``FIRST_WAIT_S``: a
service nobody probes reads nothing. Which clusters are known is the caller's business (a
callable); a cluster that cannot be read says why, and never makes the service unready. This
module knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from chartsvc.clusters import ClusterTarget
from chartsvc.helm.errors import RECOVERY
from chartsvc.releases.model import Release
from chartsvc.releases.service import ReleaseService
from common.errors import WharfError

logger = logging.getLogger(__name__)

STUCK_CHECK_S = 30.0
CHECK_TIMEOUT_S = 10.0
CONCURRENCY = 4
MAX_CLUSTERS = 32
FIRST_WAIT_S = 1.0


@attrs.frozen
class ClusterCheck:
    """One cluster's last reading: its stuck releases, or why it could not be read."""

    cluster: str
    stuck: tuple[Release, ...] = ()
    reason: str | None = None


@attrs.define
class StuckReleases:
    """``clusters()`` names the clusters to read each round; :meth:`close` stops the task."""

    releases: ReleaseService
    clusters: Callable[[], Iterable[ClusterTarget]]
    interval: float = STUCK_CHECK_S
    _checks: dict[str, ClusterCheck] = attrs.field(factory=dict, init=False)
    _task: asyncio.Task[None] | None = attrs.field(default=None, init=False)
    _first: asyncio.Event = attrs.field(factory=asyncio.Event, init=False)

    async def report(self) -> dict[str, Any]:
        """The health details: every stuck release by cluster, each cluster's state, and the
        recovery when something is stuck."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="chartsvc-stuck-releases")
        if not self._first.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FIRST_WAIT_S):
                    await self._first.wait()
        return self._details()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def refresh(self) -> None:
        """Read every known cluster once."""
        slots = asyncio.Semaphore(CONCURRENCY)

        async def one(target: ClusterTarget) -> ClusterCheck:
            async with slots:
                return await self._check(target)

        found = await asyncio.gather(*(one(t) for t in self._known()))
        self._checks = {check.cluster: check for check in found}

    async def _run(self) -> None:
        while True:
            await self.refresh()
            self._first.set()
            await asyncio.sleep(self.interval)

    async def _check(self, target: ClusterTarget) -> ClusterCheck:
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_S):
                stuck = await self.releases.stuck(target)
        except TimeoutError:
            return ClusterCheck(target.name, reason="timeout")
        except WharfError as exc:
            return ClusterCheck(target.name, reason=exc.code or "error")
        except Exception:  # the task must outlive one cluster's surprise; the log says what
            logger.exception("reading the releases of cluster %r failed", target.name)
            return ClusterCheck(target.name, reason="error")
        return ClusterCheck(target.name, tuple(stuck))

    def _known(self) -> list[ClusterTarget]:
        """The clusters to read, one target per cluster name, the first ``MAX_CLUSTERS``."""
        by_name: dict[str, ClusterTarget] = {}
        for target in self.clusters():
            by_name.setdefault(target.name, target)
            if len(by_name) >= MAX_CLUSTERS:
                break
        return list(by_name.values())

    def _details(self) -> dict[str, Any]:
        clusters: dict[str, dict[str, Any]] = {}
        stuck: list[dict[str, str]] = []
        for target in self._known():
            check = self._checks.get(target.name)
            if check is None:
                clusters[target.name] = {"checked": False, "reason": "checking"}
            elif check.reason is not None:
                clusters[target.name] = {"checked": False, "reason": check.reason}
            else:
                clusters[target.name] = {"checked": True}
                stuck += [
                    {
                        "cluster": target.name,
                        "namespace": r.namespace,
                        "name": r.name,
                        "status": r.status,
                    }
                    for r in check.stuck
                ]
        return {"stuck": stuck, "clusters": clusters, **({"recovery": RECOVERY} if stuck else {})}
