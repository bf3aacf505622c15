"""Per-file line data while a coverage report streams, and the step that freezes it.

Every coverage format reduces to the same thing: for each file, which lines are executable, which
of them ran, and how many branches on a line were taken. Keeping that (not a format's counters)
is what lets shards be merged by line union. Repeats of one file inside a report (Cobertura
inner classes, LCOV per-test records, overlapping Go blocks) are unioned here too.
This module must not parse any format.
"""

from __future__ import annotations

from collections.abc import Iterable

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.model import BranchLine, CoverageReport, FileCoverage


class LineData:
    """One file: ``hits`` maps line → ran (bool); ``branches`` maps line → (covered, total)."""

    __slots__ = ("branches", "hits")

    def __init__(self) -> None:
        self.hits: dict[int, bool] = {}
        self.branches: dict[int, tuple[int, int]] = {}

    def line(self, number: int, ran: bool) -> None:
        if ran or number not in self.hits:
            self.hits[number] = ran

    def branch(self, number: int, covered: int, total: int) -> None:
        old = self.branches.get(number)
        if old is not None:
            covered, total = max(covered, old[0]), max(total, old[1])
        self.branches[number] = (min(covered, total), total)

    def absorb(self, other: LineData) -> None:
        if not self.hits and not self.branches:
            self.hits, self.branches = other.hits, other.branches
            return
        for number, ran in other.hits.items():
            self.line(number, ran)
        for number, (covered, total) in other.branches.items():
            self.branch(number, covered, total)

    def freeze(self, path: str) -> FileCoverage:
        hits = self.hits
        return FileCoverage(
            path=path,
            covered=frozenset(number for number, ran in hits.items() if ran),
            uncovered=frozenset(number for number, ran in hits.items() if not ran),
            branches=tuple(
                BranchLine(number, covered, total)
                for number, (covered, total) in sorted(self.branches.items())
                if total > 0
            ),
        )


class FileTable:
    """Line data by normalised path, in first-seen order."""

    def __init__(self) -> None:
        self._files: dict[str, LineData] = {}

    def get(self, path: str) -> LineData:
        key = normalise_path(path)
        data = self._files.get(key)
        if data is None:
            data = self._files[key] = LineData()
        return data

    def add(self, path: str, data: LineData) -> None:
        self.get(path).absorb(data)

    def freeze(self) -> tuple[FileCoverage, ...]:
        return tuple(data.freeze(path) for path, data in self._files.items())


def normalise_path(path: str) -> str:
    """Forward slashes, no leading ``./``; never resolved against any filesystem."""
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def build_report(fmt: str, files: Iterable[FileCoverage], log: DiagnosticLog) -> CoverageReport:
    """Totals come from the line data, so they always agree with what a merge would compute."""
    files = tuple(files)
    lines_valid = sum(f.lines_valid for f in files)
    if lines_valid == 0:
        log.note(
            "coverage-unknown",
            "the report holds no executable lines: line coverage is unknown, not 0 %",
        )
    return CoverageReport(
        format=fmt,
        files=files,
        lines_covered=sum(len(f.covered) for f in files),
        lines_valid=lines_valid,
        branches_covered=sum(f.branches_covered for f in files),
        branches_valid=sum(f.branches_valid for f in files),
        diagnostics=log.result(),
    )
