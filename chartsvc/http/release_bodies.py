"""Encoders of the release group's JSON bodies, shaped like ``helm ... -o json`` (snake_case keys).

Keys are named one by one to match ``spec/chartsvc.releases.yaml``; stored records pass through only
the parts the spec shows (``info``, ``chart.metadata``, ``config``, ``manifest``, ``hooks``).
"""

from __future__ import annotations

from typing import Any

from chartsvc.release_model import Release, ResourceStatus, TestResult


def encode_summary(release: Release) -> dict[str, Any]:
    """A release without its manifest, values and hooks (list and history entries)."""
    return {
        "name": release.name,
        "namespace": release.namespace,
        "version": release.version,
        "info": dict(release.info),
        "chart": {"metadata": dict(release.chart.get("metadata") or {})},
    }


def encode_release(release: Release) -> dict[str, Any]:
    return {
        **encode_summary(release),
        "config": dict(release.config),
        "manifest": release.manifest,
        "hooks": [dict(hook) for hook in release.hooks],
    }


def encode_uninstalled(release: Release, info: str) -> dict[str, Any]:
    return {"release": encode_summary(release), "info": info}


def encode_test(result: TestResult) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": result.name,
        "kind": result.kind,
        "phase": result.phase,
        "started_at": result.started_at,
        "completed_at": result.completed_at,
        "logs": result.logs,
    }
    if result.message is not None:
        body["message"] = result.message
    return body


def encode_resource(status: ResourceStatus) -> dict[str, Any]:
    return {
        "api_version": status.api_version,
        "kind": status.kind,
        "name": status.name,
        "namespace": status.namespace,
        "status": status.status,
        "ready": status.ready,
        "message": status.message,
    }
