"""Helm's console parts (``spec/console.helm.yaml``, ``spec/console.helmlib.yaml``): the values
library and the chart catalogue. Releases are chartsvc's bodies (``chartsvc.encoders``)."""

from __future__ import annotations

from typing import TypedDict

from chartsvc.encoders import ChartListEntry, encode_chart_version
from chartsvc.repos.model import ChartVersion
from console.helm.values import ValuesFile


class ValuesFileBody(TypedDict):
    name: str
    size: int
    modified: str


class HelmCatalogueEntry(ChartListEntry):
    repo: str


def encode_values_file(found: ValuesFile) -> ValuesFileBody:
    return {"name": found.name, "size": found.size, "modified": found.modified}


def encode_catalogue_entry(repo: str, chart: ChartVersion) -> HelmCatalogueEntry:
    return {"repo": repo, **encode_chart_version(chart)}
