"""The printer columns a custom kind declares (``additionalPrinterColumns`` of its CRD, at the
version the console lists); built-in kinds, and kinds served by an aggregated API rather than a CRD,
have none.
"""

from __future__ import annotations

from typing import Any

from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, is_status, path_of

_FIELDS = ("name", "type", "jsonPath", "description", "priority", "format")


async def printer_columns(api: KubeApi, kind: Kind) -> list[dict[str, Any]]:
    if kind.builtin:
        return []
    path = path_of("apiextensions.k8s.io", "v1", "customresourcedefinitions", name=kind.full_name)
    try:
        crd = await api.get(path)
    except Exception as exc:
        if is_status(exc, 404):
            return []  # served by an aggregated API server, not a CRD
        raise
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("name") == kind.version:
            return [_column(c) for c in version.get("additionalPrinterColumns") or []]
    return []


def _column(column: dict[str, Any]) -> dict[str, Any]:
    out = {key: column[key] for key in _FIELDS if key in column}
    out.setdefault("priority", 0)
    return out
