"""Write ``kubesim/encoding/protobuf_schemas.json``: field tables for Kubernetes protobuf bodies.

kubectl's typed clients send protobuf (``kubectl create deployment``, ``create job``, ``auth
can-i``...). The simulator decodes those bodies with field tables taken from the protobuf file
descriptors that every kubectl binary embeds (gzipped ``FileDescriptorProto``s registered by the
generated ``k8s.io/api`` code), so the field numbers are the real ones of that Kubernetes version.
Run it again to follow a newer kubectl:

    .venv/bin/python scripts/gen_kubesim_protobuf.py [PATH_TO_KUBECTL_BINARY]

Without an argument it uses the ``kubectl`` on PATH (for the Google Cloud SDK's dispatcher, the
``kubectl.1.32`` next to it).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubesim.encoding.protobuf import ProtobufError, fields  # noqa: E402 -- the shared reader

OUT = ROOT / "kubesim" / "encoding" / "protobuf_schemas.json"
PACKAGES = (
    "k8s.io/api/core/v1/",
    "k8s.io/api/apps/v1/",
    "k8s.io/api/batch/v1/",
    "k8s.io/api/autoscaling/v1/",
    "k8s.io/api/autoscaling/v2/",
    "k8s.io/api/networking/v1/",
    "k8s.io/api/policy/v1/",
    "k8s.io/api/rbac/v1/",
    "k8s.io/api/storage/v1/",
    "k8s.io/api/coordination/v1/",
    "k8s.io/api/scheduling/v1/",
    "k8s.io/api/discovery/v1/",
    "k8s.io/api/events/v1/",
    "k8s.io/api/authentication/v1/",
    "k8s.io/api/authorization/v1/",
    "k8s.io/apimachinery/pkg/apis/meta/v1/",
    "k8s.io/apimachinery/pkg/runtime/",
    "k8s.io/apimachinery/pkg/util/intstr/",
    "k8s.io/apimachinery/pkg/api/resource/",
)
GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"


def _kubectl() -> Path:
    found = shutil.which("kubectl")
    if found is None:
        raise SystemExit("no kubectl on PATH; pass the binary's path")
    path = Path(found).resolve()
    versioned = path.with_name("kubectl.1.32")
    return versioned if versioned.exists() else path


def _descriptors(binary: bytes) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for m in re.finditer(re.escape(GZIP), binary):
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(binary[m.start() :][: 1 << 20])
        except zlib.error:
            continue
        if not raw.startswith(b"\x0a"):
            continue
        try:
            name = _string(raw, 1)
        except (ProtobufError, UnicodeDecodeError):
            continue
        if name.endswith("generated.proto") and name.startswith(PACKAGES) and name not in out:
            out[name] = raw
    return out


def _string(message: bytes, number: int) -> str:
    for n, _wire, value in fields(message):
        if n == number and isinstance(value, bytes):
            return value.decode()
    return ""


def _all(message: bytes, number: int) -> list[Any]:
    return [value for n, _wire, value in fields(message) if n == number]


def _messages(package: str, descriptor: bytes, prefix: str, out: dict[str, Any]) -> None:
    """DescriptorProto: name 1, field 2, nested_type 3, options 7 (map_entry 7)."""
    name = _string(descriptor, 1)
    full = f"{prefix}.{name}"
    table: dict[str, list[Any]] = {}
    for field in _all(descriptor, 2):
        # FieldDescriptorProto: name 1, number 3, label 4, type 5, type_name 6
        values = {n: v for n, _w, v in fields(field)}
        table[str(values[3])] = [
            values[1].decode(),
            values[5],
            values[4],
            values.get(6, b"").decode().lstrip("."),
        ]
    options = _all(descriptor, 7)
    entry = any(n == 7 and v for o in options for n, _w, v in fields(o))
    out[full] = {"map": True, **table} if entry else table
    for nested in _all(descriptor, 3):
        _messages(package, nested, full, out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "kubectl",
        nargs="?",
        type=Path,
        help="the kubectl binary to read (default: the one on PATH)",
    )
    given = parser.parse_args(argv).kubectl
    binary = given if given is not None else _kubectl()
    descriptors = _descriptors(binary.read_bytes())
    missing = [p for p in PACKAGES if not any(k.startswith(p) for k in descriptors)]
    if missing:
        raise SystemExit(f"{binary}: no descriptors for {missing}")
    messages: dict[str, Any] = {}
    for name in sorted(descriptors):
        raw = descriptors[name]
        package = _string(raw, 2)
        for message in _all(raw, 4):
            _messages(package, message, package, messages)
    text = json.dumps(
        {"source": "kubectl v1.32 embedded descriptors", "messages": messages},
        separators=(",", ":"),
        sort_keys=True,
    )
    OUT.write_text(text + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(messages)} messages, {len(text)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
