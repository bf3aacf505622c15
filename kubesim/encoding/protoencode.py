"""Kubernetes protobuf answers for the built-in kinds, written with the same field tables
``protowire`` decodes with: what kube-apiserver sends a client whose Accept asks for
``application/vnd.kubernetes.protobuf`` (client-go's protobuf clients, controller-runtime).
Its field writers (``integer``, ``delimited``, ``text``) are the simulator's only protobuf
writers; the ``/openapi/v2`` document is written with them too.

An object, a list or a ``Status`` is wrapped in the ``k8s\\x00`` + ``runtime.Unknown`` envelope.
Fields the 1.32 tables do not know are left out (a Go client would not know them either); a kind
without a table (custom resources, and the groups kubectl's descriptors do not carry) cannot be
encoded, which the caller answers with 406 as a real server does for custom resources.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import re
import struct
from typing import Any

from kubesim.encoding import protowire
from kubesim.encoding.protowire import INLINE, META, VARINTS, messages

Obj = dict[str, Any]
MAGIC = b"k8s\x00"
_META_KINDS = {"Status": f"{META}.Status"}


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def delimited(number: int, data: bytes) -> bytes:
    """A length-delimited field: bytes, a string or an embedded message."""
    return key(number, 2) + varint(len(data)) + data


def integer(number: int, value: int) -> bytes:
    """A varint field (ints, enums and booleans)."""
    return key(number, 0) + varint(value)


def text(number: int, value: str) -> bytes:
    return delimited(number, value.encode())


@functools.cache
def _by_json_name(message: str) -> dict[str, tuple[int, int, int, str]]:
    table = messages()[message]
    return {entry[0]: (int(n), entry[1], entry[2], entry[3]) for n, entry in table.items()}


def _time(value: Any) -> bytes:
    text = str(value)
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    seconds = int(moment.timestamp())
    out = integer(1, seconds)
    if moment.microsecond:
        out += integer(2, moment.microsecond * 1000)
    return out


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)")
_UNITS = {"h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}


def _duration(value: Any) -> bytes:
    nanos = sum(float(n) * _UNITS[u] for n, u in _DURATION.findall(str(value)))
    return integer(1, int(nanos))


def _raw(value: Any) -> bytes:
    return text(1, json.dumps(value, separators=(",", ":")))


def _int_or_string(value: Any) -> bytes:
    if isinstance(value, int) and not isinstance(value, bool):
        return integer(1, 0) + integer(2, value)
    return integer(1, 1) + text(3, str(value))


def _quantity(value: Any) -> bytes:
    return text(1, str(value))


_SPECIAL = {
    f"{META}.Time": _time,
    f"{META}.MicroTime": _time,
    f"{META}.Duration": _duration,
    f"{META}.FieldsV1": _raw,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _raw,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity,
}


def _scalar(number: int, kind: int, value: Any) -> bytes:
    if kind == 9:
        return text(number, str(value))
    if kind == 12:
        return delimited(number, base64.b64decode(str(value)))
    if kind in VARINTS:
        return integer(number, int(value))
    if kind == 1:
        return key(number, 1) + struct.pack("<d", float(value))
    if kind == 2:
        return key(number, 5) + struct.pack("<f", float(value))
    return b""


def _field(number: int, kind: int, type_name: str, value: Any) -> bytes:
    if kind != 11:
        return _scalar(number, kind, value)
    special = _SPECIAL.get(type_name)
    body = special(value) if special is not None else encode_message(type_name, value)
    return delimited(number, body)


def encode_message(message: str, value: Any) -> bytes:
    """``value`` (decoded JSON) as the protobuf ``message``; unknown fields are left out."""
    if not isinstance(value, dict):
        return b""
    fields = _by_json_name(message)
    inline = {name: spec for name, spec in fields.items() if spec[1] == 11 and name in INLINE}
    out = bytearray()
    claimed: set[str] = set()
    for name, (number, kind, label, type_name) in sorted(fields.items(), key=lambda f: f[1][0]):
        if name in inline:
            inner = _by_json_name(type_name)
            part = {k: v for k, v in value.items() if k in inner and k not in fields}
            if part:
                claimed |= set(part)
                out += delimited(number, encode_message(type_name, part))
            continue
        if name not in value or value[name] is None:
            continue
        item = value[name]
        entry_table = messages().get(type_name, {}) if kind == 11 else {}
        if label == 3 and entry_table.get("map"):
            key_spec, value_spec = entry_table["1"], entry_table["2"]
            for k in sorted(item or {}):
                entry = _scalar(1, key_spec[1], k) + _field(
                    2, value_spec[1], value_spec[3], item[k]
                )
                out += delimited(number, entry)
        elif label == 3:
            for element in item if isinstance(item, list) else []:
                out += _field(number, kind, type_name, element)
        else:
            out += _field(number, kind, type_name, item)
    return bytes(out)


def message_for(body: Obj) -> str | None:
    kind, api_version = str(body.get("kind", "")), str(body.get("apiVersion", ""))
    if kind in _META_KINDS and api_version == "v1":
        return _META_KINDS[kind]
    return protowire.message_for(api_version, kind)


def encode(body: Obj) -> bytes | None:
    """The protobuf answer for ``body``, or None when its kind has no protobuf form here."""
    message = message_for(body)
    if message is None:
        return None
    type_meta = text(1, str(body.get("apiVersion", ""))) + text(2, str(body.get("kind", "")))
    unknown = delimited(1, type_meta) + delimited(2, encode_message(message, body))
    unknown += delimited(3, b"") + delimited(4, b"")
    return MAGIC + unknown
