"""JSON encoders of the chart service's value objects, keys spelled as the spec's schemas.

Shared by the HTTP routes and the MCP tools, so both doors answer with the same JSON. Pure functions:
no I/O and no aiohttp; never ``attrs.asdict`` (a field added to a value object must not leak out).
"""

from __future__ import annotations

from typing import Any

from chartsvc.hub import HubResult
from chartsvc.repos.config import Repository
from chartsvc.repos.model import ChartVersion, UpdateResult


def encode_hub_result(result: HubResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "version": result.version,
        "appVersion": result.app_version,
        "repoName": result.repo_name,
        "repoUrl": result.repo_url,
        "description": result.description,
    }


def encode_repository(repo: Repository) -> dict[str, Any]:
    return {"name": repo.name, "url": repo.url}


def encode_chart_version(entry: ChartVersion) -> dict[str, Any]:
    return {
        "name": entry.name,
        "chartVersion": entry.chart_version,
        "appVersion": entry.app_version,
        "description": entry.description,
    }


def encode_update(result: UpdateResult) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": result.name,
        "updated": result.updated,
        "charts": result.charts,
        "versions": result.versions,
        "skipped": result.skipped,
    }
    if result.error is not None:
        body["error"] = result.error
    return body
