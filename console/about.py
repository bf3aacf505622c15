"""What ``GET /about`` finds out before it answers: the clusters' probes and the build's time.

Whether a cluster is the Wharf simulator comes from the cluster's probe
(``console.clusters.connect``), made here at most once per cluster and bounded in time, so a dead
cluster cannot hold ``/about`` up. The answer itself is encoded by ``console.http.encode.instance``.
"""

from __future__ import annotations

import asyncio
import functools
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from console.clusters import ClusterRegistry

#: Seconds ``/about`` waits for clusters that were never probed before answering without them.
PROBE_BUDGET_S = 2.0


async def probe_clusters(registry: ClusterRegistry) -> None:
    pending = [c.id for c in registry.list() if registry.probe_result(c.id) is None]
    if not pending:
        return
    probes = [registry.probe(cid, timeout=PROBE_BUDGET_S) for cid in pending]
    try:
        async with asyncio.timeout(PROBE_BUDGET_S + 0.5):
            await asyncio.gather(*probes)
    except TimeoutError:
        return


@functools.cache
def build_time() -> str | None:
    """When this build was installed: the time its package metadata was written."""
    try:
        dist = metadata.distribution("wharf")
    except metadata.PackageNotFoundError:
        return None
    meta_dir = getattr(dist, "_path", None)  # PathDistribution keeps its metadata directory here
    if meta_dir is None:
        return None
    for name in ("METADATA", "PKG-INFO"):
        try:
            stamp = Path(meta_dir, name).stat().st_mtime
        except OSError:
            continue
        return (
            datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        )
    return None
