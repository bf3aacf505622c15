"""Every ``web.AppKey`` of the console, typed; no string keys anywhere.

Handlers of every group reach a cluster through ``request.app[CLUSTERS]``:
``client = await request.app[CLUSTERS].client(cluster_id)`` (a kubernetes-asyncio ``ApiClient``
owned by the registry: never close it; an unknown id raises ``UnknownCluster``, 404
``unknown-cluster``). Mutating handlers record themselves with ``console.audit.record`` or
``console.audit.audited``.
"""

from __future__ import annotations

import weakref

from aiohttp import web

from chartsvc.releases import StuckReleases
from common.metrics import METRICS
from common.netguard import IPNetwork
from console.audit import AUDIT
from console.auth import AuthPolicy
from console.clusters import ClusterRegistry
from console.diagnose.summary import Summaries
from console.helm.desk import HelmDesk
from console.resources.access import AccessReviews
from console.resources.discovery import Catalogs
from console.resources.flights import Flights
from console.settings import ConsoleSettings
from console.streams.portforward import PortForwards
from console.streams.watches import WatchHub
from console.usage.prometheus import Detections
from console.usage.sampler import Sampler

SETTINGS = web.AppKey("console.settings", ConsoleSettings)
CLUSTERS = web.AppKey("console.clusters", ClusterRegistry)
AUTH = web.AppKey("console.auth", AuthPolicy)
#: Discovery per cluster client, kept a few seconds (browse, objects, apply and actions routes).
CATALOGS = web.AppKey("console.catalogs", Catalogs)
#: The clusters' answers to "may this person do that" (shared watches, cross-namespace reads).
ACCESS_REVIEWS = web.AppKey("console.access_reviews", AccessReviews)
#: Identical reads under way share one call (counts: one fan-out however many ask at once).
FLIGHTS = web.AppKey("console.flights", Flights)
#: Shared upstream watches (console.http.watch).
WATCHES = web.AppKey("console.watches", WatchHub)
#: The chart library, release service and values library (Helm routes).
HELM = web.AppKey("console.helm", HelmDesk)
#: Helm releases a stopped writer left pending on the registered clusters (health details).
HELM_STUCK = web.AppKey("console.helm_stuck", StuckReleases)
#: The LLM summary client and cache (diagnose routes).
SUMMARIES = web.AppKey("console.summaries", Summaries)
#: The in-memory metrics sampler behind graphs (metrics routes).
SAMPLER = web.AppKey("console.sampler", Sampler)
#: Each cluster's detected metrics backends, kept briefly (metrics routes).
METRICS_BACKENDS = web.AppKey("console.metrics_backends", Detections)
#: Every running port-forward (console.http.portforwards).
PORT_FORWARDS = web.AppKey("console.port_forwards", PortForwards)
#: Open ``/ws/exec`` sockets, closed at shutdown (console.http.podexec).
EXEC_SESSIONS = web.AppKey("console.exec_sessions", weakref.WeakSet[web.WebSocketResponse])
#: Networks outbound fetches (charts, the LLM) may reach beyond the address policy; set by tests
#: (a loopback chart repository or model) before the app starts. Never set in production.
OUTBOUND_ALLOW = web.AppKey("console.outbound_allow", tuple[IPNetwork, ...])

__all__ = [
    "ACCESS_REVIEWS",
    "AUDIT",
    "AUTH",
    "CATALOGS",
    "CLUSTERS",
    "EXEC_SESSIONS",
    "FLIGHTS",
    "HELM",
    "HELM_STUCK",
    "METRICS",
    "METRICS_BACKENDS",
    "OUTBOUND_ALLOW",
    "PORT_FORWARDS",
    "SAMPLER",
    "SETTINGS",
    "SUMMARIES",
    "WATCHES",
]
