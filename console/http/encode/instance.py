"""The instance (``spec/console.yaml``): ``/about``, the store, the audit trail, the session.

``/about`` reports only whether a secret is set, never the secret; in open mode a caller who has
not signed in is not shown the admin username, the store's path or the pod browser's allowed
roots, and ``withheld`` names what was left out.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from common.app import wharf_version
from console.about import build_time
from console.audit import AuditEntry
from console.auth import Principal
from console.clusters import ClusterRegistry
from console.http.encode import utc_stamp
from console.settings import ConsoleSettings

#: What ``/about`` leaves out for an anonymous caller in open mode.
WITHHELD = ["security.adminUsername", "clusterStore.location", "files.allowedRoots"]


class StoreInfo(TypedDict):
    backend: str
    persistent: bool
    location: NotRequired[str | None]


class SecurityInfo(TypedDict):
    mode: str
    openMode: bool
    authenticated: bool
    adminPasswordSet: bool
    sessionTimeoutMinutes: int
    adminUsername: NotRequired[str]


class AiInfo(TypedDict):
    enabled: bool
    provider: str | None
    model: str | None
    apiKeySet: bool


class FilesInfo(TypedDict):
    enabled: bool
    writable: bool
    maxReadBytes: int
    maxWriteBytes: int
    allowedRoots: NotRequired[list[str]]


class SimulatorCluster(TypedDict):
    id: str
    simulator: bool | None
    serverVersion: str | None
    differences: list[dict[str, str]]


class SimulatorInfo(TypedDict):
    detected: bool
    clusters: list[SimulatorCluster]


class About(TypedDict):
    version: str
    buildTime: str | None
    clusterCount: int
    clusterStore: StoreInfo
    security: SecurityInfo
    ai: AiInfo
    files: FilesInfo
    simulator: SimulatorInfo
    withheld: list[str]


class AuditEntryBody(TypedDict):
    time: str
    user: str
    cluster: str | None
    action: str
    target: str | None
    outcome: str
    detail: str | None
    groups: list[str]
    impersonated: bool | None


class Session(TypedDict):
    authenticated: bool
    user: str
    username: str
    via: str
    groups: list[str]
    idleTimeoutSeconds: int


def encode_about(
    settings: ConsoleSettings, registry: ClusterRegistry, *, authenticated: bool, withhold: bool
) -> About:
    security: SecurityInfo = {
        "mode": "open" if settings.security.open_mode else "closed",
        "openMode": settings.security.open_mode,
        "authenticated": authenticated,
        "adminPasswordSet": bool(settings.security.admin.password),
        "sessionTimeoutMinutes": settings.security.session_timeout_minutes,
    }
    files: FilesInfo = {
        "enabled": settings.files.enabled,
        "writable": settings.files.enabled and settings.files.writable,
        "maxReadBytes": settings.files.max_read_bytes,
        "maxWriteBytes": settings.files.max_write_bytes,
    }
    if not withhold:
        security["adminUsername"] = settings.security.admin.username
        files["allowedRoots"] = list(settings.files.allowed_roots)
    return {
        "version": wharf_version(),
        "buildTime": build_time(),
        "clusterCount": len(registry.list()),
        "clusterStore": encode_store(registry, withhold=withhold),
        "security": security,
        "ai": _ai(settings),
        "files": files,
        "simulator": _simulator(registry),
        "withheld": list(WITHHELD) if withhold else [],
    }


def _ai(settings: ConsoleSettings) -> AiInfo:
    return {
        "enabled": settings.ai_enabled,
        "provider": settings.ai.provider,
        "model": settings.ai.model,
        "apiKeySet": bool(settings.ai.api_key),
    }


def _simulator(registry: ClusterRegistry) -> SimulatorInfo:
    clusters: list[SimulatorCluster] = []
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


def encode_store(registry: ClusterRegistry, *, withhold: bool) -> StoreInfo:
    """Where runtime clusters are kept and whether that survives a restart."""
    store = registry.store
    info: StoreInfo = {"backend": store.backend, "persistent": store.persistent}
    if not withhold:
        info["location"] = store.location
    return info


def encode_audit_entry(entry: AuditEntry) -> AuditEntryBody:
    return {
        "time": utc_stamp(entry.time, timespec="milliseconds"),
        "user": entry.user,
        "cluster": entry.cluster,
        "action": entry.action,
        "target": entry.target,
        "outcome": entry.outcome,
        "detail": entry.detail,
        "groups": list(entry.groups),
        "impersonated": entry.impersonated,
    }


def encode_session(principal: Principal, idle_seconds: float) -> Session:
    return {
        "authenticated": True,
        "user": principal.user,
        "username": principal.user,
        "via": principal.via,
        "groups": list(principal.groups),
        "idleTimeoutSeconds": int(idle_seconds),
    }
