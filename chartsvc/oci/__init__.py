"""Helm charts in OCI registries: pull, push and list versions over the distribution protocol.

Exists so the chart service can serve ``oci://`` references without shelling out or going through
the Helm SDK's own network stack, which the address guard cannot see. Helm's media types and tag
spelling are kept exactly, so what we push ``helm pull`` reads and vice versa.

This package must not know about aiohttp.web or helm_python, and must not log credentials or tokens.
"""

from __future__ import annotations

from chartsvc.oci.client import MAX_CHART_BYTES, OciClient
from chartsvc.oci.errors import (
    ChartNotInRegistry,
    ChartTooLarge,
    RegistryAuthFailed,
    RegistryProtocolError,
    RegistryUnavailable,
)
from chartsvc.oci.manifest import (
    CHART_LAYER_MEDIA_TYPE,
    CONFIG_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    PROVENANCE_LAYER_MEDIA_TYPE,
    InvalidChartMetadata,
    NotAChart,
)
from chartsvc.oci.reference import InvalidReference, Reference, tag_to_version, version_to_tag

__all__ = [
    "CHART_LAYER_MEDIA_TYPE",
    "CONFIG_MEDIA_TYPE",
    "MANIFEST_MEDIA_TYPE",
    "MAX_CHART_BYTES",
    "PROVENANCE_LAYER_MEDIA_TYPE",
    "ChartNotInRegistry",
    "ChartTooLarge",
    "InvalidChartMetadata",
    "InvalidReference",
    "NotAChart",
    "OciClient",
    "Reference",
    "RegistryAuthFailed",
    "RegistryProtocolError",
    "RegistryUnavailable",
    "tag_to_version",
    "version_to_tag",
]
