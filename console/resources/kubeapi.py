"""Raw REST calls to one cluster through a kubernetes_asyncio ``ApiClient``: the browse and action
code's only way to reach a cluster.

Every call is made with ``_preload_content=False`` so that any kind, built-in or custom, goes through
one path; released kubernetes_asyncio does not check the status on that path, so this module does,
and turns a refusal into ``cluster_error`` (the cluster's own status and message, ``cluster-refused``)
and a request that never reached the server into a 502. Lists are read in ``limit``/``continue``
chunks, re-listing from the start when a continue token has expired (410).

A ``KubeApi`` made for a person (``acting_as``) sends ``Impersonate-User`` and one
``Impersonate-Group`` per group with every request, stream and WebSocket handshake, so the cluster
decides what that person may do; without one, requests carry the console's own identity. The
headers are built here only (:meth:`KubeApi.headers`), for every path alike.

This module must not know any kind, route or response shape of ours, and never logs bodies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config.config_exception import ConfigException
from multidict import CIMultiDict

from common.errors import UpstreamStatus, WharfError
from console.identity import Identity
from kubeclient import cluster_error, credentials

JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
# One chunk of a list: kubectl's own page size; a chunk of 500 pods is a few MB at most.
CHUNK = 500
REQUEST_TIMEOUT_S = 30.0
# Longest line read from a stream: an object is at most ~1.5 MB in etcd, its watch event a bit more.
MAX_LINE = 4 * 1024 * 1024
Query = Sequence[tuple[str, str]]
_TRANSPORT_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


class _Refusal(Exception):
    """A non-2xx answer, shaped the way ``kubeclient.cluster_error`` reads it."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"cluster answered {status}")
        self.status = status
        self.body = body
        self.reason = None


def refused(status: int, body: bytes) -> WharfError:
    """A refusal the cluster sent in-band (a watch's ERROR event carries a Status)."""
    return cluster_error(_Refusal(status, body))


def is_status(exc: BaseException, *statuses: int) -> bool:
    """Whether ``exc`` is a cluster refusal with one of ``statuses``."""
    return isinstance(exc, UpstreamStatus) and exc.status in statuses


def path_of(
    group: str,
    version: str,
    resource: str,
    *,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of a collection, an object or an object's subresource."""
    parts = ["/api/v1" if not group else f"/apis/{group}/{version}"]
    if namespace:
        parts.append(f"namespaces/{quote(namespace, safe='')}")
    parts.append(resource)
    if name:
        parts.append(quote(name, safe=""))
    if subresource:
        parts.append(subresource)
    return "/".join(parts)


class KubeApi:
    """One cluster's API server, spoken to in JSON through an ``ApiClient`` owned by others."""

    def __init__(
        self,
        client: Any,
        *,
        timeout_s: float = REQUEST_TIMEOUT_S,
        acting_as: Identity | None = None,
    ) -> None:
        self.client = client
        self.timeout_s = timeout_s
        #: Who the cluster is asked to act as (impersonation); None: the console's own identity.
        self.acting_as = acting_as

    @property
    def reader(self) -> tuple[Any, Identity | None]:
        """Who reads through this API: the key for sharing a read between callers (two people
        never share an answer, since the cluster may show them different things)."""
        return (self.client, self.acting_as)

    def own(self) -> KubeApi:
        """This cluster with the console's own identity (shared reads: discovery, watches)."""
        return self if self.acting_as is None else KubeApi(self.client, timeout_s=self.timeout_s)

    async def headers(self, given: Mapping[str, str] | None = None) -> CIMultiDict[str]:
        """``given`` plus the client's default headers, its credentials and, when acting for a
        person, the impersonation headers (a group is one header each, as the API server reads
        them, so they cannot go through ``call_api``'s single-valued dict)."""
        headers: CIMultiDict[str] = CIMultiDict(self.client.default_headers)
        headers.update(given or {})
        try:
            await self.client.update_params_for_auth(headers, [], ["BearerToken"])
        except ConfigException as exc:
            raise cluster_error(exc) from exc
        if self.acting_as is not None:
            headers["Impersonate-User"] = self.acting_as.user
            for group in self.acting_as.groups:
                headers.add("Impersonate-Group", group)
        return headers

    async def get(self, path: str, *, query: Query = (), accept: str = JSON) -> Any:
        return json.loads(await self.read("GET", path, query=query, accept=accept))

    async def send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        content_type: str = JSON,
        query: Query = (),
    ) -> Any:
        raw = await self.read(method, path, query=query, body=body, content_type=content_type)
        return json.loads(raw) if raw else {}

    async def read(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        accept: str = JSON,
        body: Any = None,
        content_type: str = JSON,
        timeout_s: float | None = None,
    ) -> bytes:
        """The body of a 2xx answer; anything else raises a ``cluster-refused`` problem.

        ``body`` is a JSON-able value: the client serialises it for every JSON content type and for
        ``application/apply-patch+yaml`` (JSON is YAML).
        """
        headers = {"Accept": accept, "Content-Type": content_type}
        timeout = timeout_s or self.timeout_s
        try:
            async with await self._call(method, path, query, headers, timeout, body) as resp:
                data: bytes = await resp.read()
                status = int(resp.status)
        except _TRANSPORT_ERRORS as exc:
            raise cluster_error(exc) from exc
        if not 200 <= status < 300:
            raise cluster_error(_Refusal(status, data)) from None
        return data

    @contextlib.asynccontextmanager
    async def open_stream(
        self, path: str, *, query: Query = (), accept: str = JSON
    ) -> AsyncIterator[aiohttp.StreamReader]:
        """A long-lived GET (a watch, a followed log): its body as it arrives. A refusal raises
        before the ``with`` body runs (its Status never reaches the caller as data); leaving the
        ``with`` closes the connection. Only connecting is timed: a stream may be quiet for long."""
        timeout = aiohttp.ClientTimeout(sock_connect=self.timeout_s)
        resp = await self._call("GET", path, query, {"Accept": accept}, timeout)
        async with resp:
            if not 200 <= resp.status < 300:
                try:
                    data = await resp.read()
                except _TRANSPORT_ERRORS as exc:
                    raise cluster_error(exc) from exc
                raise cluster_error(_Refusal(int(resp.status), data)) from None
            yield resp.content

    @contextlib.asynccontextmanager
    async def open_channels(
        self, path: str, *, query: Query, protocols: Sequence[str]
    ) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
        """:meth:`connect_channels` for the length of a ``with``: leaving it closes the socket."""
        ws = await self.connect_channels(path, query=query, protocols=protocols)
        try:
            yield ws
        finally:
            await ws.close()

    async def connect_channels(
        self, path: str, *, query: Query, protocols: Sequence[str]
    ) -> aiohttp.ClientWebSocketResponse:
        """A WebSocket upgrade of ``path`` (exec, attach, port-forward) speaking the first of
        ``protocols`` the server accepts (``ws.protocol``), through the client's own connection
        pool, TLS settings and credentials. A refused upgrade raises its status (``cluster-refused``).
        The caller closes the socket. A 401 renews the credentials and tries once more."""
        renewal = credentials.Renewal.before(self.client)
        try:
            return await self._upgrade(path, query=query, protocols=protocols)
        except UpstreamStatus as exc:
            if exc.status != 401 or not await renewal.renewed():
                raise
        return await self._upgrade(path, query=query, protocols=protocols)

    async def _upgrade(
        self, path: str, *, query: Query, protocols: Sequence[str]
    ) -> aiohttp.ClientWebSocketResponse:
        headers = await self.headers()
        url = f"{self.client.configuration.host}{path}?{urlencode(list(query))}"
        rest = self.client.rest_client
        try:
            ws: aiohttp.ClientWebSocketResponse = await rest.pool_manager.ws_connect(
                url,
                protocols=tuple(protocols),
                headers=headers,
                timeout=aiohttp.ClientWSTimeout(ws_close=self.timeout_s),
                server_hostname=rest.server_hostname,
                max_msg_size=MAX_LINE,
                autoping=True,
            )
        except aiohttp.WSServerHandshakeError as exc:
            raise cluster_error(_Refusal(exc.status, b"")) from None
        except _TRANSPORT_ERRORS as exc:
            raise cluster_error(exc) from exc
        return ws

    async def _call(
        self,
        method: str,
        path: str,
        query: Query,
        headers: dict[str, str],
        timeout: float | aiohttp.ClientTimeout,
        body: Any = None,
    ) -> aiohttp.ClientResponse:
        """One request; a 401 renews the credentials (one renewal however many requests were
        refused together) and sends it once more, never more."""

        async def send() -> aiohttp.ClientResponse:
            sent = await self.headers(headers)  # read again after a renewal
            try:
                resp: aiohttp.ClientResponse = await self.client.rest_client.request(
                    method,
                    f"{self.client.configuration.host}{path}",
                    query_params=list(query),
                    headers=sent,
                    body=body,
                    _preload_content=False,
                    _request_timeout=timeout,
                )
            except (*_TRANSPORT_ERRORS, ApiException, ConfigException) as exc:
                # ApiException here: refused before sending; ConfigException: credentials (exec,
                # token file) could not be obtained. Neither reached the server: 502.
                raise cluster_error(exc) from exc
            return resp

        renewal = credentials.Renewal.before(self.client)
        resp = await send()
        if resp.status == 401 and await renewal.renewed():
            resp.release()
            resp = await send()
        return resp

    async def chunks(
        self,
        path: str,
        *,
        query: Query = (),
        limit: int = CHUNK,
        accept: str = JSON,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Each page of a list, in order; the next page is fetched while the caller uses this one.

        A 410 on a continue token (it expired) starts the list over once, as client-go's pager
        does; items up to the last one already yielded are skipped, since a list comes in key
        order (``namespace/name``), so a caller never sees an object twice.
        """
        restarted = False
        token, last = "", ""
        fetch: asyncio.Task[dict[str, Any]] | None = None
        try:
            while True:
                if fetch is None:
                    fetch = asyncio.ensure_future(self._page(path, query, limit, token, accept))
                try:
                    page = await fetch
                except UpstreamStatus as exc:
                    if exc.status != 410 or restarted or not token:
                        raise
                    restarted, token, fetch = True, "", None
                    continue
                token = (page.get("metadata") or {}).get("continue") or ""
                fetch = (
                    asyncio.ensure_future(self._page(path, query, limit, token, accept))
                    if token
                    else None
                )
                if restarted and last:  # only then: servers of aggregated APIs may not sort
                    page["items"] = [i for i in page.get("items") or [] if _key(i) > last]
                if page.get("items"):
                    last = _key(page["items"][-1])
                yield page
                if not token:
                    return
        finally:
            if fetch is not None and not fetch.done():
                fetch.cancel()
                with contextlib.suppress(BaseException):
                    await fetch

    async def _page(
        self, path: str, query: Query, limit: int, token: str, accept: str
    ) -> dict[str, Any]:
        params = [*query, ("limit", str(limit))]
        if token:
            params.append(("continue", token))
        page = await self.get(path, query=params, accept=accept)
        return page if isinstance(page, dict) else {}

    async def list_all(
        self, path: str, *, query: Query = (), accept: str = JSON
    ) -> list[dict[str, Any]]:
        """Every item of a list, read in chunks."""
        items: list[dict[str, Any]] = []
        async for page in self.chunks(path, query=query, accept=accept):
            items.extend(i for i in page.get("items") or [] if isinstance(i, dict))
        return items


async def lines(
    body: aiohttp.StreamReader, *, max_line: int = MAX_LINE
) -> AsyncGenerator[bytes, None]:
    """The lines of a stream opened with :meth:`KubeApi.open_stream`, without their newline (a
    last line without one too). A connection that breaks raises ``cluster_error`` (502); a line
    longer than ``max_line`` is cut there (aiohttp's own line reader fails at 128 KiB, less than
    one large object's watch event)."""
    pending = b""
    try:
        async for chunk in body.iter_any():
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                yield line.rstrip(b"\r")
            if len(pending) > max_line:
                yield pending[:max_line]
                pending = b""
    except _TRANSPORT_ERRORS as exc:
        raise cluster_error(exc) from exc
    if pending:
        yield pending


def _key(item: Any) -> str:
    """An item's place in a list: etcd orders by ``namespace/name``."""
    meta = item.get("metadata") if isinstance(item, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def selector_query(
    *, labels: str | None = None, fields: str | None = None, extra: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    query = [(k, v) for k, v in (extra or {}).items()]
    if labels:
        query.append(("labelSelector", labels))
    if fields:
        query.append(("fieldSelector", fields))
    return query
