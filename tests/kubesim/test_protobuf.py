"""Protobuf request bodies decode to the JSON a JSON client would have sent.

The bodies are built with a small encoder that writes fields the way gogo-protobuf (client-go)
does: every non-pointer field, even empty, in field-number order. One body is a hand-assembled
byte string of Helm's release Secret, annotated field by field from the format description.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kubesim.encoding.protobuf import ProtobufError, decode

# --- a minimal encoder, as client-go's generated Marshal writes messages ---------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 is ten bytes of two's complement
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def num(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def blob(number: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return tag(number, 2) + varint(len(raw)) + raw


def entry(number: int, key: str, value: bytes | str) -> bytes:
    return blob(number, blob(1, key) + blob(2, value))


def meta(*parts: bytes, name: str = "", namespace: str = "") -> bytes:
    """ObjectMeta as gogo writes it: empty strings, generation 0 and an empty Time included."""
    head = blob(1, name) + blob(2, "") + blob(3, namespace) + blob(4, "") + blob(5, "")
    return head + blob(6, "") + num(7, 0) + blob(8, b"") + b"".join(parts)


def unknown(api_version: str, kind: str, raw: bytes, *, encoding: str = "") -> bytes:
    type_meta = blob(1, api_version) + blob(2, kind)
    return b"k8s\x00" + blob(1, type_meta) + blob(2, raw) + blob(3, encoding) + blob(4, "")


# Helm stores base64(gzip(release JSON)) as the Secret's data bytes, so JSON base64s it again.
RELEASE = b"H4sIAAAAAAAC/6tWKkktLlGyUlAqS8wpTVWqBQBMS6+WEQAAAA=="

# Helm's sh.helm.release.v1.demo.v1 Secret, byte by byte (Unknown{typeMeta, raw}; raw is a Secret).
HELM_SECRET = (
    b"k8s\x00"
    b"\x0a\x0c"  # Unknown.typeMeta (field 1, length-delimited), 12 bytes
    b"\x0a\x02v1"  # TypeMeta.apiVersion (1)
    b"\x12\x06Secret"  # TypeMeta.kind (2)
    b"\x12\xc2\x01"  # Unknown.raw (2), 194 bytes
    b"\x0a\x6b"  # Secret.metadata (1), 107 bytes
    b"\x0a\x1ash.helm.release.v1.demo.v1"  # ObjectMeta.name (1)
    b"\x1a\x07default"  # ObjectMeta.namespace (3)
    b"\x5a\x0c\x0a\x04name\x12\x04demo"  # ObjectMeta.labels (11) entry {key 1, value 2}
    b"\x5a\x0d\x0a\x05owner\x12\x04helm"
    b"\x5a\x19\x0a\x06status\x12\x0fpending-install"
    b"\x5a\x0c\x0a\x07version\x12\x011"
    b"\x12\x3f\x0a\x07release\x12\x34" + RELEASE + b""  # Secret.data (2) entry, 52 bytes
    b"\x1a\x12helm.sh/release.v1"  # Secret.type (3)
    b"\x1a\x00"  # Unknown.contentEncoding (3), empty
    b"\x22\x00"  # Unknown.contentType (4), empty
)


def test_helm_release_secret_bytes_decode_to_the_json_helm_means() -> None:
    assert decode(HELM_SECRET) == {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {
            "name": "sh.helm.release.v1.demo.v1",
            "namespace": "default",
            "labels": {
                "name": "demo",
                "owner": "helm",
                "status": "pending-install",
                "version": "1",
            },
        },
        "data": {"release": base64.b64encode(RELEASE).decode()},
        "type": "helm.sh/release.v1",
    }


OWNER = blob(5, "apps/v1") + blob(1, "ReplicaSet") + blob(3, "rs") + blob(4, "u-1") + num(6, 1)
FIELDS_V1 = b'{"f:data":{".":{},"f:a":{}}}'
MANAGED = (
    blob(1, "helm")
    + blob(2, "Update")
    + blob(3, "v1")
    + blob(4, num(1, 1_767_225_600) + num(2, 5))
    + blob(6, "FieldsV1")
    + blob(7, blob(1, FIELDS_V1))
    + blob(8, "")
)

CASES: list[tuple[str, bytes, dict[str, Any]]] = [
    (
        "secret: binary data is base64, empty meta fields are dropped",
        unknown(
            "v1",
            "Secret",
            blob(1, meta(name="s", namespace="ns"))
            + entry(2, "bin", b"\x00\xff")
            + entry(2, "empty", b"")
            + blob(3, "Opaque"),
        ),
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "s", "namespace": "ns"},
            "data": {"bin": "AP8=", "empty": ""},
            "type": "Opaque",
        },
    ),
    (
        "secret: stringData and an explicit immutable=false survive",
        unknown("v1", "Secret", blob(1, meta(name="s")) + entry(4, "k", "v") + num(5, 0)),
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "s"},
            "stringData": {"k": "v"},
            "immutable": False,
        },
    ),
    (
        "configmap: data, binaryData and immutable",
        unknown(
            "v1",
            "ConfigMap",
            blob(1, meta(name="c")) + entry(2, "a", "1") + entry(3, "b", b"hi") + num(4, 1),
        ),
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "c"},
            "data": {"a": "1"},
            "binaryData": {"b": "aGk="},
            "immutable": True,
        },
    ),
    (
        "object meta: every field a client may send",
        unknown(
            "v1",
            "ConfigMap",
            blob(
                1,
                blob(1, "")
                + blob(2, "gen-")
                + blob(3, "ns")
                + blob(6, "42")
                + num(7, 3)
                + blob(8, num(1, 1_767_225_600) + num(2, 999))
                + num(10, 30)
                + entry(11, "app", "web")
                + entry(12, "note", "x")
                + blob(13, OWNER)
                + blob(14, "a/b")
                + blob(14, "c/d")
                + blob(17, MANAGED),
            ),
        ),
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {
                "generateName": "gen-",
                "namespace": "ns",
                "resourceVersion": "42",
                "generation": 3,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "deletionGracePeriodSeconds": 30,
                "labels": {"app": "web"},
                "annotations": {"note": "x"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "rs",
                        "uid": "u-1",
                        "controller": True,
                    }
                ],
                "finalizers": ["a/b", "c/d"],
                "managedFields": [
                    {
                        "manager": "helm",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": "2026-01-01T00:00:00Z",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
                    }
                ],
            },
        },
    ),
    (
        "delete options as Helm sends them for release secrets",
        unknown("v1", "DeleteOptions", blob(4, "Background")),
        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
    ),
    (
        "delete options: pointers keep zero values, preconditions, dryRun",
        unknown(
            "meta.k8s.io/v1",
            "DeleteOptions",
            num(1, 0)
            + blob(2, blob(1, "u-1") + blob(2, "7"))
            + num(3, 0)
            + blob(4, "Foreground")
            + blob(5, "All"),
        ),
        {
            "kind": "DeleteOptions",
            "apiVersion": "meta.k8s.io/v1",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "u-1", "resourceVersion": "7"},
            "orphanDependents": False,
            "propagationPolicy": "Foreground",
            "dryRun": ["All"],
        },
    ),
    (
        "negative int64 is two's complement",
        unknown("v1", "DeleteOptions", num(1, -1)),
        {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": -1},
    ),
    (
        "fields this decoder does not know are skipped, as Go's decoder skips them",
        unknown("v1", "Secret", blob(1, meta(name="s")) + num(99, 7) + blob(98, "x")),
        {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}},
    ),
]


@pytest.mark.parametrize(("body", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_decode(body: bytes, expected: dict[str, Any]) -> None:
    assert decode(body) == expected


ERRORS: list[tuple[str, bytes, str]] = [
    ("json body", b'{"kind":"Secret"}', "prefix"),
    ("a kind it cannot decode", unknown("v1", "Pod", b""), "v1/Pod"),
    ("a Secret of another group", unknown("apps/v1", "Secret", b""), "apps/v1/Secret"),
    ("no type meta", b"k8s\x00" + blob(2, b""), "?/?"),
    ("truncated length", b"k8s\x00\x12\x05ab", "truncated"),
    ("truncated varint", b"k8s\x00\x08\xff", "varint"),
    ("group wire type", b"k8s\x00\x0b", "wire type 3"),
    ("gzip content encoding", unknown("v1", "Secret", b"", encoding="gzip"), "gzip"),
    ("not utf-8", unknown("v1", "Secret", blob(3, b"\xff\xfe")), "UTF-8"),
    ("scalar where a message belongs", unknown("v1", "Secret", num(1, 5)), "message"),
]


@pytest.mark.parametrize(("body", "needle"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_undecodable_bodies_are_refused(body: bytes, needle: str) -> None:
    with pytest.raises(ProtobufError, match=needle.replace("?", r"\?")):
        decode(body)
