"""Field paths and the value operations of server-side apply (``sigs.k8s.io/structured-merge-diff``).

A field path is a tuple of path elements, each ``(kind, text)`` exactly as ``managedFields`` spells
it after the prefix: ``("f", "spec")``, ``("k", '{"name":"nginx"}')``, ``("v", '"foo"')``,
``("i", "0")``. On top of that: the field set of a value (``to_field_set``), the comparison of two
values (``compare``), removing paths from a value (``remove``), the apply merge (``merge``), and
FieldsV1 encoding. List and map semantics come from ``mergekeys``: lists it does not name are
atomic, maps are granular.

Pure functions on JSON-shaped values; this module must not know about managers, conflicts or HTTP
(that is ``apply``), and must not mutate its arguments.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from kubesim.patch import mergekeys

JSON = Any
PathElement = tuple[str, str]
Path = tuple[PathElement, ...]
Rules = mergekeys.Rules | None
_KIND_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


def same(a: JSON, b: JSON) -> bool:
    """Equality of decoded JSON as Go compares it: ``1``, ``1.0`` and ``true`` all differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _dumps(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _join(spath: str, key: str) -> str:
    return f"{spath}.{key}" if spath else key


def _atomic_map(rules: Rules, spath: str) -> bool:
    return bool(spath) and mergekeys.map_rule(rules, spath).atomic


def _granular_list(rules: Rules, spath: str) -> mergekeys.ListRule | None:
    rule = mergekeys.list_rule(rules, spath)
    return None if rule.list_type == "atomic" else rule


def item_element(item: JSON, rule: mergekeys.ListRule, index: int) -> PathElement:
    """The path element naming one item of a set or associative list."""
    if rule.list_type == "set":
        return ("v", _dumps(item))
    defaults = dict(rule.key_defaults)
    if isinstance(item, dict):
        key = {k: item.get(k, defaults.get(k)) for k in rule.map_keys if k in item or k in defaults}
        if key:
            return ("k", _dumps(key))
    return ("i", str(index))


def _items(value: list[JSON], rule: mergekeys.ListRule) -> list[tuple[PathElement, JSON]]:
    return [(item_element(item, rule, i), item) for i, item in enumerate(value)]


# --- field sets ----------------------------------------------------------------------------------


def to_field_set(value: JSON, rules: Rules) -> set[Path]:
    """The paths a value sets: leaves, list items, empty maps and atomic values (SMD ToFieldSet)."""
    out: set[Path] = set()
    _collect(value, (), "", rules, out)
    return out


def _collect(value: JSON, path: Path, spath: str, rules: Rules, out: set[Path]) -> None:
    if isinstance(value, dict) and not _atomic_map(rules, spath):
        for key, child in value.items():
            child_path = (*path, ("f", key))
            _collect(child, child_path, _join(spath, key), rules, out)
            if child is None or child == {}:
                out.add(child_path)
    elif isinstance(value, list) and (rule := _granular_list(rules, spath)) is not None:
        for element, item in _items(value, rule):
            _collect(item, (*path, element), spath + "[]", rules, out)
            out.add((*path, element))
    elif path:
        out.add(path)


def _subtree(value: JSON, path: Path, spath: str, rules: Rules, out: set[Path]) -> None:
    """Every node at or under ``path``: what SMD reports added or removed with a whole value."""
    if path:
        out.add(path)
    for element, child, child_spath in _children(value, spath, rules):
        _subtree(child, (*path, element), child_spath, rules, out)


def _children(value: JSON, spath: str, rules: Rules) -> list[tuple[PathElement, JSON, str]]:
    if isinstance(value, dict) and not _atomic_map(rules, spath):
        return [(("f", k), v, _join(spath, k)) for k, v in value.items()]
    if isinstance(value, list) and (rule := _granular_list(rules, spath)) is not None:
        return [(e, v, spath + "[]") for e, v in _items(value, rule)]
    return []


@dataclass
class Comparison:
    """What changed between two values, path by path (SMD typed.Comparison)."""

    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)


def compare(old: JSON, new: JSON, rules: Rules) -> Comparison:
    result = Comparison()
    _compare(old, new, (), "", rules, result)
    return result


def _compare(old: JSON, new: JSON, path: Path, spath: str, rules: Rules, c: Comparison) -> None:
    # A null where the other side has a map or list is that container, empty (SMD deduceAtom).
    old = type(new)() if old is None and isinstance(new, dict | list) else old
    new = type(old)() if new is None and isinstance(old, dict | list) else new
    old_children = {e: (v, s) for e, v, s in _children(old, spath, rules)}
    new_children = {e: (v, s) for e, v, s in _children(new, spath, rules)}
    containers = isinstance(old, dict | list) and type(old) is type(new)
    if not (containers and (old_children or new_children or same(old, new))):
        if not same(old, new) and path:
            c.modified.add(path)
        for element, (child, child_spath) in old_children.items():
            _subtree(child, (*path, element), child_spath, rules, c.removed)
        for element, (child, child_spath) in new_children.items():
            _subtree(child, (*path, element), child_spath, rules, c.added)
        return
    for element, (child, child_spath) in new_children.items():
        if element in old_children:
            _compare(old_children[element][0], child, (*path, element), child_spath, rules, c)
        else:
            _subtree(child, (*path, element), child_spath, rules, c.added)
    for element, (child, child_spath) in old_children.items():
        if element not in new_children:
            _subtree(child, (*path, element), child_spath, rules, c.removed)


# --- removing paths ------------------------------------------------------------------------------


@dataclass
class _Node:
    member: bool = False
    children: dict[PathElement, _Node] = field(default_factory=dict)


def _trie(paths: set[Path]) -> _Node:
    root = _Node()
    for path in paths:
        node = root
        for element in path:
            node = node.children.setdefault(element, _Node())
        node.member = True
    return root


def remove(value: JSON, paths: set[Path], rules: Rules) -> JSON:
    """A copy of ``value`` without ``paths``; maps and lists emptied by the removal go too, as
    ``omitempty`` drops them when a typed object is written back."""
    return _prune(copy.deepcopy(value), _trie(paths), "", rules)


def _prune(value: JSON, node: _Node, spath: str, rules: Rules) -> JSON:
    for element, child, child_spath in _children(value, spath, rules):
        sub = node.children.get(element)
        if sub is None:
            continue
        was_empty = child in ({}, [])
        kept = None if sub.member else _prune(child, sub, child_spath, rules)
        drop = kept is None or (kept in ({}, []) and not was_empty)
        _replace_child(value, element, child, None if drop else kept)
    if isinstance(value, list):
        value[:] = [item for item in value if item is not _DROPPED]
    return value


_DROPPED = object()


def _replace_child(value: JSON, element: PathElement, child: JSON, kept: JSON) -> None:
    if isinstance(value, dict):
        if kept is None:
            del value[element[1]]
        else:
            value[element[1]] = kept
        return
    index = next(i for i, item in enumerate(value) if item is child)
    value[index] = _DROPPED if kept is None else kept


# --- the apply merge -----------------------------------------------------------------------------


def merge(live: JSON, config: JSON, rules: Rules, spath: str = "") -> JSON:
    """``config`` merged over ``live`` as SMD merges an applied configuration (config wins)."""
    if isinstance(live, dict) and isinstance(config, dict) and not _atomic_map(rules, spath):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, rules, _join(spath, key))
            else:
                out[key] = value
        return out
    if isinstance(live, list) and isinstance(config, list):
        rule = _granular_list(rules, spath)
        if rule is not None:
            return _merge_list(live, config, rule, rules, spath + "[]")
    return config


def _merge_list(
    lhs: list[JSON], rhs: list[JSON], rule: mergekeys.ListRule, rules: Rules, spath: str
) -> list[JSON]:
    """SMD's interleaving: shared items in config order, live-only items keep their place."""
    left, right = _items(lhs, rule), _items(rhs, rule)
    in_left, in_right = dict(left), dict(right)
    shared = [e for e, _ in right if e in in_left]
    out: list[JSON] = []
    done: set[PathElement] = set()
    li = ri = 0

    def take_right(*, shared_round: bool) -> None:
        nonlocal ri
        element, item = right[ri]
        done.add(element)
        out.append(merge(in_left[element], item, rules, spath) if element in in_left else item)
        ri += 1
        if shared and (shared_round or shared[0] == element):
            shared.pop(0)

    while li < len(left) or ri < len(right):
        if li < len(left):
            element = left[li][0]
            if ri < len(right) and element == right[ri][0]:
                take_right(shared_round=True)
                li += 1
                continue
            if element not in in_right:
                out.append(left[li][1])
                li += 1
                continue
            waiting = ri < len(right) and shared and shared[0] != element
            if element in done or waiting or ri >= len(right):
                li += 1
                continue
        take_right(shared_round=False)
    return out


# --- FieldsV1 --------------------------------------------------------------------------------------


def _sort_key(element: PathElement) -> tuple[int, int, str]:
    kind, text = element
    number = int(text) if kind == "i" and text.lstrip("-").isdigit() else 0
    return (_KIND_ORDER.get(kind, 4), number, text)


def encode(paths: set[Path]) -> dict[str, JSON]:
    """The FieldsV1 document of a set of paths (``.`` marks a member that has children)."""
    return _encode(_trie(paths))


def _encode(node: _Node) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for element in sorted(node.children, key=_sort_key):
        child = node.children[element]
        inner = _encode(child)
        out[f"{element[0]}:{element[1]}"] = {".": {}, **inner} if child.member and inner else inner
    return out


def decode(fields: dict[str, JSON], prefix: Path = ()) -> set[Path]:
    """The paths of a FieldsV1 document; ValueError if it is not one."""
    out: set[Path] = set()
    for key, sub in fields.items():
        if key == ".":
            if prefix:
                out.add(prefix)
            continue
        kind, sep, text = key.partition(":")
        if not sep or kind not in _KIND_ORDER or not isinstance(sub, dict):
            raise ValueError(f"invalid FieldsV1 key {key!r}")
        path = (*prefix, (kind, text))
        out |= decode(sub, path) if sub else {path}
    return out


def path_string(path: Path) -> str:
    """A path as kube-apiserver prints it in conflicts: ``.spec.containers[name="nginx"].image``."""
    parts = []
    for kind, text in path:
        if kind == "f":
            parts.append(f".{text}")
        elif kind == "k":
            pairs = json.loads(text).items()
            parts.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in pairs) + "]")
        elif kind == "v":
            parts.append(f"[={text}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)
