"""Value objects produced by the report parsers, and the limits that bound a parse.

The store, the ingest endpoint and the gate consume these objects; they are the only thing the
parsers hand out. Everything here is immutable (``attrs.frozen``, or a named tuple) and
picklable, and carries no behaviour beyond small derived values: this module must not parse, do
I/O or know about HTTP.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import attrs


class TestStatus(enum.StrEnum):
    """Outcome of one test case; equal to its plain string (``TestStatus.FLAKY == "flaky"``)."""

    __test__ = False  # not a pytest test class

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    FLAKY = "flaky"  # failed at least once, then passed on a retry


@attrs.frozen
class Diagnostic:
    """Something the parser noticed and worked around; ``count`` folds repeats of one code."""

    code: str
    message: str
    count: int = 1


@attrs.frozen
class ParseLimits:
    """Caps that keep a hostile or accidental upload from exhausting memory or time.

    ``max_bytes`` bounds the bytes read after gzip decompression, so it is also the gzip-bomb
    guard. Text caps are in characters; longer texts are cut and say so at their end.
    """

    max_bytes: int = 256 * 1024 * 1024
    max_depth: int = 128
    max_elements: int = 20_000_000
    max_token_bytes: int = 16 * 1024 * 1024  # one start tag, comment or declaration
    max_line_chars: int = 64 * 1024  # one line of a text format (LCOV, Go coverprofile)
    message_chars: int = 4 * 1024
    trace_chars: int = 64 * 1024
    output_chars: int = 64 * 1024  # system-out / system-err, per test case or per suite
    chunk_bytes: int = 256 * 1024


class TestCase(NamedTuple):
    """One ``<testcase>``. ``occurrence`` numbers repeats of one (suite, classname, name).

    A named tuple rather than a frozen attrs class like its neighbours: a report makes one per
    test case, and a frozen attrs ``__init__`` (one ``object.__setattr__`` per field) cost 20 ms of
    a 20,000-case ingest. It is as immutable; copy it with ``_replace``.
    """

    suite: str
    classname: str
    name: str
    status: TestStatus
    duration_s: float | None = None
    message: str | None = None
    failure_type: str | None = None
    trace: str | None = None
    reruns: int = 0  # extra attempts recorded: rerunFailure/rerunError or flakyFailure/flakyError
    occurrence: int = 1
    system_out: str | None = None
    system_err: str | None = None

    @property
    def key(self) -> str:
        """Identity across runs: classname (the suite when it is empty), name, ``#n`` on repeats."""
        first, name = self.classname or self.suite, self.name
        base = f"{first} {name}" if first and name else first or name
        return base if self.occurrence == 1 else f"{base} #{self.occurrence}".lstrip()

    @property
    def is_failing(self) -> bool:
        return self.status in (TestStatus.FAILED, TestStatus.ERROR)


# Not a pytest test class; a NamedTuple body cannot hold the marker.
TestCase.__test__ = False  # type: ignore[attr-defined]


@attrs.frozen
class TestCounts:
    """Totals computed from the test cases themselves, never from the producer's attributes.

    ``passed`` counts every test whose last attempt passed, the flaky ones included: a test that
    failed and then passed on a rerun passed (and is flaky too), it never counts as not passed.
    """

    __test__ = False

    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    flaky: int = 0

    @classmethod
    def of(cls, cases: tuple[TestCase, ...] | list[TestCase]) -> TestCounts:
        tally = dict.fromkeys(TestStatus, 0)
        for case in cases:
            tally[case.status] += 1
        return cls(
            tests=len(cases),
            passed=tally[TestStatus.PASSED] + tally[TestStatus.FLAKY],
            failed=tally[TestStatus.FAILED],
            errors=tally[TestStatus.ERROR],
            skipped=tally[TestStatus.SKIPPED],
            flaky=tally[TestStatus.FLAKY],
        )


@attrs.frozen
class SuiteReport:
    """A ``<testsuite>`` that holds test cases (or nothing at all); wrappers are flattened away."""

    name: str
    counts: TestCounts
    duration_s: float | None = None
    parents: tuple[str, ...] = ()  # names of the enclosing suites that were flattened
    system_out: str | None = None
    system_err: str | None = None


@attrs.frozen
class JUnitReport:
    cases: tuple[TestCase, ...]
    suites: tuple[SuiteReport, ...]
    counts: TestCounts
    dialect: str
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def duration_s(self) -> float:
        return sum(case.duration_s or 0.0 for case in self.cases)


class BranchLine(NamedTuple):
    """Branch outcomes on one source line: ``covered`` of ``total`` branches were taken."""

    line: int
    covered: int
    total: int

    @property
    def missed(self) -> int:
        return self.total - self.covered


@attrs.frozen
class FileCoverage:
    """Line data for one source file: the unit that shard merging unions.

    ``covered`` and ``uncovered`` are disjoint sets of line numbers; a line in neither is not
    executable code. ``branches`` is sorted by line.
    """

    path: str
    covered: frozenset[int]
    uncovered: frozenset[int]
    branches: tuple[BranchLine, ...] = ()

    @property
    def lines_valid(self) -> int:
        return len(self.covered) + len(self.uncovered)

    @property
    def branches_covered(self) -> int:
        return sum(b.covered for b in self.branches)

    @property
    def branches_valid(self) -> int:
        return sum(b.total for b in self.branches)


@attrs.frozen
class CoverageReport:
    """Coverage of one upload (or of a merge of several). Percentages are None when unknown.

    Unknown means the report measured nothing of that kind (an empty JaCoCo report, coverage.py
    without branch measurement): it is not 0 %.
    """

    format: str
    files: tuple[FileCoverage, ...]
    lines_covered: int
    lines_valid: int
    branches_covered: int
    branches_valid: int
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def line_pct(self) -> float | None:
        return percentage(self.lines_covered, self.lines_valid)

    @property
    def branch_pct(self) -> float | None:
        return percentage(self.branches_covered, self.branches_valid)


def percentage(covered: int, valid: int) -> float | None:
    """``covered / valid`` in percent, or None when there was nothing to measure."""
    if valid <= 0:
        return None
    return 100.0 * covered / valid
