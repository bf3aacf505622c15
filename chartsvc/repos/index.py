"""Turn a raw repository index into the compact prepared form, once, off the event loop.

A 15 MB index takes ~17 s to parse as YAML and ~0.2 s as JSON, and a parsed index costs many times its
size in memory. So an index is parsed once per download (JSON first, YAML with the C loader only when
JSON fails), each entry is cut down to the fields we serve while parsing, invalid entries are skipped as
Helm skips them, versions are sorted newest first by SemVer, and the result is kept as a small JSON file
next to the raw one. Requests only ever read the prepared form. This module does no I/O but what its
callers pass in; it must not be called on the event loop.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs
import yaml

from chartsvc import semver
from common.errors import BadGateway

FORMAT = 1
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Position of each field in a prepared entry (a list keeps the prepared file and memory small).
VERSION, APP_VERSION, DESCRIPTION, CREATED, DIGEST, URLS, DEPRECATED = range(7)
Entry = list[Any]


class InvalidIndex(BadGateway):
    default_code = "invalid-index"


@attrs.frozen
class PreparedIndex:
    """One repository's charts, each with its entries newest first."""

    charts: dict[str, list[Entry]]
    source: dict[str, Any]
    skipped: int = 0

    @property
    def version_count(self) -> int:
        return sum(len(entries) for entries in self.charts.values())

    def to_json(self) -> bytes:
        document = {
            "format": FORMAT,
            "source": self.source,
            "skipped": self.skipped,
            "charts": self.charts,
        }
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> PreparedIndex | None:
        """The prepared index, or None when the file is from another format (re-prepare then)."""
        try:
            document = json.loads(data)
        except ValueError:
            return None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            return None
        return cls(
            charts=document["charts"], source=document["source"], skipped=document["skipped"]
        )


def _trim(node: dict[str, Any]) -> Any:
    # Called by the JSON parser for every object, innermost first: an index entry is cut down as
    # soon as it is built, so the full entry (maintainers, annotations, ...) never piles up.
    if "version" in node and ("urls" in node or "digest" in node or "apiVersion" in node):
        return _entry(node)
    return node


def _entry(node: dict[str, Any]) -> Entry | None:
    name = node.get("name")
    version = node.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool):
        version = str(version)
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        return None
    if not isinstance(version, str) or semver.parse_version(version) is None:
        return None
    urls = node.get("urls")
    return [
        version,
        _text(node.get("appVersion")),
        _text(node.get("description")),
        _text(node.get("created")),
        _text(node.get("digest")),
        [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else [],
        bool(node.get("deprecated", False)),
    ]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def parse(raw: bytes, *, source: dict[str, Any]) -> PreparedIndex:
    """Parse ``raw`` (JSON or YAML) into a prepared index; raise InvalidIndex if it is not one."""
    try:
        document = json.loads(raw, object_hook=_trim)
    except ValueError:
        document = _parse_yaml(raw)
    if not isinstance(document, dict) or not document.get("apiVersion"):
        raise InvalidIndex("the repository index has no apiVersion: not a chart repository index")
    entries = document.get("entries") or {}
    if not isinstance(entries, dict):
        raise InvalidIndex("the repository index's entries are not a mapping")
    charts: dict[str, list[Entry]] = {}
    skipped = 0
    for chart, listed in entries.items():
        good = [e for e in map(_normalise, listed if isinstance(listed, list) else []) if e]
        skipped += (len(listed) if isinstance(listed, list) else 1) - len(good)
        if good:
            charts[str(chart)] = _newest_first(good)
    full_source = {**source, "sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    return PreparedIndex(charts=charts, source=full_source, skipped=skipped)


def _normalise(item: Any) -> Entry | None:
    if isinstance(item, list):
        return item  # already cut down by the JSON hook
    if isinstance(item, dict):
        return _entry(item)
    return None


def _parse_yaml(raw: bytes) -> Any:
    try:
        return yaml.load(raw, Loader=_LOADER)  # noqa: S506 - CSafeLoader is safe
    except yaml.YAMLError as exc:
        raise InvalidIndex("the repository index is neither JSON nor YAML") from exc


def chart_names(index: PreparedIndex) -> bytes:
    """Helm's ``<name>-charts.txt``: chart names, one per line."""
    return "".join(f"{name}\n" for name in sorted(index.charts)).encode("utf-8")


def _newest_first(entries: list[Entry]) -> list[Entry]:
    # Only valid versions reach here; equal precedence keeps the index's order (stable sort).
    keyed = [(semver.parse_version(e[VERSION]), e) for e in entries]
    keyed.sort(key=lambda pair: pair[0], reverse=True)  # type: ignore[arg-type, return-value]
    return [entry for _, entry in keyed]


def latest(entries: list[Entry]) -> Entry:
    """Newest stable entry (what Helm picks without a version); the newest at all otherwise."""
    for entry in entries:
        parsed = semver.parse_version(entry[VERSION])
        if parsed is not None and not parsed.is_prerelease:
            return entry
    return entries[0]


def find(entries: list[Entry], version: str | None) -> Entry | None:
    """The entry for ``version``: exact first, else the newest matching it as a constraint (as
    Helm reads ``--version``); the latest when no version is given."""
    if not version:
        return latest(entries)
    exact = semver.parse_version(version)
    for entry in entries:
        if entry[VERSION] == version or (exact and semver.parse_version(entry[VERSION]) == exact):
            return entry
    constraint = semver.Constraint.parse(version)
    return next((e for e in entries if constraint.matches(e[VERSION])), None)
