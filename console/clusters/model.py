"""What a cluster is to the console: its definition as posted, and the registered cluster.

A kubeconfig is a credential. It is write-only: ``ClusterDefinition`` and ``Cluster`` never show it
in ``repr``, and nothing here serialises it (the HTTP encoders name their fields one by one).
"""

from __future__ import annotations

import enum

import attrs

from kubeclient import KubeConfig


class Origin(enum.Enum):
    STATIC = "STATIC"  # a context of the kubeconfig the service started with (or the fallback)
    RUNTIME = "RUNTIME"  # added through the API and kept in the cluster store


#: Id of the fallback cluster, registered only when no kubeconfig context can be used.
DEFAULT_ID = "default"


@attrs.frozen
class ClusterDefinition:
    """The body of POST/PUT /clusters: ``id`` None means the context's name; ``kubeconfig`` None
    on PUT keeps the stored one."""

    id: str | None
    name: str | None
    context: str | None
    kubeconfig: str | None = attrs.field(default=None, repr=False)
    #: None: decided by the console's ``console.clusters.impersonate`` setting.
    impersonate: bool | None = None


@attrs.frozen
class StoredCluster:
    """A runtime cluster as the store keeps it: the kubeconfig as posted, and the chosen context."""

    id: str
    name: str
    context: str
    kubeconfig: str = attrs.field(repr=False)
    created: float = 0.0
    impersonate: bool | None = None


@attrs.frozen
class Cluster:
    """A registered cluster. ``config`` (the whole kubeconfig ``context`` comes from) is None only
    for the in-cluster fallback."""

    id: str
    name: str
    origin: Origin
    context: str | None
    master_url: str | None
    config: KubeConfig | None = attrs.field(default=None, repr=False, eq=False)
    #: This cluster's own choice of impersonating the person behind each request (its
    #: registration body, or ``console.clusters.impersonate-contexts``); None follows
    #: ``console.clusters.impersonate`` (``ClusterRegistry.impersonating`` decides).
    impersonate: bool | None = None

    def contexts(self) -> list[str]:
        return [c.name for c in self.config.contexts()] if self.config is not None else []

    @property
    def kubeconfig_stored(self) -> bool:
        return self.origin is Origin.RUNTIME
