"""Protobuf schemas for kinds ``protobuf`` does not know but kubectl sends as protobuf.

``kubectl create namespace`` POSTs a protobuf ``Namespace`` (kubectl's typed clients prefer
protobuf, and client-go has no JSON fallback on 415), so a simulator that only decoded Helm's kinds
would refuse it. This module adds ``v1 Namespace`` on top of the shared wire decoder in
``protobuf``; field numbers are those of k8s.io/api/core/v1/generated.proto. Like ``protobuf`` it
never guesses: any other kind still raises ``ProtobufError``.
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
KINDS = {("v1", "Namespace"): NAMESPACE}


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
