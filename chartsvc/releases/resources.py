"""The objects of a release's manifest with their live status: kind, name, namespace, ready, why.

Each document of the stored manifest names an object; discovery says where it lives (its plural and
whether it is namespaced; a namespaced object without a namespace is in the release's), the cluster
says what it looks like now, and ``chartsvc.releases.kstatus`` says whether it is ready. Objects are read
concurrently. A kind the cluster does not serve is reported as not found rather than failing the
whole answer. Nothing here writes to the cluster or knows HTTP.
"""

from __future__ import annotations

from typing import Any

from chartsvc.clusters import ClusterTarget
from chartsvc.releases.kstatus import NOT_FOUND, Readiness, readiness
from chartsvc.releases.model import Release, ResourceStatus
from chartsvc.releases.reads import ClusterReads, object_path
from common import yamlio

_UNSERVED = Readiness(NOT_FOUND, "the cluster does not serve this kind")


def manifest_objects(manifest: str) -> list[dict[str, Any]]:
    """The Kubernetes objects in a rendered manifest, in its order (``List`` kinds flattened)."""
    out: list[dict[str, Any]] = []
    for doc in yamlio.load_all(manifest):
        if not isinstance(doc, dict):
            continue
        if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(item for item in doc["items"] if isinstance(item, dict))
        elif doc.get("kind") and doc.get("apiVersion"):
            out.append(doc)
    return out


async def statuses(
    reads: ClusterReads, target: ClusterTarget, release: Release
) -> list[ResourceStatus]:
    objects = manifest_objects(release.manifest)
    located = [await _locate(reads, target, release.namespace, obj) for obj in objects]
    live = await reads.objects(target, (path for path, _ in located))
    results = []
    for obj, (path, namespace), current in zip(objects, located, live, strict=True):
        state = readiness(current) if path is not None else _UNSERVED
        results.append(
            ResourceStatus(
                api_version=str(obj["apiVersion"]),
                kind=str(obj["kind"]),
                name=str((obj.get("metadata") or {}).get("name", "")),
                namespace=namespace,
                readiness=state,
            )
        )
    return results


async def _locate(
    reads: ClusterReads, target: ClusterTarget, default_ns: str, obj: dict[str, Any]
) -> tuple[str | None, str | None]:
    """The object's API path (None when its kind is not served) and its namespace."""
    meta = obj.get("metadata") or {}
    resource = await reads.resources(target, str(obj["apiVersion"]), str(obj["kind"]))
    if resource is None:
        return None, meta.get("namespace")
    namespace = (meta.get("namespace") or default_ns) if resource.namespaced else None
    path = object_path(str(obj["apiVersion"]), resource, namespace or "", str(meta.get("name")))
    return path, namespace
