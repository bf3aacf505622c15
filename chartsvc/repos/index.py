"""Turn a raw repository index into the compact prepared form, once, off the event loop.

A 15 MB index takes ~17 s to parse with a general YAML parser and ~0.2 s as JSON, and a parsed index
costs many times its size in memory. So an index is parsed once per download: JSON first; then YAML
in the shape Helm writes it through ``chartsvc.repos.yamlindex``; any other YAML through libyaml
with scalars kept as strings. Each entry is cut down to the fields we serve while parsing, invalid
entries are skipped as Helm skips them, versions are sorted newest first by SemVer, and the result is
kept as a small file next to the raw one (see :class:`PreparedIndex`). Requests only ever read the
prepared form. This module does no I/O but what its callers pass in; it must not be called on the
event loop.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import yaml

from chartsvc import semver
from chartsvc.repos import yamlindex
from common import yamlio
from common.errors import BadGateway

FORMAT = 3

# Position of each field in a prepared entry (a list keeps the prepared file and memory small).
VERSION, APP_VERSION, DESCRIPTION, CREATED, DIGEST, URLS, DEPRECATED, SORT_KEY = range(8)
Entry = list[Any]


class InvalidIndex(BadGateway, code="invalid-index"): ...


@attrs.frozen
class PreparedIndex:
    """One repository's charts: each chart's entries (newest first) kept as encoded JSON.

    Holding a few hundred byte strings instead of tens of thousands of small objects keeps the
    memory near the prepared file's size and lets the parse's garbage go back to the system.
    ``latest`` (the chart listing) is held decoded: one small entry per chart.
    """

    charts: dict[str, bytes]
    latest: dict[str, Entry]
    source: dict[str, Any]
    skipped: int = 0
    versions: int = 0

    @classmethod
    def build(
        cls, charts: dict[str, list[Entry]], *, source: dict[str, Any], skipped: int
    ) -> PreparedIndex:
        return cls(
            charts={name: _dumps(entries) for name, entries in charts.items()},
            latest={name: latest(entries) for name, entries in charts.items()},
            source=source,
            skipped=skipped,
            versions=sum(len(entries) for entries in charts.values()),
        )

    def entries(self, chart: str) -> list[Entry] | None:
        encoded = self.charts.get(chart)
        return json.loads(encoded) if encoded is not None else None

    @property
    def weight(self) -> int:
        return sum(len(encoded) + 200 for encoded in self.charts.values())

    def to_lines(self) -> bytes:
        """The prepared file: a header line, then ``name TAB latest TAB entries`` per chart."""
        header = {"format": FORMAT, "source": self.source, "skipped": self.skipped}
        lines = [_dumps({**header, "versions": self.versions, "charts": len(self.charts)})]
        for name in sorted(self.charts):
            lines.append(b"\t".join((_dumps(name), _dumps(self.latest[name]), self.charts[name])))
        return b"\n".join(lines) + b"\n"

    @classmethod
    def from_lines(cls, data: bytes) -> PreparedIndex | None:
        """The prepared index, or None when the file is damaged or another format (re-prepare)."""
        try:
            head, *rows = data.rstrip(b"\n").split(b"\n")
            header = json.loads(head)
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                return None
            charts: dict[str, bytes] = {}
            newest: dict[str, Entry] = {}
            for row in rows:
                name, top, encoded = row.split(b"\t", 2)
                charts[json.loads(name)] = encoded
                newest[json.loads(name)] = json.loads(top)
        except ValueError:
            return None
        if len(charts) != header.get("charts"):
            return None  # cut short (a crash mid-write): rebuild from the raw index
        return cls(charts, newest, header["source"], header["skipped"], header["versions"])


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


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
    key = sort_key(version) if isinstance(version, str) else None
    if key is None:
        return None
    urls = node.get("urls")
    return [
        version,
        _text(node.get("appVersion")),
        _text(node.get("description")),
        _text(node.get("created")),
        _text(node.get("digest")),
        [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else [],
        node.get("deprecated") in (True, "true"),  # YAML indexes are read as strings
        key,  # dropped again once sorted
    ]


_IDENT = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_LOOSE = re.compile(rf"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-({_IDENT}))?(?:\+({_IDENT}))?")
_MAX_SEGMENT = 2**64 - 1


def sort_key(text: str) -> tuple[Any, ...] | None:
    """``semver.parse_version``'s verdict and precedence as a tuple compared in C, or None.

    An index holds tens of thousands of versions; building a ``semver.Version`` for each and
    sorting with its Python-level comparisons cost more than parsing the JSON. A test keeps the
    two in agreement.
    """
    match = _LOOSE.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, _ = match.groups()
    numbers = (int(major), int(minor or 0), int(patch or 0))
    if max(numbers) > _MAX_SEGMENT:
        return None
    if not pre:
        return (*numbers, 1, ())
    ids = pre.split(".")
    if any(p.isdigit() and len(p) > 1 and p[0] == "0" for p in ids):
        return None
    return (*numbers, 0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in ids))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = True


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic GC off while an index is parsed (process-wide, so counted across threads).

    A parse allocates ~100k containers, so generation counters trip full collections that walk
    every object of the process (all imported libraries included): in the service that made one
    update in three about a third slower. What a parse allocates holds no cycles; reference
    counting frees it either way.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:  # the first of overlapping parses records the state to restore
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def parse(raw: bytes, *, source: dict[str, Any], fast_yaml: bool = True) -> PreparedIndex:
    """Parse ``raw`` (JSON or YAML) into a prepared index; raise InvalidIndex if it is not one.

    ``fast_yaml=False`` skips the Helm-shape reader (tests compare the two paths).
    """
    with _gc_paused():
        return _parse(raw, source=source, fast_yaml=fast_yaml)


def _parse(raw: bytes, *, source: dict[str, Any], fast_yaml: bool) -> PreparedIndex:
    try:
        document = json.loads(raw, object_hook=_trim)
    except ValueError:
        document = _read_yaml(raw) if fast_yaml else _parse_yaml(raw)
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
    return PreparedIndex.build(charts, source={**source, "size": len(raw)}, skipped=skipped)


def _normalise(item: Any) -> Entry | None:
    if isinstance(item, list):
        return item  # already cut down by the JSON hook
    if isinstance(item, dict):
        return _entry(item)
    return None


class _IndexLoader(yamlio.BaseLoader):  # type: ignore[misc,valid-type]
    """YAML for indexes: scalars stay strings (``appVersion: 1.10`` is "1.10", as written) and each
    entry is cut down as soon as it is built, like the JSON hook does, so a large YAML index never
    exists in memory whole. Resolving scalar types was a fifth of the parse time and is not needed.
    """


def _trimmed_mapping(loader: Any, node: yaml.MappingNode) -> Any:
    return _trim(loader.construct_mapping(node, deep=True))


_IndexLoader.add_constructor("tag:yaml.org,2002:map", _trimmed_mapping)


def _read_yaml(raw: bytes) -> Any:
    """Helm-shaped YAML through the fast reader; anything else through the YAML library."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _parse_yaml(raw)
    found = yamlindex.read(text)
    return found if found is not None else _parse_yaml(raw)


def _parse_yaml(raw: bytes) -> Any:
    try:
        return yaml.load(raw, Loader=_IndexLoader)  # noqa: S506 - a base loader builds no objects
    except yaml.YAMLError as exc:
        raise InvalidIndex("the repository index is neither JSON nor YAML") from exc


def chart_names(index: PreparedIndex) -> bytes:
    """Helm's ``<name>-charts.txt``: chart names, one per line."""
    return "".join(f"{name}\n" for name in sorted(index.charts)).encode("utf-8")


def _newest_first(entries: list[Entry]) -> list[Entry]:
    # Only valid versions reach here; equal precedence keeps the index's order (stable sort).
    entries.sort(key=lambda entry: entry[SORT_KEY], reverse=True)
    return [entry[:SORT_KEY] for entry in entries]


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
