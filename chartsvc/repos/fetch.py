"""Downloads from chart repositories, every one through the address guard and under a size cap.

Index downloads are conditional (ETag / If-Modified-Since, which Helm itself never sends) and accept
gzip. Chart archives are checked against the digest the index gives. Upstream failures become
``BadGateway`` with the URL shown without credentials or query; refusals of the address policy stay
400s. This module must not parse what it downloads.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib

import aiohttp
import attrs
import yarl

from chartsvc.archives import gunzip_capped
from common.errors import BadGateway, NotFound
from common.netguard import AddressPolicy, guarded_request

Credentials = tuple[str, str] | None
_TIMEOUT = aiohttp.ClientTimeout(total=300, sock_connect=15, sock_read=60)


class UpstreamTooLarge(BadGateway, code="upstream-too-large"): ...


@attrs.frozen
class Download:
    body: bytes
    etag: str | None
    last_modified: str | None


@attrs.define
class Fetcher:
    """Guarded GETs with caps; owns nothing, the session belongs to the app's cleanup context."""

    session: aiohttp.ClientSession
    policy: AddressPolicy

    async def index(
        self,
        repo_url: str,
        *,
        etag: str | None,
        last_modified: str | None,
        max_bytes: int,
        credentials: Credentials = None,
    ) -> Download | None:
        """The repository's index.yaml, or None when the server says it has not changed."""
        url = index_url(repo_url)
        headers = {"Accept-Encoding": "gzip", "Accept": "application/json, application/yaml, */*"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        async with await self._get(url, headers, credentials) as response:
            if response.status == 304:
                return None
            _raise_for_status(response, url, what="repository index")
            body = _gunzip(await _read_capped(response, max_bytes, url), max_bytes, url)
            return Download(
                body, response.headers.get("ETag"), response.headers.get("Last-Modified")
            )

    async def archive(
        self, url: str, *, digest: str, max_bytes: int, credentials: Credentials = None
    ) -> bytes:
        """A chart archive, verified against the index's sha256 ``digest`` when it has one."""
        accept = {"Accept": "application/gzip, */*"}
        async with await self._get(yarl.URL(url), accept, credentials) as response:
            _raise_for_status(response, yarl.URL(url), what="chart archive")
            body = await _read_capped(response, max_bytes, yarl.URL(url))
        expected = digest.removeprefix("sha256:").lower()
        if expected and hashlib.sha256(body).hexdigest() != expected:
            raise BadGateway(
                f"chart archive from {shown_url(yarl.URL(url))} does not match its digest"
            )
        return body

    async def provenance(
        self, url: str, *, max_bytes: int, credentials: Credentials = None
    ) -> bytes | None:
        """The ``.prov`` beside a chart archive (``<archive URL>.prov``, as Helm finds it); None
        when the repository has none (404)."""
        prov = yarl.URL(url).with_path(yarl.URL(url).path + ".prov", encoded=False)
        async with await self._get(prov, {"Accept": "*/*"}, credentials) as response:
            if response.status == 404:
                return None
            _raise_for_status(response, prov, what="provenance file")
            return await _read_capped(response, max_bytes, prov)

    async def _get(
        self, url: yarl.URL, headers: dict[str, str], credentials: Credentials
    ) -> aiohttp.ClientResponse:
        # Credentials ride on the request, so guarded_request drops them on cross-origin redirects.
        if credentials:
            headers = {**headers, "Authorization": aiohttp.encode_basic_auth(*credentials)}
        try:
            return await guarded_request(
                self.session, self.policy, "GET", url, headers=headers, timeout=_TIMEOUT
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise BadGateway(f"could not reach {shown_url(url)}: {type(exc).__name__}") from exc


def index_url(repo_url: str) -> yarl.URL:
    """``<repo>/index.yaml``, as Helm builds it (the repo URL's query string is kept)."""
    url = yarl.URL(repo_url)
    return url.with_path(url.path.rstrip("/") + "/index.yaml", keep_query=True)


def resolve_chart_url(repo_url: str, chart_url: str) -> str:
    """An index's chart URL made absolute against the repository URL, as Helm's
    ResolveReferenceURL does: absolute URLs stay, relative ones resolve under the repository path
    and carry the repository URL's query (some repositories authenticate with a query token)."""
    ref = yarl.URL(chart_url)
    if ref.absolute:
        return chart_url
    base = yarl.URL(repo_url)
    base = base.with_path(base.path.rstrip("/") + "/", keep_query=True)
    resolved = base.join(ref)
    return str(resolved.with_query(base.raw_query_string) if base.raw_query_string else resolved)


def normal_url(url: str) -> str:
    """A repository URL compared without its trailing slash."""
    parsed = yarl.URL(url)
    return str(parsed.with_path(parsed.path.rstrip("/")))


def shown_url(url: yarl.URL | str) -> str:
    """A URL as errors may show it: no credentials, query or fragment."""
    url = yarl.URL(url)
    return str(url.with_user(None).with_query(None).with_fragment(None))


def _raise_for_status(response: aiohttp.ClientResponse, url: yarl.URL, *, what: str) -> None:
    if response.status == 200:
        return
    detail = f"{what} at {shown_url(url)} answered HTTP {response.status}"
    if response.status == 404 and what == "chart archive":
        raise NotFound(detail)
    raise BadGateway(detail)


async def _read_capped(response: aiohttp.ClientResponse, cap: int, url: yarl.URL) -> bytes:
    declared = response.content_length
    if declared is not None and declared > cap and not response.headers.get("Content-Encoding"):
        raise UpstreamTooLarge(f"{shown_url(url)} is larger than the limit of {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.content.iter_any():  # as received: no re-chunking copies
            size += len(chunk)
            if size > cap:
                raise UpstreamTooLarge(f"{shown_url(url)} is larger than the limit of {cap} bytes")
            chunks.append(chunk)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise BadGateway(f"download from {shown_url(url)} failed: {type(exc).__name__}") from exc
    return b"".join(chunks)


def _gunzip(body: bytes, cap: int, url: yarl.URL) -> bytes:
    # Some servers hand out index.yaml gzip'd without Content-Encoding; undo it under the same cap.
    if body[:2] != b"\x1f\x8b":
        return body
    try:
        out = gunzip_capped(body, cap)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise BadGateway(f"{shown_url(url)} sent a corrupt gzip body") from exc
    if out is None:
        raise UpstreamTooLarge(f"{shown_url(url)} expands beyond the limit of {cap} bytes")
    return out
