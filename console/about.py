"""What ``GET /about`` says about this instance: versions, store, security, AI, pod files, simulator.

It reports only whether a secret is set, never the secret; in open mode a caller who has not signed
in is not shown the admin username, the store's path or the pod browser's allowed roots, and
``withheld`` names what was left out. Whether a cluster is the Wharf simulator comes from the
cluster's probe (``console.clusters.connect``), made here at most once per cluster and bounded in
time, so a dead cluster cannot hold ``/about`` up.
"""

from __future__ import annotations

import asyncio
import functools
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from common.app import wharf_version
from console.clusters import ClusterRegistry
from console.settings import ConsoleSettings

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


def describe(
    settings: ConsoleSettings, registry: ClusterRegistry, *, authenticated: bool, withhold: bool
) -> dict[str, Any]:
    security: dict[str, Any] = {
        "mode": "open" if settings.security.open_mode else "closed",
        "openMode": settings.security.open_mode,
        "authenticated": authenticated,
        "adminPasswordSet": bool(settings.security.admin.password),
        "sessionTimeoutMinutes": settings.security.session_timeout_minutes,
    }
    files: dict[str, Any] = {
        "enabled": settings.files.enabled,
        "writable": settings.files.enabled and settings.files.writable,
        "maxReadBytes": settings.files.max_read_bytes,
        "maxWriteBytes": settings.files.max_write_bytes,
    }
    if not withhold:
        security["adminUsername"] = settings.security.admin.username
        files["allowedRoots"] = list(settings.files.allowed_roots)
    withheld = ["security.adminUsername", "clusterStore.location", "files.allowedRoots"]
    return {
        "version": wharf_version(),
        "buildTime": build_time(),
        "clusterCount": len(registry.list()),
        "clusterStore": store_info(registry, withhold=withhold),
        "security": security,
        "ai": _ai(settings),
        "files": files,
        "simulator": _simulator(registry),
        "withheld": withheld if withhold else [],
    }


def _ai(settings: ConsoleSettings) -> dict[str, Any]:
    return {
        "enabled": settings.ai_enabled,
        "provider": settings.ai.provider,
        "model": settings.ai.model,
        "apiKeySet": bool(settings.ai.api_key),
    }


def _simulator(registry: ClusterRegistry) -> dict[str, Any]:
    clusters = []
    for cluster in registry.list():
        probe = registry.probe_result(cluster.id)
        clusters.append(
            {
                "id": cluster.id,
                "simulator": probe.simulator if probe else None,
                "serverVersion": probe.git_version if probe else None,
                "differences": list(probe.differences) if probe else [],
            }
        )
    return {"detected": any(c["simulator"] for c in clusters), "clusters": clusters}


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


def store_info(registry: ClusterRegistry, *, withhold: bool) -> dict[str, Any]:
    """Where runtime clusters are kept and whether that survives a restart."""
    store = registry.store
    info: dict[str, Any] = {"backend": store.backend, "persistent": store.persistent}
    if not withhold:
        info["location"] = store.location
    return info
