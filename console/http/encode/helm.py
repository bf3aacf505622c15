"""Helm's console parts (``spec/console.helm.yaml``, ``spec/console.helmlib.yaml``,
``spec/console.chartlib.yaml``): the values library, the chart catalogue and a repository's
refresh. Releases and the rest of the chart library are chartsvc's bodies (``chartsvc.encoders``).
"""

from __future__ import annotations

from typing import TypedDict

from chartsvc.charts import Refreshed
from chartsvc.encoders import ChartListEntry, UpdateResultBody, encode_chart_version, encode_update
from chartsvc.repos.model import ChartVersion
from console.helm.values import ValuesFile


class ValuesFileBody(TypedDict):
    name: str
    size: int
    modified: str


class HelmCatalogueEntry(ChartListEntry):
    repo: str


class RepositoryRefreshed(UpdateResultBody):
    evicted: int


def encode_refreshed(refreshed: Refreshed) -> RepositoryRefreshed:
    """A repository re-indexed, and how many of its cached charts were evicted."""
    return {**encode_update(refreshed.update), "evicted": refreshed.evicted}


def encode_values_file(found: ValuesFile) -> ValuesFileBody:
    return {"name": found.name, "size": found.size, "modified": found.modified}


def encode_catalogue_entry(repo: str, chart: ChartVersion) -> HelmCatalogueEntry:
    return {"repo": repo, **encode_chart_version(chart)}
