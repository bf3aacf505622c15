"""Field-by-field comparison of what Helm applied with what runs: the fields that count, and the
JSON patch (RFC 6902) between them.

Three documents go in: ``declared`` (the manifest object, with the labels and annotations Helm adds
when it applies one), ``expected`` (the server's dry-run create of it: the same fields as the
server stores them, plus every field it fills in itself) and ``live``. A field counts when the
chart declares it, or when it is in ``live`` but neither declared nor filled in by the server (a
label someone added). A field only the server fills in (a default, an allocated address) never
counts, whatever its value: the chart left it to the server, or to a controller such as an
autoscaler. What the server owns outright (``status``, the bookkeeping metadata) is dropped first.
Secret values are compared, then replaced by a marker before anything leaves. Pure functions, no
I/O.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs

from chartsvc.releases.preview import unified
from common import yamlio

#: Metadata the API server writes on every object; never part of what Helm applied.
SERVER_METADATA = frozenset(
    {
        "managedFields",
        "resourceVersion",
        "uid",
        "generation",
        "creationTimestamp",
        "selfLink",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    }
)
#: Annotations controllers and kubectl write on objects Helm applied.
SERVER_ANNOTATIONS = frozenset(
    {
        "deployment.kubernetes.io/revision",
        "kubectl.kubernetes.io/last-applied-configuration",
    }
)
REDACTED = "(redacted)"
REDACTED_CHANGED = "(redacted, changed)"
_SECRET_FIELDS = ("data", "stringData")


@attrs.frozen
class PatchOp:
    """One RFC 6902 operation: ``op`` at ``path`` (an RFC 6901 pointer); ``value`` unless remove."""

    op: str
    path: str
    value: Any = None


@attrs.frozen
class Comparison:
    """What Helm applied and what runs, each cut to the fields that count, and how they differ."""

    applied: dict[str, Any]
    live: dict[str, Any]
    patch: tuple[PatchOp, ...]

    @property
    def in_sync(self) -> bool:
        return not self.patch

    def diff(self, label: str) -> str:
        """A unified diff of the two as YAML, applied first."""
        return unified(yamlio.dump(self.applied), yamlio.dump(self.live), label)


def compare(declared: dict[str, Any], expected: dict[str, Any], live: dict[str, Any]) -> Comparison:
    """``declared`` against ``live``, knowing the server's fields from ``expected``."""
    declared, expected, live = (_without_server_fields(d) for d in (declared, expected, live))
    if declared.get("kind") == "Secret" and declared.get("apiVersion") == "v1":
        declared = _secret_declared(declared)
        expected, live = _redacted(expected, live)
    applied_view, live_view = _views(declared, expected, live)
    return Comparison(applied_view, live_view, tuple(_ops(applied_view, live_view, "")))


def overlay(base: Any, top: Any) -> Any:
    """``top`` over ``base``: maps merged key by key, anything else taken from ``top``. Stands in
    for the server's answer when its dry run is refused: every field it did not declare counts
    as the server's."""
    if isinstance(base, dict) and isinstance(top, dict):
        merged = dict(base)
        for key, value in top.items():
            merged[key] = overlay(base.get(key), value)
        return merged
    return copy.deepcopy(top)


def _views(declared: Any, expected: Any, live: Any) -> tuple[Any, Any]:
    """(applied, live), each cut to the fields that count (see the module docstring)."""
    if isinstance(declared, dict) and isinstance(live, dict):
        server = expected if isinstance(expected, dict) else declared
        applied_out: dict[str, Any] = {}
        live_out: dict[str, Any] = {}
        for key, value in declared.items():
            if key not in server:
                continue  # the server stores it otherwise (a Secret's stringData)
            if key in live:
                applied_out[key], live_out[key] = _views(value, server[key], live[key])
            else:
                applied_out[key] = _shape(value, server[key])
        for key, value in live.items():
            if key not in declared and key not in server:
                live_out[key] = value  # nobody declared it and the server does not set it
        return applied_out, live_out
    if isinstance(declared, list) and isinstance(live, list) and isinstance(expected, list):
        pairs = [
            _views(d, expected[i] if i < len(expected) else d, live[i])
            for i, d in enumerate(declared)
            if i < len(live)
        ]
        applied_list = [a for a, _ in pairs] + [
            _shape(d, expected[i] if i < len(expected) else d)
            for i, d in enumerate(declared)
            if i >= len(live)
        ]
        return applied_list, [v for _, v in pairs] + live[len(declared) :]
    return _shape(declared, expected), live


def _shape(declared: Any, expected: Any) -> Any:
    """``expected`` cut to the fields ``declared`` names (the server's form of what was applied)."""
    if isinstance(declared, dict) and isinstance(expected, dict):
        return {k: _shape(v, expected[k]) for k, v in declared.items() if k in expected}
    if isinstance(declared, list) and isinstance(expected, list) and len(declared) == len(expected):
        return [_shape(d, e) for d, e in zip(declared, expected, strict=True)]
    return expected


def _ops(applied: Any, live: Any, path: str) -> list[PatchOp]:
    if isinstance(applied, dict) and isinstance(live, dict):
        ops = [PatchOp("remove", _pointer(path, k)) for k in applied if k not in live]
        for key, value in live.items():
            if key not in applied:
                ops.append(PatchOp("add", _pointer(path, key), value))
            else:
                ops.extend(_ops(applied[key], value, _pointer(path, key)))
        return ops
    if isinstance(applied, list) and isinstance(live, list) and len(applied) == len(live):
        return [
            op
            for i, (a, b) in enumerate(zip(applied, live, strict=True))
            for op in _ops(a, b, f"{path}/{i}")
        ]
    if type(applied) is not type(live) or applied != live:
        return [PatchOp("replace", path, live)]
    return []


def _pointer(path: str, key: str) -> str:
    return f"{path}/{key.replace('~', '~0').replace('/', '~1')}"


def _without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_METADATA}
    notes = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in SERVER_ANNOTATIONS
    }
    meta.pop("annotations", None)
    if notes:
        meta["annotations"] = notes
    out["metadata"] = meta
    return out


def _secret_declared(declared: dict[str, Any]) -> dict[str, Any]:
    """The server stores ``stringData`` under ``data``: declare those keys there too."""
    given = declared.get("stringData")
    if not isinstance(given, dict):
        return declared
    data = dict(declared.get("data") or {}) | dict.fromkeys(given, "")
    return {**declared, "data": data}


def _redacted(expected: dict[str, Any], live: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Both with every Secret value replaced: the live one marked when it differs."""
    out_expected, out_live = dict(expected), dict(live)
    for field in _SECRET_FIELDS:
        was, now = expected.get(field), live.get(field)
        if isinstance(was, dict):
            out_expected[field] = dict.fromkeys(was, REDACTED)
        if isinstance(now, dict):
            was = was if isinstance(was, dict) else {}
            out_live[field] = {
                k: REDACTED if k in was and was[k] == v else REDACTED_CHANGED
                for k, v in now.items()
            }
    return out_expected, out_live
