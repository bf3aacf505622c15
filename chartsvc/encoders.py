"""JSON encoders of the chart service's value objects, keys spelled as the spec's schemas.

Release bodies are shaped like ``helm ... -o json`` (snake_case keys, as in
``spec/chartsvc.releases.yaml``); stored records pass through only the parts the spec shows
(``info``, ``chart.metadata``, ``config``, ``manifest``, ``hooks``).

Used by the operations' calls (``chartsvc.calls``), which both doors run, so both answer with the
same JSON. Each encoder returns a TypedDict spelled as its spec schema. Pure functions: no I/O and no
aiohttp; never ``attrs.asdict`` (a field added to a value object must not leak out).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from chartsvc.charts import LintReport
from chartsvc.hub import HubResult
from chartsvc.provenance import Provenance
from chartsvc.releases.compare import PatchOp
from chartsvc.releases.drift import DriftedObject, ReleaseDrift
from chartsvc.releases.model import Release, ResourceStatus, TestResult
from chartsvc.releases.preview import UpgradePreview
from chartsvc.repos.config import Repository
from chartsvc.repos.model import ChartVersion, UpdateResult


class HubSearchResult(TypedDict):
    name: str
    version: str
    appVersion: str
    repoName: str
    repoUrl: str
    description: str


class RepositoryBody(TypedDict):
    name: str
    url: str


class ChartListEntry(TypedDict):
    name: str
    chartVersion: str
    appVersion: str
    description: str


class UpdateResultBody(TypedDict):
    name: str
    updated: bool
    charts: int
    versions: int
    skipped: int
    error: NotRequired[str]


class ChartBody(TypedDict):
    metadata: dict[str, Any]


class ReleaseSummary(TypedDict):
    name: str
    namespace: str
    version: int
    info: dict[str, Any]
    chart: ChartBody


class ReleaseBody(ReleaseSummary):
    config: dict[str, Any]
    manifest: str
    hooks: list[dict[str, Any]]


class UninstallResult(TypedDict):
    release: ReleaseSummary
    info: str


class TestResultBody(TypedDict):
    name: str
    kind: str
    phase: str
    started_at: str | None
    completed_at: str | None
    logs: str
    message: NotRequired[str]


class ResourceStatusBody(TypedDict):
    api_version: str
    kind: str
    name: str
    namespace: str | None
    status: str
    ready: bool
    message: str


class ProvenanceBody(TypedDict):
    name: str
    version: str
    signer: str
    fingerprint: str
    keyId: str
    digest: str
    file: str


class PatchOpBody(TypedDict):
    op: str
    path: str
    value: NotRequired[Any]


class DriftedObjectBody(TypedDict):
    api_version: str
    kind: str
    name: str
    namespace: str | None
    state: str
    message: NotRequired[str]
    patch: NotRequired[list[PatchOpBody]]
    diff: NotRequired[str]


class ReleaseDriftBody(TypedDict):
    name: str
    namespace: str
    revision: int
    summary: dict[str, int]
    objects: list[DriftedObjectBody]


def encode_hub_result(result: HubResult) -> HubSearchResult:
    return {
        "name": result.name,
        "version": result.version,
        "appVersion": result.app_version,
        "repoName": result.repo_name,
        "repoUrl": result.repo_url,
        "description": result.description,
    }


def encode_repository(repo: Repository) -> RepositoryBody:
    return {"name": repo.name, "url": repo.url}


def encode_chart_version(entry: ChartVersion) -> ChartListEntry:
    return {
        "name": entry.name,
        "chartVersion": entry.chart_version,
        "appVersion": entry.app_version,
        "description": entry.description,
    }


def encode_update(result: UpdateResult) -> UpdateResultBody:
    body: UpdateResultBody = {
        "name": result.name,
        "updated": result.updated,
        "charts": result.charts,
        "versions": result.versions,
        "skipped": result.skipped,
    }
    if result.error is not None:
        body["error"] = result.error
    return body


def encode_summary(release: Release, *, public: bool = False) -> ReleaseSummary:
    """A release without its manifest, values and hooks (list and history entries); ``public``
    also leaves out its notes (``info.notes``), which are rendered from the values too."""
    info = dict(release.info)
    if public:
        info.pop("notes", None)
    return {
        "name": release.name,
        "namespace": release.namespace,
        "version": release.version,
        "info": info,
        "chart": {"metadata": dict(release.chart.get("metadata") or {})},
    }


def encode_release(release: Release) -> ReleaseBody:
    return {
        **encode_summary(release),
        "config": dict(release.config),
        "manifest": release.manifest,
        "hooks": [dict(hook) for hook in release.hooks],
    }


def encode_uninstalled(release: Release, info: str) -> UninstallResult:
    return {"release": encode_summary(release), "info": info}


def encode_test(result: TestResult) -> TestResultBody:
    body: TestResultBody = {
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


def encode_resource(status: ResourceStatus) -> ResourceStatusBody:
    return {
        "api_version": status.api_version,
        "kind": status.kind,
        "name": status.name,
        "namespace": status.namespace,
        "status": status.readiness.status,
        "ready": status.readiness.ready,
        "message": status.readiness.message,
    }


class LintMessageBody(TypedDict):
    severity: str
    path: str
    message: str


class LintReportBody(TypedDict):
    chartsLinted: int
    passed: bool
    messages: list[LintMessageBody]
    errors: list[str]


def encode_lint(report: LintReport) -> LintReportBody:
    return {
        "chartsLinted": report.charts_linted,
        "passed": report.passed,
        "messages": [
            {"severity": m.severity, "path": m.path, "message": m.message} for m in report.messages
        ],
        "errors": list(report.errors),
    }


class PreviewValues(TypedDict):
    previous: dict[str, Any]
    next: dict[str, Any]
    computed: dict[str, Any]
    diff: str
    computedDiff: str


class ObjectDiffBody(TypedDict):
    apiVersion: str
    kind: str
    name: str
    namespace: str | None
    change: str
    diff: str


class UpgradePreviewBody(TypedDict):
    release: ReleaseSummary
    values: PreviewValues
    manifests: list[ObjectDiffBody]
    unchanged: int


def encode_preview(preview: UpgradePreview) -> UpgradePreviewBody:
    return {
        "release": encode_summary(preview.release),
        "values": {
            "previous": dict(preview.previous_values),
            "next": dict(preview.next_values),
            "computed": dict(preview.computed),
            "diff": preview.values_diff,
            "computedDiff": preview.computed_diff,
        },
        "manifests": [
            {
                "apiVersion": o.api_version,
                "kind": o.kind,
                "name": o.name,
                "namespace": o.namespace,
                "change": o.change,
                "diff": o.diff,
            }
            for o in preview.objects
        ],
        "unchanged": preview.unchanged,
    }


def encode_drift(drift: ReleaseDrift) -> ReleaseDriftBody:
    return {
        "name": drift.name,
        "namespace": drift.namespace,
        "revision": drift.revision,
        "summary": {state.replace("-", "_"): n for state, n in drift.summary.items()},
        "objects": [_drifted(o) for o in drift.objects],
    }


def _drifted(obj: DriftedObject) -> DriftedObjectBody:
    body: DriftedObjectBody = {
        "api_version": obj.api_version,
        "kind": obj.kind,
        "name": obj.name,
        "namespace": obj.namespace,
        "state": obj.state,
    }
    if obj.message:
        body["message"] = obj.message
    if obj.state == "modified":
        body["patch"] = [_patch_op(op) for op in obj.patch]
        body["diff"] = obj.diff
    return body


def _patch_op(op: PatchOp) -> PatchOpBody:
    if op.op == "remove":
        return {"op": op.op, "path": op.path}
    return {"op": op.op, "path": op.path, "value": op.value}


def encode_provenance(provenance: Provenance) -> ProvenanceBody:
    return {
        "name": provenance.name,
        "version": provenance.version,
        "signer": provenance.signer,
        "fingerprint": provenance.key.fingerprint,
        "keyId": provenance.key.key_id,
        "digest": provenance.digest,
        "file": provenance.file_name,
    }
