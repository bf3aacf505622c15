"""Server-side apply and ``managedFields``, as kube-apiserver's field manager keeps them.

``apply`` merges an applied configuration into the live object, records the applier's field set,
removes fields the applier dropped that nobody else owns, and refuses (``ApplyConflict``, a 409)
to change a value another manager owns unless forced. ``record_update`` gives a writer that did
not apply (create, update, patch) ownership of what it changed. Both follow
``k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`` and structured-merge-diff's ``Updater``:
manager identity (Apply managers ignore apiVersion), the metadata fields never tracked, the
``kubectl`` upgrade path from client-side apply, entry order and RFC 3339 second timestamps.

Pure functions on JSON-shaped dicts: nothing here stores objects, bumps resourceVersion, defaults
fields or speaks HTTP. Callers pass the object as it will be stored (defaulted) and reset
``status`` on main-resource writes themselves.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubesim.patch import fieldpath, mergekeys
from kubesim.patch.errors import PatchError
from kubesim.patch.fieldpath import Path

Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_UPDATE_MANAGERS = 10  # fieldmanager.DefaultMaxUpdateManagers
ANCIENT = "ancient-changes"  # where the oldest Update managers are merged past the cap
# Paths no manager ever owns (fieldmanager's stripMetaManager).
STRIPPED: frozenset[Path] = frozenset(
    {(("f", "apiVersion"),), (("f", "kind"),), (("f", "metadata"),)}
    | {
        (("f", "metadata"), ("f", name))
        for name in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ]
    }
)


@dataclass
class Entry:
    """One ``managedFields`` entry."""

    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: set[Path] = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Manager identity: appliers are one manager whatever apiVersion they apply with."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, self.subresource, version)

    def printed(self) -> str:
        """The manager as conflict messages print it."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


class ApplyConflict(Exception):
    """An apply that would change fields other managers own: kube-apiserver answers 409.

    ``conflicts`` holds (manager, field path) pairs; ``causes`` the ``FieldManagerConflict``
    Status causes; ``str(exc)`` the Status message.
    """

    def __init__(
        self, conflicts: list[tuple[str, str]], *, printed: Mapping[str, str] | None = None
    ) -> None:
        self.conflicts = conflicts
        shown = {m: (printed or {}).get(m, json.dumps(m)) for m, _ in conflicts}
        self.causes = [
            {"reason": "FieldManagerConflict", "message": f"conflict with {shown[m]}", "field": p}
            for m, p in conflicts
        ]
        super().__init__(_conflict_message(conflicts, shown))


def _conflict_message(conflicts: list[tuple[str, str]], shown: Mapping[str, str]) -> str:
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {shown[manager]}: {path}"
    lines: list[str] = []
    for manager in sorted({m for m, _ in conflicts}):
        lines.append(f"conflicts with {shown[manager]}:")
        lines.extend(f"- {p}" for m, p in conflicts if m == manager)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# --- apply ---------------------------------------------------------------------------------------


def apply(
    live: Obj | None,
    applied: Obj,
    *,
    manager: str,
    force: bool,
    group: str,
    version: str,
    kind: str,
    subresource: str = "",
    status_subresource: bool = True,
    rules: mergekeys.Rules | None = None,
    now: datetime | None = None,
) -> Obj:
    """The object after ``manager`` server-side applies ``applied`` to ``live`` (None: create).

    ``status_subresource`` says status is written through ``/status`` (true for built-ins with a
    status and for CRDs declaring it), so a main-resource apply ignores it. ``rules`` gives a
    custom resource's list semantics (``mergekeys.rules_from_openapi``); built-ins have theirs.
    """
    api_version = f"{group}/{version}" if group else version
    rules = _rules(group, kind, rules)
    config = _config(applied, api_version, kind, subresource, status_subresource=status_subresource)
    base = _without_managed(live or {})
    entries = _entries(live)
    previous = entries.pop((manager, "Apply", subresource, ""), None)
    me = Entry(manager, "Apply", api_version, subresource)
    me.fields = fieldpath.to_field_set(config, rules) - STRIPPED
    merged = _merge_and_prune(base, config, previous, [me, *entries.values()], rules)
    change = fieldpath.compare(base, merged, rules)
    conflicts = _conflicts(entries, change.modified | change.added)
    if conflicts and not force:
        _raise_unless_last_applied(conflicts, live, api_version, manager=manager, rules=rules)
    _take(entries, conflicts, change.removed)
    changed = not fieldpath.same(base, merged)
    me.time = _stamp(now) if changed or previous is None else previous.time
    entries[me.key] = me
    result = copy.deepcopy(merged)
    if manager == "kubectl" and _last_applied(live) is not None:
        _set_last_applied(result, applied)
    return _with_managed(result, entries)


def _rules(group: str, kind: str, given: mergekeys.Rules | None) -> mergekeys.Rules | None:
    builtin = mergekeys.rules_for(group, kind)
    return builtin if builtin is not None else given


def _merge_and_prune(
    base: Obj,
    config: Obj,
    previous: Entry | None,
    owners: list[Entry],
    rules: mergekeys.Rules | None,
) -> Obj:
    """The config merged in, minus what the applier applied last time, dropped now, and nobody
    else owns (structured-merge-diff's prune).

    A map or list item the previous set held as a member (``"."``, as kubectl's upgrade from
    client-side apply records whole maps) stays while anyone still owns a field inside it: SMD adds
    such owned items back after pruning, so only what nobody owns under it goes."""
    merged: Obj = fieldpath.merge(base, config, rules)
    if previous is not None:
        owned = set().union(*(e.fields for e in owners))
        containers = {path[:i] for path in owned for i in range(1, len(path))}
        merged = fieldpath.remove(merged, previous.fields - owned - containers, rules)
    return merged


def _config(
    applied: Obj, api_version: str, kind: str, subresource: str, *, status_subresource: bool
) -> Obj:
    """The applied configuration as the field manager sees it, or a 400 as the server answers."""
    given = (applied.get("apiVersion"), applied.get("kind"))
    if given != (api_version, kind):  # the field manager's versionCheckManager, GVK as Go prints it
        raise PatchError(400, f"invalid object type: {_group_version_kind(*given)}")
    metadata = applied.get("metadata")
    if isinstance(metadata, dict) and metadata.get("managedFields") is not None:
        raise PatchError(400, "metadata.managedFields must be nil")
    config = copy.deepcopy(applied)
    if subresource == "status":
        keep = {"apiVersion", "kind", "status"}
        config = {k: v for k, v in config.items() if k in keep}
        config["metadata"] = {
            k: v for k, v in (metadata or {}).items() if k in ("name", "namespace")
        }
    elif not subresource and status_subresource:
        config.pop("status", None)
    return config


def _group_version_kind(api_version: Any, kind: Any) -> str:
    """``schema.GroupVersionKind.String()`` of what an apply body names (``/v1, Kind=Pod``)."""
    text = api_version if isinstance(api_version, str) else ""
    group, _, version = text.rpartition("/")
    if text.count("/") > 1:  # ParseGroupVersion refuses it: the kind is all that is left
        group = version = ""
    return f"{group}/{version}, Kind={kind if isinstance(kind, str) else ''}"


def _conflicts(
    entries: dict[tuple[str, str, str, str], Entry], changed: set[Path]
) -> list[tuple[Entry, Path]]:
    found = [(e, p) for e in entries.values() for p in e.fields & changed]
    return sorted(found, key=lambda c: (c[0].manager, c[0].key, c[1]))


def _take(
    entries: dict[tuple[str, str, str, str], Entry],
    conflicts: list[tuple[Entry, Path]],
    removed: set[Path],
) -> None:
    """Other managers lose the fields taken from them and the fields that no longer exist."""
    for entry, path in conflicts:
        entry.fields.discard(path)
    for key, entry in list(entries.items()):
        entry.fields -= removed
        if not entry.fields:
            del entries[key]


def _raise_unless_last_applied(
    conflicts: list[tuple[Entry, Path]],
    live: Obj | None,
    api_version: str,
    *,
    manager: str,
    rules: mergekeys.Rules | None,
) -> None:
    """kubectl's upgrade from client-side apply: conflicts on fields its last-applied annotation
    still describes truthfully are forced (fieldmanager's lastAppliedManager)."""
    allowed: set[Path] = set()
    last = _last_applied(live) if manager == "kubectl" else None
    if last is not None and last.get("apiVersion") == api_version:
        diff = fieldpath.compare(last, _without_managed(live or {}), rules)
        stale = diff.modified | diff.added | diff.removed
        allowed = fieldpath.to_field_set(last, rules) - stale
    remaining = [(e, p) for e, p in conflicts if p not in allowed]
    if remaining:
        printed = {e.manager: e.printed() for e, _ in remaining}
        pairs = [(e.manager, fieldpath.path_string(p)) for e, p in remaining]
        raise ApplyConflict(pairs, printed=printed)


def _last_applied(obj: Obj | None) -> Obj | None:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    try:
        value = json.loads(annotations.get(LAST_APPLIED) or "null")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _set_last_applied(result: Obj, applied: Obj) -> None:
    """fieldmanager's lastAppliedUpdater: an apply by ``kubectl`` keeps the annotation current."""
    config = copy.deepcopy(applied)
    (config.get("metadata") or {}).get("annotations", {}).pop(LAST_APPLIED, None)
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)  # Go's encoding/json escapes HTML characters
    result.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = text + "\n"


# --- updates -------------------------------------------------------------------------------------


def record_update(
    old: Obj | None,
    new: Obj,
    *,
    manager: str,
    operation: str,
    subresource: str = "",
    rules: mergekeys.Rules | None = None,
    now: datetime | None = None,
) -> Obj:
    """``new`` with managedFields after ``manager`` wrote it over ``old`` (None: a create).

    The writer takes every field it added or changed, from whoever owned it; fields that
    disappeared leave every manager; a write that changes nothing leaves the entries as they were.
    """
    api_version = str(new.get("apiVersion", ""))
    group, _, _ = api_version.rpartition("/")
    kind = str(new.get("kind", ""))
    rules = _rules(group, kind, rules)
    entries = _live_or_new_entries(old, new, subresource)
    base = _without_managed(old) if old is not None else mergekeys.zero_value(group, kind)
    change = fieldpath.compare(base, _without_managed(new), rules)
    taken = change.modified | change.added
    for key, entry in list(entries.items()):
        entry.fields -= taken | change.removed
        if not entry.fields:
            del entries[key]
    gained = taken - STRIPPED
    if gained:
        me = Entry(manager, operation, api_version, subresource)
        me = entries.setdefault(me.key, me)
        me.fields |= gained
        me.time = _stamp(now)
    return _with_managed(copy.deepcopy(new), entries)


def _live_or_new_entries(
    old: Obj | None, new: Obj, subresource: str
) -> dict[tuple[str, str, str, str], Entry]:
    """Managers a write starts from: those the request set, unless it set none (decodeLiveOrNew)."""
    sent = (new.get("metadata") or {}).get("managedFields")
    if subresource or sent is None:
        return _entries(old)
    if sent == [{}]:
        return {}
    return _entries(new) or _entries(old)


# --- managedFields encoding ----------------------------------------------------------------------


def _stamp(now: datetime | None) -> str:
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _without_managed(obj: Obj | None) -> Obj:
    result = copy.deepcopy(obj or {})
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return result


def _entries(obj: Obj | None) -> dict[tuple[str, str, str, str], Entry]:
    """The managers recorded on ``obj``; undecodable managedFields count as none, as upstream."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    entries: dict[tuple[str, str, str, str], Entry] = {}
    try:
        for item in raw:
            if item.get("fieldsType", "FieldsV1") != "FieldsV1":
                return {}
            entry = Entry(
                str(item.get("manager", "")),
                str(item.get("operation", "")),
                str(item.get("apiVersion", "")),
                str(item.get("subresource", "")),
                item.get("time"),
                fieldpath.decode(item.get("fieldsV1") or {}),
            )
            entries[entry.key] = entry
    except (AttributeError, TypeError, ValueError):
        return {}
    return entries


def _cap_update_managers(entries: dict[tuple[str, str, str, str], Entry]) -> None:
    """Past ten Update managers, the oldest merge into one ``ancient-changes`` entry per
    apiVersion (fieldmanager's capManagersManager)."""
    updaters = sorted(
        (e for e in entries.values() if e.operation != "Apply"), key=lambda e: (e.time or "", e.key)
    )
    count = len(updaters)
    first_of: dict[str, Entry] = {}
    for entry in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            return
        first = first_of.setdefault(entry.api_version, entry)
        bucket = Entry(ANCIENT, "Update", entry.api_version)
        if first is entry or entry.key == bucket.key:
            continue
        if bucket.key not in entries:
            bucket.fields = entries.pop(first.key).fields
            entries[bucket.key] = bucket
        entries[bucket.key].fields |= entries.pop(entry.key).fields
        entries[bucket.key].time = entry.time
        count -= 1


def _with_managed(obj: Obj, entries: dict[tuple[str, str, str, str], Entry]) -> Obj:
    _cap_update_managers(entries)
    metadata = obj.setdefault("metadata", {})
    live = [e for e in entries.values() if e.fields]
    live.sort(key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))
    if not live:
        metadata.pop("managedFields", None)
        return obj
    metadata["managedFields"] = [_encode(e) for e in live]
    return obj


def _encode(entry: Entry) -> Obj:
    encoded: Obj = {"manager": entry.manager, "operation": entry.operation}
    encoded["apiVersion"] = entry.api_version
    if entry.time is not None:
        encoded["time"] = entry.time
    encoded["fieldsType"] = "FieldsV1"
    encoded["fieldsV1"] = fieldpath.encode(entry.fields)
    if entry.subresource:
        encoded["subresource"] = entry.subresource
    return encoded
