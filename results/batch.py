"""What one ingest request hands the store: the target run and the parsed reports, and the answer.

Ingest builds an ``IngestBatch`` after every report of the request parsed; the store writes it in
one transaction or not at all. This module must not parse, do I/O, or know SQL or HTTP.
"""

from __future__ import annotations

import enum

import attrs

from results.parsers.diff import Diff
from results.parsers.model import CoverageReport, Diagnostic, JUnitReport
from results.runs import RunSummary, Visibility


class ReportKind(enum.Enum):
    JUNIT = "junit"
    COVERAGE = "coverage"


@attrs.frozen
class RunTarget:
    """Which run the reports belong to. Same ``run_key`` in one project → the same run."""

    project: str
    branch: str
    commit: str
    flag: str
    run_key: str | None
    build_url: str | None
    new_project_visibility: Visibility
    base_commit: str | None = None  # the commit the uploaded diff is against


@attrs.frozen
class ParsedReport:
    """One uploaded file after parsing; ``sha256`` is of the bytes as sent (gzip or not)."""

    kind: ReportKind
    part: str
    filename: str | None
    sha256: str
    size: int
    junit: JUnitReport | None = None
    coverage: CoverageReport | None = None

    @property
    def format(self) -> str:
        if self.junit is not None:
            return self.junit.dialect
        return self.coverage.format if self.coverage is not None else "unknown"

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        report = self.junit if self.junit is not None else self.coverage
        return report.diagnostics if report is not None else ()


@attrs.frozen
class IngestBatch:
    target: RunTarget
    reports: tuple[ParsedReport, ...]
    diff: Diff | None = None  # the change the run tests (``git diff base...HEAD``), if sent


@attrs.frozen
class IngestOutcome:
    """The run after the write; ``duplicates`` were already part of it (same sha256): not added."""

    run: RunSummary
    created: bool
    duplicates: tuple[ParsedReport, ...] = ()
