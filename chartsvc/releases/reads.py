"""Reads from the cluster with kubernetes-asyncio: Helm's stored release records and live objects.

Helm keeps every revision of a release as a Secret ``sh.helm.release.v1.<name>.v<revision>``,
labelled ``owner=helm``, ``name``, ``status`` and ``version``; its ``release`` field is the release
JSON, gzip'd and base64'd by Helm (and base64'd again by the Secret). Reading those Secrets gives the
whole record Helm stored — info with first_deployed and description, chart metadata, config, hooks,
manifest — in one request, where helm_python's read calls return summaries without most of it. This
module never writes: Helm owns its storage (a ``dryRun=All`` create, which stores nothing, is how
drift learns the server's defaults).

Clients come from a bounded pool, one per cluster (``chartsvc.releases.clients``). Calls are raw
(``_preload_content=False``) and check the status themselves; a cluster that cannot be reached is
a 502, a refusal keeps its status (``kubeclient.cluster_error``). Nothing here logs a kubeconfig.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

import kubeclient
from chartsvc.archives import gunzip_capped
from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.releases.clients import KubeClients
from common.errors import BadGateway, WharfError
from kubeclient import credentials

HELM_OWNER = "owner=helm"
REQUEST_TIMEOUT_S = 30
DISCOVERY_TTL_S = 60.0
LOG_LIMIT = 64 * 1024  # a test pod's log, as reported; enough for a failure's story
_GZIP = b"\x1f\x8b\x08"
_INLINE_DECODE = 64 * 1024  # larger records are decoded in a worker thread
#: A stored record's bound once inflated. Helm's record holds the chart (every file, base64'd) and
#: its rendered manifests: an archive within the archive limits (100 MiB) and a render within the
#: output limit (64 MiB) stay well under it; a Secret inflating past it is not Helm's.
MAX_RECORD_BYTES = 256 * 1024 * 1024


@attrs.frozen
class StoredRevision:
    """One stored revision as its Secret's labels describe it; ``decode`` gives the record."""

    name: str
    version: int
    status: str
    encoded: str = attrs.field(repr=False)
    namespace: str = ""

    @classmethod
    def from_secret(cls, secret: dict[str, Any]) -> StoredRevision | None:
        labels = secret.get("metadata", {}).get("labels") or {}
        encoded = (secret.get("data") or {}).get("release")
        if not encoded or not str(labels.get("version", "")).isdigit():
            return None  # not a Helm release record
        return cls(
            labels.get("name", ""),
            int(labels["version"]),
            labels.get("status", ""),
            encoded,
            secret["metadata"].get("namespace", ""),
        )

    async def decode(self) -> dict[str, Any]:
        what = f"release {self.name!r} revision {self.version}"
        if len(self.encoded) > _INLINE_DECODE:
            return await asyncio.to_thread(decode_record, self.encoded, what=what)
        return decode_record(self.encoded, what=what)


class RecordTooLarge(BadGateway, code="release-record-too-large"):
    """A stored record that inflates past ``MAX_RECORD_BYTES``: not one Helm wrote for a chart
    this service would take (a gzip bomb in a Secret labelled as Helm's, say)."""


def decode_record(
    encoded: str, *, what: str = "a release record", limit: int = MAX_RECORD_BYTES
) -> dict[str, Any]:
    """Helm's ``decodeRelease``: base64 (the Secret's), base64 (Helm's), gzip when gzip'd, JSON.
    Inflated at most to ``limit`` bytes (RecordTooLarge past it)."""
    raw = base64.b64decode(base64.b64decode(encoded))
    if raw[:3] == _GZIP:
        inflated = gunzip_capped(raw, limit)
        if inflated is None:
            raise RecordTooLarge(
                f"the cluster's stored record of {what} inflates past {limit} bytes"
            )
        raw = inflated
    record: dict[str, Any] = json.loads(raw)
    return record


@attrs.frozen
class ApiResource:
    plural: str
    namespaced: bool


@attrs.define
class ClusterReads:
    clients: KubeClients
    _discovery: dict[tuple[str, str], tuple[float, dict[str, ApiResource]]] = attrs.field(
        factory=dict
    )

    async def get(
        self, target: ClusterTarget, path: str, query: Sequence[tuple[str, str]] = ()
    ) -> dict[str, Any] | None:
        """GET ``path`` as JSON; None on 404, our error on any other failure."""
        body = await self._get(target, path, query, accept="application/json")
        if body is None:
            return None
        document: dict[str, Any] = json.loads(body)
        return document

    async def pod_logs(
        self, target: ClusterTarget, namespace: str, pod: str, *, limit: int = LOG_LIMIT
    ) -> str | None:
        """The last run's log of ``pod`` (its first ``limit`` bytes); None when the pod is gone."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
        body = await self._get(target, path, [("limitBytes", str(limit))], accept="text/plain")
        return body.decode("utf-8", "replace") if body is not None else None

    async def dry_run_create(
        self, target: ClusterTarget, path: str, obj: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The object as the server would store it, from a ``dryRun=All`` create at the
        collection ``path`` (nothing is stored); None when the server refuses it (quota, a
        webhook, RBAC, a kind that needs a fixed name), our error when it cannot be reached."""
        status, body = await self._call(
            target, "POST", path, [("dryRun", "All")], accept="application/json", body=obj
        )
        if 400 <= status < 500:
            return None
        if status >= 500:
            raise _refused(target, status, body)
        created: dict[str, Any] = json.loads(body)
        return created

    async def _get(
        self, target: ClusterTarget, path: str, query: Sequence[tuple[str, str]], *, accept: str
    ) -> bytes | None:
        status, body = await self._call(target, "GET", path, query, accept=accept)
        if status == 404:
            return None
        if status >= 400:
            raise _refused(target, status, body)
        return body

    async def _call(
        self,
        target: ClusterTarget,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        *,
        accept: str,
        body: dict[str, Any] | None = None,
    ) -> tuple[int, bytes]:
        """One request; a 401 renews the cluster's credentials once and asks once more."""
        async with self.clients.use(target) as client:
            renewal = credentials.Renewal.before(client)
            sent = (method, path, query, accept, body)
            status, answer = await self._send(target, client, *sent)
            if status == 401 and await renewal.renewed():
                status, answer = await self._send(target, client, *sent)
        return status, answer

    async def _send(
        self,
        target: ClusterTarget,
        client: Any,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        accept: str,
        body: dict[str, Any] | None,
    ) -> tuple[int, bytes]:
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            resp = await client.call_api(
                path,
                method,
                query_params=list(query),
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT_S,
            )
            try:
                answer: bytes = await resp.read()
            finally:
                resp.release()
        except WharfError:
            raise  # the credentials could not be renewed: already ours
        except Exception as exc:  # aiohttp, TLS, timeouts: the request never got an answer
            raise _unreachable(target, exc) from None
        return int(resp.status), answer

    async def revisions(
        self, target: ClusterTarget, namespace: str | None, name: str | None = None
    ) -> list[StoredRevision]:
        """Helm's records in ``namespace`` (None: every namespace; of release ``name`` only when
        given)."""
        selector = HELM_OWNER if name is None else f"{HELM_OWNER},name={name}"
        path = "/api/v1/secrets" if namespace is None else f"/api/v1/namespaces/{namespace}/secrets"
        listed = await self.get(target, path, [("labelSelector", selector)])
        items = (listed or {}).get("items") or []
        found = (StoredRevision.from_secret(item) for item in items)
        return [r for r in found if r is not None and (name is None or r.name == name)]

    async def revision(self, release: ReleaseRef, version: int) -> StoredRevision | None:
        name = f"sh.helm.release.v1.{release.name}.v{version}"
        path = f"/api/v1/namespaces/{release.namespace}/secrets/{name}"
        secret = await self.get(release.target, path)
        return StoredRevision.from_secret(secret) if secret is not None else None

    async def resources(
        self, target: ClusterTarget, api_version: str, kind: str
    ) -> ApiResource | None:
        """What discovery says of ``kind`` in ``api_version``: its plural and scope."""
        key = (target.key, api_version)
        cached = self._discovery.get(key)
        if cached is not None:
            age, kinds = time.monotonic() - cached[0], cached[1]
            # A kind not listed may be a CRD created a moment ago: ask again, at most once a second.
            if age < DISCOVERY_TTL_S and (kind in kinds or age < 1.0):
                return kinds.get(kind)
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        listed = await self.get(target, prefix)
        kinds = _kinds((listed or {}).get("resources") or [])
        self._discovery[key] = (time.monotonic(), kinds)
        return kinds.get(kind)

    async def objects(
        self, target: ClusterTarget, paths: Iterable[str | None], *, concurrency: int = 16
    ) -> list[dict[str, Any] | None]:
        """Each object at ``paths`` (None for a missing one, or for a None path)."""
        gate = asyncio.Semaphore(concurrency)

        async def one(path: str | None) -> dict[str, Any] | None:
            if path is None:
                return None
            async with gate:
                return await self.get(target, path)

        return list(await asyncio.gather(*(one(p) for p in paths)))

    async def close(self) -> None:
        await self.clients.close()


def object_path(api_version: str, resource: ApiResource, namespace: str, name: str) -> str:
    return f"{collection_path(api_version, resource, namespace)}/{name}"


def collection_path(api_version: str, resource: ApiResource, namespace: str) -> str:
    """Where objects of ``resource`` in ``namespace`` are listed and created."""
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    scope = f"/namespaces/{namespace}" if resource.namespaced else ""
    return f"{prefix}{scope}/{resource.plural}"


def _kinds(resources: list[dict[str, Any]]) -> dict[str, ApiResource]:
    return {
        r["kind"]: ApiResource(r["name"], bool(r.get("namespaced")))
        for r in resources
        if "/" not in r.get("name", "/") and r.get("kind")
    }


def _unreachable(target: ClusterTarget, exc: BaseException) -> WharfError:
    return BadGateway(
        f"cluster {target.name!r} cannot be reached ({type(exc).__name__})",
        code="cluster-unreachable",
    )


def _refused(target: ClusterTarget, status: int, body: bytes) -> WharfError:
    if status == 401:  # the service's own credentials, not the caller's: an upstream failure
        return BadGateway(
            f"cluster {target.name!r} refused the service's credentials (HTTP 401)",
            code="cluster-unreachable",
        )
    return kubeclient.cluster_error(_StatusError(status, body), code="cluster-refused")


class _StatusError(Exception):
    """What ``kubeclient.cluster_error`` reads: the status and the Status body."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
