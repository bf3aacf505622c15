"""A fast reader for index.yaml files in the shape Helm (and chartmuseum) write them.

Most chart repositories serve YAML, and a general YAML parser needs ~1 s per MB (a 15 MB index: over
ten seconds). Helm's writer is regular: block mappings two spaces deep, sequences "indentless" or two
deeper, one key per line, sorted keys. This reader walks the lines, keeps only the fields a prepared
index needs (``chartsvc.repos.index``) and skips every other key's block without looking inside it.
Anything it does not recognise as plain (quoted or folded scalars, block scalars, flow collections)
is handed to the YAML library for that one value; anything outside Helm's shape (tabs, anchors,
comments or document markers between keys, flow-style entries) makes it give up and return None, so
the caller parses the whole file with the YAML library. Scalars stay strings, as with YAML's base
loader. It never returns a partial result.
"""

from __future__ import annotations

import re
from typing import Any

from common import yamlio

WANTED = frozenset(
    {"apiVersion", "name", "version", "appVersion", "description", "created", "digest", "urls"}
    | {"deprecated"}
)
_KEY = re.compile(r"[A-Za-z0-9_.-]+$")
_PLAIN_START = frozenset("&*!|>[]{}%@`#,?:-'\"")
_TAB_INDENT = re.compile(r"^ *\t", re.MULTILINE)


class _Unusual(Exception):
    """The text leaves the shape this reader knows: parse the file as general YAML."""


def read(text: str) -> dict[str, Any] | None:
    """``{"apiVersion", "entries": {chart: [entry fields]}}``, or None when not in Helm's shape."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # YAML reads CRLF as a line break too
    if "\r" in text or _TAB_INDENT.search(text):  # a lone CR is a line break as well: leave it
        return None
    try:
        return _Reader(text.split("\n")).document()
    except _Unusual:
        return None


def _depth(line: str) -> int:
    """Indentation of ``line``; -1 for a blank line (blank lines never end a block)."""
    stripped = line.lstrip(" ")
    return len(line) - len(stripped) if stripped.strip() else -1


def _split_key(text: str) -> tuple[str, str]:
    key, sep, rest = text.partition(":")
    if not sep or not _KEY.match(key) or (rest and not rest.startswith(" ")):
        raise _Unusual
    return key, rest.strip()


def _scalar(rest: str) -> str | None:
    """A one-line scalar read without the YAML library, or None when it needs the library."""
    if not rest:
        return None
    first = rest[0]
    if first == '"' and len(rest) > 1 and rest.endswith('"'):
        inner = rest[1:-1]
        return inner if '"' not in inner and "\\" not in inner else None
    if first == "'" and len(rest) > 1 and rest.endswith("'"):
        inner = rest[1:-1]
        return inner if "'" not in inner else None
    if first in _PLAIN_START or " #" in rest or ": " in rest or rest.endswith(":"):
        return None
    return rest


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.depths = [_depth(line) for line in lines]
        self.i = 0

    def peek(self) -> str | None:
        """The next non-blank line (the cursor moves past blank ones), or None at the end."""
        depths, count = self.depths, len(self.lines)
        while self.i < count and depths[self.i] < 0:
            self.i += 1
        return self.lines[self.i] if self.i < count else None

    def depth(self) -> int:
        return self.depths[self.i]

    def block_end(self, start: int, indent: int, *, sequence_at_indent: bool) -> int:
        """End of the value block of the key on line ``start`` (its lines are deeper, or blank,
        or indentless sequence items at the key's own indent)."""
        lines, depths, count = self.lines, self.depths, len(self.lines)
        end = start + 1
        while end < count:
            depth = depths[end]
            if depth >= 0 and depth <= indent:
                items = (
                    sequence_at_indent and depth == indent and lines[end].startswith("- ", depth)
                )
                if not items:
                    break
            end += 1
        return end

    def document(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if (self.peek() or "").rstrip() == "---":
            self.i += 1
        while (line := self.peek()) is not None:
            if self.depth() != 0 or line.startswith(("#", "---", "...", "- ")):
                raise _Unusual
            key, rest = _split_key(line)
            if key == "entries" and not rest:
                self.i += 1
                found["entries"] = self.entries()
            elif key == "apiVersion":
                end = self.block_end(self.i, 0, sequence_at_indent=not rest)
                found["apiVersion"] = self.value(key, rest, 0, end)
                self.i = end
            else:
                self.i = self.block_end(self.i, 0, sequence_at_indent=True)
        return found

    def entries(self) -> dict[str, list[dict[str, Any]]]:
        charts: dict[str, list[dict[str, Any]]] = {}
        level = self.depth() if self.peek() is not None else 0
        while (line := self.peek()) is not None and self.depth() >= level > 0:
            if self.depth() != level or line.startswith(("- ", "#"), level):
                raise _Unusual
            chart, rest = _split_key(line[level:])
            self.i += 1
            if rest not in ("", "[]"):
                raise _Unusual
            charts[chart] = self.items(level) if not rest else []
        return charts

    def items(self, chart_level: int) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = []
        if self.peek() is None or self.depth() not in (chart_level, chart_level + 2):
            raise _Unusual
        level = self.depth()
        while (line := self.peek()) is not None and self.depth() == level:
            if not line.startswith("- ", level):
                break
            listed.append(self.entry(level))
        return listed

    def entry(self, item_level: int) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        level = item_level + 2
        text = self.lines[self.i][level:]
        while True:
            if text.startswith(("{", "[", "#", "- ", "&", "!")):
                raise _Unusual
            key, rest = _split_key(text)
            end = self.block_end(self.i, level, sequence_at_indent=not rest)
            if key in WANTED:
                fields[key] = self.value(key, rest, level, end)
            self.i = end
            line = self.peek()
            if line is None or self.depth() != level:
                return fields
            text = line[level:]

    def value(self, key: str, rest: str, level: int, end: int) -> Any:
        more = [line for line in self.lines[self.i + 1 : end] if line.strip()]
        if not more and (simple := _scalar(rest)) is not None:
            return simple
        if not rest and more and all(_simple_item(line, level) for line in more):
            return [line.strip()[2:].rstrip() for line in more]
        return self.library_value(key, level, end)

    def library_value(self, key: str, level: int, end: int) -> Any:
        head = self.lines[self.i]
        first = head[:level].replace("-", " ") + head[level:]  # an entry's "- " opens its first key
        snippet = "\n".join(line[level:] for line in [first, *self.lines[self.i + 1 : end]])
        try:
            parsed = yamlio.load_strings(snippet)
        except yamlio.YAMLError as exc:
            raise _Unusual from exc
        if not isinstance(parsed, dict) or key not in parsed:
            raise _Unusual
        return parsed[key]


def _simple_item(line: str, level: int) -> bool:
    depth = _depth(line)
    body = line[depth:]
    return (
        depth in (level, level + 2)
        and body.startswith("- ")
        and _scalar(body[2:].strip()) == body[2:].strip()
    )
