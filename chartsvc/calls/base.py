"""What a call works with: the domain services, its reply, and the table every call is filed in.

:class:`Services` is built once per app (after the domain services open) and, per HTTP request,
given the request that carried the call: a host's cluster resolver picks a release call's cluster
from it. :class:`Reply` is a response's status and body, which each door renders its own way; a
reply that repeats unchanged is made once (``common.memo.Remade``), with its JSON bytes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs

from chartsvc.calls.form import ChartForm, invalid
from chartsvc.charts import ChartService
from chartsvc.clusters import ClusterSource, ClusterTarget, ResolverFailed
from chartsvc.encoders import encode_repository
from chartsvc.hub import HubClient
from chartsvc.releases import ReleaseService
from chartsvc.repos.config import Repository
from chartsvc.repos.service import RepoService
from common.memo import Remade
from common.openapi import Validated

if TYPE_CHECKING:  # the HTTP door hands its request through; nothing here serves HTTP
    from aiohttp import web


@attrs.frozen
class Reply:
    """A response's status and body: JSON (``body``), text of type ``media``, an archive, or none."""

    body: Any = None
    text: str | None = None
    media: str = "text/plain"
    archive: bytes | None = None
    filename: str = "chart.tgz"
    status: int = 200
    #: ``body`` as JSON, made once for a reply sent many times (the HTTP door sends these bytes).
    encoded: bytes | None = None

    @classmethod
    def encoded_once(cls, body: Any) -> Reply:
        """A JSON reply with its bytes made now, as ``json.dumps`` makes them for any reply."""
        return cls(body, encoded=json.dumps(body).encode("utf-8"))


@attrs.frozen
class Services:
    """The domain services the calls use, taken from the running app.

    ``request`` is the HTTP request that carried the call (None over stdio): a host's cluster
    resolver picks the cluster of a release call from it.
    """

    repos: RepoService
    charts: ChartService
    hub: HubClient
    releases: ReleaseService | None = None
    clusters: ClusterSource | None = None
    request: web.Request | None = None
    #: The repository listing's reply, kept while the configured repositories are the same.
    repo_listing: Remade[Repository, Reply] = attrs.field(factory=lambda: Remade(_listing))

    def for_request(self, request: web.Request) -> Services:
        """These services for the call ``request`` carries: only a host's cluster resolver reads
        the request, so without one they are these very services (``attrs.evolve`` costs far
        more, on every request)."""
        if self.clusters is None or self.clusters.resolver is None:
            return self
        return Services(
            self.repos,
            self.charts,
            self.hub,
            self.releases,
            self.clusters,
            request,
            self.repo_listing,
        )

    async def cluster(self) -> ClusterTarget:
        if self.clusters is None:
            raise ResolverFailed("no cluster is configured for the release operations")
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


Call = Callable[[Services, Validated], Awaitable[Reply]]


async def verified_archive(s: Services, body: dict[str, Any], *, field: str) -> bytes | None:
    """With ``verify`` in ``body``: the archive its ``field`` names, once its provenance checks
    out (else ProvenanceFailed, and nothing further happens); None without ``verify``."""
    if not body.get("verify"):
        return None
    ref, version, key_id = body[field], body.get("version"), body.get("keyId")
    return (await s.charts.verified(ref, version, key_id, field=field))[0]


async def verified_upload(s: Services, form: ChartForm, request: dict[str, Any]) -> bytes:
    """The form's archive; with ``verify`` in its ``request`` part, once the ``provenance`` part
    checks out (else ProvenanceFailed, and nothing further happens). A ``provenance`` part
    without ``verify`` is refused rather than silently left unchecked."""
    archive = form.archive()
    provenance = form.parts.get("provenance")
    if not request.get("verify"):
        if provenance is not None:
            raise invalid("provenance", "is checked only with verify: true in the request part")
        return archive
    await s.charts.verify_upload(archive, provenance, request.get("keyId"))
    return archive


#: Every call, by operationId: the modules of this package file theirs with :func:`call`.
CALLS: dict[str, Call] = {}


def call(operation_id: str) -> Callable[[Call], Call]:
    """A decorator that files a call under its operationId in :data:`CALLS`, once."""

    def register(fn: Call) -> Call:
        if operation_id in CALLS:
            raise ValueError(f"two calls for {operation_id}")
        CALLS[operation_id] = fn
        return fn

    return register


def _listing(repos: Sequence[Repository]) -> Reply:
    return Reply.encoded_once([encode_repository(r) for r in repos])
