"""Cobertura XML coverage reports (coverage.py, Java Cobertura, gcovr, Coverlet, Istanbul).

Shape: ``coverage > packages > package > classes > class(filename) > [methods > method > lines]
lines > line(number, hits, branch, condition-coverage="50% (1/2)")``. Lines are listed twice in
Java reports, under the method and under the class, so only class-level lines count (method lines
are a fallback for a class that lists none). Several classes can share one file (inner classes);
their lines are unioned. The root's ``lines-valid``/``lines-covered`` are only a cross-check, and
coverage.py's ``branch-rate="0"`` with no branches measured means unknown, not 0 %.
This module must not resolve ``filename`` against the ``<source>`` roots or any filesystem.
"""

from __future__ import annotations

import re

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport, require_root
from results.parsers.linedata import FileTable, LineData, build_report
from results.parsers.model import CoverageReport

_CONDITIONS = re.compile(r"\((\d+)\s*/\s*(\d+)\)")


class CoberturaHandler:
    end_tags: frozenset[str] | None = frozenset({"methods", "class"})

    def __init__(self, log: DiagnosticLog) -> None:
        self._log = log
        self._files = FileTable()
        self._root: dict[str, str] | None = None
        self._path = ""
        self._class_lines: LineData | None = None
        self._method_lines = LineData()
        self._in_methods = False

    def start(self, tag: str, attrs: dict[str, str]) -> int:
        if tag == "line":
            target = self._method_lines if self._in_methods else self._class_lines
            if target is not None:
                _line(target, attrs)
        elif tag == "class":
            self._path = attrs.get("filename") or attrs.get("name", "")
            self._class_lines = LineData()
            self._method_lines = LineData()
        elif tag == "methods":
            self._in_methods = True
        elif self._root is None:
            require_root(tag, expected="coverage", report="Cobertura")
            self._root = attrs
        return 0

    def end(self, tag: str, text: str | None) -> None:
        if tag == "methods":
            self._in_methods = False
        elif tag == "class" and self._class_lines is not None:
            lines = self._class_lines if self._class_lines.hits else self._method_lines
            self._files.add(self._path, lines)
            self._class_lines = None

    def result(self) -> CoverageReport:
        files = self._files.freeze()
        root = self._root or {}
        computed = {
            "lines-covered": sum(len(f.covered) for f in files),
            "lines-valid": sum(f.lines_valid for f in files),
            "branches-covered": sum(f.branches_covered for f in files),
            "branches-valid": sum(f.branches_valid for f in files),
        }
        wrong = [
            f"{key}={root[key]} (line data: {value})"
            for key, value in computed.items()
            if key in root and root[key].strip() != str(value)
        ]
        if wrong:
            self._log.note(
                "counter-mismatch",
                f"the report declares {', '.join(wrong)}; the line data is used",
            )
        return build_report("cobertura", files, self._log)


def _line(target: LineData, attrs: dict[str, str]) -> None:
    try:
        number = int(attrs["number"])
        hits = attrs.get("hits", "0")
        ran = (int(hits) if hits.isdigit() else float(hits)) > 0
    except (KeyError, ValueError) as exc:
        raise InvalidReport(f"bad Cobertura <line> {attrs}", reason="bad-value") from exc
    target.line(number, ran)
    if attrs.get("branch", "").lower() == "true":
        match = _CONDITIONS.search(attrs.get("condition-coverage", ""))
        if match:
            target.branch(number, int(match[1]), int(match[2]))
