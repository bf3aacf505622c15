"""Server-side ``Table`` output (``as=Table;g=meta.k8s.io;v=v1``) with the real printer columns.

kubectl renders ``get`` from these tables, so the columns and cell values follow kube-apiserver's
printers (``pkg/printers/internalversion``) for the common kinds, CRD ``additionalPrinterColumns``
for custom resources, and ``Name``/``Created At`` for everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from kubesim.api import crds, eventsv1
from kubesim.encoding.columns import COLUMNS
from kubesim.encoding.printers import Column, age
from kubesim.machinery import jsonpath
from kubesim.machinery.registry import ResourceType

Obj = dict[str, Any]


_NAME = Column(
    "Name",
    "string",
    "name",
    0,
    lambda o: o["metadata"]["name"],
    "Name must be unique within a namespace.",
)
_CREATED = Column(
    "Created At",
    "date",
    "",
    0,
    lambda o: o["metadata"].get("creationTimestamp", ""),
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)


def _crd_columns(rt: ResourceType) -> list[Column]:
    assert rt.crd is not None
    specs = crds.printer_columns(rt.crd, rt.version)
    if not specs:
        return [
            _NAME,
            Column("Age", "date", "", 0, lambda o: age(o["metadata"].get("creationTimestamp")), ""),
        ]
    cols = [_NAME]
    for spec in specs:
        path = str(spec.get("jsonPath", ""))
        kind = str(spec.get("type", "string"))
        cols.append(
            Column(
                str(spec.get("name", "")),
                kind,
                str(spec.get("format", "")),
                int(spec.get("priority", 0)),
                _crd_cell(path, kind),
                str(spec.get("description", "")),
            )
        )
    return cols


def _crd_cell(path: str, kind: str) -> Callable[[Obj], Any]:
    def cell(obj: Obj) -> Any:
        values = jsonpath.find(obj, path)
        if not values:
            return None
        value = values[0]
        if kind == "date":
            return age(value)
        if kind == "integer" and isinstance(value, int | float):
            return int(value)
        if kind in ("string",) and not isinstance(value, str):
            return jsonpath.text(value)
        return value

    return cell


def columns(rt: ResourceType) -> list[Column]:
    if rt.crd is not None:
        return _crd_columns(rt)
    if rt.storage is not None:  # cells read the stored form
        return [attrs.evolve(c, cell=_stored(c.cell)) for c in COLUMNS[rt.storage]]
    return COLUMNS.get(rt.group_resource) or [_NAME, _CREATED]


def _stored(cell: Callable[[Obj], Any]) -> Callable[[Obj], Any]:
    return lambda obj: cell(eventsv1.to_core(obj))


def partial_metadata(obj: Obj, version: str = "v1") -> Obj:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata", {}),
    }


def _row(cols: list[Column], obj: Obj, include: str, version: str) -> Obj:
    row: Obj = {"cells": [c.cell(obj) for c in cols]}
    if include == "Object":
        row["object"] = obj
    elif include != "None":
        row["object"] = partial_metadata(obj, version)
    return row


def table(
    rt: ResourceType,
    items: list[Obj],
    *,
    include: str = "Metadata",
    list_meta: Obj | None = None,
    headers: bool = True,
    version: str = "v1",
) -> Obj:
    """A Table of ``items`` in meta.k8s.io ``version``; its rows' metadata objects are in that
    version too (the apiserver's ``asTable``)."""
    cols = columns(rt)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": list_meta or {},
        "columnDefinitions": [
            {
                "name": c.name,
                "type": c.type,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            }
            for c in cols
        ]
        if headers
        else [],
        "rows": [_row(cols, o, include, version) for o in items],
    }
