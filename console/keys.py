"""Every ``web.AppKey`` of the console, typed; no string keys anywhere.

Handlers of every group reach a cluster through ``request.app[CLUSTERS]``:
``client = await request.app[CLUSTERS].client(cluster_id)`` (a kubernetes-asyncio ``ApiClient``
owned by the registry: never close it; an unknown id raises ``UnknownCluster``, 404
``unknown-cluster``). Mutating handlers record themselves with ``console.audit.record`` or
``console.audit.audited``.
"""

from __future__ import annotations

from aiohttp import web

from console.audit import AUDIT
from console.auth import AuthPolicy
from console.clusters import ClusterRegistry
from console.metrics import RequestMetrics
from console.resources.discovery import Catalogs
from console.settings import ConsoleSettings
from console.streams.watches import WatchHub

SETTINGS = web.AppKey("console.settings", ConsoleSettings)
CLUSTERS = web.AppKey("console.clusters", ClusterRegistry)
AUTH = web.AppKey("console.auth", AuthPolicy)
METRICS = web.AppKey("console.metrics", RequestMetrics)
#: Discovery per cluster client, kept a few seconds (browse, objects, apply and actions routes).
CATALOGS = web.AppKey("console.catalogs", Catalogs)
#: Shared upstream watches (console.http.watch).
WATCHES = web.AppKey("console.watches", WatchHub)

__all__ = ["AUDIT", "AUTH", "CATALOGS", "CLUSTERS", "METRICS", "SETTINGS", "WATCHES"]
