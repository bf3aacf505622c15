"""Assembly of the results service: spec, routes, middlewares and the resources' cleanup contexts.

``create_app`` is synchronous and does no I/O beyond reading the packaged spec. Resources open in
cleanup contexts, in this order, and close in reverse:

0. ``spool_context`` — removes the upload spools a killed process left behind.
1. ``store_context`` — the store (SQLite or PostgreSQL) (``keys.STORE``, ``keys.DATABASE``) and the ingestor
   (``keys.INGESTOR``), which awaits ``keys.RUN_LISTENERS`` after each committed ingest.
2. The accounts context (``keys.ACCOUNTS``), after the store whose database it uses.
3. The events context (``keys.EVENTS``): it appends its broadcaster to ``keys.RUN_LISTENERS``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from common import leftovers, sse
from common.app import build_app
from common.metrics import METRICS
from common.openapi import Spec
from common.throttle import LoginThrottle
from common.uploads import SPOOL_PREFIX
from results import keys, wiring
from results import web as pages
from results.fields import SPEC_PATTERNS
from results.gate import VerdictCache
from results.http import accounts, badges, events, gate, history, ingest, projects, runs
from results.ingest import Ingestor
from results.metrics import ResultsMetrics
from results.parsers.model import ParseLimits
from results.runs import RunListener
from results.settings import IngestSettings, Settings
from results.store import open_store
from results.store.reads import SqlReadStore

SPEC_PATH = Path(__file__).resolve().parent.parent / "spec" / "results.yaml"
BASE_PATH = "/api/v1"
#: The API route tables; each route's ``name`` is its operationId in ``spec/results.yaml``.
API_ROUTES: tuple[web.RouteTableDef, ...] = (
    ingest.routes,
    gate.routes,
    accounts.routes,
    events.routes,
    projects.routes,
    runs.routes,
    history.routes,
    badges.routes,
)


@functools.cache
def load_spec() -> Spec:
    return Spec.load(SPEC_PATH, patterns=SPEC_PATTERNS)


def create_app(
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    keepalive_s: float = sse.KEEPALIVE_INTERVAL_S,
) -> web.Application:
    """The results service; ``keepalive_s`` shortens the SSE keepalive (tests only).

    ``environ`` is taken for the shape every service's factory shares; results reads nothing from
    the process environment (its CI commands do, not the server).
    """
    svc = settings.results
    # The auth guard (results.wiring); HTML error pages for the dashboard.
    spec = load_spec()
    guards = wiring.guards(svc, base_path=BASE_PATH, spec=spec)
    app = build_app(
        service="results",
        spec=spec,
        api_routes=API_ROUTES,
        base_path=BASE_PATH,
        extra_routes=pages.ROUTES,  # login, profile and dashboard pages
        guards=guards,
        error_page=pages.error_page,
        info={"security": {"openMode": svc.security.open_mode}},
        readiness={"database": database_ready},
        keepalive_s=keepalive_s,
    )
    app[keys.SETTINGS] = svc
    app[keys.LOGIN_THROTTLE] = LoginThrottle()
    app[keys.VERDICTS] = VerdictCache()
    app[keys.METRICS] = ResultsMetrics.register(app[METRICS], subscribers=lambda: _subscribers(app))
    listeners: list[RunListener] = []
    app[keys.RUN_LISTENERS] = listeners
    app.cleanup_ctx.append(spool_context)
    app.cleanup_ctx.append(store_context)
    # The accounts and events contexts, after the store; then the page templates.
    app.cleanup_ctx.append(wiring.accounts_context)
    app.cleanup_ctx.append(wiring.events_context)
    pages.setup(app)
    return app


def _subscribers(app: web.Application) -> int:
    hub = app.get(keys.EVENTS)
    return len(hub.subscriptions) if hub is not None else 0


async def spool_context(app: web.Application) -> AsyncIterator[None]:
    """Upload spools a killed process left (each holds whole uploaded reports) go first."""
    spool = app[keys.SETTINGS].spool_dir
    await asyncio.to_thread(leftovers.sweep, spool, f"{SPOOL_PREFIX}*")
    yield


async def store_context(app: web.Application) -> AsyncIterator[None]:
    svc = app[keys.SETTINGS]
    async with open_store(
        svc.db_url, busy_timeout_ms=svc.db.busy_timeout_ms, pool_size=svc.db.pool_size
    ) as store:
        app[keys.STORE] = store
        app[keys.DATABASE] = store.db
        app[keys.READS] = SqlReadStore(store.db)
        app[keys.INGESTOR] = Ingestor(
            store=store,
            limits=parse_limits(svc.ingest),
            new_project_visibility=svc.projects.default_visibility,
            listeners=app[keys.RUN_LISTENERS],
            max_diff_bytes=svc.ingest.max_diff_bytes,
        )
        yield


def parse_limits(settings: IngestSettings) -> ParseLimits:
    return ParseLimits(
        max_bytes=settings.max_report_bytes,
        max_depth=settings.max_xml_depth,
        max_elements=settings.max_elements,
    )


async def database_ready(app: web.Application) -> Mapping[str, Any] | None:
    await app[keys.DATABASE].fetchone("SELECT 1")
    return None
