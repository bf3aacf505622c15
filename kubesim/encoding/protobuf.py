"""Decoding Kubernetes protobuf request bodies into the JSON a JSON client would have sent.

Helm's release storage writes Secrets (and ConfigMaps with the configmap driver) and deletes them
with ``DeleteOptions`` in ``application/vnd.kubernetes.protobuf``, and client-go has no JSON
fallback for that. The body is the magic ``k8s\\x00`` then a ``runtime.Unknown`` wrapping the
object. Field numbers are those of the ``generated.proto`` files of k8s.io/api and
k8s.io/apimachinery. Go's JSON ``omitempty`` is reproduced: gogo-protobuf writes non-pointer
fields even when empty, and a JSON client would not have sent those.

This module only decodes, and only those three types: anything else raises ``ProtobufError``,
which the server answers with 415. It must never guess at an unknown message, nor encode. Its wire
readers (``fields``, ``read_varint``, ``as_bytes``, ``int64``, ``timestamp``) are also those of
``protowire``, which decodes the other kinds.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

MAGIC = b"k8s\x00"
PROTOBUF = "application/vnd.kubernetes.protobuf"
Obj = dict[str, Any]
VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """A body this decoder cannot turn into JSON: malformed, or a type it does not know."""


# --- wire format ---------------------------------------------------------------------------------


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ProtobufError("truncated or overlong varint")
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return result, pos


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) for each field of a message, in wire order."""
    pos = 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == VARINT:
            value, pos = read_varint(data, pos)
            yield number, wire, value
            continue
        size = {FIXED64: 8, FIXED32: 4}.get(wire)
        if wire == BYTES:
            size, pos = read_varint(data, pos)
        if size is None or pos + size > len(data):
            raise ProtobufError(f"unsupported wire type {wire} or truncated field {number}")
        yield number, wire, data[pos : pos + size]
        pos += size


def int64(value: int) -> int:
    """A varint read as Go's int64 (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtobufError(f"string field is not UTF-8: {exc}") from exc


# --- message schemas -----------------------------------------------------------------------------
# A schema maps field number -> (JSON name, decoder, how it is kept). Kept: "omitempty" drops zero
# values as Go's encoding/json does, "pointer" keeps what was sent, "repeated" appends, "map"
# collects map entries, "always" keeps even a zero value (fields without omitempty upstream).

Decoder = Callable[[int | bytes], Any]
Schema = dict[int, tuple[str, Decoder, str]]


def _string(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited string")
    return _text(value)


def _bytes(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected length-delimited bytes")
    return base64.b64encode(value).decode("ascii")


def _integer(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ProtobufError("expected a varint")
    return int64(value)


def _boolean(value: int | bytes) -> bool:
    return bool(_integer(value))


def _message(schema: Schema) -> Decoder:
    def decode(value: int | bytes) -> Obj:
        if not isinstance(value, bytes):
            raise ProtobufError("expected an embedded message")
        return decode_message(value, schema)

    return decode


def timestamp(value: int | bytes) -> str | None:
    """metav1.Time: seconds and nanos; an empty message is the zero time, which JSON writes null.
    Nanos are dropped, as metav1.Time.Unmarshal drops them."""
    if not isinstance(value, bytes):
        raise ProtobufError("expected a Time message")
    seconds = decode_message(value, {1: ("seconds", _integer, "omitempty")}).get("seconds", 0)
    if not value:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fields_v1(value: int | bytes) -> Any:
    raw = decode_message(as_bytes(value), {1: ("Raw", _raw, "pointer")}).get("Raw", b"")
    try:
        return json.loads(raw) if raw else {}
    except ValueError as exc:
        raise ProtobufError(f"managedFields fieldsV1 is not JSON: {exc}") from exc


def _raw(value: int | bytes) -> bytes:
    return as_bytes(value)


def as_bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("expected length-delimited bytes")
    return value


def _map_entry(value_decoder: Decoder) -> Decoder:
    def decode(value: int | bytes) -> tuple[str, Any]:
        entry = decode_message(
            as_bytes(value), {1: ("key", _string, "always"), 2: ("value", value_decoder, "always")}
        )
        return entry.get("key", ""), entry.get("value", value_decoder(b""))

    return decode


OWNER_REFERENCE: Schema = {
    5: ("apiVersion", _string, "always"),
    1: ("kind", _string, "always"),
    3: ("name", _string, "always"),
    4: ("uid", _string, "always"),
    6: ("controller", _boolean, "pointer"),
    7: ("blockOwnerDeletion", _boolean, "pointer"),
}
MANAGED_FIELDS_ENTRY: Schema = {
    1: ("manager", _string, "omitempty"),
    2: ("operation", _string, "omitempty"),
    3: ("apiVersion", _string, "omitempty"),
    4: ("time", timestamp, "omitempty"),
    6: ("fieldsType", _string, "omitempty"),
    7: ("fieldsV1", _fields_v1, "pointer"),
    8: ("subresource", _string, "omitempty"),
}
OBJECT_META: Schema = {
    1: ("name", _string, "omitempty"),
    2: ("generateName", _string, "omitempty"),
    3: ("namespace", _string, "omitempty"),
    4: ("selfLink", _string, "omitempty"),
    5: ("uid", _string, "omitempty"),
    6: ("resourceVersion", _string, "omitempty"),
    7: ("generation", _integer, "omitempty"),
    8: ("creationTimestamp", timestamp, "omitempty"),
    9: ("deletionTimestamp", timestamp, "omitempty"),
    10: ("deletionGracePeriodSeconds", _integer, "pointer"),
    11: ("labels", _map_entry(_string), "map"),
    12: ("annotations", _map_entry(_string), "map"),
    13: ("ownerReferences", _message(OWNER_REFERENCE), "repeated"),
    14: ("finalizers", _string, "repeated"),
    17: ("managedFields", _message(MANAGED_FIELDS_ENTRY), "repeated"),
}
SECRET: Schema = {
    1: ("metadata", _message(OBJECT_META), "always"),
    5: ("immutable", _boolean, "pointer"),
    2: ("data", _map_entry(_bytes), "map"),
    4: ("stringData", _map_entry(_string), "map"),
    3: ("type", _string, "omitempty"),
}
CONFIG_MAP: Schema = {
    1: ("metadata", _message(OBJECT_META), "always"),
    4: ("immutable", _boolean, "pointer"),
    2: ("data", _map_entry(_string), "map"),
    3: ("binaryData", _map_entry(_bytes), "map"),
}
PRECONDITIONS: Schema = {1: ("uid", _string, "pointer"), 2: ("resourceVersion", _string, "pointer")}
DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", _integer, "pointer"),
    2: ("preconditions", _message(PRECONDITIONS), "pointer"),
    3: ("orphanDependents", _boolean, "pointer"),
    4: ("propagationPolicy", _string, "pointer"),
    5: ("dryRun", _string, "repeated"),
}
TYPE_META: Schema = {1: ("apiVersion", _string, "omitempty"), 2: ("kind", _string, "omitempty")}
UNKNOWN: Schema = {
    1: ("typeMeta", _message(TYPE_META), "pointer"),
    2: ("raw", _raw, "pointer"),
    3: ("contentEncoding", _string, "omitempty"),
    4: ("contentType", _string, "omitempty"),
}


def decode_message(data: bytes, schema: Schema) -> Obj:
    """One message as JSON; fields the schema does not name are skipped, as Go's decoder does."""
    out: Obj = {}
    for number, _wire, value in fields(data):
        if number not in schema:
            continue
        name, decoder, kept = schema[number]
        decoded = decoder(value)
        if kept == "repeated":
            out.setdefault(name, []).append(decoded)
        elif kept == "map":
            key, item = decoded
            out.setdefault(name, {})[key] = item
        else:
            out[name] = decoded
    for name, decoder, kept in schema.values():
        if kept == "omitempty" and name in out and out[name] in ("", 0, False, None):
            del out[name]
        elif kept == "always" and name not in out:
            out[name] = decoder(b"")
    return out


# --- the envelope --------------------------------------------------------------------------------

KNOWN: dict[tuple[str, str], Schema] = {("v1", "Secret"): SECRET, ("v1", "ConfigMap"): CONFIG_MAP}


def decode(body: bytes) -> Obj:
    """The JSON object a JSON client would have sent for this protobuf body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s\\x00 protobuf prefix")
    unknown = decode_message(body[len(MAGIC) :], UNKNOWN)
    if unknown.get("contentEncoding"):
        raise ProtobufError(f"unsupported contentEncoding {unknown['contentEncoding']!r}")
    if unknown.get("contentType", PROTOBUF) != PROTOBUF:
        raise ProtobufError(f"unsupported contentType {unknown['contentType']!r}")
    type_meta = unknown.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    schema = DELETE_OPTIONS if kind == "DeleteOptions" else KNOWN.get((api_version, kind))
    if schema is None:
        raise ProtobufError(f"cannot decode {api_version or '?'}/{kind or '?'} from protobuf")
    return {
        "kind": kind,
        "apiVersion": api_version,
        **decode_message(unknown.get("raw", b""), schema),
    }
