"""Report parsers of the results service: JUnit XML test reports and coverage reports.

Coverage formats, detected by content: JaCoCo XML, Cobertura XML (coverage.py, Java, gcovr,
Coverlet, Istanbul), Clover XML (PHPUnit, Istanbul), LCOV and Go coverprofiles. Every one is
reduced to per-file line data, which ``merge_coverage`` unions across shards.

A pure domain package: input is a path or a binary file (plain or gzip-compressed), output is
immutable value objects. Parsing is synchronous and streaming; the ingest layer runs it in a
worker thread. Bad or hostile input raises ``InvalidReport`` (a ``BadRequest``) or
``ReportTooLarge`` (a ``PayloadTooLarge``); anything the parser could work around is reported
as a ``Diagnostic`` instead. This package must not import HTTP, database or service code.

Diagnostic codes. JUnit: ``dialect``, ``doctype-seen``, ``leading-whitespace``,
``nested-suites-flattened``, ``count-mismatch``, ``duplicate-test``, ``reruns-folded``,
``time-format-fixed``, ``time-unusable``, ``testcase-outside-suite``. Coverage:
``coverage-unknown``, ``counter-mismatch``, ``no-line-data``, ``unknown-record``,
``missing-end-of-record``, ``concatenated-profiles``, ``merged``, ``merge-without-line-data``.
"""

from results.parsers.coverage import merge_coverage, parse_coverage, sniff
from results.parsers.errors import InvalidReport, ReportTooLarge
from results.parsers.junit import parse_junit
from results.parsers.model import (
    BranchLine,
    CoverageReport,
    Diagnostic,
    FileCoverage,
    JUnitReport,
    ParseLimits,
    SuiteReport,
    TestCase,
    TestCounts,
    TestStatus,
    percentage,
)
from results.parsers.source import ReportSource

__all__ = [
    "BranchLine",
    "CoverageReport",
    "Diagnostic",
    "FileCoverage",
    "InvalidReport",
    "JUnitReport",
    "ParseLimits",
    "ReportSource",
    "ReportTooLarge",
    "SuiteReport",
    "TestCase",
    "TestCounts",
    "TestStatus",
    "merge_coverage",
    "parse_coverage",
    "parse_junit",
    "percentage",
    "sniff",
]
