"""Conversions between parsed reports / value objects and database rows, for the run tables.

Row building for a 20,000-case report is real work, so it happens in worker threads or lazily,
where ``copy_rows`` consumes the rows off the event loop.
This module must not execute SQL.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from common.db import Row
from results.parsers.model import JUnitReport, TestStatus, percentage
from results.runs import Project, RunStatus, RunSummary, Visibility

RUN_COLUMNS = """
    r.id, r.project_id, p.name AS project, p.visibility, r.branch, r.commit_sha, r.flag,
    r.run_key, r.build_url, r.status, r.tests, r.passed, r.failures, r.errors, r.skipped,
    r.flaky, r.duration_ms, r.lines_covered, r.lines_valid, r.branches_covered,
    r.branches_valid, r.uploads, r.created_at, p.created_at AS project_created_at,
    r.patch_lines_valid, r.patch_lines_covered, r.base_commit
"""
RUN_FROM = "runs r JOIN projects p ON p.id = r.project_id"
SELECT_RUN = f"SELECT {RUN_COLUMNS} FROM {RUN_FROM}"  # noqa: S608 - constants only


def summary_from_row(row: Row) -> RunSummary:
    return RunSummary(
        run_id=row["id"],
        project_id=row["project_id"],
        project=row["project"],
        visibility=Visibility(row["visibility"]),
        branch=row["branch"],
        commit=row["commit_sha"],
        flag=row["flag"],
        run_key=row["run_key"],
        build_url=row["build_url"],
        status=RunStatus(row["status"]),
        tests=row["tests"],
        passed=row["passed"],
        failures=row["failures"],
        errors=row["errors"],
        skipped=row["skipped"],
        flaky=row["flaky"],
        duration_ms=row["duration_ms"],
        line_coverage_pct=percentage(row["lines_covered"], row["lines_valid"]),
        branch_coverage_pct=percentage(row["branches_covered"], row["branches_valid"]),
        uploads=row["uploads"],
        created_at=row["created_at"],
        patch_lines_valid=row["patch_lines_valid"],
        patch_lines_covered=row["patch_lines_covered"] or 0,
        base_commit=row["base_commit"],
    )


def project_from_row(row: Row, *, of_run: bool = False) -> Project:
    """A ``projects`` row; ``of_run``: the project of a row selected with ``RUN_COLUMNS``."""
    return Project(
        id=row["project_id" if of_run else "id"],
        name=row["project" if of_run else "name"],
        visibility=Visibility(row["visibility"]),
        created_at=row["project_created_at" if of_run else "created_at"],
    )


def suite_rows(run_id: int, upload_id: int, junit: JUnitReport) -> Iterator[tuple[Any, ...]]:
    """Lazily, so ``copy_rows`` builds the rows off the event loop."""
    for suite in junit.suites:
        yield (
            run_id,
            upload_id,
            suite.name,
            " > ".join(suite.parents),
            suite.counts.tests,
            suite.counts.passed,
            suite.counts.failed,
            suite.counts.errors,
            suite.counts.skipped,
            suite.counts.flaky,
            _ms(suite.duration_s),
            suite.system_out,
            suite.system_err,
        )


def upload_counts(junit: JUnitReport | None) -> tuple[int, int, int, int, int, int]:
    """(tests, passed, failures, errors, skipped, flaky) of an upload: a run's totals are these
    summed over its uploads, with the durations ``case_rows`` sums."""
    if junit is None:
        return (0, 0, 0, 0, 0, 0)
    c = junit.counts
    return (c.tests, c.passed, c.failed, c.errors, c.skipped, c.flaky)


@attrs.frozen
class CaseRows:
    """An upload's test cases as rows, split by the statement that inserts them."""

    passed: list[tuple[Any, ...]]  # PASSED_CASE_COLUMNS of plain passes, most of any report
    others: list[tuple[Any, ...]]  # CASE_COLUMNS of every other case, in report order
    duration_ms: int  # the sum of the rows' durations


@attrs.frozen
class CaseKeys:
    """The keys of an upload's cases, their catalog ids where known (``None`` where not), and
    the positions of the unknown ones."""

    keys: list[str]
    ids: list[int | None]
    missing: list[int]


def case_keys(junit: JUnitReport, known: Mapping[str, int]) -> CaseKeys:
    """Every case's key looked up in the project's catalog; 20,000 take 6 ms, so off the loop."""
    keys = [case.key for case in junit.cases]
    get = known.get
    ids = [get(key) for key in keys]
    return CaseKeys(keys, ids, [i for i, found in enumerate(ids) if found is None])


def case_rows(run_id: int, upload_id: int, junit: JUnitReport, test_ids: list[int]) -> CaseRows:
    """One pass over a report's cases; 20,000 of them take 11-15 ms, so call it off the loop.

    A plain pass (passed, nothing else to say: no message, output or reruns) becomes a row of
    the four columns that are not at their defaults.
    """
    passed: list[tuple[Any, ...]] = []
    others: list[tuple[Any, ...]] = []
    total_ms = 0
    for case, test_id in zip(junit.cases, test_ids, strict=True):
        _, _, _, status, seconds, message, kind, trace, reruns, _, out, err = case
        ms = _ms(seconds)
        if ms is not None:
            total_ms += ms
        if (
            status is TestStatus.PASSED
            and not reruns
            and message is None
            and kind is None
            and trace is None
            and out is None
            and err is None
        ):
            passed.append((run_id, upload_id, test_id, _PASSED, ms))
        else:
            others.append((run_id, upload_id, test_id,
                           status.value,  # a plain str: sqlite3 binds str subclasses slowly
                           ms, message, kind, trace, reruns, out, err))  # fmt: skip
    return CaseRows(passed, others, total_ms)


_PASSED = TestStatus.PASSED.value  # a plain str: sqlite3 binds str subclasses slowly


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


#: The columns of ``suite_rows``, ``case_rows`` and the coverage rows, for ``copy_rows``.
SUITE_COLUMNS = ("run_id", "upload_id", "name", "parents", "tests", "passed", "failures",
                 "errors", "skipped", "flaky", "duration_ms", "system_out", "system_err")  # fmt: skip
#: ``CaseRows.others`` has every case column; a plain pass sets only ``PASSED_CASE_COLUMNS``
#: (sqlite3 binds None through its adapter lookup, two failed attribute lookups of about 0.3 µs
#: each, which cost 40 of the 75 ms of a 20,000-case insert when every column was bound).
CASE_COLUMNS = ("run_id", "upload_id", "test_id", "status", "duration_ms", "message",
                "failure_type", "trace", "reruns", "system_out", "system_err")  # fmt: skip
PASSED_CASE_COLUMNS = CASE_COLUMNS[:5]
COVERAGE_COLUMNS = ("run_id", "path", "lines_covered", "lines_valid", "branches_covered",
                    "branches_valid", "covered", "uncovered", "branches")  # fmt: skip
