"""Helm's OCI artifact layout: media types, the config blob, and the image manifest.

The media types are Helm's (``pkg/registry/constants.go``); anything else in their place means the
artifact is not a Helm chart. Manifest annotations follow ``helm push`` (title, version, description,
url, source, authors, plus the chart's own annotations, which may not override title or version), but
leave out ``created`` so that pushing the same archive twice yields the same digest. This module must
not do I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs

from chartsvc.deps.gocompat import yaml_scalar_as_string
from chartsvc.semver import parse_version
from common.errors import BadRequest

CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json"
CHART_LAYER_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
PROVENANCE_LAYER_MEDIA_TYPE = "application/vnd.cncf.helm.chart.provenance.v1.prov"
LEGACY_CHART_LAYER_MEDIA_TYPE = "application/tar+gzip"  # old Helm pushes; still pulled
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"

# chart.Metadata's JSON fields in Go struct order (the config blob is json.Marshal(Metadata)).
_METADATA_FIELDS = (
    "name", "home", "sources", "version", "description", "keywords", "maintainers", "icon",
    "apiVersion", "condition", "tags", "appVersion", "deprecated", "annotations", "kubeVersion",
    "dependencies", "type",
)  # fmt: skip
_ANNOTATION = "org.opencontainers.image."


class NotAChart(BadRequest, code="not-a-helm-chart"):
    """The reference names an OCI artifact that is not a Helm chart."""


class InvalidChartMetadata(BadRequest, code="invalid-chart"): ...


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@attrs.frozen
class Blob:
    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return sha256_digest(self.data)

    def descriptor(self) -> dict[str, Any]:
        return {"mediaType": self.media_type, "digest": self.digest, "size": len(self.data)}


def chart_identity(metadata: Mapping[str, Any]) -> tuple[str, str]:
    """(name, version) from Chart.yaml; Helm requires both, the version valid SemVer."""
    name, version = metadata.get("name"), metadata.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool):
        version = yaml_scalar_as_string(version)  # `version: 1` is "1" to Helm's loader
    if not isinstance(name, str) or not name or not isinstance(version, str):
        raise InvalidChartMetadata("Chart.yaml must give the chart a name and a version")
    if parse_version(version) is None:
        raise InvalidChartMetadata(f"Chart.yaml version {version[:100]!r} is not valid SemVer")
    return name, version


def config_blob(metadata: Mapping[str, Any]) -> Blob:
    """The chart's metadata as Helm's config blob (known fields, struct order, empty ones left out)."""
    fields = {key: metadata[key] for key in _METADATA_FIELDS if metadata.get(key)}
    data = json.dumps(fields, separators=(",", ":"), ensure_ascii=False, default=str).encode()
    return Blob(CONFIG_MEDIA_TYPE, data)


def manifest_bytes(config: Blob, layers: list[Blob], metadata: Mapping[str, Any]) -> bytes:
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": config.descriptor(),
        "layers": [layer.descriptor() for layer in layers],
        "annotations": manifest_annotations(metadata),
    }
    return json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_annotations(metadata: Mapping[str, Any]) -> dict[str, str]:
    chart_own = metadata.get("annotations")
    merged = (
        {k: str(v) for k, v in (chart_own or {}).items()} if isinstance(chart_own, dict) else {}
    )
    sources = metadata.get("sources")
    standard = {
        "description": metadata.get("description"),
        "url": metadata.get("home"),
        "source": sources[0] if isinstance(sources, list) and sources else None,
        "authors": _authors(metadata.get("maintainers")),
    }
    merged |= {f"{_ANNOTATION}{k}": str(v) for k, v in standard.items() if v}
    name, version = chart_identity(metadata)
    merged |= {f"{_ANNOTATION}title": name, f"{_ANNOTATION}version": version}
    return dict(sorted(merged.items()))


def _authors(maintainers: Any) -> str:
    if not isinstance(maintainers, list):
        return ""
    names = []
    for person in maintainers:
        if isinstance(person, dict) and person.get("name"):
            email = person.get("email")
            names.append(f"{person['name']} ({email})" if email else str(person["name"]))
    return ", ".join(names)


@attrs.frozen
class ChartManifest:
    """What a pull needs from a manifest: the chart layer's descriptor."""

    chart_digest: str
    chart_size: int
    #: The provenance layer's digest (``helm push`` of a signed chart adds one), None without.
    provenance_digest: str | None = None

    @classmethod
    def parse(cls, data: bytes, where: str) -> ChartManifest:
        try:
            manifest = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise NotAChart(f"{where} has a manifest that is not JSON") from exc
        if not isinstance(manifest, dict):
            raise NotAChart(f"{where} has a manifest that is not a JSON object")
        if manifest.get("mediaType") == INDEX_MEDIA_TYPE or "manifests" in manifest:
            raise NotAChart(f"{where} is an image index, not a Helm chart")
        config = manifest.get("config")
        config_type = config.get("mediaType") if isinstance(config, dict) else None
        if config_type != CONFIG_MEDIA_TYPE:
            raise NotAChart(f"{where} is not a Helm chart (config media type {config_type!r})")
        return cls._from_layers(manifest.get("layers"), where)

    @classmethod
    def _from_layers(cls, layers: Any, where: str) -> ChartManifest:
        chart_types = (CHART_LAYER_MEDIA_TYPE, LEGACY_CHART_LAYER_MEDIA_TYPE)
        listed = layers if isinstance(layers, list) else []
        provenance = next(
            (
                str(layer.get("digest"))
                for layer in listed
                if isinstance(layer, dict)
                and layer.get("mediaType") == PROVENANCE_LAYER_MEDIA_TYPE
                and isinstance(layer.get("digest"), str)
            ),
            None,
        )
        for layer in listed:
            if isinstance(layer, dict) and layer.get("mediaType") in chart_types:
                digest, size = layer.get("digest"), layer.get("size")
                if isinstance(digest, str) and isinstance(size, int) and size >= 0:
                    return cls(chart_digest=digest, chart_size=size, provenance_digest=provenance)
        raise NotAChart(f"{where} has no Helm chart layer")
