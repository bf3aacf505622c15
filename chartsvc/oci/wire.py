"""What the distribution protocol puts on the wire, read defensively: bodies under a cap, tag lists,
``Link`` pagination, token replies, error codes, and the upload URL with its digest.

Registries are untrusted input here: every reader bounds what it accepts and turns anything
malformed into ``RegistryProtocolError`` naming the registry. This module must not send requests.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import aiohttp
import yarl
from multidict import CIMultiDictProxy

from chartsvc.oci.errors import RegistryAuthFailed, RegistryProtocolError


async def read_capped(response: aiohttp.ClientResponse, max_bytes: int, host: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.content.iter_chunked(64 * 1024):
        total += len(chunk)
        if total > max_bytes:
            raise RegistryProtocolError(host, f"sent more than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def with_digest(url: yarl.URL, digest: str) -> yarl.URL:
    """The upload URL plus ``digest=…``, leaving the registry's opaque ``_state`` untouched."""
    text = str(url)
    separator = "&" if url.raw_query_string else "?"
    return yarl.URL(f"{text}{separator}digest={urllib.parse.quote(digest)}", encoded=True)


def tags_in(body: bytes, host: str) -> list[str]:
    document = _json(body, host)
    tags = document.get("tags") if isinstance(document, dict) else None
    if tags is None:
        return []  # distribution answers "tags": null for a repository emptied of tags
    if not isinstance(tags, list):
        raise RegistryProtocolError(host, "sent a tag list without a 'tags' array")
    return [t for t in tags if isinstance(t, str)]


def next_page(headers: CIMultiDictProxy[str], url: yarl.URL) -> yarl.URL | None:
    for link in headers.getall("Link", []):
        target, _, params = link.partition(";")
        if 'rel="next"' in params.replace(" ", "") or "rel=next" in params.replace(" ", ""):
            return url.join(yarl.URL(target.strip().strip("<>"), encoded=True))
    return None


def token_in(body: bytes, host: str) -> str:
    document = _json(body, host)
    token = None
    if isinstance(document, dict):
        token = document.get("token") or document.get("access_token")
    if not isinstance(token, str) or not token:
        raise RegistryAuthFailed(host, "token service sent no token")
    return token


def _json(body: bytes, host: str) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RegistryProtocolError(host, "sent a reply that is not JSON") from exc


def error_codes(body: bytes) -> str:
    """The distribution error codes of a reply (``NAME_INVALID``…), never its free text."""
    try:
        errors = json.loads(body).get("errors")
        codes = [str(e.get("code"))[:40] for e in errors if isinstance(e, dict)][:5]
    except (ValueError, AttributeError, TypeError):
        return ""
    return f" ({', '.join(codes)})" if codes else ""
