"""Search the public chart hub (Artifact Hub) for Helm charts.

One call, ``GET {base}/api/v1/packages/search?ts_query_web=…&kind=0&limit=…``, mapped onto the
contract's hub result (name, version, appVersion, repoName, repoUrl, description). The hub is someone
else's service: whatever it does wrong (an error status, a timeout, a body that is not the JSON we
expect) becomes ``HubUnavailable``, a 502 problem, never a 500.

This module must not know about aiohttp.web, fetch anything except through the address guard, or put
upstream bodies into errors beyond a short excerpt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import attrs
import yarl

from common.errors import BadGateway
from common.netguard import GuardedClient

DEFAULT_RESULTS = 20
MAX_RESULTS = 60  # Artifact Hub's own cap on ``limit``
HELM_CHARTS = 0  # Artifact Hub repository kind 0 = Helm charts
MAX_BODY_BYTES = 8 * 1024 * 1024  # 60 package summaries are ~100 KiB; more is not a search answer


class HubUnavailable(BadGateway, code="hub-unavailable"):
    """The hub failed, timed out or answered with something that is not a search result."""

    def __init__(self, base_url: str, reason: str) -> None:
        super().__init__(f"the chart hub at {base_url} {reason}", extra={"hub": base_url})
        self.base_url = base_url


@attrs.frozen
class HubResult:
    """One chart found on the hub (the HTTP layer spells the fields camelCase)."""

    name: str
    version: str
    app_version: str
    repo_name: str
    repo_url: str
    description: str

    @classmethod
    def from_package(cls, package: Mapping[str, Any]) -> HubResult:
        """From an Artifact Hub ``PackageSummary``; absent or null fields become ``""``."""
        repository = package.get("repository")
        repo = repository if isinstance(repository, Mapping) else {}
        return cls(
            name=_text(package.get("name")),
            version=_text(package.get("version")),
            app_version=_text(package.get("app_version")),
            repo_name=_text(repo.get("name")),
            repo_url=_text(repo.get("url")),
            description=_text(package.get("description")),
        )


@attrs.frozen
class HubPage:
    results: list[HubResult]
    total: int | None
    """The hub's ``Pagination-Total-Count``: matches in all, beyond this page."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def clamp_results(max_results: int) -> int:
    """The hub's range: at least 1, at most 60."""
    return max(1, min(max_results, MAX_RESULTS))


@attrs.define
class HubClient(GuardedClient):
    """Artifact Hub search; ``async with`` it or call ``close()``."""

    base_url: str
    timeout_s: float = attrs.field(default=10, kw_only=True)

    async def search(self, keyword: str, max_results: int = DEFAULT_RESULTS) -> list[HubResult]:
        """Helm charts matching ``keyword``, at most ``max_results`` (clamped to 1..60)."""
        return (await self.search_page(keyword, max_results)).results

    async def search_page(self, keyword: str, max_results: int = DEFAULT_RESULTS) -> HubPage:
        url = self.search_url(keyword, max_results)
        try:
            async with asyncio.timeout(self.timeout_s):
                status, headers, body = await self._get(url)
        except TimeoutError as exc:
            raise HubUnavailable(
                self.base_url, f"did not answer within {self.timeout_s:g} s"
            ) from exc
        except aiohttp.ClientError as exc:
            reason = f"could not be reached ({type(exc).__name__})"
            raise HubUnavailable(self.base_url, reason) from exc
        if status != 200:
            raise HubUnavailable(self.base_url, f"answered HTTP {status}")
        return HubPage(self._packages(body), _total(headers.get("Pagination-Total-Count")))

    def search_url(self, keyword: str, max_results: int) -> yarl.URL:
        query = {
            "ts_query_web": keyword,
            "kind": str(HELM_CHARTS),
            "facets": "false",
            "limit": str(clamp_results(max_results)),
            "offset": "0",
        }
        return yarl.URL(self.base_url.rstrip("/") + "/api/v1/packages/search").with_query(query)

    async def _get(self, url: yarl.URL) -> tuple[int, Mapping[str, str], bytes]:
        response = await self.request("GET", url, headers={"Accept": "application/json"})
        async with response:
            return response.status, response.headers, await self._body(response)

    async def _body(self, response: aiohttp.ClientResponse) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise HubUnavailable(self.base_url, "sent a reply too large to be a search result")
            chunks.append(chunk)
        return b"".join(chunks)

    def _packages(self, body: bytes) -> list[HubResult]:
        try:
            document = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HubUnavailable(self.base_url, "sent a reply that is not JSON") from exc
        packages = document.get("packages") if isinstance(document, dict) else None
        if not isinstance(packages, list):
            raise HubUnavailable(self.base_url, "sent JSON without a 'packages' list")
        return [HubResult.from_package(p) for p in packages if isinstance(p, Mapping)]


def _total(header: str | None) -> int | None:
    try:
        return int(header) if header is not None else None
    except ValueError:
        return None
