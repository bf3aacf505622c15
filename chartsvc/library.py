"""The chart library as one object: repositories, OCI, the hub, the Helm adapter and chart operations.

chartsvc serves it as its own API; the console embeds the same library under ``/api/v1/helm`` and
installs releases from it on any of its clusters. Both open it here, from a
:class:`~chartsvc.settings.ChartsvcSettings` and an outbound address policy, so the two services
build it one way. :func:`open_library` opens the outbound sessions and the Helm adapter and closes
them after its block. Nothing here knows HTTP routes or reads settings sources.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs

from chartsvc import archives
from chartsvc.charts import ChartService
from chartsvc.gpg import GpgMissing, Keyring
from chartsvc.helm import Helm, Observer, RenderLimits
from chartsvc.hub import HubClient
from chartsvc.oci import OciClient
from chartsvc.registries import read_credentials
from chartsvc.repos.cache import WeightedLRU
from chartsvc.repos.fetch import Fetcher
from chartsvc.repos.files import STAGED_PATTERN
from chartsvc.repos.service import RepoService
from chartsvc.repos.store import IndexFiles
from chartsvc.settings import ChartsvcSettings
from common import leftovers
from common.netguard import AddressPolicy, guarded_session

logger = logging.getLogger(__name__)


@attrs.frozen
class ChartLibrary:
    repos: RepoService
    oci: OciClient
    hub: HubClient
    helm: Helm
    charts: ChartService


def archive_limits(svc: ChartsvcSettings) -> archives.ArchiveLimits:
    return archives.ArchiveLimits(
        max_archive_bytes=svc.charts.max_archive_size,
        max_decompressed_bytes=svc.charts.max_decompressed_size,
        max_entries=svc.charts.max_entries,
    )


def sweep_leftovers(svc: ChartsvcSettings) -> None:
    """What a killed process left (blocking): index files staged and never published in the
    repository cache, and, in a temp dir of our own, Helm's work folders (``chartsvc-*``)."""
    leftovers.sweep(svc.cache_dir, STAGED_PATTERN, recursive=True)
    if svc.rest.temp_dir is not None:
        leftovers.sweep(svc.rest.temp_dir, "chartsvc-*")


def render_limits(svc: ChartsvcSettings) -> RenderLimits:
    return RenderLimits(
        timeout=svc.charts.render_timeout,
        max_output=svc.charts.max_render_output,
        max_memory=svc.charts.max_render_memory,
        workers=svc.charts.render_workers,
    )


@asynccontextmanager
async def open_library(
    svc: ChartsvcSettings, policy: AddressPolicy, *, helm_observer: Observer | None = None
) -> AsyncIterator[ChartLibrary]:
    """The library of ``svc``'s repositories, cache and limits, fetching only what ``policy``
    allows; its sessions and the Helm adapter close when the block ends. ``helm_observer`` hears
    of every Helm call (the service's metrics)."""
    if svc.rest.temp_dir is not None:
        svc.rest.temp_dir.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(leftovers.sweep, svc.credentials_dir, "*")  # a killed run's copies
    await asyncio.to_thread(sweep_leftovers, svc)
    credentials = await asyncio.to_thread(read_credentials, svc.registry_config)
    async with (
        guarded_session(policy) as session,
        HubClient(policy, svc.hub.base_url) as hub_client,
        OciClient(policy, plain_http=svc.oci.plain_http, credentials=credentials) as oci_client,
    ):
        repos = RepoService(
            repositories_file=svc.repositories_file,
            files=IndexFiles(svc.cache_dir),
            fetcher=Fetcher(session, policy),
            policy=policy,
            max_index_size=svc.repositories.max_index_size,
            limits=archive_limits(svc),
            indexes=WeightedLRU(svc.repositories.index_memory),
        )
        keyring, unavailable = await _keyring(svc.security.keyring)
        helm = Helm(
            temp_dir=svc.rest.temp_dir,
            credentials_dir=svc.credentials_dir,
            observer=helm_observer,
            render_limits=render_limits(svc),
        )
        checker = archives.ArchiveChecker(archive_limits(svc))
        charts = ChartService(
            repos,
            oci_client,
            checker,
            helm.charts,
            keyring=keyring,
            keyring_unavailable=unavailable,
        )
        try:
            yield ChartLibrary(repos, oci_client, hub_client, helm, charts)
        finally:
            await asyncio.to_thread(helm.close)
            if keyring is not None:
                await asyncio.to_thread(keyring.close)


async def _keyring(path: Path | None) -> tuple[Keyring | None, str | None]:
    """The configured keyring, read once; a keyring that cannot be read stops start-up, except
    when ``gpg`` itself is missing: the service then serves all else, and a provenance check
    answers 503 saying why (``verify`` never passes unchecked)."""
    if path is None:
        return None, None
    try:
        return await asyncio.to_thread(Keyring.load, path), None
    except GpgMissing as exc:
        logger.error("%s; provenance checks answer 503 until it is installed", exc)
        return None, str(exc)
