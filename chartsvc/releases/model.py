"""Release value objects: a stored release, the write requests, test and resource results.

A :class:`Release` is Helm's own record (``helm get``'s JSON): name, namespace, ``version`` (the
revision), ``info`` (status, first/last deployed, description, notes), the chart's metadata, the
user's ``config``, the manifest and hooks. The chart's templates and files stay out: they are the
chart, not the release, and can weigh megabytes. Names follow Helm's rules: a release name is a
DNS-1123 subdomain of at most 53 characters, a namespace a DNS-1123 label of at most 63.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from chartsvc import names
from chartsvc.clusters import ReleaseRef
from chartsvc.helm import WriteOptions
from chartsvc.releases.kstatus import Readiness
from common.errors import BadRequest, ValidationFailed

DEFAULT_NAMESPACE = "default"


class InvalidReleaseName(BadRequest, code="invalid-release-name"): ...


class InvalidNamespace(BadRequest, code="invalid-namespace"): ...


#: Helm's rules, as the spec's ``ReleaseName`` and ``Namespace`` state them: a DNS-1123 subdomain
#: of at most 53 characters, a DNS-1123 label of at most 63.
RELEASE_NAME_PATTERN = names.dns_subdomain(53)
NAMESPACE_PATTERN = names.dns_label(63)
_RELEASE_NAME = re.compile(RELEASE_NAME_PATTERN)
_LABEL = re.compile(NAMESPACE_PATTERN)


def check_release_name(name: str) -> None:
    if not _RELEASE_NAME.match(name):
        raise InvalidReleaseName(
            f"invalid release name {name[:80]!r}: a DNS-1123 subdomain (lower case letters, "
            "digits, '-' and '.') of at most 53 characters"
        )


def check_namespace(namespace: str) -> None:
    if not _LABEL.match(namespace):
        raise InvalidNamespace(
            f"invalid namespace {namespace[:80]!r}: a DNS-1123 label (lower case letters, "
            "digits and '-') of at most 63 characters"
        )


def check_release(release: ReleaseRef) -> None:
    """Both names of ``release`` follow Helm's rules (the namespace is checked first)."""
    check_namespace(release.namespace)
    check_release_name(release.name)


@attrs.frozen
class Release:
    name: str
    namespace: str
    version: int
    info: Mapping[str, Any]
    chart: Mapping[str, Any]
    config: Mapping[str, Any]
    manifest: str
    hooks: tuple[Mapping[str, Any], ...] = ()

    @property
    def status(self) -> str:
        return str(self.info.get("status", ""))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Release:
        chart = record.get("chart") or {}
        return cls(
            name=record.get("name", ""),
            namespace=record.get("namespace", ""),
            version=int(record.get("version", 0)),
            info=record.get("info") or {},
            chart={"metadata": chart.get("metadata") or {}},
            config=record.get("config") or {},
            manifest=record.get("manifest") or "",
            hooks=tuple(record.get("hooks") or ()),
        )

    @classmethod
    def from_summary(
        cls,
        summary: Mapping[str, Any],
        *,
        chart: Mapping[str, Any],
        config: Mapping[str, Any],
        description: str,
    ) -> Release:
        """A release Helm computed but did not store (a dry run), from helm_python's summary."""
        deployed = summary.get("deployed_at")
        info = {
            "status": summary.get("status", ""),
            "first_deployed": deployed,
            "last_deployed": deployed,
            "description": description,
            "notes": summary.get("notes") or "",
        }
        return cls(
            name=summary.get("name", ""),
            namespace=summary.get("namespace", ""),
            version=int(summary.get("revision", 0)),
            info={k: v for k, v in info.items() if v is not None},
            chart={"metadata": dict(chart)},
            config=config,
            manifest=summary.get("manifest") or "",
        )

    def uninstalled(self, deleted: str) -> Release:
        """This release as Helm describes it once uninstalled (``helm uninstall``'s record)."""
        info = {
            **self.info,
            "status": "uninstalled",
            "deleted": deleted,
            "description": "Uninstallation complete",
        }
        return attrs.evolve(self, info=info)


_EXCLUSIVE_VALUES = ("resetValues", "reuseValues", "resetThenReuseValues")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
MAX_TIMEOUT_S = 24 * 3600


def write_options(body: Mapping[str, Any]) -> WriteOptions:
    """Helm's write options from a request's fields (spelled as the spec's ``InstallRequest`` and
    ``UpgradeRequest``); the spec has checked their types, this checks how they combine."""
    chosen = [name for name in _EXCLUSIVE_VALUES if body.get(name)]
    if len(chosen) > 1:
        message = "only one of " + ", ".join(_EXCLUSIVE_VALUES)
        raise ValidationFailed([{"in": "body", "field": n, "message": message} for n in chosen])
    if body.get("force") and body.get("forceConflicts"):
        message = "force replaces objects with client-side apply; forceConflicts needs server-side"
        raise ValidationFailed(
            [{"in": "body", "field": n, "message": message} for n in ("force", "forceConflicts")]
        )
    return WriteOptions(
        dry_run_mode=body.get("dryRun"),
        wait=body.get("wait") or "none",
        timeout=parse_timeout(body.get("timeout")),
        rollback_on_failure=bool(body.get("rollbackOnFailure") or body.get("atomic")),
        description=body.get("description"),
        labels=body.get("labels") or {},
        force=bool(body.get("force")),
        force_conflicts=bool(body.get("forceConflicts")),
        skip_crds=bool(body.get("skipCRDs")),
        create_namespace=bool(body.get("createNamespace")),
        reset_values=bool(body.get("resetValues")),
        reuse_values=bool(body.get("reuseValues")),
        reset_then_reuse_values=bool(body.get("resetThenReuseValues")),
        max_history=body.get("maxHistory"),
    )


def parse_timeout(value: int | str | None) -> int | None:
    """Seconds from an integer or a Go duration as the Helm CLI takes it (``90s``, ``5m``, ``1h30m``)."""
    if value is None:
        return None
    seconds = value if isinstance(value, int) else _duration(value)
    if seconds is None or not 1 <= seconds <= MAX_TIMEOUT_S:
        raise ValidationFailed(
            [
                {
                    "in": "body",
                    "field": "timeout",
                    "message": f"must be 1 to {MAX_TIMEOUT_S} seconds, or a duration like 5m0s",
                }
            ]
        )
    return seconds


def _duration(text: str) -> int | None:
    match = _DURATION.match(text)
    if match is None or not any(match.groups()):
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


@attrs.frozen
class InstallRequest:
    release_name: str
    namespace: str = DEFAULT_NAMESPACE
    values: Mapping[str, Any] = attrs.field(factory=dict)
    options: WriteOptions = WriteOptions()
    chart_ref: str | None = None
    version: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> InstallRequest:
        return cls(
            release_name=body.get("releaseName") or "",
            namespace=body.get("namespace") or DEFAULT_NAMESPACE,
            values=body.get("values") or {},
            options=write_options(body),
            chart_ref=body.get("chartRef"),
            version=body.get("version"),
        )


@attrs.frozen
class UpgradeRequest:
    values: Mapping[str, Any] | None = None
    options: WriteOptions = WriteOptions()
    chart_ref: str | None = None
    version: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> UpgradeRequest:
        return cls(
            values=body.get("values"),
            options=write_options(body),
            chart_ref=body.get("chartRef"),
            version=body.get("version"),
        )


@attrs.frozen
class TestResult:
    name: str
    kind: str
    phase: str
    started_at: str | None
    completed_at: str | None
    logs: str
    message: str | None = None


@attrs.frozen
class ResourceStatus:
    """One object of a release's manifest and whether it is ready (kstatus's verdict)."""

    api_version: str
    kind: str
    name: str
    namespace: str | None
    readiness: Readiness
