"""Request body decoding: JSON, YAML and Kubernetes protobuf, by Content-Type.

Protobuf is decoded for the kinds Helm's release storage sends (Secret, ConfigMap, DeleteOptions)
by ``protobuf.decode``; anything else it cannot read is a 415, never a guess.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from kubesim.encoding import protobuf, protobuf_kinds
from kubesim.machinery.status import KubeError, bad_request

PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
#: What a custom resource's PATCH takes: no strategic merge patch, which needs Go types
#: (apiextensions-apiserver's ``controller/openapi/builder`` lists these three for CR routes, and
#: kubectl reads them to choose a merge patch for a client-side apply).
CR_PATCH_TYPES = tuple(t for t in PATCH_TYPES if "strategic" not in t)
PROTOBUF = "application/vnd.kubernetes.protobuf"
_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """Safe YAML that keeps timestamps as strings, as sigs.k8s.io/yaml's YAML-to-JSON does."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _Base.yaml_implicit_resolvers.items()
}


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def unsupported_media(media: str, accepted: tuple[str, ...]) -> KubeError:
    return KubeError(
        415,
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        reason="UnsupportedMediaType",
    )


def decode(raw: bytes, content_type: str, *, accepted: tuple[str, ...]) -> Any:
    media = media_type(content_type) or "application/json"
    if media not in accepted:
        raise unsupported_media(media, accepted)
    if media == PROTOBUF:
        try:
            return protobuf_kinds.decode(raw)
        except protobuf.ProtobufError as exc:
            raise KubeError(
                415,
                f"the simulator cannot decode this protobuf body: {exc}",
                reason="UnsupportedMediaType",
            ) from exc
    if media in ("application/yaml", "application/apply-patch+yaml"):
        try:
            return yaml.load(raw, Loader=_Loader)  # noqa: S506 -- a safe loader, C when available
        except yaml.YAMLError as exc:
            raise bad_request(f"error converting YAML to JSON: {exc}") from exc
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc


WRITE_TYPES = ("application/json", "application/yaml", PROTOBUF)
DELETE_TYPES = ("application/json", "application/yaml", PROTOBUF)
