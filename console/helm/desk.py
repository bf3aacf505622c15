"""The console's Helm desk: the chart library, the release service and the values library, opened
together, and the cluster of each request as the release code wants it. The chart library's
endpoints under ``/api/v1/helm`` run chartsvc's own calls over it (``calls``).

A registered cluster becomes a :class:`ClusterTarget` (its kubeconfig's one context, inlined); the
target is kept per cluster object, so an edited or re-pointed cluster gets a new one, and with it new
Helm and client handles (their keys hash the kubeconfig). Failures leave in the console's terms
(:func:`helm_failures`): what Helm refused is ``helm-failed`` (400) with Helm's own message, what the
cluster refused is ``cluster-refused`` with the cluster's status.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import attrs

from chartsvc.calls import Services
from chartsvc.helm import ChartInvalid, Observer, ReleaseExists, ReleaseFailed, RenderFailed
from chartsvc.helm import HelmFailed as EngineFailed
from chartsvc.library import ChartLibrary, open_library
from chartsvc.releases import ClusterTarget, ReleaseService
from chartsvc.repos.model import ChartVersion
from common import yamlio
from common.errors import WharfError
from common.netguard import AddressPolicy, IPNetwork
from console.clusters.model import Cluster
from console.errors import HelmFailed
from console.helm.values import ValuesLibrary
from console.identity import Identity
from console.settings import ConsoleSettings

logger = logging.getLogger(__name__)

#: Codes of chartsvc's cluster failures; the console names them all ``cluster-refused``.
CLUSTER_CODES = frozenset(
    {
        "cluster-refused",
        "cluster-unreachable",
        "cluster-forbidden",
        "cluster-admission",
        "cluster-invalid",
        "cluster-bad-request",
        "cluster-conflict",
        "cluster-timeout",
    }
)
HELM_REFUSALS = (ReleaseFailed, RenderFailed, ChartInvalid, EngineFailed, ReleaseExists)


#: Cluster targets kept (one per cluster and person).
MAX_TARGETS = 1024


def impersonating(kubeconfig: str, who: Identity) -> str:
    """A standalone kubeconfig whose user acts as ``who`` (kubectl's ``--as``/``--as-group``)."""
    document = yamlio.load(kubeconfig)
    for entry in document.get("users") or []:
        user = entry.setdefault("user", {}) if isinstance(entry, dict) else None
        if isinstance(user, dict):
            user["as"] = who.user
            user["as-groups"] = list(who.groups)
    return yamlio.dump(document)


@attrs.define
class HelmDesk:
    library: ChartLibrary
    releases: ReleaseService
    values: ValuesLibrary
    #: The chart library as chartsvc's calls see it (repositories, charts, hub).
    calls: Services
    _targets: dict[tuple[str, Identity | None], tuple[Cluster, ClusterTarget]] = attrs.field(
        factory=dict
    )

    def target(self, cluster: Cluster, acting_as: Identity | None = None) -> ClusterTarget:
        """The cluster as Helm reaches it; ``acting_as``: the person it impersonates (its
        kubeconfig user gets ``as`` and ``as-groups``, which Helm's client sends as the
        Impersonate headers), None for the console's own identity."""
        key = (cluster.id, acting_as)
        known = self._targets.get(key)
        if known is not None and known[0] is cluster:
            return known[1]
        if cluster.config is None or cluster.context is None:
            made = ClusterTarget.in_cluster(cluster.id)
        else:
            made = ClusterTarget.from_kubeconfig(cluster.config, cluster.context, name=cluster.id)
        if acting_as is not None and made.kubeconfig is not None:
            made = attrs.evolve(made, kubeconfig=impersonating(made.kubeconfig, acting_as))
        if len(self._targets) >= MAX_TARGETS:
            self._targets.clear()  # people come back; their targets are cheap to make again
        self._targets[key] = (cluster, made)
        return made

    async def catalogue(self, query: str | None) -> list[tuple[str, ChartVersion]]:
        """The latest version of every chart of every configured repository, as ``(repo,
        chart)``, those whose name or description holds ``query`` (any case) when given. A
        repository whose index cannot be read adds nothing (it is logged)."""
        repos = self.library.repos
        needle = (query or "").lower()
        found: list[tuple[str, ChartVersion]] = []
        for repo in await repos.configured():
            try:
                charts = await repos.charts(repo.name)
            except WharfError as exc:
                logger.info("repository %r left out of the catalogue: %s", repo.name, exc.detail)
                continue
            found += [
                (repo.name, c)
                for c in charts
                if needle in c.name.lower() or needle in (c.description or "").lower()
            ]
        return found

    async def values_for(
        self, name: str | None, values: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        """``values`` over the library file ``name`` (deep-merged, as ``helm -f file --set``);
        None when neither is given (an upgrade then keeps the release's values)."""
        if name is None:
            return dict(values) if values is not None else None
        return merge(await self.values.load(name), values or {})


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        both_maps = isinstance(below, Mapping) and isinstance(value, Mapping)
        merged[key] = merge(below, value) if both_maps else value  # type: ignore[arg-type]
    return merged


@contextmanager
def helm_failures() -> Iterator[None]:
    """Helm's refusals as ``helm-failed`` (400, Helm's message); the cluster's as
    ``cluster-refused`` (its status kept). Everything else passes unchanged."""
    try:
        yield
    except HELM_REFUSALS as exc:
        raise HelmFailed(exc.detail) from exc
    except WharfError as exc:
        if exc.code in CLUSTER_CODES:
            exc.code = "cluster-refused"
        raise


@asynccontextmanager
async def open_desk(
    svc: ConsoleSettings,
    *,
    address_allow: tuple[IPNetwork, ...] = (),
    helm_observer: Observer | None = None,
) -> AsyncIterator[HelmDesk]:
    """The desk over ``svc``'s chart library; closed (Helm handles, cluster clients) after.
    ``helm_observer`` hears of every Helm call (the console's metrics)."""
    policy = AddressPolicy(
        block_private_networks=svc.helm.block_private_networks, allow=address_allow
    )
    values = ValuesLibrary(
        svc.helm_dir / "values",
        max_bytes=svc.helm.values.max_size,
        max_files=svc.helm.values.max_files,
    )
    async with open_library(svc.chart_library(), policy, helm_observer=helm_observer) as library:
        releases = ReleaseService(engine=library.helm.releases, charts=library.charts)
        try:
            calls = Services(repos=library.repos, charts=library.charts, hub=library.hub)
            yield HelmDesk(library, releases, values, calls)
        finally:
            await releases.close()
