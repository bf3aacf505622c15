"""JSON shapes of the read API (``spec/results.read.yaml``): runs, projects, tests, flakiness.

Keys are the spec's, written out one by one (never ``attrs.asdict``); percentages carry two
decimals like everywhere else in the API. Paths are relative to the service root, as ``runPath``
is. This module must not fetch anything.
"""

from __future__ import annotations

from typing import Any

from results.compare import CaseChange, FileDelta
from results.dashboard import CaseRow, ProjectOverview
from results.flakiness import Flakiness, Outcome
from results.history import TestRef
from results.runs import RunSummary


def pct(value: float | None) -> float | None:
    """Percentages go out with two decimals: more is noise, and clients compare what they see."""
    return None if value is None else round(value, 2)


def project_path(project_id: int) -> str:
    return f"/projects/{project_id}"


def test_path(project_id: int, test_id: int) -> str:
    return f"/projects/{project_id}/tests/{test_id}"


def encode_run(run: RunSummary) -> dict[str, Any]:
    return {
        "runId": run.run_id,
        "projectId": run.project_id,
        "project": run.project,
        "branch": run.branch,
        "commit": run.commit,
        "flag": run.flag,
        "runKey": run.run_key,
        "buildUrl": run.build_url,
        "status": run.status.value,
        "tests": run.tests,
        "passed": run.passed,
        "failures": run.failures,
        "errors": run.errors,
        "skipped": run.skipped,
        "flaky": run.flaky,
        "passRatePct": pct(run.pass_rate_pct),
        "lineCoveragePct": pct(run.line_coverage_pct),
        "branchCoveragePct": pct(run.branch_coverage_pct),
        "durationMs": run.duration_ms,
        "uploads": run.uploads,
        "createdAt": run.created_at,
        "runPath": run.run_path,
    }


def encode_project(item: ProjectOverview) -> dict[str, Any]:
    project = item.project
    return {
        "id": project.id,
        "name": project.name,
        "visibility": project.visibility.value,
        "createdAt": project.created_at,
        "runs": item.runs,
        "latestRun": encode_run(item.latest) if item.latest is not None else None,
        "path": project_path(project.id),
    }


def encode_problem_case(run: RunSummary, case: CaseRow) -> dict[str, Any]:
    return {
        "testId": case.test_id,
        "key": case.key,
        "suite": case.suite,
        "classname": case.classname,
        "name": case.name,
        "status": case.status,
        "durationMs": case.duration_ms,
        "message": case.message,
        "failureType": case.failure_type,
        "trace": case.trace,
        "reruns": case.reruns,
        "historyPath": test_path(run.project_id, case.test_id),
    }


def encode_test(test: TestRef) -> dict[str, Any]:
    return {
        "testId": test.id,
        "projectId": test.project_id,
        "key": test.key,
        "suite": test.suite,
        "classname": test.classname,
        "name": test.name,
        "firstRunId": test.first_run_id,
        "historyPath": test_path(test.project_id, test.id),
    }


def encode_flakiness(flakiness: Flakiness) -> dict[str, Any]:
    return {
        "runs": flakiness.runs,
        "flakyRuns": flakiness.events,
        "scorePct": round(100.0 * flakiness.score, 2),
        "rerunRuns": list(flakiness.rerun_runs),
        "flips": [
            {
                "commit": flip.commit,
                "flag": flip.flag,
                "failedRuns": list(flip.failed_runs),
                "passedRuns": list(flip.passed_runs),
            }
            for flip in flakiness.flips
        ],
    }


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    return {
        "runId": outcome.run_id,
        "branch": outcome.branch,
        "commit": outcome.commit,
        "flag": outcome.flag,
        "createdAt": outcome.created_at,
        "status": outcome.status,
        "durationMs": outcome.duration_ms,
        "reruns": outcome.reruns,
        "message": outcome.message,
    }


def encode_change(change: CaseChange) -> dict[str, Any]:
    return {
        "test": encode_test(change.test),
        "status": change.status,
        "baseStatus": change.base_status,
        "message": change.message,
    }


def encode_file(delta: FileDelta) -> dict[str, Any]:
    return {
        "path": delta.path,
        "linesCovered": delta.covered,
        "linesValid": delta.valid,
        "baseLinesCovered": delta.base_covered,
        "baseLinesValid": delta.base_valid,
        "lineCoveragePct": pct(delta.pct),
        "baseLineCoveragePct": pct(delta.base_pct),
        "deltaPct": pct(delta.delta),
    }
