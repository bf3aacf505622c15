"""CustomResourceDefinitions for the tests that serve a custom kind from the simulator (its own tests
and the console's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
#: A spec with list markers: ``ports`` a map list keyed by ``name``, ``tags`` a set list.
LISTS = {
    "type": "object",
    "properties": {
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
            },
        },
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    },
}


def crd(
    group: str,
    kind: str,
    spec: Mapping[str, Any] | None = None,
    *,
    schema: Mapping[str, Any] | None = None,
    columns: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A namespaced CustomResourceDefinition of ``kind`` in ``group`` (``v1``, served and stored,
    plural ``<kind>s``) whose objects' ``spec`` has the schema ``spec`` (without it: any object), or
    whose whole schema is ``schema``; ``columns`` are its printer columns."""
    plural = kind.lower() + "s"
    if schema is None:
        schema = (
            {"type": "object"}
            if spec is None
            else {"type": "object", "properties": {"spec": dict(spec)}}
        )
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": dict(schema)}}  # fmt: skip
    if columns is not None:
        version["additionalPrinterColumns"] = columns
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version],
        },
    }
