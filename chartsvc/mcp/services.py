"""What a tool call works with: the domain services, the call's reply and the call registries.

A call is ``(services, validated arguments) -> Reply``: it reads the same ``Validated`` a route
reads, calls one domain function and encodes with the route's encoder. Nothing else belongs in a
call; a call that needs more means its route holds domain logic, which belongs in the domain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import attrs
from aiohttp import web

from chartsvc.charts import ChartService
from chartsvc.clusters import ClusterSource, ClusterTarget, ResolverFailed
from chartsvc.hub import HubClient
from chartsvc.releases import ReleaseService
from chartsvc.repos.service import RepoService
from common.openapi import Validated


@attrs.frozen
class Services:
    """The domain services the tools call, taken from the running app.

    ``request`` is the HTTP request that carried the call (None over stdio): a host's cluster
    resolver picks the cluster of a release call from it, as it does for the REST routes.
    """

    repos: RepoService
    charts: ChartService
    hub: HubClient
    releases: ReleaseService | None = None
    clusters: ClusterSource | None = None
    request: web.Request | None = None

    async def cluster(self) -> ClusterTarget:
        if self.clusters is None:
            raise ResolverFailed("no cluster is configured for the release tools")
        if self.clusters.resolver is None or self.request is not None:
            return await self.clusters.resolve(cast("web.Request", self.request))
        raise ResolverFailed(
            "the host's cluster resolver chooses by HTTP request; this call came without one"
        )

    @property
    def release_service(self) -> ReleaseService:
        if self.releases is None:
            raise ResolverFailed("the release service is not running")
        return self.releases


@attrs.frozen
class Reply:
    """A REST response's status and body: JSON, text (``text/plain``, ``text/yaml``) or none."""

    body: Any = None
    text: str | None = None
    status: int = 200


Call = Callable[[Services, Validated], Awaitable[Reply]]


def registrar(table: dict[str, Call]) -> Callable[[str], Callable[[Call], Call]]:
    """A decorator that files a call under its operationId in ``table``."""

    def call(operation_id: str) -> Callable[[Call], Call]:
        def register(fn: Call) -> Call:
            if operation_id in table:
                raise ValueError(f"two calls for {operation_id}")
            table[operation_id] = fn
            return fn

        return register

    return call
