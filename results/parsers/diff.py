"""Reads a unified diff (as ``git diff`` writes it) into the lines each file gained.

Patch coverage needs only the new side: for every file the change leaves behind, the line
numbers it added or modified (a modified line is a removed line and an added one). Renames, copies,
mode changes, deleted files and binary files add no line and are read past; ``\\r\\n`` line ends
and ``\\ No newline at end of file`` markers are accepted. Anything else that does not fit the
format (a hunk header that is not one, a hunk shorter or longer than it says, a hunk outside any
file) is refused naming the line. One pass over the lines, no regular expression per line.
This module must not know coverage, HTTP or the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import attrs

from results.parsers.errors import InvalidReport
from results.parsers.linedata import normalise_path
from results.parsers.model import ParseLimits
from results.parsers.source import ReportSource, open_report

DEV_NULL = "/dev/null"
#: What a line inside a hunk starts with; outside one (after a file's header) it is one too many.
_HUNK_KINDS = (b" ", b"+", b"-")


@attrs.frozen
class FileChange:
    """A file of the new tree and the line numbers the change added to it (1-based)."""

    path: str
    added: frozenset[int]


@attrs.frozen
class Diff:
    files: tuple[FileChange, ...]

    @property
    def added_lines(self) -> int:
        return sum(len(f.added) for f in self.files)


def parse_diff(source: ReportSource, *, limits: ParseLimits | None = None) -> Diff:
    """The files with added lines, in the diff's order (a file named twice is merged)."""
    limits = limits or ParseLimits()
    with open_report(source, limits) as stream:
        return _Reader().read(_lines(stream))


def _lines(stream: object) -> Iterator[bytes]:
    for raw in stream:  # type: ignore[attr-defined]
        line: bytes = raw
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        yield line


class _Reader:
    def __init__(self) -> None:
        self.added: dict[str, set[int]] = {}
        self.path: str | None = None  # the new-side path of the file being read
        self.in_file = False
        self.number = 0

    def read(self, lines: Iterator[bytes]) -> Diff:
        for line in lines:
            self.number += 1  # a hunk counts the lines it reads itself
            if line.startswith(b"@@"):
                self._hunk(line, lines)
            elif line.startswith(b"diff --git "):
                self.in_file, self.path = True, _git_new_path(line[11:])
            elif line.startswith(b"+++ "):
                self.in_file, self.path = True, _header_path(line[4:])
            elif line.startswith(b"--- "):
                self.in_file = True
            elif line.startswith((b"rename to ", b"copy to ")):
                self.path = _unquote(line.split(b" to ", 1)[1])
            elif line[:1] in _HUNK_KINDS and self.in_file:
                self._refuse("the hunk holds more lines than its header says")
        files = (FileChange(path, frozenset(lines)) for path, lines in self.added.items())
        return Diff(tuple(f for f in files if f.added))

    def _hunk(self, header: bytes, lines: Iterator[bytes]) -> None:
        if not self.in_file:
            self._refuse("a hunk outside any file (no diff --git or +++ line before it)")
        old, new, start = self._ranges(header)
        target = self.added.setdefault(self.path, set()) if self.path is not None else set()
        at = start
        while old > 0 or new > 0:
            line = next(lines, None)
            if line is None:
                self.number += 1
                self._refuse(f"the hunk ends early: {old} old and {new} new lines missing")
            self.number += 1
            kind = line[:1]
            if kind == b"+":
                target.add(at)
                at, new = at + 1, new - 1
            elif kind == b"-":
                old -= 1
            elif kind in (b" ", b""):  # some tools strip the space of an empty context line
                at, old, new = at + 1, old - 1, new - 1
            elif kind != b"\\":  # "\ No newline at end of file"
                self._refuse("a line inside a hunk that starts with neither ' ', '+' nor '-'")
            if old < 0 or new < 0:
                self._refuse("the hunk holds more lines than its header says")

    def _ranges(self, header: bytes) -> tuple[int, int, int]:
        """(old count, new count, new start) of ``@@ -a,b +c,d @@``."""
        parts = header.split(b" ", 3)
        if len(parts) < 4 or parts[3][:2] != b"@@" or parts[1][:1] != b"-" or parts[2][:1] != b"+":
            self._refuse("not a hunk header (@@ -a,b +c,d @@)")
        try:
            _, old = _range(parts[1][1:])
            start, new = _range(parts[2][1:])
        except ValueError:
            self._refuse("not a hunk header (@@ -a,b +c,d @@)")
        return old, new, start

    def _refuse(self, why: str) -> NoReturn:
        raise InvalidReport(f"line {self.number}: {why}", reason="malformed-diff", line=self.number)


def _range(text: bytes) -> tuple[int, int]:
    start, _, count = text.partition(b",")
    first, length = int(start), int(count) if count else 1
    if first < 0 or length < 0:
        raise ValueError(text)
    return first, length


def _git_new_path(rest: bytes) -> str | None:
    """The ``b/`` path of ``diff --git a/x b/y``; None when spaces make it ambiguous (the
    ``+++`` or ``rename to`` line that follows names it then)."""
    if rest.startswith(b'"'):
        _, _, after = rest[1:].partition(b'" ')
        return _strip_prefix(_unquote(after)) if after else None
    half = (len(rest) - 1) // 2
    old, new = rest[:half], rest[half + 1 :]
    if rest[half : half + 1] == b" " and old[2:] == new[2:]:
        return _strip_prefix(_unquote(new))
    return None


def _header_path(rest: bytes) -> str | None:
    path = _unquote(rest.split(b"\t", 1)[0])  # a tab separates a timestamp (diff -u)
    return None if path == DEV_NULL else _strip_prefix(path)


def _strip_prefix(path: str) -> str:
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return normalise_path(path)


def _unquote(raw: bytes) -> str:
    """git quotes a path with unusual bytes C-style: ``"b/caf\\303\\251.py"``."""
    raw = raw.strip()
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return raw.decode("utf-8", "replace")
    text = raw[1:-1].decode("ascii", "backslashreplace")
    return (
        text.encode("latin-1", "backslashreplace")
        .decode("unicode_escape")
        .encode("latin-1", "replace")
        .decode("utf-8", "replace")
    )
