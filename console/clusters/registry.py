"""The registry of clusters: static ones from the start-up kubeconfig, runtime ones from the store.

It owns one kubernetes-asyncio client per cluster, built on first use and closed when the cluster
is removed or re-pointed and at shutdown. Changes are serialised by one lock and happen in the
order validate → store → register, so a definition that cannot work never reaches the store or the
registry, and a store failure leaves the registry as it was. Other parts of the console that hold
per-cluster resources (watches, port-forwards) subscribe with :meth:`ClusterRegistry.on_change`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

import kubeclient
from common import yamlio
from common.config import ConfigError
from common.errors import BadGateway
from common.netguard import AddressPolicy
from console.clusters import connect, kubeconfigs
from console.clusters.kubeconfigs import StaticClusters
from console.clusters.model import Cluster, ClusterDefinition, Origin, StoredCluster
from console.clusters.store import ClusterStore
from console.errors import ClusterConflict, InvalidCluster, UnknownCluster
from console.identity import Identity
from console.settings import Impersonation
from kubeclient import KubeConfig

logger = logging.getLogger(__name__)

#: Seconds before a cluster that failed its probe is probed again.
PROBE_RETRY_S = 30.0
#: ``(cluster_id, event)`` with event ``removed`` or ``repointed``; called after the change.
Listener = Callable[[str, str], Awaitable[None]]


class ClusterRegistry:
    def __init__(
        self,
        static: StaticClusters,
        store: ClusterStore,
        *,
        workdir: Path,
        guard: AddressPolicy,
        probe_timeout: float = 5.0,
        impersonation: Impersonation = Impersonation.AUTO,
        impersonate_contexts: tuple[str, ...] = (),
    ) -> None:
        #: What a cluster without its own choice does (``console.clusters.impersonate``).
        self.impersonation = impersonation
        self.default_choice = {Impersonation.ON: True, Impersonation.OFF: False}.get(impersonation)
        overrides = context_choices(impersonate_contexts)
        static = attrs.evolve(
            static,
            clusters=tuple(
                attrs.evolve(c, impersonate=overrides.get(c.context or "")) for c in static.clusters
            ),
        )
        self.static = static
        self.store = store
        #: The address guard a runtime cluster's server must pass (the kubeconfig's are trusted).
        self.guard = guard
        #: Private folder where certificates live while a cluster client loads them.
        self.workdir = workdir
        self.probe_timeout = probe_timeout
        self._clusters: dict[str, Cluster] = {c.id: c for c in static.clusters}
        self._clients: dict[str, Any] = {}
        self._probes: dict[str, connect.Probe] = {}
        self._probe_failed: dict[str, float] = {}
        self._lock = asyncio.Lock()
        self._client_lock = asyncio.Lock()
        self._listeners: list[Listener] = []
        #: What the store held for each runtime cluster when this registry last agreed with it.
        self._seen: dict[str, tuple[str, bool | None, str, str]] = {}

    async def load(self) -> None:
        """Register the store's runtime clusters (no probing: start-up never waits on a cluster)."""
        for row in await self.store.all():
            if row.id in self._clusters:
                logger.warning(
                    "runtime cluster %r is shadowed by a kubeconfig context of the same name",
                    row.id,
                )
                continue
            try:
                self._clusters[row.id] = _runtime_cluster(row)
            except InvalidCluster as exc:
                logger.warning("stored cluster %r cannot be used: %s", row.id, exc.detail)
                continue
            self._seen[row.id] = _fingerprint(row)

    async def sync(self) -> None:
        """Take in what other replicas changed in a shared store: runtime clusters they added,
        re-pointed, renamed or removed. Clusters this registry wrote itself are left as they are."""
        rows = {row.id: row for row in await self.store.all()}
        retired: list[tuple[str, Any, str]] = []
        async with self._lock:
            for cluster_id, cluster in list(self._clusters.items()):
                if cluster.origin is Origin.RUNTIME and cluster_id not in rows:
                    retired.append((cluster_id, self._forget(cluster_id), "removed"))
            for row in rows.values():
                change = self._take(row)
                if change is not None:
                    retired.append(change)
        for cluster_id, client, event in retired:
            await self._retire(cluster_id, client, event)

    def _take(self, row: StoredCluster) -> tuple[str, Any, str] | None:
        current = self._clusters.get(row.id)
        if current is not None and current.origin is Origin.STATIC:
            return None
        previous = self._seen.get(row.id)
        if previous == _fingerprint(row):
            return None
        try:
            cluster = _runtime_cluster(row)
        except InvalidCluster as exc:
            logger.warning("stored cluster %r cannot be used: %s", row.id, exc.detail)
            return None
        self._seen[row.id] = _fingerprint(row)
        if current is None:
            self._clusters[row.id] = cluster
            return None
        if previous is not None and previous[2:] == _fingerprint(row)[2:]:  # same server
            self._clusters[row.id] = attrs.evolve(
                current, name=row.name, impersonate=row.impersonate
            )
            return None
        client = self._forget(row.id)
        self._clusters[row.id] = cluster
        return (row.id, client, "repointed")

    def _forget(self, cluster_id: str) -> Any:
        """Drop what this registry holds for a cluster; returns its client, to retire."""
        self._clusters.pop(cluster_id, None)
        self._seen.pop(cluster_id, None)
        self._probes.pop(cluster_id, None)
        self._probe_failed.pop(cluster_id, None)
        return self._clients.pop(cluster_id, None)

    # -- reading ----------------------------------------------------------------------------
    def list(self) -> list[Cluster]:
        return list(self._clusters.values())

    def get(self, cluster_id: str) -> Cluster:
        try:
            return self._clusters[cluster_id]
        except KeyError:
            raise UnknownCluster(cluster_id) from None

    async def client(self, cluster_id: str) -> Any:
        """The cluster's ``kubernetes_asyncio.client.ApiClient``; do not close it."""
        cluster = self.get(cluster_id)
        existing = self._clients.get(cluster_id)
        if existing is not None:
            return existing
        async with self._client_lock:
            if (existing := self._clients.get(cluster_id)) is not None:
                return existing
            guard = None
            if cluster.origin is Origin.RUNTIME:
                guard = self.guard
                await connect.check_server(guard, cluster.master_url or "")
            client = await connect.build_client(cluster, workdir=self.workdir, guard=guard)
            now = self._clusters.get(cluster_id)
            if now is None or now.config is not cluster.config or now.context != cluster.context:
                await connect.close_client(client)  # removed or re-pointed while it was built
                raise UnknownCluster(cluster_id)
            self._clients[cluster_id] = client
            return client

    def impersonating(self, cluster_id: str) -> bool | None:
        """Whether requests for a person impersonate them on this cluster, as far as known now
        (None: not decided until the cluster is probed)."""
        choice = self.get(cluster_id).impersonate
        choice = self.default_choice if choice is None else choice
        if choice is not None:
            return choice
        probed = self._probes.get(cluster_id)
        return probed.may_impersonate if probed is not None else None

    async def acting_as(self, cluster_id: str, identity: Identity) -> Identity | None:
        """Who requests for ``identity`` ask the cluster to act as: ``identity`` where the cluster
        impersonates, None (the console's own credentials) where it does not. Undecidable (the
        cluster cannot be probed) is a 502: a request never falls back to the console's rights."""
        choice = self.impersonating(cluster_id)
        if choice is None:
            probed = await self.probe(cluster_id)
            if probed is None:
                raise BadGateway(
                    f"cluster {cluster_id!r} cannot be reached to check whether it impersonates",
                    code="cluster-refused",
                )
            choice = probed.may_impersonate
        return identity if choice else None

    def probe_result(self, cluster_id: str) -> connect.Probe | None:
        return self._probes.get(cluster_id)

    async def probe(self, cluster_id: str, *, timeout: float | None = None) -> connect.Probe | None:
        """Probe once and remember the answer; None when the cluster cannot be reached (which is
        remembered for ``PROBE_RETRY_S``, so a dead cluster does not slow every caller)."""
        if (known := self._probes.get(cluster_id)) is not None:
            return known
        failed = self._probe_failed.get(cluster_id)
        if failed is not None and time.monotonic() - failed < PROBE_RETRY_S:
            return None
        try:
            client = await self.client(cluster_id)
            result = await connect.probe(client, timeout=timeout or self.probe_timeout)
        except Exception:  # an unreachable cluster simply has no probe yet
            self._probe_failed[cluster_id] = time.monotonic()
            return None
        if cluster_id in self._clusters:
            self._probes[cluster_id] = result
        return result

    def on_change(self, listener: Listener) -> None:
        self._listeners.append(listener)

    # -- changing ---------------------------------------------------------------------------
    async def add(self, definition: ClusterDefinition) -> Cluster:
        if not definition.kubeconfig or not definition.kubeconfig.strip():
            raise InvalidCluster("kubeconfig is required to add a cluster and must not be empty")
        if definition.id is not None:
            self._refuse_taken(definition.id)
        config = kubeconfigs.parse_posted(definition.kubeconfig)
        context = kubeconfigs.choose_context(config, definition.context)
        cluster_id = definition.id or kubeconfigs.id_from_context(context)
        self._refuse_taken(cluster_id)
        name = definition.name or cluster_id
        cluster, client, result = await self._validate(cluster_id, name, config, context)
        cluster = attrs.evolve(cluster, impersonate=definition.impersonate)
        async with self._lock:
            try:
                self._refuse_taken(cluster_id)
                stored = _stored(cluster)
                await self.store.insert(stored)
            except BaseException:
                await connect.close_client(client)
                raise
            self._install(cluster, client, result)
            self._seen[cluster_id] = _fingerprint(stored)
        return cluster

    async def update(self, cluster_id: str, definition: ClusterDefinition) -> Cluster:
        """Rename or re-point a runtime cluster; an omitted kubeconfig or context is kept."""
        current = self._editable(cluster_id)
        if definition.kubeconfig is not None:
            if not definition.kubeconfig.strip():
                raise InvalidCluster(
                    "kubeconfig must not be empty (omit it to keep the current one)"
                )
            config = kubeconfigs.parse_posted(definition.kubeconfig)
            context = kubeconfigs.choose_context(config, definition.context)
        else:
            assert current.config is not None
            assert current.context is not None
            config, context = current.config, definition.context or current.context
        name = definition.name or current.name
        impersonate = (
            current.impersonate if definition.impersonate is None else definition.impersonate
        )
        if config is current.config and context == current.context:
            return await self._rename(current, name, impersonate)
        cluster, client, result = await self._validate(cluster_id, name, config, context)
        cluster = attrs.evolve(cluster, impersonate=impersonate)
        async with self._lock:
            try:
                if self._editable(cluster_id) is not current:
                    raise ClusterConflict(f"cluster {cluster_id!r} changed meanwhile; retry")
                stored = _stored(cluster)
                await self.store.update(stored)
            except BaseException:
                await connect.close_client(client)
                raise
            old = self._clients.pop(cluster_id, None)
            self._install(cluster, client, result)
            self._seen[cluster_id] = _fingerprint(stored)
        await self._retire(cluster_id, old, "repointed")
        return cluster

    async def _rename(self, current: Cluster, name: str, impersonate: bool | None) -> Cluster:
        """Same server, same credentials: nothing to probe, and the client stays."""
        renamed = attrs.evolve(current, name=name, impersonate=impersonate)
        async with self._lock:
            if self._editable(current.id) is not current:
                raise ClusterConflict(f"cluster {current.id!r} changed meanwhile; retry")
            stored = _stored(renamed)
            await self.store.update(stored)
            self._clusters[current.id] = renamed
            self._seen[current.id] = _fingerprint(stored)
        return renamed

    async def remove(self, cluster_id: str) -> None:
        async with self._lock:
            self._editable(cluster_id)
            await self.store.delete(cluster_id)
            old = self._forget(cluster_id)
        await self._retire(cluster_id, old, "removed")

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await connect.close_client(client)

    # -- internals --------------------------------------------------------------------------
    def _refuse_taken(self, cluster_id: str) -> None:
        if cluster_id in self._clusters:
            raise ClusterConflict(f"a cluster with id {cluster_id!r} already exists")

    def _editable(self, cluster_id: str) -> Cluster:
        cluster = self.get(cluster_id)
        if cluster.origin is Origin.STATIC:
            raise ClusterConflict(
                f"cluster {cluster_id!r} comes from the service's kubeconfig and cannot be "
                "changed through the API"
            )
        return cluster

    async def _validate(
        self, cluster_id: str, name: str, config: KubeConfig, context: str
    ) -> tuple[Cluster, Any, connect.Probe]:
        """A cluster whose context exists and whose server answers, with its new client."""
        single, server = kubeconfigs.standalone(config, context)
        cluster = Cluster(cluster_id, name, Origin.RUNTIME, context, server, config)
        await connect.check_server(self.guard, server)
        client = await connect.config_client(
            single, context, workdir=self.workdir, guard=self.guard
        )
        try:
            result = await connect.probe(client, timeout=self.probe_timeout)
        except BaseException:
            await connect.close_client(client)
            raise
        return cluster, client, result

    def _install(self, cluster: Cluster, client: Any, result: connect.Probe) -> None:
        self._clusters[cluster.id] = cluster
        self._clients[cluster.id] = client
        self._probes[cluster.id] = result
        self._probe_failed.pop(cluster.id, None)

    async def _retire(self, cluster_id: str, client: Any, event: str) -> None:
        if client is not None:
            await connect.close_client(client)
        for listener in self._listeners:
            try:
                await listener(cluster_id, event)
            except Exception:
                logger.exception("cluster %s listener failed for %r", event, cluster_id)


def context_choices(entries: tuple[str, ...]) -> dict[str, bool]:
    """``console.clusters.impersonate-contexts``: ``context=on|off`` each."""
    choices: dict[str, bool] = {}
    for entry in entries:
        context, _, value = entry.partition("=")
        if not context or value not in ("on", "off"):
            raise ConfigError("console.clusters.impersonate-contexts", "context=on or context=off")
        choices[context] = value == "on"
    return choices


def _stored(cluster: Cluster) -> StoredCluster:
    assert cluster.config is not None
    assert cluster.context is not None
    text = yamlio.dump(dict(cluster.config.document))
    return StoredCluster(
        cluster.id, cluster.name, cluster.context, text, time.time(), cluster.impersonate
    )


async def follow(registry: ClusterRegistry, *, every_s: float) -> None:
    """Sync ``registry`` with its shared store every ``every_s`` seconds until cancelled."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await registry.sync()
        except Exception:  # a database hiccup: the next round tries again
            logger.exception("syncing runtime clusters from the store failed")


def _fingerprint(row: StoredCluster) -> tuple[str, bool | None, str, str]:
    return (row.name, row.impersonate, row.context, row.kubeconfig)


def _runtime_cluster(row: StoredCluster) -> Cluster:
    try:
        config = kubeclient.parse(row.kubeconfig, source=f"stored cluster {row.id!r}")
    except kubeclient.KubeConfigError as exc:
        raise InvalidCluster(exc.detail) from None
    _, server = kubeconfigs.standalone(config, row.context)
    return Cluster(
        row.id, row.name, Origin.RUNTIME, row.context, server, config, impersonate=row.impersonate
    )
