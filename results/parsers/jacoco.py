"""JaCoCo XML coverage reports into per-file line data.

Structure (``report.dtd``): ``report > (group >)* package > class | sourcefile``; each
``sourcefile`` lists ``line nr mi ci mb cb``, and ``counter`` elements follow the children at
every level, so the report's totals are its last elements. Line data comes from ``sourcefile``
(``ci > 0`` ran; ``mi > 0`` only: did not); the report-level counters are only a cross-check.
A report without counters or lines (``report-aggregate`` of a module with no code) is coverage
unknown, not 0 %. A report with counters but no line data (classes compiled without debug
information) keeps the counter totals and says that it cannot be merged by line.
This module must not trust counters for merging and must not follow the DOCTYPE.
"""

from __future__ import annotations

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport, require_root
from results.parsers.linedata import FileTable, LineData, build_report
from results.parsers.model import CoverageReport

#: Elements that can hold counters; a counter outside all of them belongs to the report.
_COUNTED = frozenset({"group", "package", "class", "method", "sourcefile"})


class JacocoHandler:
    end_tags: frozenset[str] | None = _COUNTED

    def __init__(self, log: DiagnosticLog) -> None:
        self._log = log
        self._files = FileTable()
        self._open_counted = 0
        self._package = ""
        self._source: LineData | None = None
        self._hits: dict[int, bool] | None = None  # the open sourcefile's, for the hot path
        self._branch = LineData().branch
        self._source_name = ""
        self._counters: dict[str, tuple[int, int]] = {}
        self._root_seen = False

    def start(self, tag: str, attrs: dict[str, str]) -> int:
        if tag == "line":
            hits = self._hits
            if hits is None:
                return 0
            # The hot path: one call per source line. ci/mb/cb are "0" on most lines.
            try:
                number = int(attrs["nr"])
                hits[number] = attrs.get("ci", "0") != "0"
                mb = attrs.get("mb", "0")
                cb = attrs.get("cb", "0")
                if mb != "0" or cb != "0":
                    self._branch(number, int(cb), int(cb) + int(mb))
            except (KeyError, ValueError) as exc:
                raise InvalidReport(f"bad JaCoCo <line> {attrs}", reason="bad-value") from exc
        elif tag == "counter":
            if not self._open_counted:
                self._counters[attrs.get("type", "")] = _counter(attrs)
        elif tag in _COUNTED:
            self._open_counted += 1
            if tag == "sourcefile":
                self._source = LineData()
                self._hits = self._source.hits
                self._branch = self._source.branch
                self._source_name = attrs.get("name", "")
            elif tag == "package":
                self._package = attrs.get("name", "")
        elif not self._root_seen:
            require_root(tag, expected="report", report="JaCoCo")
            self._root_seen = True
        return 0

    def end(self, tag: str, text: str | None) -> None:
        self._open_counted -= 1
        if tag == "sourcefile" and self._source is not None:
            name = self._source_name
            path = f"{self._package}/{name}" if self._package else name
            self._files.add(path, self._source)
            self._source = self._hits = None

    def result(self) -> CoverageReport:
        files = self._files.freeze()
        log = self._log
        lines = self._counters.get("LINE")
        branches = self._counters.get("BRANCH", (0, 0))
        lines_valid = sum(f.lines_valid for f in files)
        if lines_valid == 0 and lines is not None and lines[1] > 0:
            return _counters_only(lines, branches, log)
        from_lines = (sum(len(f.covered) for f in files), lines_valid)
        if lines is not None and lines != from_lines:
            log.note(
                "counter-mismatch",
                f"report LINE counter says {lines[0]}/{lines[1]} lines covered, the line data "
                f"{from_lines[0]}/{from_lines[1]}; the line data is used",
            )
        return build_report("jacoco", files, log)


def _counter(attrs: dict[str, str]) -> tuple[int, int]:
    """(covered, covered + missed); the DTD defaults both to 0."""
    try:
        covered = int(attrs.get("covered", "0"))
        missed = int(attrs.get("missed", "0"))
    except ValueError as exc:
        raise InvalidReport(f"bad JaCoCo <counter> {attrs}", reason="bad-value") from exc
    return covered, covered + missed


def _counters_only(
    lines: tuple[int, int], branches: tuple[int, int], log: DiagnosticLog
) -> CoverageReport:
    log.note(
        "no-line-data",
        "the report has counters but no <sourcefile> line data: totals come from the "
        "counters, and this report cannot be merged with others line by line",
    )
    return CoverageReport(
        format="jacoco",
        files=(),
        lines_covered=lines[0],
        lines_valid=lines[1],
        branches_covered=branches[0],
        branches_valid=branches[1],
        diagnostics=log.result(),
    )
