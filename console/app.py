"""Assembly of the console: spec, routes of every group, auth, metrics and the cluster registry.

``create_app`` is synchronous and does no I/O; the cluster store and registry open in ``_clusters``
and close after its ``yield`` (every cluster client with them). ``environ`` is the process
environment the CLI passes in (``KUBECONFIG``, ``HOME``, the in-cluster service variables): this
module never reads ``os.environ`` itself, so a test passes exactly the environment it means.

The API is the route tables listed in ``API_ROUTES``, one per ``console/http/<group>.py``; each
route's ``name`` is its operationId in ``spec/console.yaml`` (``build_app`` checks the two agree).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from aiohttp import web

from chartsvc.charts import SPEC_PATTERNS as chart_patterns
from common import leftovers, tasks
from common.app import build_app
from common.config import ConfigError
from common.db import is_postgresql, postgresql
from common.netguard import AddressPolicy, allow_setting
from common.openapi import Spec
from common.revocation import REVOCATIONS
from common.sessions import MemorySessionRows, SessionStore
from console.accounts import Accounts, check_groups
from console.accountstore import MemoryAccountStore, SqlAccountStore
from console.audit import AUDIT, AuditLog, keep_durably
from console.auth import AuthPolicy, auth_guard
from console.clusters import ClusterRegistry
from console.clusters.kubeconfigs import kubeconfig_paths, static_clusters
from console.clusters.registry import follow
from console.clusters.store import (
    ClusterStore,
    MemoryClusterStore,
    Sealer,
    SqlClusterStore,
    SqlSessionRows,
)
from console.credentials import AdminCredentials
from console.helm.values import NAME_PATTERN as VALUES_NAME_PATTERN
from console.http import (
    actions,
    actuator,
    apply,
    auth,
    browse,
    chartlib,
    clusters,
    diagnose,
    helm,
    helmlib,
    instance,
    logs,
    objects,
    podexec,
    podfiles,
    portforwards,
    usage,
    watch,
)
from console.identity import Identity
from console.keys import (
    ACCESS_REVIEWS,
    AUTH,
    CATALOGS,
    CLUSTERS,
    FLIGHTS,
    HELM_STUCK,
    METRICS,
    SETTINGS,
)
from console.proxy import TrustedProxy
from console.resources.access import AccessReviews
from console.resources.discovery import Catalogs
from console.resources.flights import Flights
from console.resources.kubeapi import KubeApi
from console.settings import ConsoleSettings, Settings, StoreBackend
from console.web import PUBLIC_PATHS, pages

logger = logging.getLogger(__name__)

SPEC_PATH = Path(__file__).resolve().parent.parent / "spec" / "console.yaml"
#: The route tables under /api/v1.
API_ROUTES: tuple[web.RouteTableDef, ...] = (
    clusters.routes,
    auth.routes,
    instance.routes,
    browse.routes,
    objects.routes,
    apply.routes,
    actions.routes,
    helm.routes,
    helmlib.routes,
    chartlib.routes,
    diagnose.routes,
    usage.routes,
    watch.routes,
    logs.routes,
    portforwards.routes,
    podfiles.routes,
)
#: The spec's schemas whose pattern is the check the server holds requests to: the chart library's
#: (chartsvc's own) and the values library's file names.
SPEC_PATTERNS = {
    **{
        name: chart_patterns[name]
        for name in (
            "ChartRef",
            "RepositoryName",
            "RepositoryUrl",
            "VersionConstraint",
            "ReleaseName",
            "Namespace",
        )
    },
    "ValuesFileName": VALUES_NAME_PATTERN,
}
#: Clusters connected to at once by the start-up warm-up.
WARM_UP_CONCURRENCY = 4


def create_app(settings: Settings, *, environ: Mapping[str, str] | None = None) -> web.Application:
    svc = settings.console
    policy = make_policy(svc)
    spec = Spec.load(SPEC_PATH, patterns=SPEC_PATTERNS)
    app = build_app(
        service="console",
        spec=spec,
        api_routes=API_ROUTES,
        extra_routes=[actuator.routes, podexec.routes],
        guards=[auth_guard(policy, spec)],
        info={"security": {"mode": "open" if svc.security.open_mode else "closed"}},
        readiness={"clusterStore": _store_ready, "helmReleases": _helm_releases},
    )
    policy.sessions.on_end = app[REVOCATIONS].revoke  # a sign-out ends the session's streams
    policy.proxy.ignored = (
        app[METRICS]
        .counter(
            "console_proxy_headers_ignored",
            "Requests whose proxy identity headers were ignored: not from a trusted network.",
        )
        .inc
    )
    app[SETTINGS] = svc
    app[AUTH] = policy
    app[AUDIT] = AuditLog()
    app[CATALOGS] = Catalogs()  # discovery cache of the browse/objects/apply/actions routes
    app[FLIGHTS] = Flights()
    app[ACCESS_REVIEWS] = AccessReviews(ttl_s=svc.security.access_review_ttl)
    clusters.install(app)
    app[METRICS].gauge(
        "console_audit_entries", "Entries in the audit ring.", lambda: len(app[AUDIT])
    )
    if not policy.accounts.admin.password_set:
        logger.warning(
            "console.security.admin.password is not set: the admin login cannot sign in "
            "(wharf console hash-password makes a hash for the settings)"
        )
    guard = AddressPolicy(  # checked here, so a bad entry stops start-up as any bad setting does
        block_private_networks=svc.clusters.block_private_networks,
        allow=allow_setting(svc.clusters.allow_addresses, key="console.clusters.allow-addresses"),
    )
    app.cleanup_ctx.append(_clusters_context(dict(environ or {}), guard))
    helm.setup(app)  # the Helm desk opens after the clusters it serves
    diagnose.setup(app)  # the LLM summary client and cache
    usage.setup(app)  # the metrics sampler, after the clusters it samples
    watch.setup(app)  # the watch hub (watches and logs) opens after the clusters too
    podexec.setup(app)
    portforwards.setup(app)  # forwards are released before their clusters close
    pages.setup(app)  # the login page and the front-end shell
    return app


def make_policy(svc: ConsoleSettings) -> AuthPolicy:
    security = svc.security
    admin = AdminCredentials(security.admin.username, security.admin.password)
    return AuthPolicy(
        open_mode=security.open_mode,
        accounts=Accounts(MemoryAccountStore(), admin, check_groups(security.admin.groups)),
        sessions=SessionStore(security.session_timeout_minutes * 60, renew=True),
        public_pages=PUBLIC_PATHS,
        anonymous=Identity(
            security.anonymous.user, tuple(security.anonymous.groups), anonymous=True
        ),
        proxy=TrustedProxy.from_settings(security.proxy),
        recheck_s=security.access_review_ttl,
    )


#: An encryption key shorter than this is a password, not a key.
MIN_KEY_CHARS = 32


def make_store(svc: ConsoleSettings) -> ClusterStore:
    if svc.clusters.store.backend is StoreBackend.MEMORY:
        return MemoryClusterStore()
    key = svc.clusters.store.encryption_key
    if key is not None and len(key) < MIN_KEY_CHARS:
        raise ConfigError(
            "console.clusters.store.encryption-key", f"at least {MIN_KEY_CHARS} random characters"
        )
    if key is None and is_postgresql(svc.store_url):
        raise ConfigError(
            "console.clusters.store.encryption-key",
            "a key (openssl rand -base64 32): kubeconfigs in PostgreSQL are stored encrypted",
        )
    return SqlClusterStore(svc.store_url, sealer=Sealer(key) if key is not None else None)


def _clusters_context(
    environ: Mapping[str, str], guard: AddressPolicy
) -> Callable[[web.Application], AsyncIterator[None]]:
    async def clusters(app: web.Application) -> AsyncIterator[None]:
        svc = app[SETTINGS]
        static = static_clusters(kubeconfig_paths(svc.kubeconfig, environ), environ)
        if static.fallback_reason:
            logger.info(
                "no kubeconfig contexts (%s): using the %r cluster",
                static.fallback_reason,
                "default",
            )
        store = make_store(svc)
        await store.open()
        await asyncio.to_thread(leftovers.sweep, svc.credentials_dir, "*")  # a killed run's copies
        registry = ClusterRegistry(
            static,
            store,
            workdir=svc.credentials_dir,
            guard=guard,
            probe_timeout=svc.clusters.probe_timeout_seconds,
            impersonation=svc.clusters.impersonate,
            impersonate_contexts=svc.clusters.impersonate_contexts,
        )
        warming: asyncio.Task[None] | None = None
        following: asyncio.Task[None] | None = None
        auditing: asyncio.Task[None] | None = None
        shared = contextlib.AsyncExitStack()
        try:
            await registry.load()
            app[CLUSTERS] = registry
            app[METRICS].gauge(
                "console_clusters", "Registered clusters.", lambda: len(registry.list())
            )
            if svc.clusters.warm_up:
                warming = asyncio.create_task(warm_up(registry, app[CATALOGS]))
            if isinstance(store, SqlClusterStore):
                app[AUTH].accounts.store = SqlAccountStore(store.db)
                auditing = asyncio.create_task(keep_durably(app[AUDIT], store.db))
            if isinstance(store, SqlClusterStore) and store.backend == "postgresql":
                # Shared by replicas: sessions live there too, and their changes are taken in.
                app[AUTH].sessions.rows = SqlSessionRows(store.db)
                pg = postgresql(store.db)
                if pg is not None:  # a sign-out ends streams on every replica
                    await shared.enter_async_context(app[REVOCATIONS].shared(pg))
                every_s = svc.clusters.store.sync_seconds
                following = asyncio.create_task(follow(registry, every_s=every_s))
            yield
        finally:
            await tasks.cancel(warming, following, auditing)
            await shared.aclose()
            app[AUTH].sessions.rows = MemorySessionRows()
            app[AUTH].accounts.store = MemoryAccountStore()
            await app[CATALOGS].close()
            await app[FLIGHTS].close()
            await app[ACCESS_REVIEWS].close()
            await registry.close()
            await store.close()

    return clusters


async def warm_up(registry: ClusterRegistry, catalogs: Catalogs) -> None:
    """Build each cluster's client (TLS handshake included) and read its discovery, a few clusters
    at a time, so the first request to a cluster finds both ready. A request arriving meanwhile
    shares the discovery under way. Failures are only logged: the cluster's first request reports
    them as it would have anyway."""
    gate = asyncio.Semaphore(WARM_UP_CONCURRENCY)

    async def warm(cluster_id: str) -> None:
        async with gate:
            try:
                await catalogs.get(KubeApi(await registry.client(cluster_id)))
            except Exception as exc:  # an unreachable cluster is normal here
                logger.info("cluster %r not warmed up: %s", cluster_id, type(exc).__name__)

    started = time.monotonic()
    clusters = [cluster.id for cluster in registry.list()]
    # A task group, not gather: a warm-up cancelled on its own (its discovery stopped) must not
    # end the others' parent early and leave them running past the shutdown that cancels it.
    async with asyncio.TaskGroup() as group:
        for cluster_id in clusters:
            group.create_task(warm(cluster_id))
    logger.debug("warmed up %d clusters in %.2f s", len(clusters), time.monotonic() - started)


async def _helm_releases(app: web.Application) -> Mapping[str, object]:
    """Up whatever the clusters say; the details name the Helm releases a stopped writer left
    pending on the registered clusters, and their recovery (a background refresh reads them)."""
    return await app[HELM_STUCK].report()


async def _store_ready(app: web.Application) -> Mapping[str, object]:
    registry = app[CLUSTERS]
    await registry.store.ping()
    return {"backend": registry.store.backend, "clusters": len(registry.list())}
