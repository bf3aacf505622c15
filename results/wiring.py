"""What ``results.app`` plugs in for people: the auth guard, accounts and events contexts, pages.

Kept apart from ``app.py`` so the store/ingest side and the accounts/events side each change their
own module. Order matters and is ``app.py``'s: these contexts run after the store context, whose
``keys.DATABASE`` they use. This module must not hold request handling of its own.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from common import credentials
from common.config import ConfigError
from common.db import postgresql
from common.openapi import Spec
from common.revocation import REVOCATIONS
from common.routing import Guard
from results import auth, keys, replicas
from results.accounts import Accounts
from results.dashboard import Dashboard
from results.events import EventHub
from results.settings import ResultsSettings
from results.store.accounts import SqlAccountStore
from results.store.dashboard import SqlDashboardStore
from results.store.events import SqlEventStore

logger = logging.getLogger(__name__)


def guards(settings: ResultsSettings, *, base_path: str, spec: Spec) -> list[Guard]:
    """The auth guard (``results.auth``), its settings checked first."""
    admin = settings.security.admin
    if admin.username and not admin.password:
        raise ConfigError("results.security.admin.password", "a password (admin.username is set)")
    if admin.password:  # a malformed {scrypt} hash stops start-up here, not at the first login
        credentials.setting_hash(admin.password, setting="results.security.admin.password")
    policy = auth.AuthPolicy(
        open_mode=settings.security.open_mode,
        require_ingest_token=settings.security.require_ingest_token,
        base_path=base_path,
    )
    return [auth.auth_guard(policy, spec)]


async def accounts_context(app: web.Application) -> AsyncIterator[None]:
    security = app[keys.SETTINGS].security
    accounts = Accounts(
        SqlAccountStore(app[keys.DATABASE]),
        session_ttl=dt.timedelta(hours=security.session_hours),
    )
    if security.admin.username and security.admin.password:
        made = await accounts.bootstrap_admin(security.admin.username, security.admin.password)
        if made is not None:
            logger.info("bootstrap admin %s created from settings", made.username)
    await accounts.purge_sessions()
    revocations = app[REVOCATIONS]
    accounts.on_revoke = revocations.revoke
    app[keys.ACCOUNTS] = accounts
    app[keys.DASHBOARD] = Dashboard(SqlDashboardStore(app[keys.DATABASE]))
    shared = postgresql(app[keys.DATABASE])
    if shared is not None:  # a sign-out on one replica ends the streams of every one
        async with revocations.shared(shared):
            yield
        return
    yield


async def events_context(app: web.Application) -> AsyncIterator[None]:
    events = app[keys.SETTINGS].events
    hub = EventHub(
        SqlEventStore(app[keys.DATABASE]),
        queue_size=events.queue_size,
        max_subscribers=events.max_subscribers,
        replay_limit=events.replay_limit,
        max_anonymous_per_address=events.max_anonymous_per_address,
    )
    app[keys.EVENTS] = hub
    shared = postgresql(app[keys.DATABASE])
    if shared is not None:
        async with replicas.relay(shared, app[keys.STORE], hub) as announce:
            app[keys.RUN_LISTENERS].append(announce)
            try:
                yield
            finally:
                app[keys.RUN_LISTENERS].remove(announce)
        return
    listeners = app[keys.RUN_LISTENERS]
    listeners.append(hub.publish)
    try:
        yield
    finally:
        listeners.remove(hub.publish)
