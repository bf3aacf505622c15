"""Which pods a workload selects: its label selector read from the object, matched locally (for
watch events) or written as a ``labelSelector`` query (for lists), with one meaning for both.

Pure functions over dicts; nothing here calls a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from common.errors import BadRequest


@attrs.frozen
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        inside = labels.get(self.key) in self.values
        return inside if self.operator == "In" else not inside

    def query(self) -> str:
        joined = ",".join(self.values)
        return {
            "Exists": self.key,
            "DoesNotExist": f"!{self.key}",
            "In": f"{self.key} in ({joined})",
            "NotIn": f"{self.key} notin ({joined})",
        }[self.operator]


@attrs.frozen
class Selector:
    requirements: tuple[Requirement, ...]

    def matches(self, obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)

    def query(self) -> str:
        return ",".join(r.query() for r in self.requirements)


def pod_selector(obj: Mapping[str, Any], what: str) -> Selector:
    """The selector of a workload or Service (``spec.selector``, a LabelSelector or a plain map);
    a 400 naming ``what`` when it selects no pods."""
    raw = (obj.get("spec") or {}).get("selector")
    if isinstance(raw, dict) and ("matchLabels" in raw or "matchExpressions" in raw):
        reqs = [Requirement(k, "In", (str(v),)) for k, v in (raw.get("matchLabels") or {}).items()]
        for expr in raw.get("matchExpressions") or []:
            values = tuple(str(v) for v in expr.get("values") or ())
            reqs.append(Requirement(str(expr.get("key")), str(expr.get("operator")), values))
    elif isinstance(raw, dict):
        reqs = [Requirement(k, "In", (str(v),)) for k, v in raw.items()]
    else:
        reqs = []
    if not reqs:
        raise BadRequest(f"{what} has no pod selector: it selects no pods")
    return Selector(tuple(reqs))
