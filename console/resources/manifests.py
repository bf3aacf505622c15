"""YAML export, server-side apply (real and dry run) and merge patches.

Apply and dry run share :func:`normalise`: one YAML document, a mapping naming ``apiVersion``,
``kind`` and ``metadata.name``; ``managedFields`` dropped (the server refuses them in an apply, and
they come back in every exported object); a namespaced object without a namespace goes to
``default``, a cluster-scoped one loses any namespace. ``resourceVersion`` is kept, as kubectl does:
a stale one makes the apply a conflict instead of overwriting someone else's change. The apply is
a ``PATCH`` with ``application/apply-patch+yaml``, field manager ``wharf-console`` and forced
conflicts; the dry run adds ``dryRun=All`` and returns what the cluster would store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from common import yamlio
from common.errors import BadRequest
from console.resources.catalog import Kind
from console.resources.discovery import Catalogs
from console.resources.kubeapi import APPLY_PATCH, MERGE_PATCH, KubeApi
from console.resources.listing import get_object, object_path

FIELD_MANAGER = "wharf-console"
# A manifest whose aliases expand past this many nodes is refused before it is re-serialised.
MAX_NODES = 200_000


@attrs.frozen
class Manifest:
    kind: Kind
    namespace: str | None
    name: str
    body: dict[str, Any]


def parse(text: str) -> dict[str, Any]:
    try:
        docs = [d for d in yamlio.load_all(text) if d is not None]
    except yamlio.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadRequest(f"the manifest is not valid YAML{where}") from None
    if len(docs) != 1:
        raise BadRequest(f"send exactly one object per request; the manifest holds {len(docs)}")
    doc = docs[0]
    if not isinstance(doc, dict):
        raise BadRequest("the manifest must be a mapping (an object)")
    _check_size(doc)
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise BadRequest(f"the manifest needs {field}")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise BadRequest("the manifest needs metadata.name")
    return doc


def _check_size(doc: Any) -> None:
    budget = MAX_NODES
    todo = [doc]
    while todo:
        node = todo.pop()
        budget -= 1
        if budget < 0:
            raise BadRequest(f"the manifest expands to more than {MAX_NODES} values")
        if isinstance(node, dict):
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)


async def normalise(api: KubeApi, catalogs: Catalogs, text: str) -> Manifest:
    doc = parse(text)
    api_version, kind_name = doc["apiVersion"], doc["kind"]
    kind = await catalogs.by_kind(api, api_version, kind_name)
    if kind is None:
        raise BadRequest(f"this cluster serves no {kind_name} in {api_version}")
    version = api_version.rpartition("/")[2]
    if version != kind.version:
        kind = attrs.evolve(kind, version=version)
    meta = dict(doc["metadata"])
    meta.pop("managedFields", None)
    if kind.namespaced:
        meta["namespace"] = meta.get("namespace") or "default"
    else:
        meta.pop("namespace", None)
    body = {**doc, "metadata": meta}
    return Manifest(kind=kind, namespace=meta.get("namespace"), name=meta["name"], body=body)


async def apply(api: KubeApi, manifest: Manifest, *, dry_run: bool) -> dict[str, Any]:
    query = [("fieldManager", FIELD_MANAGER), ("force", "true")]
    if dry_run:
        query.append(("dryRun", "All"))
    path = object_path(manifest.kind, manifest.namespace, manifest.name)
    stored = await api.send("PATCH", path, manifest.body, content_type=APPLY_PATCH, query=query)
    return _complete(stored, manifest.kind)


async def merge_patch(
    api: KubeApi, kind: Kind, namespace: str | None, name: str, patch: Mapping[str, Any]
) -> dict[str, Any]:
    path = object_path(kind, namespace, name)
    query = [("fieldManager", FIELD_MANAGER)]
    patched = await api.send("PATCH", path, dict(patch), content_type=MERGE_PATCH, query=query)
    return _complete(patched, kind)


def _complete(obj: Any, kind: Kind) -> dict[str, Any]:
    out = obj if isinstance(obj, dict) else {}
    out.setdefault("apiVersion", kind.api_version)
    out.setdefault("kind", kind.kind)
    return out


async def export_yaml(api: KubeApi, kind: Kind, namespace: str | None, name: str) -> str:
    """The object as YAML for editing: ``managedFields`` left out, everything else as stored."""
    obj = await get_object(api, kind, namespace if kind.namespaced else None, name)
    meta = dict(obj.get("metadata") or {})
    meta.pop("managedFields", None)
    ordered = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": meta}
    ordered.update((k, v) for k, v in obj.items() if k not in ordered)
    return yamlio.dump(ordered)
