"""One object's detail: its summary row, the projected object, its owner chain, the relations its
kind has (``relations``), and its events, newest first.

The owner chain follows controller references upwards (Pod → ReplicaSet → Deployment) and stops at
an owner that is gone (reported ``missing``) or at a depth of eight, which no real chain reaches.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from console.resources import rows
from console.resources.catalog import Catalog, Kind
from console.resources.detail import refs
from console.resources.detail.lookup import Lookup, Obj
from console.resources.detail.relations import RELATORS
from console.resources.events import list_events
from console.resources.kubeapi import KubeApi
from console.resources.listing import get_object, project

MAX_OWNER_DEPTH = 8


@attrs.frozen
class Detail:
    """One object with what surrounds it; ``events`` are the cluster's Event objects."""

    kind: Kind
    row: Obj
    object: Mapping[str, Any]
    owners: list[Obj]
    relations: dict[str, list[Obj]]
    events: list[Obj]


async def detail(
    api: KubeApi, catalog: Catalog, kind: Kind, namespace: str | None, name: str
) -> Detail:
    namespace = namespace if kind.namespaced else None
    obj = await get_object(api, kind, namespace, name)
    look = Lookup(api, catalog)
    relator = RELATORS.get(kind.kind)
    relations = await relator(look, obj, kind.kind) if relator is not None else {}
    events = await list_events(api, catalog, namespace=namespace, kind=kind.kind, name=name)
    return Detail(
        kind=kind,
        row=rows.row(obj, kind=kind.kind),
        object=project(copy.deepcopy(obj), kind),
        owners=await owner_chain(look, obj),
        relations=relations,
        events=events,
    )


async def owner_chain(look: Lookup, obj: Obj) -> list[Obj]:
    """Controllers from the nearest up; each entry also says if the owner is gone."""
    chain: list[Obj] = []
    current = obj
    namespace = (obj.get("metadata") or {}).get("namespace")
    for _ in range(MAX_OWNER_DEPTH):
        ref = refs.controller_of(current)
        if ref is None:
            break
        kind = look.catalog.by_kind(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if kind is None:
            chain.append(_unknown_owner(ref, namespace))
            break
        found = await look.get(kind, namespace if kind.namespaced else None, ref.get("name", ""))
        if found is None or refs.uid_of(found) != ref.get("uid"):
            chain.append({**_unknown_owner(ref, namespace), "resourceId": kind.id})
            break
        chain.append(look.ref(kind, found))
        current = found
    return chain


def _unknown_owner(ref: Any, namespace: str | None) -> Obj:
    return {
        "resourceId": None,
        "kind": ref.get("kind", ""),
        "namespace": namespace,
        "name": ref.get("name", ""),
        "status": None,
        "missing": True,
    }
