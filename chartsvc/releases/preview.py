"""An upgrade's preview: what ``helm upgrade`` would change, as Helm Dashboard and ``helm diff``
show it, computed from a real server-side dry run of the upgrade.

Three-way values: the release's user values now, the user values the upgrade would store (Helm's
rules for ``resetValues``/``reuseValues``/``resetThenReuseValues``, and reuse when none are given),
and those coalesced over the chart's defaults; each pair as a unified YAML diff. Manifests: one
unified diff per object (by apiVersion, kind, namespace and name) that the upgrade adds, removes or
changes, ``helm diff upgrade``'s view. Pure functions: no Helm, no cluster, no HTTP.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from chartsvc.helm import WriteOptions
from chartsvc.releases.model import Release
from common import yamlio

_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)
_SOURCE = re.compile(r"^# Source: .*\n?", re.MULTILINE)

Change = Literal["added", "removed", "changed"]


@attrs.frozen
class ObjectDiff:
    api_version: str
    kind: str
    name: str
    namespace: str | None
    change: Change
    diff: str


@attrs.frozen
class UpgradePreview:
    release: Release  # the revision the upgrade would write (not stored)
    previous_values: Mapping[str, Any]
    next_values: Mapping[str, Any]
    computed: Mapping[str, Any]
    values_diff: str
    computed_diff: str
    objects: tuple[ObjectDiff, ...]
    unchanged: int


def next_values(
    current: Mapping[str, Any], given: Mapping[str, Any] | None, options: WriteOptions
) -> dict[str, Any]:
    """The user values Helm stores for an upgrade (``action.Upgrade.reuseValues``)."""
    new = dict(given or {})
    if options.reset_values:
        return new
    if options.reuse_values or options.reset_then_reuse_values:
        return coalesce(new, current)
    return new if new else dict(current)


def coalesce(top: Mapping[str, Any], under: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``under``, nested maps merged (Helm's ``CoalesceTables``; null deletes)."""
    out = dict(under)
    for key, value in top.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = coalesce(value, out[key])
        else:
            out[key] = value
    return out


def values_yaml(values: Mapping[str, Any]) -> str:
    return "" if not values else yamlio.dump(dict(values), sort_keys=True)


def unified(before: str, after: str, label: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


Key = tuple[str, str, str | None, str]


def manifest_objects(manifest: str, namespace: str) -> dict[Key, str]:
    """Each object's text (without ``# Source:`` lines) by (apiVersion, kind, namespace, name)."""
    objects: dict[Key, str] = {}
    for document in _SEPARATOR.split(manifest):
        text = _SOURCE.sub("", document).strip("\n")
        parsed = yamlio.load(text) if text.strip() else None
        if not isinstance(parsed, dict):
            continue
        meta = parsed.get("metadata") or {}
        where = meta.get("namespace") or namespace
        key = (
            str(parsed.get("apiVersion", "")),
            str(parsed.get("kind", "")),
            where,
            str(meta.get("name", "")),
        )
        objects[key] = text + "\n"
    return objects


def diff_manifests(before: str, after: str, namespace: str) -> tuple[list[ObjectDiff], int]:
    """The objects the upgrade adds, removes or changes, in that order of appearance; and how
    many it leaves as they are."""
    old, new = manifest_objects(before, namespace), manifest_objects(after, namespace)
    diffs: list[ObjectDiff] = []
    for key in [*new, *(k for k in old if k not in new)]:
        was, now = old.get(key, ""), new.get(key, "")
        if was == now:
            continue
        change: Change = "added" if not was else "removed" if not now else "changed"
        api_version, kind, where, name = key
        label = f"{where}/{kind}/{name}" if where else f"{kind}/{name}"
        diffs.append(ObjectDiff(api_version, kind, name, where, change, unified(was, now, label)))
    return diffs, len(set(old) & set(new)) - sum(d.change == "changed" for d in diffs)
