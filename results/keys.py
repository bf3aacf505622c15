"""Every ``web.AppKey`` and ``web.RequestKey`` of the results service, typed; no string keys anywhere.

Set by: ``SETTINGS`` and ``RUN_LISTENERS`` in ``app.create_app``; ``STORE``, ``DATABASE``,
``READS`` and ``INGESTOR`` by the store context in ``app``; ``ACCOUNTS`` and ``EVENTS`` by the accounts and
events contexts; ``PRINCIPAL`` by the auth middleware on each request.
"""

from __future__ import annotations

from aiohttp import web

from common.throttle import LoginThrottle
from results.accounts import Accounts, Principal
from results.dashboard import Dashboard
from results.events import EventHub
from results.gate import VerdictCache
from results.ingest import Ingestor
from results.metrics import ResultsMetrics
from results.reads import ReadStore
from results.runs import RunListener
from results.runstore import Store
from results.settings import ResultsSettings
from results.store import Database

SETTINGS = web.AppKey("results.settings", ResultsSettings)
STORE: web.AppKey[Store] = web.AppKey("results.store")
#: The SQLite database behind ``STORE``, for ``results.store.accounts`` (same writer, same file).
DATABASE = web.AppKey("results.database", Database)
INGESTOR = web.AppKey("results.ingestor", Ingestor)
#: Awaited after each ingest transaction commits, in order; append to it in a cleanup context.
RUN_LISTENERS: web.AppKey[list[RunListener]] = web.AppKey("results.run_listeners")
ACCOUNTS = web.AppKey("results.accounts", Accounts)
LOGIN_THROTTLE = web.AppKey("results.login_throttle", LoginThrottle)
EVENTS = web.AppKey("results.events", EventHub)
#: The read side's store (API and pages), set by the store context beside ``STORE``.
READS: web.AppKey[ReadStore] = web.AppKey("results.reads")
#: Set by the accounts context (``results.wiring``), read by the dashboard pages.
DASHBOARD = web.AppKey("results.dashboard", Dashboard)
#: This service's own Prometheus series (``results.metrics``), set in ``app.create_app``.
METRICS: web.AppKey[ResultsMetrics] = web.AppKey("results.metrics")
#: Gate verdicts kept while the store's data is unchanged (``results.gate``), set in ``app.create_app``.
VERDICTS = web.AppKey("results.verdicts", VerdictCache)
#: None for an anonymous request: always set, so reading it never raises (``request.get`` of a
#: missing key raises and catches a KeyError, the dearest step of an anonymous poll).
PRINCIPAL: web.RequestKey[Principal | None] = web.RequestKey("results.principal")
