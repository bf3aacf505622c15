"""``events.k8s.io/v1`` Events are a view of the same objects as ``core/v1`` Events.

On a real cluster both APIs read and write one set of objects, converted field by field
(``involvedObject`` is ``regarding``, ``message`` is ``note``, ``count`` is ``deprecatedCount``...),
so an event a controller records through ``core/v1`` is listed by a client of ``events.k8s.io/v1``
and the other way round. The store keeps the ``core/v1`` form; these two functions convert.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
API_VERSION = "events.k8s.io/v1"
# (core/v1 field, events.k8s.io/v1 field) for fields that only change name.
_RENAMED = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("source", "deprecatedSource"),
)
_SAME = (
    "metadata",
    "reason",
    "type",
    "action",
    "related",
    "reportingInstance",
    "eventTime",
    "series",
)


# Both directions copy the same pairs: (core/v1 field, events.k8s.io/v1 field).
_FIELDS = tuple((name, name) for name in _SAME) + _RENAMED


def to_v1(core: Obj) -> Obj:
    """The ``events.k8s.io/v1`` form of a stored ``core/v1`` Event."""
    out = _copied(core, API_VERSION, _FIELDS)
    out.setdefault("eventTime", None)
    return out


def to_core(event: Obj) -> Obj:
    """The ``core/v1`` form (what the store keeps) of an ``events.k8s.io/v1`` Event."""
    out = _copied(event, "v1", tuple((v1, core) for core, v1 in _FIELDS))
    out.setdefault("involvedObject", {})
    return out


def _copied(source: Obj, api_version: str, fields: tuple[tuple[str, str], ...]) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": api_version}
    for name, as_name in fields:
        if name in source:
            out[as_name] = copy.deepcopy(source[name])
    return out
