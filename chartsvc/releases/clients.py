"""kubernetes-asyncio clients, one per cluster, shared by the release reads and closed when done.

A host's resolver may name many clusters over time (one per tenant, or the same cluster with rotated
credentials, which is another target), so the pool is bounded: the least recently used client goes
first, closed once no request still holds it. A kubeconfig that cannot be used is the operator's or
the host's fault, never the caller's: it is a 502 naming the cluster, and never echoes the file.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

import kubeclient
from chartsvc.clusters import ClusterTarget
from common.errors import BadGateway
from kubeclient import KubeConfigError

MAX_CLIENTS = 64


@attrs.define(eq=False)
class _Lease:
    client: Any
    users: int = 0
    evicted: bool = False


@attrs.define
class KubeClients:
    #: The private folder where a client's certificates are written while it loads them.
    workdir: Path
    max_clients: int = MAX_CLIENTS
    _leases: OrderedDict[str, _Lease] = attrs.field(factory=OrderedDict)
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    @asynccontextmanager
    async def use(self, target: ClusterTarget) -> AsyncIterator[Any]:
        """The client of ``target``'s cluster, held for the ``async with`` block."""
        lease = await self._acquire(target)
        try:
            yield lease.client
        finally:
            lease.users -= 1
            if lease.evicted and lease.users == 0:
                await lease.client.close()

    async def _acquire(self, target: ClusterTarget) -> _Lease:
        retired: list[_Lease] = []
        async with self._lock:  # one client per cluster, even when requests race for it
            lease = self._leases.get(target.key)
            if lease is None:
                lease = _Lease(await _new_client(target, self.workdir))
                self._leases[target.key] = lease
                retired = self._evict()
            self._leases.move_to_end(target.key)
            lease.users += 1
        for old in retired:
            await old.client.close()
        return lease

    def _evict(self) -> list[_Lease]:
        idle = []
        while len(self._leases) > self.max_clients:
            _, lease = self._leases.popitem(last=False)
            lease.evicted = True
            if lease.users == 0:
                idle.append(lease)
        return idle

    async def close(self) -> None:
        async with self._lock:
            self.max_clients = 0
            idle = self._evict()
        for lease in idle:
            await lease.client.close()


async def _new_client(target: ClusterTarget, workdir: Path) -> Any:
    if target.kubeconfig is None:  # a pod's service account is a kubeconfig (default_target)
        raise _unusable(target, "this process has no in-cluster service account")
    try:
        config = kubeclient.parse(
            target.kubeconfig, source=f"the kubeconfig of cluster {target.name!r}"
        )
        context = target.context or config.current_context or ""
        return await kubeclient.api_client(config, context, workdir=workdir)
    except KubeConfigError as exc:
        raise _unusable(target, exc.detail) from None


def _unusable(target: ClusterTarget, why: str) -> BadGateway:
    return BadGateway(f"cluster {target.name!r} cannot be used: {why}", code="cluster-unreachable")
