"""What the repository service hands out: value objects and its errors. Nothing here does I/O."""

from __future__ import annotations

import attrs

from chartsvc.repos import index
from common.errors import NotFound


class RepositoryNotFound(NotFound, code="repository-not-found"):
    def __init__(self, name: str) -> None:
        super().__init__(f"repository {name!r} is not configured")
        self.name = name


class ChartNotFound(NotFound, code="chart-not-found"):
    def __init__(self, repo: str, chart: str, version: str | None = None) -> None:
        what = f"chart {chart!r}" + (f" version {version!r}" if version else "")
        super().__init__(f"{what} not found in repository {repo!r}")


@attrs.frozen
class ChartVersion:
    name: str
    chart_version: str
    app_version: str
    description: str


@attrs.frozen
class UpdateResult:
    name: str
    updated: bool  # false when the server answered 304 Not Modified
    charts: int
    versions: int
    skipped: int
    error: str | None = None  # update-all reports a failing repository here instead of failing all


def chart_version(name: str, entry: index.Entry) -> ChartVersion:
    return ChartVersion(
        name=name,
        chart_version=str(entry[index.VERSION]),
        app_version=str(entry[index.APP_VERSION]),
        description=str(entry[index.DESCRIPTION]),
    )


def update_result(name: str, prepared: index.PreparedIndex, *, updated: bool) -> UpdateResult:
    return UpdateResult(
        name=name,
        updated=updated,
        charts=len(prepared.charts),
        versions=prepared.versions,
        skipped=prepared.skipped,
    )
