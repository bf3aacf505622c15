"""Repository operations: add, list, remove, update, chart listings and chart lookup.

One instance per app, opened in a cleanup context. Writes to repositories.yaml are serialised by one
lock, updates of one repository by a lock per name; parsing and file writes run in threads. Chart and
version listings read only the prepared index (memory first, then its small file). This module knows
nothing of HTTP and never hands credentials from repositories.yaml to callers.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import attrs

from chartsvc import archives
from chartsvc.repos import config, index
from chartsvc.repos.cache import WeightedLRU
from chartsvc.repos.fetch import Fetcher, normal_url, resolve_chart_url, shown_url
from chartsvc.repos.model import (
    ChartNotFound,
    ChartVersion,
    RepositoryNotFound,
    UpdateResult,
    chart_version,
)
from chartsvc.repos.store import IndexFiles
from chartsvc.repos.updates import IndexUpdater
from common.errors import BadGateway, Conflict, WharfError
from common.netguard import AddressPolicy

ARCHIVE_MEMORY = 64 * 1024 * 1024  # downloaded archives kept by digest; charts are ~10-100 KB
UPDATE_ALL_CONCURRENCY = 3


@attrs.define
class RepoService:
    repositories_file: Path
    files: IndexFiles
    fetcher: Fetcher
    policy: AddressPolicy
    max_index_size: int
    limits: archives.ArchiveLimits
    _indexes: WeightedLRU[str, index.PreparedIndex]
    # How long an index of a repository named only in a chart's dependencies is reused.
    adhoc_ttl_s: float = 300
    _archives: WeightedLRU[str, bytes] = attrs.field(factory=lambda: WeightedLRU(ARCHIVE_MEMORY))
    #: The digests of the archives kept above, by the repository they came from (for refresh).
    _fetched: defaultdict[str, set[str]] = attrs.field(factory=lambda: defaultdict(set))
    _repo_file: config.EntriesCache = attrs.field(factory=config.EntriesCache)
    _updater: IndexUpdater = attrs.field(init=False)
    _finished: dict[str, tuple[float, UpdateResult]] = attrs.field(factory=dict)
    _config_lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    _locks: defaultdict[str, asyncio.Lock] = attrs.field(factory=lambda: defaultdict(asyncio.Lock))
    #: Told of every index download's outcome: "updated", "not-modified" or "failed".
    on_refresh: Callable[[str], None] = lambda outcome: None

    @_updater.default
    def _make_updater(self) -> IndexUpdater:
        return IndexUpdater(self.files, self.fetcher, self._indexes, self.max_index_size)

    # --- repositories.yaml --------------------------------------------------------------------

    async def configured(self, *, fresh: bool = False) -> tuple[config.Repository, ...]:
        """The repositories repositories.yaml names: as the file is now when ``fresh``, else as
        it was at most ``config.RECHECK_S`` ago. The same tuple until the file is read again."""
        # A stat of the file on the loop (microseconds; a thread hop costs far more); a thread
        # only to read it again after a change.
        repos = self._repo_file.unchanged(self.repositories_file, fresh=fresh)
        if repos is None:
            repos = await asyncio.to_thread(self._repo_file.read, self.repositories_file)
        return repos

    async def get(self, name: str) -> config.Repository:
        """The repository ``name``. One the last read of the file lacks is looked for in the file
        as it is now: a repository the helm CLI has just added is found at once."""
        config.check_name(name)
        repo = _named(await self.configured(), name)
        if repo is None:  # perhaps added since the file was last checked
            repo = _named(await self.configured(fresh=True), name)
        if repo is None:
            raise RepositoryNotFound(name)
        return repo

    async def add(self, name: str, url: str) -> tuple[config.Repository, bool]:
        """Add after downloading its index (as ``helm repo add`` does); (repo, created)."""
        config.check_name(name)
        self._check_url(url)
        entry = config.new_entry(name, url)
        repo = config.Repository.from_entry(entry)  # credentials out of the URL

        def append(entries: config.Entries) -> config.Entries:
            if any(e.get("name") == name for e in entries):  # the helm CLI was quicker
                raise Conflict(f"repository {name!r} was added meanwhile")
            return [*entries, entry]

        # Lock order everywhere: the repository's own lock, then the file's. A large index
        # downloads under the first only, so other repositories can be added meanwhile.
        async with self._locks[name]:
            existing = _named(await self.configured(fresh=True), name)
            if existing is not None:
                if existing.url.rstrip("/") != repo.url.rstrip("/"):
                    raise Conflict(f"repository {name!r} already exists with another URL")
                return existing, False
            await self._updater.download(
                name, repo.url, previous=None, credentials=repo.credentials
            )
            async with self._config_lock:
                await asyncio.to_thread(config.change_entries, self.repositories_file, append)
                self._repo_file.forget()
        return repo, True

    async def remove(self, name: str) -> None:
        config.check_name(name)

        def drop(entries: config.Entries) -> config.Entries:
            kept = [e for e in entries if e.get("name") != name]
            if len(kept) == len(entries):
                raise RepositoryNotFound(name)
            return kept

        async with self._locks[name]:
            async with self._config_lock:
                await asyncio.to_thread(config.change_entries, self.repositories_file, drop)
                self._repo_file.forget()
            await asyncio.to_thread(self.files.remove, name)
            self._indexes.discard(name)
            self._forget_archives(name)

    def _check_url(self, url: str) -> None:
        config.check_url(self.policy, url)

    # --- index download ------------------------------------------------------------------------

    async def update(self, name: str) -> UpdateResult:
        """Update one index. Requests that queued behind a running update share its result:
        update needs no key, so a burst of them must not mean a burst of downloads."""
        config.check_name(name)
        asked = time.monotonic()
        async with self._locks[name]:
            done = self._finished.get(name)
            if done is not None and done[0] > asked:
                return done[1]
            repo = await self.get(name)  # under the lock: a removal that went first wins
            previous = self._indexes.get(name) or await asyncio.to_thread(
                self.files.load, name, repair=False
            )
            return await self._download(repo, previous)

    async def refresh(self, name: str) -> tuple[UpdateResult, list[str]]:
        """Re-index: download the index unconditionally (no validators, so a server that keeps
        its ETag cannot answer 304) and forget every archive downloaded from this repository.
        The result and the sha256 digests of the archives forgotten."""
        config.check_name(name)
        async with self._locks[name]:
            result = await self._download(await self.get(name), None)
            return result, self._forget_archives(name)

    async def _download(
        self, repo: config.Repository, previous: index.PreparedIndex | None
    ) -> UpdateResult:
        """Download under the repository's lock (the caller holds it), told to ``on_refresh``."""
        try:
            result = await self._updater.download(
                repo.name, repo.url, previous=previous, credentials=repo.credentials
            )
        except WharfError:
            self.on_refresh("failed")
            raise
        self.on_refresh("updated" if result.updated else "not-modified")
        self._finished[repo.name] = (time.monotonic(), result)
        return result

    def _forget_archives(self, name: str) -> list[str]:
        digests = sorted(self._fetched.pop(name, set()))
        for digest in digests:
            self._archives.discard(digest)
        return [d.removeprefix("sha256:").lower() for d in digests]

    def index_memory(self) -> tuple[int, int]:
        """Indexes held in memory and their weight in bytes (for the metrics)."""
        return len(self._indexes), self._indexes.weight

    def last_updates(self) -> list[UpdateResult]:
        """The latest download of each repository updated since start-up (for the metrics)."""
        return [result for _, result in self._finished.values()]

    async def update_all(self) -> list[UpdateResult]:
        repos = await self.configured()
        # A few at a time: each parse of a large index peaks at several times its size.
        gate = asyncio.Semaphore(UPDATE_ALL_CONCURRENCY)

        async def one(name: str) -> UpdateResult:
            async with gate:
                return await self.update(name)

        outcomes = await asyncio.gather(*(one(r.name) for r in repos), return_exceptions=True)
        results = []
        for repo, outcome in zip(repos, outcomes, strict=True):
            if isinstance(outcome, WharfError):
                outcome = UpdateResult(repo.name, False, 0, 0, 0, error=outcome.detail)
            elif isinstance(outcome, BaseException):
                raise outcome
            results.append(outcome)
        return results

    async def require_index(self, name: str) -> index.PreparedIndex:
        """The prepared index, downloaded first if this repository has never been updated."""
        prepared = await self._updater.prepared(name)
        if prepared is not None:
            return prepared
        async with self._locks[name]:
            repo = await self.get(name)
            prepared = await self._updater.prepared(name)
            if prepared is None:
                await self._updater.download(
                    name, repo.url, previous=None, credentials=repo.credentials
                )
                prepared = await self._updater.prepared(name)
        assert prepared is not None
        return prepared

    # --- listings and lookup --------------------------------------------------------------------

    async def charts(self, name: str) -> list[ChartVersion]:
        await self.get(name)
        prepared = await self.require_index(name)
        return [
            chart_version(f"{name}/{chart}", entry)
            for chart, entry in sorted(prepared.latest.items())
        ]

    async def versions(self, name: str, chart: str) -> list[ChartVersion]:
        entries = await self._entries(name, chart)
        return [chart_version(chart, entry) for entry in entries]

    async def _entries(self, name: str, chart: str) -> list[index.Entry]:
        await self.get(name)
        entries = (await self.require_index(name)).entries(chart)
        if not entries:
            raise ChartNotFound(name, chart)
        return entries

    async def chart_archive(self, name: str, chart: str, version: str | None) -> tuple[bytes, str]:
        """The archive of ``chart`` at ``version`` (latest when None) and its file name."""
        entry = index.find(await self._entries(name, chart), version)
        if entry is None:
            raise ChartNotFound(name, chart, version)
        if not entry[index.URLS]:
            raise ChartNotFound(name, chart, entry[index.VERSION])
        repo = await self.get(name)
        url = resolve_chart_url(repo.url, entry[index.URLS][0])
        data = await self._fetch_archive(url, entry, repo.credentials_for(url))
        if entry[index.DIGEST]:
            self._fetched[name].add(str(entry[index.DIGEST]))
        return data, f"{chart}-{entry[index.VERSION]}.tgz"

    async def chart_provenance(
        self, name: str, chart: str, version: str | None, *, max_bytes: int
    ) -> bytes | None:
        """The ``.prov`` of the archive :meth:`chart_archive` gives (None when there is none)."""
        entry = index.find(await self._entries(name, chart), version)
        if entry is None or not entry[index.URLS]:
            raise ChartNotFound(name, chart, version)
        repo = await self.get(name)
        url = resolve_chart_url(repo.url, entry[index.URLS][0])
        return await self.fetcher.provenance(
            url, max_bytes=max_bytes, credentials=repo.credentials_for(url)
        )

    async def _fetch_archive(
        self, url: str, entry: index.Entry, credentials: tuple[str, str] | None
    ) -> bytes:
        digest = str(entry[index.DIGEST])
        cached = self._archives.get(digest) if digest else None
        if cached is not None:
            return cached
        data = await self.fetcher.archive(
            url, digest=digest, max_bytes=self.limits.max_archive_bytes, credentials=credentials
        )
        await asyncio.to_thread(archives.check, data, self.limits)
        if digest:
            self._archives.put(digest, data, len(data))
        return data

    async def versions_for(self, repo_url: str, chart: str) -> list[str]:
        """Versions of ``chart`` newest first (only those with a download URL) for dependency
        resolution; ``repo_url`` may be a configured repository's URL or ``@name``/``alias:name``."""
        prepared = await self._index_for_url(repo_url)
        entries = prepared.entries(chart) or []
        return [str(e[index.VERSION]) for e in entries if e[index.URLS]]

    async def _index_for_url(self, repo_url: str) -> index.PreparedIndex:
        for prefix in ("@", "alias:"):
            if repo_url.startswith(prefix):
                return await self.require_index((await self.get(repo_url[len(prefix) :])).name)
        wanted = normal_url(repo_url)
        for repo in await self.configured():
            if normal_url(repo.url) == wanted:
                return await self.require_index(repo.name)
        return await self._adhoc_index(repo_url)

    async def _adhoc_index(self, repo_url: str) -> index.PreparedIndex:
        """An unconfigured repository's index, kept a few minutes: nothing updates it explicitly."""
        key = "url:" + normal_url(repo_url)
        cached = self._indexes.get(key)
        if cached is not None and time.monotonic() - cached.source["at"] < self.adhoc_ttl_s:
            return cached
        self._check_url(repo_url)
        download = await self.fetcher.index(
            repo_url, etag=None, last_modified=None, max_bytes=self.max_index_size
        )
        if download is None:
            raise BadGateway(
                f"{shown_url(repo_url)} answered 304 Not Modified to an unconditional request"
            )
        source = {"url": repo_url, "at": time.monotonic()}
        prepared = await asyncio.to_thread(index.parse, download.body, source=source)
        self._indexes.put(key, prepared, prepared.weight)
        return prepared


def _named(repos: tuple[config.Repository, ...], name: str) -> config.Repository | None:
    return next((repo for repo in repos if repo.name == name), None)
