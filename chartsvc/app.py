"""Assembly of the chart service: spec, routes, the access gate and the resources' cleanup contexts.

``create_app`` is synchronous and does no I/O beyond reading the packaged spec; the chart library
(``chartsvc.library``: outbound session, repositories, OCI and hub clients, the Helm adapter) opens
in ``_services`` and closes after its ``yield``.
The release group (only with a cluster, see ``create_app``) opens in ``_releases``; the services
both doors call are gathered in ``_doors``; the MCP endpoints open after them (``chartsvc.mcp.routes``).
The routes and the gate follow the spec's operations (``chartsvc.operations``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from chartsvc import metrics
from chartsvc.access import AccessPolicy
from chartsvc.budget import UploadBudget
from chartsvc.calls import Services
from chartsvc.calls.form import MAX_TEXT_BYTES
from chartsvc.charts import SPEC_PATTERNS
from chartsvc.clusters import ClusterResolver, ClusterSource, default_target
from chartsvc.gate import access_gate
from chartsvc.http.budget import is_multipart, upload_budget
from chartsvc.http.routes import form_operations, route_tables
from chartsvc.keys import (
    CHARTS,
    CLUSTERS,
    HELM,
    HUB,
    OCI,
    OPERATIONS,
    POLICY,
    RELEASES,
    REPOS,
    SERVICES,
    SETTINGS,
    STUCK,
    UPLOADS,
)
from chartsvc.library import open_library
from chartsvc.mcp import routes as mcp
from chartsvc.operations import Operation, declared, mutating
from chartsvc.releases import ReleaseService, StuckReleases
from chartsvc.settings import ChartsvcSettings, Settings
from common.app import build_app
from common.metrics import METRICS
from common.netguard import AddressPolicy, IPNetwork, allow_setting
from common.openapi import Spec, load_document
from common.routing import Guard

SPEC_PATH = Path(__file__).resolve().parent.parent / "spec" / "chartsvc.yaml"


@functools.cache
def load_spec(*, releases: bool = False) -> Spec:
    """The spec as the files hold it; the release group's operations (``chartsvc.releases.yaml``)
    are in it only with ``releases``."""
    excluded = () if releases else ("releases",)
    return Spec.from_document(load_document(SPEC_PATH, exclude=excluded, patterns=SPEC_PATTERNS))


@functools.cache
def load_operations(*, releases: bool = False) -> Mapping[str, Operation]:
    """The operations the spec declares (a DeclarationError when one is not fully declared)."""
    return declared(load_spec(releases=releases))


def create_app(
    settings: Settings,
    *,
    address_allow: tuple[IPNetwork, ...] = (),
    cluster_resolver: ClusterResolver | None = None,
    environ: Mapping[str, str] | None = None,
    api_info: Mapping[str, Any] | None = None,
    groups: Mapping[str, web.RouteTableDef] | None = None,
) -> web.Application:
    """The chart service. ``address_allow`` widens the outbound address policy (tests only);
    ``api_info`` replaces fields of the OpenAPI document's ``info`` (title, description, version,
    license, contact) for a host that embeds the service, and ``groups`` replaces a whole group's
    routes ("charts", "repos", "hub", "dependencies", "releases") with the host's own at the same
    mapping (same paths and operationIds; the start-up parity check holds them to the spec).

    The release group is registered only when there is a cluster: ``cluster_resolver`` (a host's
    per-request choice, see ``chartsvc.clusters``) or the default one found from the settings and
    ``environ`` (``KUBECONFIG``, ``HOME``, the in-cluster variables) as kubectl finds it.
    """
    svc = settings.chartsvc
    clusters = ClusterSource(default_target(svc.kube, environ or {}), cluster_resolver)
    spec = load_spec(releases=clusters.configured)
    operations = load_operations(releases=clusters.configured)
    guards, budget = _guards(svc, spec, operations)
    app = build_app(
        service="chartsvc",
        spec=_with_info(spec, api_info),
        api_routes=_route_tables(route_tables(spec, operations), groups or {}),
        base_path=svc.rest.base_path,
        extra_routes=[mcp.routes],
        guards=guards,
        client_max_size=svc.rest.max_json_size,  # multipart bodies are streamed, not read whole
        info={"security": {"mode": svc.security.mode.value}},
        readiness={
            "repositories": _repositories_ready,
            **({"releases": _stuck_releases} if clusters.configured else {}),
        },
    )
    app[SETTINGS] = svc
    app[UPLOADS] = budget
    app[OPERATIONS] = operations
    app[POLICY] = AddressPolicy(
        block_private_networks=svc.security.block_private_networks,
        allow=(
            *address_allow,
            *allow_setting(svc.security.allow_outbound, key="chartsvc.security.allow-outbound"),
        ),
    )
    app.cleanup_ctx.append(_services)
    if clusters.configured:
        app[CLUSTERS] = clusters
        app.cleanup_ctx.append(_releases)
    app.cleanup_ctx.append(_doors)
    mcp.install(app)  # after the services its tools call
    return app


def _guards(
    svc: ChartsvcSettings, spec: Spec, operations: Mapping[str, Operation]
) -> tuple[list[Guard], UploadBudget]:
    """The access gate (unless the interceptor is off) and the upload budget, and the budget."""
    guards: list[Guard] = []
    if svc.rest.access_interceptor.enabled:
        policy = AccessPolicy.from_settings(svc.security)
        guards.append(access_gate(policy, mutating(operations)))
    upload_cap = svc.rest.max_upload_size + MAX_TEXT_BYTES
    mcp_cap = mcp.request_cap(svc.rest)

    def cap_of(request: web.Request) -> int | None:
        if is_multipart(request):
            return upload_cap
        return mcp_cap if mcp.carries_calls(request) else None

    budget = UploadBudget.for_cap(upload_cap)
    guards.append(upload_budget(budget, cap_of, form_operations(spec) | set(mcp.CALL_ROUTES)))
    return guards, budget


def _route_tables(
    tables: Mapping[str, web.RouteTableDef], replaced: Mapping[str, web.RouteTableDef]
) -> list[web.RouteTableDef]:
    unknown = set(replaced) - set(tables)
    if unknown:
        raise ValueError(f"no such group to replace: {', '.join(sorted(unknown))}")
    return [replaced.get(group, table) for group, table in tables.items()]


def _with_info(spec: Spec, api_info: Mapping[str, Any] | None) -> Spec:
    if not api_info:
        return spec
    return Spec.from_document({**spec.document, "info": {**spec.document["info"], **api_info}})


async def _repositories_ready(app: web.Application) -> Mapping[str, Any]:
    """Ready when repositories.yaml (if any) reads as it is now; a corrupt file fails the check."""
    return {"configured": len(await app[REPOS].configured(fresh=True))}


async def _stuck_releases(app: web.Application) -> Mapping[str, Any]:
    """Up whatever the clusters say (a cluster away is the release calls' 502, not the
    service's readiness); the details name the releases a stopped writer left pending on the
    default cluster and those the resolver returned, and their recovery, from the background
    refresh (``chartsvc.releases.stuck``)."""
    return await app[STUCK].report()


async def _services(app: web.Application) -> AsyncIterator[None]:
    observer = metrics.helm_observer(app[METRICS])
    async with open_library(app[SETTINGS], app[POLICY], helm_observer=observer) as library:
        metrics.watch_repositories(app[METRICS], library.repos)
        app[REPOS] = library.repos
        app[OCI] = library.oci
        app[HUB] = library.hub
        app[HELM] = library.helm
        app[CHARTS] = library.charts
        yield


async def _releases(app: web.Application) -> AsyncIterator[None]:
    """The release service: Helm configs per cluster and namespace, cluster clients for reads."""
    app[RELEASES] = service = ReleaseService(engine=app[HELM].releases, charts=app[CHARTS])
    app[STUCK] = stuck = StuckReleases(service, app[CLUSTERS].known)
    try:
        yield
    finally:
        await stuck.close()
        await service.close()


async def _doors(app: web.Application) -> AsyncIterator[None]:
    """What the routes and the tools call: the services opened before this context."""
    app[SERVICES] = Services(
        repos=app[REPOS],
        charts=app[CHARTS],
        hub=app[HUB],
        releases=app.get(RELEASES),
        clusters=app.get(CLUSTERS),
    )
    yield
