"""Protobuf request bodies of every built-in kind, not only the ones Helm's storage sends.

kubectl's typed clients send protobuf (``kubectl create namespace|deployment|job``, ``kubectl auth
can-i``...) and client-go has no JSON fallback on 415, so the simulator must read them. ``protobuf``
decodes Secret, ConfigMap and DeleteOptions; everything else goes through ``protowire`` and the
field tables generated from kubectl's own descriptors. A kind neither knows is still refused with
``ProtobufError`` (415), never guessed at.
"""

from __future__ import annotations

from typing import Any

from kubesim.encoding import protobuf, protowire
from kubesim.encoding.protobuf import ProtobufError

Obj = dict[str, Any]


def decode(body: bytes) -> Obj:
    """Decode ``body`` with ``protobuf.decode``, or with the generated tables for other kinds."""
    try:
        return protobuf.decode(body)
    except ProtobufError:
        if not body.startswith(protobuf.MAGIC):
            raise
        unknown = protobuf.decode_message(body[len(protobuf.MAGIC) :], protobuf.UNKNOWN)
        meta = unknown.get("typeMeta", {})
        api_version, kind = meta.get("apiVersion", ""), meta.get("kind", "")
        if unknown.get("contentEncoding") or protowire.message_for(api_version, kind) is None:
            raise
        return protowire.decode_object(api_version, kind, unknown.get("raw", b""))
