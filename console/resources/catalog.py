"""The kinds one cluster serves, as the console names them: resource ids, nav categories, paths.

A resource id is the plural for built-in kinds (``pods``, ``deployments``) and ``<plural>.<group>``
for everything else (``certificates.cert-manager.io``), as kubectl's ``resource.group`` form; when two
built-in groups serve the same plural the earlier group keeps the short id (core ``events`` before
``events.k8s.io``). Every kind also answers to its ``<plural>.<group>`` form.

This module is pure: it builds a :class:`Catalog` from parsed discovery and never calls a cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from common.errors import NotFound

# Groups compiled into kube-apiserver (or the usual aggregated ones); anything else is custom.
BUILTIN_GROUPS = (
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "discovery.k8s.io",
    "storage.k8s.io",
    "rbac.authorization.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "coordination.k8s.io",
    "scheduling.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "apiregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "resource.k8s.io",
    "internal.apiserver.k8s.io",
    "storagemigration.k8s.io",
    "metrics.k8s.io",
)
GATEWAY_GROUP = "gateway.networking.k8s.io"
VPA_GROUP = "autoscaling.k8s.io"
# Served for other endpoints (metrics) or never listable in a useful way.
HIDDEN_GROUPS = frozenset({"metrics.k8s.io", "authentication.k8s.io", "authorization.k8s.io"})


class UnknownResource(NotFound, code="unknown-resource"):
    def __init__(self, resource_id: str) -> None:
        super().__init__(f"this cluster serves no resource {resource_id!r}")


@attrs.frozen
class Kind:
    """One listable resource of one cluster, at its preferred version."""

    id: str
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    verbs: frozenset[str]
    short_names: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def full_name(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def builtin(self) -> bool:
        return self.group in BUILTIN_GROUPS

    @property
    def listable(self) -> bool:
        return "list" in self.verbs


@attrs.frozen
class Catalog:
    """Every kind of a cluster, by resource id, plus what discovery said about its health."""

    kinds: Mapping[str, Kind]
    aliases: Mapping[str, str]
    stale_groups: tuple[str, ...] = ()

    @classmethod
    def build(cls, found: Iterable[Kind], *, stale_groups: Iterable[str] = ()) -> Catalog:
        ordered = sorted(found, key=_priority)
        kinds: dict[str, Kind] = {}
        aliases: dict[str, str] = {}
        for kind in ordered:
            if kind.full_name in aliases:
                continue  # another version of a kind already listed at its preferred version
            short = kind.builtin and kind.resource not in kinds
            rid = kind.resource if short else kind.full_name
            kind = attrs.evolve(kind, id=rid)
            kinds[rid] = kind
            aliases.setdefault(kind.full_name, rid)
        return cls(kinds=kinds, aliases=aliases, stale_groups=tuple(sorted(set(stale_groups))))

    def get(self, resource_id: str) -> Kind:
        rid = self.aliases.get(resource_id, resource_id)
        kind = self.kinds.get(rid)
        if kind is None:
            raise UnknownResource(resource_id)
        return kind

    def find(self, resource_id: str) -> Kind | None:
        return self.kinds.get(self.aliases.get(resource_id, resource_id))

    def by_kind(self, api_version: str, kind: str) -> Kind | None:
        """The kind an object's ``apiVersion``/``kind`` (or an ownerReference) names."""
        group, _, version = api_version.rpartition("/")
        for candidate in self.kinds.values():
            if (candidate.group, candidate.kind, candidate.version) == (group, kind, version):
                return candidate
        return next((k for k in self.kinds.values() if k.group == group and k.kind == kind), None)

    def served_groups(self) -> set[str]:
        return {k.group for k in self.kinds.values()}

    def listable(self) -> list[Kind]:
        return [k for k in self.kinds.values() if k.listable and k.group not in HIDDEN_GROUPS]


def _priority(kind: Kind) -> tuple[int, str, str]:
    """Built-in groups in their fixed order first; preference order kept among versions."""
    try:
        rank = BUILTIN_GROUPS.index(kind.group)
    except ValueError:
        rank = len(BUILTIN_GROUPS)
    return (rank, kind.group, kind.resource)
