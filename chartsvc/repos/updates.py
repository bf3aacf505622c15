"""Downloading an index and preparing it: conditional GET, parse off the loop, atomic store.

The repository service decides when (add, update, first use) and under which lock; this module does
the work and keeps the prepared index in the memory-bounded cache. It knows nothing of
repositories.yaml or HTTP routes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from typing import Any

import attrs

from chartsvc.repos import index
from chartsvc.repos.cache import WeightedLRU
from chartsvc.repos.fetch import Fetcher, shown_url
from chartsvc.repos.files import remove_quietly
from chartsvc.repos.model import UpdateResult, update_result
from chartsvc.repos.store import IndexFiles
from common.errors import BadGateway
from common.memory import release_freed_memory

logger = logging.getLogger(__name__)


@attrs.define
class IndexUpdater:
    files: IndexFiles
    fetcher: Fetcher
    indexes: WeightedLRU[str, index.PreparedIndex]
    max_index_size: int

    async def download(
        self,
        name: str,
        url: str,
        *,
        previous: index.PreparedIndex | None,
        credentials: tuple[str, str] | None = None,
    ) -> UpdateResult:
        started = time.monotonic()
        source = previous.source if previous and previous.source.get("url") == url else {}
        download = await self.fetcher.index(
            url,
            etag=source.get("etag"),
            last_modified=source.get("lastModified"),
            max_bytes=self.max_index_size,
            credentials=credentials,
        )
        if download is None:
            if previous is None:  # validators go out only with a previous index
                raise BadGateway(
                    f"{shown_url(url)} answered 304 Not Modified to an unconditional request"
                )
            return update_result(name, previous, updated=False)
        fetched = datetime.now(UTC).isoformat()
        meta = {"url": url, "etag": download.etag, "lastModified": download.last_modified}
        prepared = await self._prepare(name, download.body, {**meta, "fetched": fetched})
        del download, previous  # let the raw bytes and the old index go before trimming
        self.indexes.put(name, prepared, prepared.weight)
        await asyncio.to_thread(release_freed_memory)
        logger.info(
            "repository %s: index prepared, %d charts, %d versions, %d invalid entries skipped, "
            "%.0f ms",
            name,
            len(prepared.charts),
            prepared.versions,
            prepared.skipped,
            (time.monotonic() - started) * 1000,
        )
        return update_result(name, prepared, updated=True)

    async def _prepare(self, name: str, raw: bytes, source: dict[str, Any]) -> index.PreparedIndex:
        """Parse while the raw file is written; publish both only when the parse succeeded."""
        staging = asyncio.ensure_future(asyncio.to_thread(self.files.stage_raw, name, raw))
        try:
            prepared = await asyncio.to_thread(index.parse, raw, source=source)
        except BaseException:
            await asyncio.to_thread(remove_quietly, await staging)
            raise
        staged = await staging
        await asyncio.to_thread(self.files.commit, name, staged, prepared)
        return prepared

    async def prepared(self, name: str) -> index.PreparedIndex | None:
        cached = self.indexes.get(name)
        if cached is not None:
            return cached
        loaded = await asyncio.to_thread(self.files.load, name)
        if loaded is not None:
            self.indexes.put(name, loaded, loaded.weight)
        return loaded
