"""Reading a chart archive's declared dependencies the way Helm's loader does.

Only ``Chart.yaml`` and ``requirements.yaml`` at the chart's top level are read, straight from the
gzip'd tar stream, under Helm's own caps (100 MiB expanded, 5 MiB per file) plus an entry cap; entry
paths that escape the chart directory make the archive invalid. This module must not extract files to
disk or fetch anything.
"""

from __future__ import annotations

import gzip
import re
import tarfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any

import attrs
import yaml

from chartsvc.deps.gocompat import sanitize, yaml_scalar_as_string
from chartsvc.deps.model import (
    MAX_ARCHIVE_BYTES,
    MAX_DECOMPRESSED_BYTES,
    MAX_DEPENDENCIES,
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    BadChartArchive,
    ChartArchiveTooLarge,
    Dependency,
    InvalidDependency,
)
from common import yamlio


@attrs.frozen
class ChartFiles:
    metadata: bytes
    requirements: bytes | None
    subcharts: frozenset[str]


def read_chart_files(archive: Path) -> ChartFiles:
    """Chart.yaml (and requirements.yaml) from a .tgz, with Helm's caps; nothing is extracted."""
    if archive.stat().st_size > MAX_ARCHIVE_BYTES:
        raise ChartArchiveTooLarge(f"chart archive is larger than {MAX_ARCHIVE_BYTES} bytes")
    try:
        # Python 3.11's "r|gz" stream reader mis-skips the gzip FEXTRA field that `helm package`
        # writes; GzipFile parses the header correctly and still streams.
        with gzip.GzipFile(archive) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            return _scan(tar)
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError) as exc:
        raise BadChartArchive("not a chart archive (.tgz)") from exc


def _scan(tar: tarfile.TarFile) -> ChartFiles:
    wanted: dict[str, bytes] = {}
    subcharts: set[str] = set()
    total = 0
    for count, member in enumerate(tar, start=1):
        total += max(member.size, 0)
        if count > MAX_ENTRIES or total > MAX_DECOMPRESSED_BYTES:
            raise ChartArchiveTooLarge("chart archive expands past the size or entry limit")
        parts = _member_parts(member.name)
        if len(parts) >= 3 and parts[1] == "charts":
            subcharts.add(parts[2])
        if len(parts) == 2 and parts[1] in ("Chart.yaml", "requirements.yaml") and member.isfile():
            wanted.setdefault(parts[1], _read_member(tar, member))
    if "Chart.yaml" not in wanted:
        raise BadChartArchive("chart archive has no Chart.yaml")
    return ChartFiles(wanted["Chart.yaml"], wanted.get("requirements.yaml"), frozenset(subcharts))


def _member_parts(name: str) -> tuple[str, ...]:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise BadChartArchive(f"chart archive entry {name[:100]!r} escapes the chart directory")
    return tuple(part for part in path.parts if part != ".")


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    if member.size > MAX_FILE_BYTES:
        raise ChartArchiveTooLarge(f"{member.name[:100]} is larger than {MAX_FILE_BYTES} bytes")
    handle = tar.extractfile(member)
    if handle is None:
        raise BadChartArchive(f"cannot read {member.name[:100]}")
    return handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]


def read_chart_metadata(archive: Path) -> dict[str, Any]:
    """Chart.yaml of a .tgz as a mapping (blocking: call it in a thread)."""
    return _load_yaml(read_chart_files(archive).metadata, "Chart.yaml")


def _load_yaml(data: bytes, what: str) -> dict[str, Any]:
    try:
        loaded = yaml.load(data, Loader=_ChartLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise BadChartArchive(f"{what} is not valid YAML") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise BadChartArchive(f"{what} is not a mapping")
    return loaded


_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _ChartLoader(yamlio.SafeLoader):  # type: ignore[valid-type,misc]
    """Safe loading without YAML 1.1 timestamps: Helm's go-yaml keeps ``2024-01-01`` a string
    unless the Go field is a time, and none in a dependency is."""


_ChartLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yamlio.SafeLoader.yaml_implicit_resolvers.items()
}


def requested_dependencies(files: ChartFiles) -> list[Dependency]:
    """Chart.yaml's dependencies as Helm loads them (requirements.yaml for apiVersion v1)."""
    metadata = _load_yaml(files.metadata, "Chart.yaml")
    raw: Any = metadata.get("dependencies")
    if metadata.get("apiVersion") == "v1" and files.requirements is not None:
        raw = _load_yaml(files.requirements, "requirements.yaml").get("dependencies")
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_DEPENDENCIES:
        raise BadChartArchive("Chart.yaml dependencies must be a list (of at most 1000 entries)")
    return [_dependency(entry) for entry in raw]


_ALIAS = re.compile(r"[a-zA-Z0-9-_]+")


def _dependency(entry: Any) -> Dependency:
    if not isinstance(entry, dict):
        raise BadChartArchive(
            "Chart.yaml dependencies must not contain empty or non-mapping entries"
        )
    name = sanitize(_string(entry, "name", "?"))
    dep = Dependency(
        name=name,
        version=sanitize(_string(entry, "version", name)),
        repository=sanitize(_string(entry, "repository", name)),
        condition=sanitize(_string(entry, "condition", name)),
        tags=tuple(sanitize(t) for t in _strings(entry, "tags", name)),
        enabled=_bool(entry, "enabled", name),
        import_values=tuple(_list(entry, "import-values", name)),
        alias=_string(entry, "alias", name),
    )
    if dep.alias and not _ALIAS.fullmatch(dep.alias):
        raise InvalidDependency(name, "has disallowed characters in the alias")
    return dep


def _string(entry: dict[str, Any], key: str, name: str) -> str:
    value = entry.get(key)
    if value is None:
        return ""
    if isinstance(value, list | dict):
        raise InvalidDependency(name, f"has a {key!r} that is not a string")
    return value if isinstance(value, str) else yaml_scalar_as_string(value)


def _strings(entry: dict[str, Any], key: str, name: str) -> list[str]:
    items = _list(entry, key, name)
    if any(isinstance(item, list | dict) for item in items):
        raise InvalidDependency(name, f"has a {key!r} list holding non-strings")
    return [
        "" if i is None else i if isinstance(i, str) else yaml_scalar_as_string(i) for i in items
    ]


def _list(entry: dict[str, Any], key: str, name: str) -> list[Any]:
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidDependency(name, f"has a {key!r} that is not a list")
    return value


def _bool(entry: dict[str, Any], key: str, name: str) -> bool:
    value = entry.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidDependency(name, f"has an {key!r} that is not a boolean")
    return value
