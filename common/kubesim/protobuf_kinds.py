"""Protobuf schemas for kinds ``protobuf`` does not know but kubectl sends as protobuf.

``kubectl create namespace`` POSTs a protobuf ``Namespace`` and ``kubectl auth can-i|whoami`` POST
protobuf reviews (kubectl's typed clients prefer protobuf, and client-go has no JSON fallback on
415), so a simulator that only decoded Helm's kinds would refuse them. This module adds those kinds
on top of the shared wire decoder in ``protobuf``; field numbers are those of the k8s.io/api
``generated.proto`` files. Like ``protobuf`` it never guesses: any other kind still raises
``ProtobufError``.
"""

from __future__ import annotations

from typing import Any

from common.kubesim import protobuf
from common.kubesim.protobuf import ProtobufError

Obj = dict[str, Any]


def _string(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string")
    return value.decode("utf-8", errors="replace")


def _message(schema: dict[int, Any]) -> Any:
    def decode(value: int | bytes) -> Obj:
        if not isinstance(value, bytes):
            raise ProtobufError("expected an embedded message")
        return protobuf.decode_message(value, schema)

    return decode


NAMESPACE_CONDITION = {
    1: ("type", _string, "omitempty"),
    2: ("status", _string, "omitempty"),
    5: ("reason", _string, "omitempty"),
    6: ("message", _string, "omitempty"),
}
NAMESPACE = {
    1: ("metadata", _message(protobuf.OBJECT_META), "always"),
    2: ("spec", _message({1: ("finalizers", _string, "repeated")}), "always"),
    3: (
        "status",
        _message(
            {
                1: ("phase", _string, "omitempty"),
                2: ("conditions", _message(NAMESPACE_CONDITION), "repeated"),
            }
        ),
        "always",
    ),
}
RESOURCE_ATTRIBUTES = {
    n: (name, _string, "omitempty")
    for n, name in enumerate(
        ("namespace", "verb", "group", "version", "resource", "subresource", "name"), start=1
    )
}
SELF_SUBJECT_ACCESS_REVIEW = {
    1: ("metadata", _message(protobuf.OBJECT_META), "always"),
    2: (
        "spec",
        _message(
            {
                1: ("resourceAttributes", _message(RESOURCE_ATTRIBUTES), "omitempty"),
                2: (
                    "nonResourceAttributes",
                    _message(
                        {1: ("path", _string, "omitempty"), 2: ("verb", _string, "omitempty")}
                    ),
                    "omitempty",
                ),
            }
        ),
        "always",
    ),
}
SELF_SUBJECT_RULES_REVIEW = {
    1: ("metadata", _message(protobuf.OBJECT_META), "always"),
    2: ("spec", _message({1: ("namespace", _string, "omitempty")}), "always"),
}
SELF_SUBJECT_REVIEW = {1: ("metadata", _message(protobuf.OBJECT_META), "always")}
KINDS = {
    ("v1", "Namespace"): NAMESPACE,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): SELF_SUBJECT_ACCESS_REVIEW,
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): SELF_SUBJECT_RULES_REVIEW,
    ("authentication.k8s.io/v1", "SelfSubjectReview"): SELF_SUBJECT_REVIEW,
}


def decode(body: bytes) -> Obj:
    """Decode ``body`` with ``protobuf.decode``, or with the schemas here for the kinds above."""
    try:
        return protobuf.decode(body)
    except ProtobufError:
        if not body.startswith(protobuf.MAGIC):
            raise
        unknown = protobuf.decode_message(body[len(protobuf.MAGIC) :], protobuf.UNKNOWN)
        meta = unknown.get("typeMeta", {})
        schema = KINDS.get((meta.get("apiVersion", ""), meta.get("kind", "")))
        if schema is None or unknown.get("contentEncoding"):
            raise
        raw = unknown.get("raw", b"")
        return {
            "kind": meta["kind"],
            "apiVersion": meta["apiVersion"],
            **protobuf.decode_message(raw, schema),
        }
