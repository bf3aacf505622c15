"""Label and field selectors, parsed and matched the way kube-apiserver does.

Label selectors are parsed by ``labelparse`` (a port of ``labels.Parse``, with its errors). Field
selectors support ``=``, ``==`` and ``!=`` on the fields each kind really indexes; any other field is
refused with 400, like a real server, rather than silently matching everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesim.machinery import labelparse
from kubesim.machinery.status import bad_request

Obj = dict[str, Any]
Matcher = Callable[[Obj], bool]

# What a field label reads when the object leaves it unset: registries format the Go zero value.
_ZERO = {
    "spec.unschedulable": "false",
    "spec.hostNetwork": "false",
    "status.replicas": "0",
    "status.successful": "0",
}
# Field labels that name another path in the object.
_PATHS = {"status.successful": "status.succeeded"}

# Field labels per kind beyond metadata.name / metadata.namespace (from the registries' GetAttrs).
FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "pods"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    ("", "events"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    ("", "secrets"): frozenset({"type"}),
    ("", "namespaces"): frozenset({"status.phase"}),
    ("", "nodes"): frozenset({"spec.unschedulable"}),
    ("", "replicationcontrollers"): frozenset({"status.replicas"}),
    ("apps", "replicasets"): frozenset({"status.replicas"}),
    ("batch", "jobs"): frozenset({"status.successful"}),
    ("events.k8s.io", "events"): frozenset(
        {
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "reason",
            "type",
        }
    ),
}


def _terms(selector: str) -> list[str]:
    """``fields.splitTerms``: split on commas a backslash does not escape; empty terms go."""
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(selector):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return [t for t in terms if t]


def _split_term(term: str) -> tuple[str, str, str] | None:
    """``fields.splitTerm``: at the first operator, ``!=`` before ``==`` before ``=``."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    """``fields.UnescapeValue``: ``\\``, ``\\,`` and ``\\=`` only; a bare ``,`` or ``=`` is refused."""
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def label_matcher(selector: str | None) -> Matcher:
    """A label selector's matcher; one ``labels.Parse`` refuses is a 400 in its words."""
    if not selector:
        return lambda obj: True
    try:
        requirements = labelparse.parse(selector)
    except labelparse.SelectorError as exc:
        raise bad_request(str(exc)) from None

    def match(obj: Obj) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(labelparse.matches(r, labels) for r in requirements)

    return match


def _field_value(obj: Obj, label: str) -> str:
    cur: Any = obj
    for part in _PATHS.get(label, label).split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if cur is None:
        return _ZERO.get(label, "")
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def field_matcher(
    selector: str | None,
    group: str,
    plural: str,
    *,
    custom: bool = False,
    selectable: frozenset[str] = frozenset(),
) -> Matcher:
    """A field selector's matcher; ``selectable`` are a custom resource's ``selectableFields``."""
    if not selector:
        return lambda obj: True
    allowed = {"metadata.name", "metadata.namespace"} | FIELDS.get((group, plural), selectable)
    terms: list[tuple[str, bool, str]] = []
    for raw in sorted(_terms(selector)):  # fields.parseSelector sorts the terms
        split = _split_term(raw)
        if split is None:
            raise bad_request(f"invalid selector: '{selector}'; can't understand '{raw}'")
        field, op, value = split[0], split[1], _unescape(split[2])
        if field not in allowed:
            kind = f"{plural}.{group}" if group else plural
            raise bad_request(
                f"field label not supported: {field}"
                if not custom
                else f'"{field}" is not a known field selector: only '
                + ", ".join(
                    f'"{a}"' for a in ("metadata.name", "metadata.namespace", *sorted(selectable))
                )
                + f" ({kind})"
            )
        terms.append((field, op == "!=", value))

    def match(obj: Obj) -> bool:
        return all(
            (_field_value(obj, f) != v) if neg else (_field_value(obj, f) == v)
            for f, neg, v in terms
        )

    return match


def matches_label_selector(selector: Obj, labels: dict[str, str]) -> bool:
    """A ``metav1.LabelSelector``; an empty selector matches everything, like the real one."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
