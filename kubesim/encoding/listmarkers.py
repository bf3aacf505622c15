"""The list and map markers of the built-in kinds, as OpenAPI extensions on their schemas.

A real server's OpenAPI carries ``x-kubernetes-patch-strategy``/``x-kubernetes-patch-merge-key``
(from Go struct tags) and ``x-kubernetes-list-type``/``-list-map-keys``/``-map-type`` (from
``+listType`` markers) on the properties they describe. kubectl's client-side apply computes its
strategic merge patch from them: without the merge key of ``containers`` or ``env``, an item
removed from the file is never deleted. ``patch.mergekeys`` holds the markers per kind and path;
this module finds the definition and property each path lands on.
"""

from __future__ import annotations

from typing import Any

from kubesim.encoding import schemas
from kubesim.patch import mergekeys

Schema = dict[str, Any]


def annotate(components: dict[str, Schema], namer: schemas.Namer, kinds: list[Any]) -> None:
    """Add the extensions to ``components`` (definition name -> schema) for the kinds' models."""
    for group, version, kind in kinds:
        cls = schemas.model_for(group, version, kind)
        rules = mergekeys.rules_for(group, kind)
        if cls is None or rules is None:
            continue
        every = {**{f"metadata.{p}": r for p, r in mergekeys.OBJECT_META.items()}, **rules}
        for path, rule in every.items():
            found = _property(cls.__name__, path)
            if found is None:
                continue
            model, field = found
            prop = (components.get(namer.name(model)) or {}).get("properties", {}).get(field)
            if isinstance(prop, dict):
                prop.update(extensions(rule))


def extensions(rule: mergekeys.ListRule | mergekeys.MapRule) -> Schema:
    if isinstance(rule, mergekeys.MapRule):
        out: Schema = {}
        if rule.patch_strategy:
            out["x-kubernetes-patch-strategy"] = rule.patch_strategy
        if rule.atomic:
            out["x-kubernetes-map-type"] = "atomic"
        return out
    out = {}
    if rule.patch_merge_key:
        out["x-kubernetes-patch-merge-key"] = rule.patch_merge_key
    if rule.patch_strategy:
        out["x-kubernetes-patch-strategy"] = rule.patch_strategy
    out["x-kubernetes-list-type"] = rule.list_type
    if rule.list_type == "map":
        out["x-kubernetes-list-map-keys"] = list(rule.map_keys)
    return out


def _property(model: str, path: str) -> tuple[str, str] | None:
    """(model, field) that ``path`` (``spec.template.spec.containers[].ports``) ends on."""
    *parents, last = path.split(".")
    for segment in parents:
        field = segment.removesuffix("[]")
        type_name = schemas.fields_of(model).get(field)
        if type_name is None:
            return None
        container = schemas.element(type_name)
        if segment.endswith("[]"):
            if container is None or container[0] != "list":
                return None
            type_name = container[1]
        model = type_name
    return (model, last) if last in schemas.fields_of(model) else None
