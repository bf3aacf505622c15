"""Lists of one kind: summary rows, and projected objects serialised page by page.

Objects are read in ``limit``/``continue`` chunks and each chunk is projected and encoded on its
own, so memory holds one chunk whatever the list's size (a list of thousands of Secrets read as one
collection cost the original console a gigabyte). The projection drops ``managedFields`` and sends
ConfigMap/Secret ``data``, ``stringData`` and ``binaryData`` as keys with null values: null means
"not sent", distinct from empty. Single objects are never projected.

This module must not know HTTP: it yields bytes and rows; the route decides how to send them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Iterable, MutableMapping
from typing import Any

from common.errors import BadRequest
from console.resources import rows
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, Query, path_of

_VALUE_KEYS = ("data", "stringData", "binaryData")
_VALUE_KINDS = frozenset({("", "configmaps"), ("", "secrets")})
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def collection(kind: Kind, namespace: str | None) -> str:
    return path_of(
        kind.group, kind.version, kind.resource, namespace=namespace if kind.namespaced else None
    )


def object_path(kind: Kind, namespace: str | None, name: str, sub: str | None = None) -> str:
    if kind.namespaced and not namespace:
        raise BadRequest(f"{kind.id} are namespaced: give the namespace")
    return path_of(
        kind.group,
        kind.version,
        kind.resource,
        namespace=namespace if kind.namespaced else None,
        name=name,
        subresource=sub,
    )


def project(item: MutableMapping[str, Any], kind: Kind) -> MutableMapping[str, Any]:
    """Project ``item`` in place (it is a freshly parsed page's, nobody else holds it)."""
    item.setdefault("apiVersion", kind.api_version)
    item.setdefault("kind", kind.kind)
    meta = item.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    if (kind.group, kind.resource) in _VALUE_KINDS:
        for key in _VALUE_KEYS:
            values = item.get(key)
            if isinstance(values, dict):
                item[key] = dict.fromkeys(values)
    return item


async def object_chunks(
    api: KubeApi, kind: Kind, namespace: str | None, *, query: Query = ()
) -> AsyncGenerator[str, None]:
    """The members of the projected JSON array, one comma-separated run per page (never empty)."""
    first = True
    pages = api.chunks(collection(kind, namespace), query=query)
    async with contextlib.aclosing(pages):
        async for page in pages:
            items = [project(i, kind) for i in page.get("items") or [] if isinstance(i, dict)]
            if not items:
                continue
            encoded = _ENCODER.encode(items)[1:-1]
            yield encoded if first else "," + encoded
            first = False


async def summary_rows(
    api: KubeApi, kind: Kind, namespace: str | None, *, query: Query = ()
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pages = api.chunks(collection(kind, namespace), query=query)
    async with contextlib.aclosing(pages):
        async for page in pages:
            out.extend(_rows(page.get("items") or [], kind))
    return out


def _rows(items: Iterable[Any], kind: Kind) -> Iterable[dict[str, Any]]:
    return (rows.row(i, kind=kind.kind) for i in items if isinstance(i, dict))


async def get_object(api: KubeApi, kind: Kind, namespace: str | None, name: str) -> Any:
    """One object as the cluster stores it, ``kind``/``apiVersion`` included."""
    obj = await api.get(object_path(kind, namespace, name))
    if isinstance(obj, dict):
        obj.setdefault("apiVersion", kind.api_version)
        obj.setdefault("kind", kind.kind)
    return obj
