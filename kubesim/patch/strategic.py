"""The strategic merge patch engine of ``k8s.io/apimachinery/pkg/util/strategicpatch``.

Split from ``patching`` (which owns the public ``strategic_merge_patch``) to keep both modules
short. It follows upstream's ``mergeMap``/``mergeSlice`` as kube-apiserver runs them
(``MergeParallelList`` and ``IgnoreUnmatchedNulls`` on), including list order: patch items in
patch order, live-only items in live order, interleaved by live order. Directives: ``$patch``
(replace, delete; merge is refused as upstream refuses it), ``$retainKeys``,
``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``.

It works in place on copies its caller made, knows nothing of HTTP, and must not decide which
kinds may be patched: that is ``patching``'s job.
"""

from __future__ import annotations

import json
from typing import Any

from kubesim.patch import mergekeys
from kubesim.patch.errors import PatchError
from kubesim.patch.fieldpath import same

JSON = Any
DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_PRIMITIVE = "$deleteFromPrimitiveList"
SET_ORDER = "$setElementOrder"


def merge(obj: dict[str, JSON], patch: dict[str, JSON], rules: mergekeys.Rules) -> JSON:
    """Merge ``patch`` into ``obj`` (both consumed: pass copies)."""
    return _Smp(rules).map(obj, patch, "")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _untyped(message: str) -> PatchError:
    """An error kube-apiserver passes through untyped, which it answers with 500."""
    return PatchError(500, message)


def _no_merge_key(item: JSON, key: str) -> PatchError:
    return _untyped(f"map: {json.dumps(item)} does not contain declared merge key: {key}")


def _directive_key(key: str, prefix: str, error: str) -> str:
    head, sep, field = key.partition("/")
    if not sep or head != prefix:
        raise PatchError(400, error)
    return field


def _discard_nulls(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


def _remove_directives(value: JSON) -> tuple[JSON, bool]:
    """Strip ``$patch`` maps from a value taken whole from the patch; False: drop the value."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        kept = {k: _remove_directives(v) for k, v in value.items()}
        return {k: v for k, (v, keep) in kept.items() if keep}, True
    if isinstance(value, list):
        items = [_remove_directives(v) for v in value]
        return [v for v, keep in items if keep], True
    return value, True


def _take_patch_value(original: dict[str, JSON], key: str, value: JSON) -> None:
    value, keep = _remove_directives(_discard_nulls(value))
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


class _Smp:
    """One strategic merge of a patch into an object; ``path`` is the field's table path."""

    def __init__(self, rules: mergekeys.Rules) -> None:
        self.rules = rules

    def map(self, original: dict[str, JSON], patch: dict[str, JSON], path: str) -> JSON:
        if DIRECTIVE in patch:
            return _map_directive(patch)
        _retain_keys(original, patch)
        self.set_element_orders(original, patch, path)
        for key, value in list(patch.items()):
            self.merge_field(original, key, value, path)
        return original

    def merge_field(self, original: dict[str, JSON], key: str, value: JSON, path: str) -> None:
        delete_list = key.startswith(DELETE_PRIMITIVE)
        if delete_list:
            key = _directive_key(key, DELETE_PRIMITIVE, "invalid patch format of primitive list")
        if value is None:
            original.pop(key, None)
            return
        current: JSON = original.get(key)
        child = _join(path, key)
        if key not in original or _shape(current) != _shape(value) or _shape(value) == "scalar":
            if not delete_list:
                _take_patch_value(original, key, value)
        elif isinstance(current, dict):
            strategy = mergekeys.map_rule(self.rules, child).patch_strategy
            original[key] = value if strategy == "replace" else self.map(current, value, child)
        else:
            original[key] = self.slice_handler(current, value, child, delete_list=delete_list)

    def slice_handler(
        self, original: list[JSON], patch: list[JSON], path: str, *, delete_list: bool
    ) -> list[JSON]:
        rule = mergekeys.list_rule(self.rules, path)
        if rule.patch_strategy != "merge" and not delete_list:
            return patch
        return self.slice(original, patch, rule.patch_merge_key, path, delete_list=delete_list)

    def slice(
        self, original: list[JSON], patch: list[JSON], key: str, path: str, *, delete_list: bool
    ) -> list[JSON]:
        if not original and not patch:
            return original
        if _element_shape(original, patch) != "map":
            if delete_list:
                return [v for v in original if not any(same(v, d) for d in patch)]
            merged = _dedupe(original + patch)
            key = ""
        else:
            if not key:
                raise _untyped(f"cannot merge lists without merge key for {path}")
            original, patch = _special_elements(original, patch, key)
            merged = self.merge_items(original, patch, key, path)
        patch_items, server_only = _partition(merged, patch, key)
        return _normalize(patch_items, server_only, patch, original, key)

    def merge_items(
        self, original: list[JSON], patch: list[JSON], key: str, path: str
    ) -> list[JSON]:
        merged = list(original)
        for item in patch:
            if key not in item:
                raise _no_merge_key(item, key)
            index = _find_by_key(merged, key, item[key])
            if index is None:
                # Upstream appends the item as sent; the typed round trip then drops its nulls.
                merged.append(_discard_nulls(item))
            else:
                merged[index] = self.map(merged[index], item, f"{path}[]")
        return merged

    def set_element_orders(
        self, original: dict[str, JSON], patch: dict[str, JSON], path: str
    ) -> None:
        for directive in [k for k in patch if k.startswith(SET_ORDER)]:
            order = patch.pop(directive)
            error = "invalid patch format of setElementOrder list"
            field = _directive_key(directive, SET_ORDER, error)
            current: JSON = original.get(field)
            sent: JSON = patch.pop(field, None)
            if not isinstance(order, list) or not all(
                isinstance(v, list | type(None)) for v in (current, sent)
            ):
                raise PatchError(400, error)
            child = _join(path, field)
            key = mergekeys.list_rule(self.rules, child).patch_merge_key
            _validate_order(sent or [], order, key)
            if current is None and sent is None:
                continue
            merged: list[JSON]
            if sent is None:
                merged = current
            elif current is None:
                merged = _remove_directives(sent)[0]
            else:
                merged = self.slice_handler(current, sent, child, delete_list=False)
            if _element_shape(merged, []) != "map":
                key = ""
            patch_items, server_only = _partition(merged, order, key)
            original[field] = _normalize(patch_items, server_only, order, current or [], key)


def _shape(value: JSON) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


def _element_shape(*lists: list[JSON]) -> str:
    types = {type(v) for items in lists for v in items}
    if list in types:
        raise PatchError(422, "lists of lists are not supported")
    if len(types) > 1:
        raise _untyped(f"list element types are not identical: {json.dumps(lists)}")
    return "map" if types == {dict} else "scalar"


def _map_directive(patch: dict[str, JSON]) -> JSON:
    directive = patch[DIRECTIVE]
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != DIRECTIVE}
    if directive == "delete":
        return {}
    raise _untyped(f"unknown patch type: {directive} in map: {json.dumps(patch)}")


def _retain_keys(original: dict[str, JSON], patch: dict[str, JSON]) -> None:
    if RETAIN_KEYS not in patch:
        return
    keys = patch.pop(RETAIN_KEYS)
    if not isinstance(keys, list):
        raise PatchError(400, "invalid patch format of retainKeys")
    for key, value in patch.items():
        skip = value is None or key.startswith((DELETE_PRIMITIVE, SET_ORDER))
        if not skip and key not in keys:
            raise PatchError(400, "invalid patch format of retainKeys")
    for key in [k for k in original if k not in keys]:
        del original[key]


def _special_elements(
    original: list[JSON], patch: list[JSON], key: str
) -> tuple[list[JSON], list[JSON]]:
    """Apply ``$patch`` list items: delete removes by merge key, replace drops the original."""
    rest: list[JSON] = []
    replace = False
    for item in patch:
        directive = item.get(DIRECTIVE, None) if DIRECTIVE in item else None
        if DIRECTIVE not in item:
            rest.append(item)
        elif directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            original = [o for o in original if not (key in o and same(o[key], item[key]))]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _untyped("merging lists cannot yet be specified in the patch")
        else:
            raise _untyped(f"unknown patch type: {directive} in map: {json.dumps(item)}")
    return (rest, []) if replace else (original, rest)


def _find_by_key(items: list[JSON], key: str, value: JSON) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _untyped(f"value for key {index} is not a map")
        if key in item and same(item[key], value):
            return index
    return None


def _dedupe(items: list[JSON]) -> list[JSON]:
    kept: list[JSON] = []
    for item in items:
        if not any(same(item, k) for k in kept):
            kept.append(item)
    return kept


def _position(order: list[JSON], item: JSON, key: str) -> int:
    for index, candidate in enumerate(order):
        if key and same(item.get(key), candidate.get(key)):
            return index
        if not key and same(item, candidate):
            return index
    return -1


def _partition(merged: list[JSON], by: list[JSON], key: str) -> tuple[list[JSON], list[JSON]]:
    if key:
        for item in merged:
            if key not in item:
                raise _no_merge_key(item, key)
    present = [item for item in merged if _position(by, item, key) >= 0]
    absent = [item for item in merged if _position(by, item, key) < 0]
    return present, absent


def _sort_by(items: list[JSON], order: list[JSON], key: str) -> list[JSON]:
    if key:
        for item in [*items, *order]:
            if not isinstance(item, dict) or key not in item:
                raise _no_merge_key(item, key)
    deleted = [i for i in items if key and i.get(DIRECTIVE) == "delete"]
    kept = [i for i in items if not (key and i.get(DIRECTIVE) == "delete")]

    def rank(item: JSON) -> int:
        index = _position(order, item, key)
        return index if index >= 0 else len(order)

    return sorted(kept, key=rank) + deleted


def _normalize(
    patch_items: list[JSON],
    server_only: list[JSON],
    patch_order: list[JSON],
    server_order: list[JSON],
    key: str,
) -> list[JSON]:
    """Patch items in patch order, server-only items in live order, interleaved by live order."""
    right = _sort_by(patch_items, patch_order, key)
    left = _sort_by(server_only, server_order, key)
    out: list[JSON] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and _before(left[i], right[j], server_order, key)):
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out


def _before(left: JSON, right: JSON, server_order: list[JSON], key: str) -> bool:
    li, ri = _position(server_order, left, key), _position(server_order, right, key)
    return li >= 0 and ri >= 0 and li < ri


def _validate_order(patch_list: list[JSON], order: list[JSON], key: str) -> None:
    """Every non-deleting patch item must appear in ``$setElementOrder`` in the same order."""
    items = [
        i for i in patch_list if not (key and isinstance(i, dict) and i.get(DIRECTIVE) == "delete")
    ]
    p = s = 0
    while p < len(items) and s < len(order):
        if isinstance(items[p], dict) and DIRECTIVE in items[p]:
            p += 1
            continue
        if key and not (isinstance(items[p], dict) and isinstance(order[s], dict)):
            raise _untyped("invalid patch format of setElementOrder list")
        if key and (key not in items[p] or key not in order[s]):
            raise _no_merge_key(items[p] if key not in items[p] else order[s], key)
        if same(items[p].get(key), order[s].get(key)) if key else same(items[p], order[s]):
            p += 1
        s += 1
    if p < len(items):
        raise _untyped(
            f"the order in patch list:\n{json.dumps(patch_list)}\n doesn't match "
            f"$setElementOrder list:\n{json.dumps(order)}"
        )
