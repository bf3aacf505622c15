"""JSON encoders for clusters and the store: fields named one by one, never a kubeconfig.

Shared by the clusters, about and config views so they describe the store the same way, including
what an anonymous caller in open mode is not shown.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from console.auth import current_user
from console.clusters import Cluster, ClusterRegistry
from console.keys import AUTH

#: The media type of every YAML answer (object exports, values, manifests).
YAML_TYPE = "application/yaml"


def cluster_entry(cluster: Cluster) -> dict[str, Any]:
    return {
        "id": cluster.id,
        "name": cluster.name,
        "masterUrl": cluster.master_url,
        "origin": cluster.origin.value,
    }


def withholding(request: web.Request) -> bool:
    """Whether sensitive instance details are hidden: open mode and nobody signed in."""
    return request.app[AUTH].open_mode and current_user(request) is None


def storage_text(registry: ClusterRegistry, *, withhold: bool) -> str:
    """Where runtime clusters live, for people: ``sqlite:/var/console/clusters.db``, ``memory``."""
    store = registry.store
    if store.location is None or withhold:
        return store.backend
    return f"{store.backend}:{store.location}"


def cluster_config(registry: ClusterRegistry, cluster: Cluster) -> dict[str, Any]:
    probe = registry.probe_result(cluster.id)
    return {
        **cluster_entry(cluster),
        "context": cluster.context,
        "contexts": cluster.contexts(),
        "storage": storage_text(registry, withhold=False),
        "persistent": registry.store.persistent,
        "kubeconfigStored": cluster.kubeconfig_stored,
        "serverVersion": probe.git_version if probe else None,
        "simulator": probe.simulator if probe else None,
    }


def event_data(value: Any) -> str:
    """Compact JSON for the ``data`` of a Server-Sent Event (watches, logs)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
