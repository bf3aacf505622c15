"""The three PATCH body formats of kube-apiserver, as pure functions on JSON-shaped dicts.

JSON Patch follows ``gopkg.in/evanphx/json-patch.v4`` (what kube-apiserver links), quirks included:
negative array indexes count from the end, ``replace`` of a missing object key adds it, and a path
without a leading ``/`` is read relative to the root. JSON merge patch is RFC 7386. Strategic merge
patch follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` with the merge keys of
``mergekeys``; it is refused with 415 for kinds that table does not know, as real servers refuse it
for custom resources. Errors carry the HTTP status kube-apiserver answers with (400 malformed,
422 inapplicable, 500 where upstream returns an untyped error).

Nothing here mutates its inputs, knows about HTTP, or validates the patched object against a schema.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.patch import mergekeys, strategic
from kubesim.patch.errors import PatchError as PatchError  # what every format raises
from kubesim.patch.fieldpath import same

JSON = Any
MAX_JSON_PATCH_OPERATIONS = 10000  # kube-apiserver's maxJSONPatchOperations
UNSUPPORTED_SMP = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


# --- JSON Patch (RFC 6902, evanphx v4 flavour) ---------------------------------------------------


def json_patch(obj: dict[str, JSON], ops: list[JSON]) -> dict[str, JSON]:
    """Apply RFC 6902 operations; 400 if ``ops`` is not a patch, 422 if an operation fails."""
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise PatchError(400, "json: cannot unmarshal into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        limit = MAX_JSON_PATCH_OPERATIONS
        raise PatchError(
            413, f"The allowed maximum operations in a JSON patch is {limit}, got {len(ops)}"
        )
    doc: JSON = copy.deepcopy(obj)
    for op in ops:
        doc = _apply_op(doc, op)
    if not isinstance(doc, dict):
        raise PatchError(422, "the patched document is not a JSON object")
    return doc


def _apply_op(doc: JSON, op: dict[str, JSON]) -> JSON:
    kind = op.get("op")
    handler = _OPS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise PatchError(422, f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    path = op.get("path")
    if not isinstance(path, str):
        raise PatchError(422, f"{kind} operation failed to decode path: missing value")
    return handler(doc, path, op)


def _missing(message: str) -> PatchError:
    return PatchError(422, f"{message}: missing value")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _find(doc: JSON, path: str) -> tuple[JSON, str] | None:
    """The container holding the last token of ``path`` and that token, as evanphx findObject."""
    split = path.split("/")
    if len(split) < 2:
        return None
    node = doc
    for part in split[1:-1]:
        node = _get(node, _unescape(part))
        if not isinstance(node, dict | list):
            return None
    return node, _unescape(split[-1])


def _target(doc: JSON, path: str, missing: str) -> tuple[JSON, str]:
    """``_find``, failing with the operation's own ``missing`` message (evanphx words each one)."""
    found = _find(doc, path)
    if found is None:
        raise _missing(missing)
    return found


def _index(arr: list[JSON], key: str, *, size: int) -> int:
    try:
        idx = int(key, 10)
    except ValueError:
        raise PatchError(422, f"value was not a proper array index: '{key}'") from None
    if idx < 0:
        idx += size
    if not 0 <= idx < size:
        raise PatchError(422, f"Unable to access invalid index: {key}: invalid index referenced")
    return idx


def _get(node: JSON, key: str) -> JSON:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list):
        try:
            return node[_index(node, key, size=len(node))]
        except PatchError:
            return None
    return None


def _has(node: JSON, key: str) -> bool:
    if isinstance(node, dict):
        return key in node
    try:
        _index(node, key, size=len(node))
    except PatchError:
        return False
    return True


def _add(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    value = copy.deepcopy(op.get("value"))
    if path == "":
        return value
    node, key = _target(doc, path, f'add operation does not apply: doc is missing path: "{path}"')
    if isinstance(node, dict):
        node[key] = value
    elif key == "-":
        node.append(value)
    else:
        node.insert(_index(node, key, size=len(node) + 1), value)
    return doc


def _remove(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    node, key = _target(
        doc, path, f'remove operation does not apply: doc is missing path: "{path}"'
    )
    if isinstance(node, dict):
        if key not in node:
            raise _missing(
                f"error in remove for path: '{path}': Unable to remove nonexistent key: {key}"
            )
        del node[key]
    else:
        del node[_index(node, key, size=len(node))]
    return doc


def _replace(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    value = copy.deepcopy(op.get("value"))
    if path == "":
        return value
    node, key = _target(doc, path, f"replace operation does not apply: doc is missing path: {path}")
    if isinstance(node, dict):
        node[key] = value  # evanphx v4 adds a missing key instead of failing
    else:
        node[_index(node, key, size=len(node))] = value
    return doc


def _take(doc: JSON, op: dict[str, JSON], kind: str) -> tuple[JSON, JSON, str]:
    source = op.get("from")
    found = _find(doc, source) if isinstance(source, str) else None
    if found is None or not _has(*found):
        raise _missing(f"{kind} operation does not apply: doc is missing from path: {source}")
    return found[0], _get(*found), found[1]


def _move(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    node, value, key = _take(doc, op, "move")
    if isinstance(node, dict):
        del node[key]
    else:
        del node[_index(node, key, size=len(node))]
    return _add(doc, path, {"value": value})


def _copy(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    _, value, _ = _take(doc, op, "copy")
    return _add(doc, path, {"value": value})


def _test(doc: JSON, path: str, op: dict[str, JSON]) -> JSON:
    if path == "":
        actual, present = doc, True
    else:
        found = _find(doc, path)
        if found is None:
            raise _missing(f"test operation does not apply: is missing path: {path}")
        actual, present = _get(*found), _has(*found)
    expected = op.get("value")
    if (not present and expected is None) or (present and same(actual, expected)):
        return doc
    raise PatchError(422, f"testing value {path} failed: test failed")


_OPS = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "copy": _copy,
    "test": _test,
}


# --- JSON merge patch (RFC 7386) -----------------------------------------------------------------


def merge_patch(obj: dict[str, JSON], patch: dict[str, JSON]) -> dict[str, JSON]:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        raise PatchError(400, "invalid JSON merge patch: the patch must be a JSON object")
    result = _merge_docs(obj, patch)
    assert isinstance(result, dict)
    return result


def _merge_docs(target: JSON, patch: JSON) -> JSON:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge_docs(merged.get(key), value)
    return merged


# --- Strategic merge patch -----------------------------------------------------------------------


def strategic_merge_patch(
    obj: dict[str, JSON], patch: dict[str, JSON], *, group: str, version: str, kind: str
) -> dict[str, JSON]:
    """Kubernetes strategic merge patch for a built-in kind; 415 for kinds without merge keys."""
    rules = mergekeys.rules_for(group, kind)
    if rules is None:
        raise PatchError(415, UNSUPPORTED_SMP)
    if not isinstance(patch, dict):
        raise PatchError(400, "invalid strategic merge patch: the patch must be a JSON object")
    result = strategic.merge(copy.deepcopy(obj), copy.deepcopy(patch), rules)
    if not isinstance(result, dict):
        raise PatchError(422, "the patched document is not a JSON object")
    return result
