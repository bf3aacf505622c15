"""Locking each dependency to the newest version its constraint allows, and writing Chart.lock.

This module must not fetch anything itself: the caller's callbacks list versions (through the
address guard) so this stays a domain module without HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import attrs

from chartsvc.deps.chart import read_chart_files, requested_dependencies
from chartsvc.deps.gocompat import hash_req
from chartsvc.deps.model import (
    Dependency,
    InvalidDependency,
    LocalDependencyRefused,
    NoMatchingVersion,
    OciTags,
    UnknownRepositoryAlias,
    VersionsFor,
)
from chartsvc.semver import Constraint, InvalidConstraint, parse_version, sort_newest_first
from common import yamlio


async def resolve_lock(
    chart_archive: Path,
    *,
    versions_for: VersionsFor,
    oci_tags: OciTags | None = None,
    repo_aliases: Mapping[str, str] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> str:
    """Chart.lock YAML for the chart in ``chart_archive``, its digest exactly Helm's.

    ``versions_for(repo_url, chart)`` lists a chart's versions in an HTTP(S) repository;
    ``oci_tags("oci://host/path/chart")`` lists an OCI repository's tags; ``repo_aliases`` maps the
    names used as ``@name`` / ``alias:name`` to repository URLs.
    """
    files = await asyncio.to_thread(read_chart_files, chart_archive)
    requested = [_with_alias_resolved(d, repo_aliases or {}) for d in requested_dependencies(files)]
    resolver = _Resolver(versions_for, oci_tags, files.subcharts)
    locked = await resolver.lock_all(requested)
    return render_lock(locked, hash_req(requested, locked), now())


def _with_alias_resolved(dep: Dependency, aliases: Mapping[str, str]) -> Dependency:
    for prefix in ("@", "alias:"):
        if dep.repository.startswith(prefix):
            alias = dep.repository.removeprefix(prefix)
            if alias not in aliases:
                raise UnknownRepositoryAlias(dep.name, dep.repository)
            return attrs.evolve(dep, repository=aliases[alias])
    return dep


@attrs.frozen
class _Resolver:
    versions_for: VersionsFor
    oci_tags: OciTags | None
    subcharts: frozenset[str]

    async def lock_all(self, requested: list[Dependency]) -> list[Dependency]:
        constraints = [_constraint(d) for d in requested]  # Helm refuses bad ones before any fetch
        locked: list[Dependency] = []
        missing: list[tuple[str, str]] = []
        for dep, constraint in zip(requested, constraints, strict=True):
            version = await self._lock_version(dep, constraint)
            if version is None:
                missing.append((dep.name, dep.version))
            locked.append(
                Dependency(name=dep.name, version=version or "", repository=dep.repository)
            )
        if missing:
            raise NoMatchingVersion(missing)
        return locked

    async def _lock_version(self, dep: Dependency, constraint: Constraint) -> str | None:
        repository = dep.repository
        if not repository:
            if dep.name not in self.subcharts:
                raise InvalidDependency(dep.name, "has no repository and no charts/ directory")
            return dep.version  # a vendored subchart keeps its constraint, as Helm writes it
        if repository.startswith("file://"):
            raise LocalDependencyRefused(
                dep.name, "uses a file:// repository; the server has no local chart directories"
            )
        if repository.startswith("oci://"):
            return await self._oci_version(dep, constraint)
        if not repository.startswith(("http://", "https://")):
            raise InvalidDependency(dep.name, f"has an unsupported repository {repository[:200]!r}")
        versions = await self.versions_for(repository, dep.name)
        return _first_match(sort_newest_first(versions), constraint)

    async def _oci_version(self, dep: Dependency, constraint: Constraint) -> str | None:
        if parse_version(dep.version) is not None:
            return dep.version  # Helm uses an exact OCI version as written, without listing tags
        if self.oci_tags is None:
            raise InvalidDependency(dep.name, "is in an OCI registry, which is not supported here")
        tags = await self.oci_tags(f"{dep.repository.rstrip('/')}/{dep.name}")
        # Helm turns "+" into "_" in tags and keeps only strict SemVer ones.
        versions = [t.replace("_", "+") for t in tags]
        strict = [t for t in versions if parse_version(t, strict=True) is not None]
        return _first_match(sort_newest_first(strict), constraint)


def _constraint(dep: Dependency) -> Constraint:
    try:
        return Constraint.parse(dep.version)
    except InvalidConstraint as exc:
        reason = f"has an invalid version/constraint format: {dep.version[:100]!r}"
        raise InvalidDependency(dep.name, reason) from exc


def _first_match(newest_first: list[str], constraint: Constraint) -> str | None:
    for text in newest_first:
        version = parse_version(text)
        if version is not None and constraint.matches(version):
            return text
    return None


def render_lock(locked: list[Dependency], digest: str, generated: datetime) -> str:
    """Chart.lock as Helm writes it (sigs.k8s.io/yaml: keys sorted, ``generated`` RFC 3339)."""
    lines = ["dependencies:"] if locked else ["dependencies: []"]
    for dep in locked:
        lines.append(f"- name: {_yaml_scalar(dep.name)}")
        lines.append(f"  repository: {_yaml_scalar(dep.repository)}")
        if dep.version:
            lines.append(f"  version: {_yaml_scalar(dep.version)}")
    lines.append(f"digest: {digest}")
    lines.append(f"generated: {json.dumps(rfc3339(generated))}")
    return "\n".join(lines) + "\n"


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+~-]*")


def _yaml_scalar(text: str) -> str:
    """Plain when YAML reads it back as the same string, else double-quoted (JSON is YAML)."""
    if _PLAIN.fullmatch(text) and yamlio.load(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def rfc3339(moment: datetime) -> str:
    """Go's RFC3339Nano: fractional seconds without trailing zeros, ``Z`` for UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    offset = moment.utcoffset()
    if not offset:
        return text + "Z"
    return text + moment.strftime("%z")[:3] + ":" + moment.strftime("%z")[3:]
