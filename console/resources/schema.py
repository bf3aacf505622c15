"""A kind's schema as the cluster itself publishes it (OpenAPI v3), self-contained.

The index ``/openapi/v3`` names one document per group-version with a content hash; the kind's
schema is the one whose ``x-kubernetes-group-version-kind`` matches. The answer carries that schema
and every schema it references under ``components.schemas``, so the ``$ref``s in it resolve against
the answer itself and a client can validate with it directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from common.errors import NotFound
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi

_PREFIX = "#/components/schemas/"


class SchemaNotPublished(NotFound, code="not-found"): ...


async def schema_for(api: KubeApi, kind: Kind) -> dict[str, Any]:
    index = await api.get("/openapi/v3")
    key = f"apis/{kind.group}/{kind.version}" if kind.group else f"api/{kind.version}"
    entry = (index.get("paths") or {}).get(key) or {}
    url = entry.get("serverRelativeURL")
    if not isinstance(url, str) or not url.startswith("/"):
        raise SchemaNotPublished(f"the cluster publishes no OpenAPI v3 document for {key}")
    document = await api.get(url)
    schemas: dict[str, Any] = (document.get("components") or {}).get("schemas") or {}
    name = _find(schemas, kind)
    if name is None:
        raise SchemaNotPublished(
            f"the cluster publishes no schema for {kind.api_version} {kind.kind}"
        )
    return {
        "resourceId": kind.id,
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "name": name,
        "schema": schemas[name],
        "components": {"schemas": {n: schemas[n] for n in _closure(schemas, name)}},
    }


def _find(schemas: dict[str, Any], kind: Kind) -> str | None:
    for name, schema in schemas.items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if (gvk.get("group", ""), gvk.get("version"), gvk.get("kind")) == (
                kind.group,
                kind.version,
                kind.kind,
            ):
                return name
    return None


def _closure(schemas: dict[str, Any], root: str) -> list[str]:
    seen: dict[str, None] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen[name] = None
        todo.extend(_refs(schemas[name]))
    return list(seen)


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            yield ref[len(_PREFIX) :].replace("~1", "/").replace("~0", "~")
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
