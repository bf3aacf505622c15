"""Clusters, their config view and a kubeconfig's contexts (``spec/console.yaml``): fields named
one by one, never a kubeconfig. :func:`withholding` decides, for ``/about`` too
(``console.http.encode.instance``), what an anonymous caller in open mode is not shown.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from aiohttp import web

from console.auth import current_user, is_admin
from console.clusters import Cluster, ClusterRegistry
from console.keys import AUTH
from kubeclient import KubeConfig


class ClusterEntry(TypedDict):
    id: str
    name: str
    masterUrl: str | None
    origin: str
    #: Only when the cluster has its own choice (the contract's entries keep their four fields).
    impersonate: NotRequired[bool]


class ClusterConfig(ClusterEntry):
    context: str | None
    contexts: list[str]
    storage: str
    persistent: bool
    kubeconfigStored: bool
    serverVersion: str | None
    simulator: bool | None
    impersonating: bool | None
    #: The setting a cluster without its own choice follows: auto, on or off.
    impersonateDefault: str


class ContextEntry(TypedDict):
    name: str
    cluster: str
    user: str
    namespace: str | None
    server: str | None


class ContextList(TypedDict):
    currentContext: str | None
    contexts: list[ContextEntry]


def encode_cluster(cluster: Cluster) -> ClusterEntry:
    entry: ClusterEntry = {
        "id": cluster.id,
        "name": cluster.name,
        "masterUrl": cluster.master_url,
        "origin": cluster.origin.value,
    }
    if cluster.impersonate is not None:
        entry["impersonate"] = cluster.impersonate
    return entry


def withholding(request: web.Request) -> bool:
    """Whether sensitive instance details are hidden: from anyone outside the admin groups (the
    anonymous visitor of open mode, a person not in ``console.security.admin.groups``)."""
    if current_user(request) is None:
        return request.app[AUTH].open_mode
    return not is_admin(request)


def storage_text(registry: ClusterRegistry, *, withhold: bool) -> str:
    """Where runtime clusters live, for people: ``sqlite:/var/console/clusters.db``, ``memory``."""
    store = registry.store
    if store.location is None or withhold:
        return store.backend
    return f"{store.backend}:{store.location}"


def encode_cluster_config(registry: ClusterRegistry, cluster: Cluster) -> ClusterConfig:
    probe = registry.probe_result(cluster.id)
    return {
        **encode_cluster(cluster),
        "context": cluster.context,
        "contexts": cluster.contexts(),
        "storage": storage_text(registry, withhold=False),
        "persistent": registry.store.persistent,
        "kubeconfigStored": cluster.kubeconfig_stored,
        "serverVersion": probe.git_version if probe else None,
        "simulator": probe.simulator if probe else None,
        "impersonating": registry.impersonating(cluster.id),
        "impersonateDefault": registry.impersonation.value,
    }


def encode_contexts(config: KubeConfig) -> ContextList:
    contexts: list[ContextEntry] = [
        {
            "name": c.name,
            "cluster": c.cluster,
            "user": c.user,
            "namespace": c.namespace,
            "server": c.server,
        }
        for c in config.contexts()
    ]
    return {"currentContext": config.current_context, "contexts": contexts}
