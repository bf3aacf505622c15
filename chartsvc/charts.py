"""Chart operations shared by every door (HTTP routes, MCP tools): render, show, create, pull, push.

A chart reference is ``<repo>/<chart>`` (a configured repository), optionally ``<repo>/<chart>:<version>``
where a version is accepted, or ``oci://<registry>/<path>[:<tag>]``. Every archive that enters (pulled
or uploaded) passes the archive limits before the engine sees it. No version means the latest one,
never an error. This module knows nothing of HTTP and never fetches by itself: repositories and the
OCI client do, through the address guard.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, get_args

import attrs

from chartsvc import archives, deps, semver
from chartsvc.gpg import Keyring
from chartsvc.helm import ChartEngine, ShowFormat
from chartsvc.helm.charts import CHART_NAME_PATTERN
from chartsvc.oci import reference
from chartsvc.provenance import MAX_PROVENANCE_BYTES, Provenance, ProvenanceChecker
from chartsvc.releases.model import NAMESPACE_PATTERN, RELEASE_NAME_PATTERN
from chartsvc.repos.cache import WeightedLRU
from chartsvc.repos.config import NAME_PATTERN, URL_PATTERN
from chartsvc.repos.model import UpdateResult
from chartsvc.repos.service import RepoService
from common.errors import BadRequest, ValidationFailed
from common.redact import redacted

DEFAULT_RELEASE_NAME = "release-name"  # what `helm template` uses without a name
DEFAULT_NAMESPACE = "default"
SHOW_MEMORY = 8 * 1024 * 1024  # `helm show` output kept by archive digest


class ChartPuller(Protocol):
    """What charts need of the OCI client."""

    async def pull(self, ref: str, *, version: str | None) -> bytes: ...

    async def pull_signed(self, ref: str, *, version: str | None) -> tuple[bytes, bytes | None]: ...

    async def push(self, archive: Path, remote: str) -> dict[str, Any]: ...

    async def tags(self, ref: str) -> list[str]: ...


class InvalidChartRef(BadRequest, code="invalid-chart-ref"):
    def __init__(self, ref: str, field: str = "chartRef") -> None:
        super().__init__(
            f"{field} must be <repo>/<chart> or oci://<registry>/<path>, got {redacted(ref)[:200]!r}",
            extra={"errors": [{"in": "body", "field": field, "message": "is invalid"}]},
        )


#: ``<repo>/<chart>[:<version>]``: a configured repository's name, a chart name, a version
#: (neither with blanks or control characters).
_REPO_CHART = re.compile(rf"({NAME_PATTERN})/([^/:\x00-\x20\x7f]+)(?::([^/\x00-\x20\x7f]+))?")
#: Every chart reference a door takes, as the spec's ``ChartRef`` states it (a test holds them
#: equal): a repository's chart, or an OCI reference (checked in full by ``Reference.parse``).
CHART_REF_PATTERN = rf"^(?:{reference.PATTERN}|{_REPO_CHART.pattern})$(?!\n)"


_PART = r"(?!\.\.?(?:/|$))[^/\\\x00\n]+"
#: A file's path inside a chart: at most 255 characters, relative, no empty, ``.`` or ``..`` part,
#: no newline, backslash or NUL.
FILE_PATH_PATTERN = rf"^(?=[^\n]{{1,255}}$){_PART}(?:/{_PART})*$(?!\n)"
_FILE_PATH = re.compile(FILE_PATH_PATTERN)

#: The spec's schemas whose pattern is one of the checks above (``load_document``'s ``patterns``):
#: the console's spec, whose chart library uses these checks, states them the same way.
SPEC_PATTERNS = {
    "ChartRef": CHART_REF_PATTERN,
    "RepositoryName": rf"^{NAME_PATTERN}$(?!\n)",
    "RepositoryUrl": URL_PATTERN,
    "ChartFilePath": FILE_PATH_PATTERN,
    # Empty is no version: the latest stable one.
    "VersionConstraint": rf"^(?:{semver.CONSTRAINT})?$(?!\n)",
    "SemanticVersion": rf"^{semver.VERSION}$(?!\n)",
    "OciDestination": rf"^{reference.DESTINATION}$(?!\n)",
    "ReleaseName": RELEASE_NAME_PATTERN,
    "ChartName": CHART_NAME_PATTERN,
    "Namespace": NAMESPACE_PATTERN,
}
_DESTINATION = re.compile(reference.DESTINATION)


@attrs.frozen
class ChartRef:
    repo: str
    chart: str
    version: str | None

    @classmethod
    def parse(cls, ref: str, version: str | None, *, field: str = "chartRef") -> ChartRef:
        found = _REPO_CHART.fullmatch(ref)
        if found is None:
            raise InvalidChartRef(ref, field)
        repo, chart, pinned = found.groups()
        return cls(repo, chart, version or pinned or None)


@attrs.frozen
class RenderRequest:
    release_name: str = DEFAULT_RELEASE_NAME
    namespace: str = DEFAULT_NAMESPACE
    values: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> RenderRequest:
        return cls(
            release_name=body.get("releaseName") or DEFAULT_RELEASE_NAME,
            namespace=body.get("namespace") or DEFAULT_NAMESPACE,
            values=body.get("values") or {},
        )


@attrs.frozen
class LintRequest:
    values: dict[str, Any] = attrs.field(factory=dict)
    strict: bool = False
    namespace: str | None = None
    kube_version: str | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> LintRequest:
        return cls(
            values=body.get("values") or {},
            strict=bool(body.get("strict")),
            namespace=body.get("namespace"),
            kube_version=body.get("kubeVersion"),
        )


@attrs.frozen
class PackageRequest:
    version: str | None = None  # replaces Chart.yaml's version (`helm package --version`)
    app_version: str | None = None  # replaces its appVersion (`--app-version`)

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> PackageRequest:
        return cls(version=body.get("version"), app_version=body.get("appVersion"))


def check_files(files: Mapping[str, str], limits: archives.ArchiveLimits) -> None:
    """400 naming each file path that could leave the chart directory, and unless Chart.yaml is
    there; 413 when the files exceed the archive limits."""
    bad = [path for path in files if not _inside(path)]
    if bad:
        message = "must be a relative path inside the chart"
        raise ValidationFailed(
            [{"in": "body", "field": f"files.{p[:200]}", "message": message} for p in bad]
        )
    if "Chart.yaml" not in files:
        raise ValidationFailed([{"in": "body", "field": "files", "message": "needs Chart.yaml"}])
    size = sum(len(text.encode("utf-8")) for text in files.values())
    if len(files) > limits.max_entries or size > limits.max_decompressed_bytes:
        raise archives.ArchiveTooLarge("the chart's files exceed the archive limits")


def _inside(path: str) -> bool:
    return _FILE_PATH.search(path) is not None


SEVERITIES = {1: "INFO", 2: "WARNING", 3: "ERROR"}


@attrs.frozen
class LintMessage:
    severity: str  # INFO, WARNING, ERROR (UNKNOWN for anything else Helm says)
    path: str
    message: str


@attrs.frozen
class LintReport:
    charts_linted: int
    messages: tuple[LintMessage, ...]
    errors: tuple[str, ...]
    passed: bool

    @classmethod
    def from_helm(cls, report: dict[str, Any], *, strict: bool) -> LintReport:
        messages = tuple(
            LintMessage(
                severity=SEVERITIES.get(m.get("severity", 0), "UNKNOWN"),
                path=str(m.get("path") or ""),
                message=str(m.get("error") or ""),
            )
            for m in report.get("messages") or ()
        )
        failing = {"ERROR", "WARNING"} if strict else {"ERROR"}
        errors = tuple(str(e) for e in report.get("errors") or ())
        passed = not errors and not any(m.severity in failing for m in messages)
        return cls(int(report.get("total_charts_linted") or 0), messages, errors, passed)


@attrs.frozen
class Refreshed:
    """A repository re-indexed: the index download and how many cached charts were evicted."""

    update: UpdateResult
    evicted: int


@attrs.define
class ChartService:
    """Chart operations over repositories, OCI and uploads; one per app."""

    repos: RepoService
    oci: ChartPuller
    checker: archives.ArchiveChecker
    engine: ChartEngine
    shown: WeightedLRU[str, str] = attrs.field(factory=lambda: WeightedLRU(SHOW_MEMORY))
    keyring: Keyring | None = None  # the signers' keys (chartsvc.security.keyring)
    #: Why the configured keyring could not be read (no gpg): verify answers 503 saying so.
    keyring_unavailable: str | None = None

    @property
    def temp_dir(self) -> Path | None:
        return self.engine.temp_dir

    async def archive(self, ref: str, version: str | None, *, field: str = "chartRef") -> bytes:
        return (await self.pull(ref, version, field=field))[0]

    async def pull(
        self, ref: str, version: str | None, *, field: str = "chartRef"
    ) -> tuple[bytes, str]:
        """The archive ``ref`` names and a file name for it (``<chart>-<version>.tgz``)."""
        if ref.startswith("oci://"):
            return await self._oci_named(await self.oci.pull(ref, version=version or None))
        parsed = ChartRef.parse(ref, version, field=field)
        return await self.repos.chart_archive(parsed.repo, parsed.chart, parsed.version)

    async def verified(
        self, ref: str, version: str | None, key_id: str | None, *, field: str = "chartRef"
    ) -> tuple[bytes, str, Provenance]:
        """As :meth:`pull`, once the archive's ``.prov`` checks out (``helm --verify``)."""
        if ref.startswith("oci://"):
            data, prov = await self.oci.pull_signed(ref, version=version or None)
            data, filename = await self._oci_named(data)
        else:
            parsed = ChartRef.parse(ref, version, field=field)
            data, filename = await self.repos.chart_archive(
                parsed.repo, parsed.chart, parsed.version
            )
            prov = await self.repos.chart_provenance(
                parsed.repo, parsed.chart, parsed.version, max_bytes=MAX_PROVENANCE_BYTES
            )
        return data, filename, await self.provenance.verify(data, prov, key_id=key_id)

    async def verify_upload(
        self, upload: bytes, prov: bytes | None, key_id: str | None
    ) -> Provenance:
        return await self.provenance.verify(await self.checked(upload), prov, key_id=key_id)

    @property
    def provenance(self) -> ProvenanceChecker:
        return ProvenanceChecker(self.engine, self.keyring, self.keyring_unavailable)

    async def _oci_named(self, data: bytes) -> tuple[bytes, str]:
        await asyncio.to_thread(self.checker.check, data)
        meta = await self.engine.metadata(data)
        return data, f"{meta.get('name', 'chart')}-{meta.get('version', '0')}.tgz"

    async def template(self, ref: str, version: str | None, request: RenderRequest) -> str:
        return await self.render(await self.archive(ref, version), request)

    async def template_upload(self, archive: bytes, request: RenderRequest) -> str:
        """Render an uploaded archive; the limits are checked in the render's own worker thread."""
        return await self.render(archive, request, check=True)

    async def lint(self, data: bytes, request: LintRequest) -> LintReport:
        """``helm lint`` of an archive already checked (a pulled one) or to check (``checked``)."""
        report = await self.engine.lint(
            data,
            request.values,
            strict=request.strict,
            namespace=request.namespace,
            kube_version=request.kube_version,
        )
        return LintReport.from_helm(report, strict=request.strict)

    async def package_upload(self, upload: bytes, request: PackageRequest) -> tuple[bytes, str]:
        """``helm package`` of an uploaded chart directory archive: the ``.tgz`` and its name."""
        data = await self.checked(upload)
        return await self.engine.package_archive(
            data, version=request.version, app_version=request.app_version
        )

    async def package_files(
        self, files: Mapping[str, str], request: PackageRequest
    ) -> tuple[bytes, str]:
        """``helm package`` of a chart given file by file (``Chart.yaml``, ``templates/...``)."""
        check_files(files, self.checker.limits)
        return await self.engine.package_files(
            files, version=request.version, app_version=request.app_version
        )

    async def checked(self, upload: bytes) -> bytes:
        """``upload`` once it passes the archive limits (in a worker thread: it reads the tar)."""
        await asyncio.to_thread(self.checker.check, upload)
        return upload

    async def render(self, data: bytes, request: RenderRequest, *, check: bool = False) -> str:
        return await self.engine.render(
            data,
            values=request.values,
            release_name=request.release_name,
            namespace=request.namespace,
            before=(lambda: self.checker.check(data)) if check else None,
        )

    async def show(self, ref: str, version: str | None, what: ShowFormat) -> str:
        """``helm show``; its output depends on the archive alone, so it is kept by digest."""
        data = await self.archive(ref, version)
        digest = await asyncio.to_thread(lambda: hashlib.sha256(data).hexdigest())
        key = f"{digest}:{what}"
        text = self.shown.get(key)
        if text is None:
            text = await self.engine.show(data, what)
            self.shown.put(key, text, len(text))
        return text

    async def refresh(self, repo: str) -> Refreshed:
        """Re-index ``repo`` and evict what is cached of its charts: the downloaded archives, their
        ``helm show`` output and the charts Helm loaded from them."""
        result, digests = await self.repos.refresh(repo)
        for digest in digests:
            for what in get_args(ShowFormat):
                self.shown.discard(f"{digest}:{what}")
        await asyncio.to_thread(self.engine.cache.forget, digests)
        return Refreshed(result, len(digests))

    async def create(self, name: str) -> bytes:
        return await self.engine.create(name)

    async def push(self, archive: bytes, remote: str) -> dict[str, Any]:
        """Push an uploaded archive to ``remote`` (``oci://...``) once it passes the limits."""
        if not _DESTINATION.fullmatch(remote):
            message = "must be an oci:// repository without a tag or digest"
            raise ValidationFailed([{"in": "body", "field": "remote", "message": message}])
        await self.checked(archive)
        await self.engine.metadata(archive)  # a chart Helm cannot load is a 400 before any send
        with tempfile.TemporaryDirectory(dir=self.temp_dir, prefix="chartsvc-push-") as work:
            path = Path(work) / "chart.tgz"  # the client names the artifact from Chart.yaml
            await asyncio.to_thread(path.write_bytes, archive)
            return await self.oci.push(path, remote.strip())

    async def resolve_dependencies(self, ref: str, version: str | None) -> str:
        """Chart.lock content for the chart ``ref`` names, each dependency resolved."""
        data = await self.archive(ref, version)
        aliases = {repo.name: repo.url for repo in await self.repos.configured()}
        with tempfile.TemporaryDirectory(dir=self.temp_dir, prefix="chartsvc-deps-") as work:
            path = Path(work) / "chart.tgz"
            await asyncio.to_thread(lambda: path.write_bytes(archives.without_gzip_extra(data)))
            return await deps.resolve_lock(
                path,
                versions_for=self.repos.versions_for,
                oci_tags=self.oci.tags,
                repo_aliases=aliases,
            )
