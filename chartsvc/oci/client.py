"""Pull, push and list Helm charts in OCI registries, speaking the distribution protocol directly.

Every request — registry, token realm, and the storage a blob GET redirects to — goes through
``common.netguard.guarded_request`` with the caller's policy, so a registry cannot steer us at
internal addresses; credentials are dropped when a redirect leaves the registry's origin.

This module must not know about aiohttp.web, import helm_python, or log or echo credentials and
tokens (errors name the registry host only).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import yarl
from multidict import CIMultiDictProxy

from chartsvc.deps.chart import read_chart_metadata
from chartsvc.oci.auth import basic_header, parse_challenge
from chartsvc.oci.errors import (
    ChartNotInRegistry,
    ChartTooLarge,
    RegistryAuthFailed,
    RegistryProtocolError,
    RegistryUnavailable,
    VersionConflict,
)
from chartsvc.oci.manifest import (
    CHART_LAYER_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    PROVENANCE_LAYER_MEDIA_TYPE,
    Blob,
    ChartManifest,
    chart_identity,
    config_blob,
    manifest_bytes,
    sha256_digest,
)
from chartsvc.oci.reference import InvalidReference, Reference, tag_to_version, version_to_tag
from chartsvc.oci.wire import error_codes, next_page, read_capped, tags_in, token_in, with_digest
from chartsvc.semver import Constraint, parse_version, sort_newest_first
from common.errors import BadRequest
from common.netguard import GuardedClient

MAX_CHART_BYTES = 100 * 1024 * 1024  # Helm's own cap on a chart archive
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024  # manifests, tag lists, token replies, error bodies
MAX_TAG_PAGES = 100
_ACCEPT_MANIFEST = f"{MANIFEST_MEDIA_TYPE}, {INDEX_MEDIA_TYPE}"
MAX_PROVENANCE_BYTES = 1024 * 1024  # a Chart.yaml and a signature: a few KiB


@attrs.frozen
class _Reply:
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    url: yarl.URL


@attrs.define
class OciClient(GuardedClient):
    """An OCI registry client for Helm charts; ``async with`` it or call ``close()``."""

    plain_http: bool = attrs.field(default=False, kw_only=True)
    credentials: Mapping[str, tuple[str, str]] | None = attrs.field(
        default=None, kw_only=True, repr=False
    )
    timeout_s: float = attrs.field(default=60, kw_only=True)
    _auth: dict[tuple[str, str], str] = attrs.field(factory=dict, init=False, repr=False)

    async def close(self) -> None:
        await super().close()
        self._auth.clear()

    # --- public operations -------------------------------------------------------------------

    async def tags(self, ref: str) -> list[str]:
        """The repository's chart versions, newest first: strict SemVer tags, ``_`` read as ``+``."""
        reference = Reference.parse(ref)
        versions = [tag_to_version(t) for t in await self._list_tags(reference)]
        return sort_newest_first(v for v in versions if parse_version(v, strict=True))

    async def pull(self, ref: str, *, version: str | None = None) -> bytes:
        """The chart archive (.tgz) that ``ref`` names; ``version`` may be exact or a constraint.

        Without a tag, digest or version, the newest release (highest SemVer tag) is pulled.
        """
        reference = Reference.parse(ref)
        target = reference.digest or await self._pick_tag(reference, version)
        at_tag = None if reference.digest else target
        shown = str(Reference(reference.host, reference.repository, at_tag, reference.digest))
        manifest = await self._get_manifest(reference, target, shown)
        return await self._get_chart_blob(reference, manifest, shown)

    async def pull_signed(
        self, ref: str, *, version: str | None = None
    ) -> tuple[bytes, bytes | None]:
        """As :meth:`pull`, with the provenance layer of the same manifest (None without one)."""
        reference = Reference.parse(ref)
        target = reference.digest or await self._pick_tag(reference, version)
        at_tag = None if reference.digest else target
        shown = str(Reference(reference.host, reference.repository, at_tag, reference.digest))
        manifest = await self._get_manifest(reference, target, shown)
        archive = await self._get_chart_blob(reference, manifest, shown)
        if manifest.provenance_digest is None:
            return archive, None
        url = self._url(reference, f"blobs/{manifest.provenance_digest}")
        reply = await self._call("GET", url, reference, "pull", max_bytes=MAX_PROVENANCE_BYTES)
        if reply.status == 404:
            return archive, None
        self._expect(reply, reference, 200)
        if sha256_digest(reply.body) != manifest.provenance_digest:
            raise RegistryProtocolError(reference.host, f"sent a .prov that does not match {shown}")
        return archive, reply.body

    async def push(
        self, archive: Path, remote: str, *, provenance: Path | None = None
    ) -> dict[str, str]:
        """Push a chart archive under ``remote`` (``oci://host/path``) as ``helm push`` does.

        The chart's name and version come from its Chart.yaml; the tag is the version with ``+``
        spelt ``_``. Returns ``{"ref": "host/path/name:tag", "digest": "sha256:…"}``.
        """
        destination = Reference.parse(remote, allow_tag=False)
        data, metadata = await asyncio.to_thread(_read_archive, archive)
        name, version = chart_identity(metadata)
        metadata = {**metadata, "version": version}  # as Helm's loader spells it
        target = _chart_reference(destination, name)
        layers = [Blob(CHART_LAYER_MEDIA_TYPE, data)]
        if provenance is not None:
            prov = await asyncio.to_thread(provenance.read_bytes)
            layers.append(Blob(PROVENANCE_LAYER_MEDIA_TYPE, prov))
        config = config_blob(metadata)
        for blob in (config, *layers):
            await self._upload_blob(target, blob)
        manifest = manifest_bytes(config, layers, metadata)
        tag = version_to_tag(version)
        await self._put_manifest(target, tag, manifest)
        return {
            "ref": f"{target.host}/{target.repository}:{tag}",
            "digest": sha256_digest(manifest),
        }

    # --- pull ----------------------------------------------------------------------------------

    async def _pick_tag(self, reference: Reference, version: str | None) -> str:
        if reference.tag and version and version_to_tag(version) != reference.tag:
            raise VersionConflict(
                f"{reference} names tag {reference.tag} but version {version} was asked"
            )
        if reference.tag:
            return reference.tag
        if version and parse_version(version) is not None:
            return version_to_tag(version)
        # As Helm: no version means "*", the newest release (prereleases only when asked for).
        constraint = Constraint.parse(version or "*")
        for candidate in await self.tags(str(reference)):
            if constraint.matches(candidate):
                return version_to_tag(candidate)
        wanted = f"no version matching {version}" if version else "no SemVer tag"
        raise ChartNotInRegistry(str(reference), f"has {wanted}")

    async def _get_manifest(self, ref: Reference, target: str, shown: str) -> ChartManifest:
        url = self._url(ref, f"manifests/{target}")
        headers = {"Accept": _ACCEPT_MANIFEST}
        reply = await self._call("GET", url, ref, "pull", headers=headers)
        if reply.status == 404:
            raise ChartNotInRegistry(shown)
        self._expect(reply, ref, 200)
        if target.startswith("sha256:") and sha256_digest(reply.body) != target:
            raise RegistryProtocolError(ref.host, f"sent a manifest that does not match {target}")
        return ChartManifest.parse(reply.body, shown)

    async def _get_chart_blob(self, ref: Reference, manifest: ChartManifest, shown: str) -> bytes:
        if manifest.chart_size > MAX_CHART_BYTES:
            raise ChartTooLarge(f"{shown} is larger than {MAX_CHART_BYTES} bytes")
        url = self._url(ref, f"blobs/{manifest.chart_digest}")
        reply = await self._call("GET", url, ref, "pull", max_bytes=MAX_CHART_BYTES)
        if reply.status == 404:
            raise ChartNotInRegistry(shown, "lists a chart layer the registry does not have")
        self._expect(reply, ref, 200)
        if sha256_digest(reply.body) != manifest.chart_digest:
            raise RegistryProtocolError(ref.host, f"sent a chart layer that does not match {shown}")
        return reply.body

    async def _list_tags(self, ref: Reference) -> list[str]:
        url: yarl.URL | None = self._url(ref, "tags/list").with_query(n="1000")
        tags: list[str] = []
        for _ in range(MAX_TAG_PAGES):
            if url is None:
                return tags
            reply = await self._call("GET", url, ref, "pull")
            if reply.status == 404:
                raise ChartNotInRegistry(str(Reference(ref.host, ref.repository)))
            self._expect(reply, ref, 200)
            tags.extend(tags_in(reply.body, ref.host))
            url = next_page(reply.headers, reply.url)
        raise RegistryProtocolError(ref.host, f"paged its tag list past {MAX_TAG_PAGES} pages")

    # --- push ----------------------------------------------------------------------------------

    async def _upload_blob(self, ref: Reference, blob: Blob) -> None:
        head = await self._call("HEAD", self._url(ref, f"blobs/{blob.digest}"), ref, "pull,push")
        if head.status == 200:
            return  # already there (a re-push, or another chart's identical layer)
        start = await self._call("POST", self._url(ref, "blobs/uploads/"), ref, "pull,push")
        self._expect(start, ref, 202)
        location = start.headers.get("Location")
        if not location:
            raise RegistryProtocolError(ref.host, "started an upload without a Location")
        upload = with_digest(start.url.join(yarl.URL(location, encoded=True)), blob.digest)
        headers = {"Content-Type": "application/octet-stream"}
        done = await self._call("PUT", upload, ref, "pull,push", data=blob.data, headers=headers)
        self._expect(done, ref, 201)

    async def _put_manifest(self, ref: Reference, tag: str, manifest: bytes) -> None:
        url = self._url(ref, f"manifests/{tag}")
        headers = {"Content-Type": MANIFEST_MEDIA_TYPE}
        reply = await self._call("PUT", url, ref, "pull,push", data=manifest, headers=headers)
        self._expect(reply, ref, 201)

    # --- transport and auth ----------------------------------------------------------------------

    def _url(self, ref: Reference, tail: str) -> yarl.URL:
        scheme = "http" if self.plain_http else "https"
        return yarl.URL(f"{scheme}://{ref.host}/v2/{ref.repository}/{tail}", encoded=True)

    async def _call(
        self,
        method: str,
        url: yarl.URL,
        ref: Reference,
        actions: str,
        *,
        max_bytes: int = MAX_DOCUMENT_BYTES,
        **kwargs: Any,
    ) -> _Reply:
        """One request with the registry's auth dance: on 401, authorise and retry once."""
        scope = f"repository:{ref.repository}:{actions}"
        key = (ref.host, scope)
        reply = await self._send(method, url, ref.host, self._auth.get(key), max_bytes, **kwargs)
        if reply.status != 401:
            return reply
        self._auth[key] = await self._authorize(ref.host, reply.headers, scope)
        reply = await self._send(method, url, ref.host, self._auth[key], max_bytes, **kwargs)
        if reply.status == 401:
            self._auth.pop(key, None)
            raise RegistryAuthFailed(ref.host, self._refusal(ref.host))
        return reply

    async def _send(
        self,
        method: str,
        url: yarl.URL,
        host: str,
        authorization: str | None,
        max_bytes: int,
        **kwargs: Any,
    ) -> _Reply:
        headers = dict(kwargs.pop("headers", None) or {})
        if authorization is not None:
            headers["Authorization"] = authorization
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self.request(method, url, headers=headers, **kwargs)
                async with response:
                    body = await read_capped(response, max_bytes, host)
                    return _Reply(response.status, response.headers, body, response.url)
        except TimeoutError as exc:
            raise RegistryUnavailable(host, f"did not answer within {self.timeout_s:g} s") from exc
        except aiohttp.ClientError as exc:
            reason = f"could not be reached ({type(exc).__name__})"
            raise RegistryUnavailable(host, reason) from exc

    async def _authorize(self, host: str, headers: Mapping[str, str], scope: str) -> str:
        challenge = parse_challenge(headers.get("WWW-Authenticate"))
        creds = (self.credentials or {}).get(host)
        if challenge is not None and challenge.scheme == "basic":
            if creds is None:
                raise RegistryAuthFailed(host, "requires credentials and none are configured")
            return basic_header(*creds)
        if challenge is None or challenge.scheme != "bearer" or not challenge.params.get("realm"):
            raise RegistryAuthFailed(host, "asked for authentication we cannot answer")
        params = challenge.params
        query = {"service": params.get("service", ""), "scope": params.get("scope") or scope}
        token = await self._fetch_token(host, params["realm"], query, creds)
        return f"Bearer {token}"

    async def _fetch_token(
        self, host: str, realm: str, query: dict[str, str], creds: tuple[str, str] | None
    ) -> str:
        try:
            url = yarl.URL(realm).update_query({k: v for k, v in query.items() if v})
        except ValueError as exc:
            raise RegistryAuthFailed(host, "named a token realm that is not a URL") from exc
        headers = {"Authorization": basic_header(*creds)} if creds else {}
        reply = await self._send("GET", url, host, None, MAX_DOCUMENT_BYTES, headers=headers)
        if reply.status in (401, 403):
            raise RegistryAuthFailed(host, self._refusal(host))
        if reply.status != 200:
            raise RegistryUnavailable(host, f"token service answered HTTP {reply.status}")
        return token_in(reply.body, host)

    def _refusal(self, host: str) -> str:
        if (self.credentials or {}).get(host):
            return "refused the configured credentials"
        return "refused anonymous access (no credentials are configured for it)"

    def _expect(self, reply: _Reply, ref: Reference, status: int) -> None:
        if reply.status == status:
            return
        if reply.status >= 500:
            raise RegistryUnavailable(ref.host, f"failed (HTTP {reply.status})")
        if reply.status == 403:
            raise RegistryAuthFailed(ref.host, f"denied access to {ref.repository}")
        codes = error_codes(reply.body)
        raise RegistryProtocolError(ref.host, f"answered HTTP {reply.status}{codes}")


# --- helpers -----------------------------------------------------------------------------------


def _read_archive(archive: Path) -> tuple[bytes, dict[str, Any]]:
    if archive.stat().st_size > MAX_CHART_BYTES:
        raise ChartTooLarge(f"chart archive is larger than {MAX_CHART_BYTES} bytes")
    return archive.read_bytes(), read_chart_metadata(archive)


def _chart_reference(destination: Reference, name: str) -> Reference:
    target = destination.child(name)
    try:
        return Reference.parse(str(target), allow_tag=False)
    except InvalidReference as exc:
        raise BadRequest(f"chart name {name[:100]!r} cannot be an OCI repository name") from exc
