"""JSON encoders of the results service's value objects, keys spelled as the spec's schemas.

Each encoder returns the TypedDict of its spec schema (``results.encoders.schemas``); percentages
carry two decimals everywhere, and paths are relative to the service root, as ``runPath`` is.

Used by the doors (``results.http``); no domain module imports this package, so the wire shapes stay
out of the domain (the event hub hands out ``RunSummary`` and the stream encodes it here). Pure
functions: no I/O and no aiohttp; never ``attrs.asdict`` (a field added to a value object must not
leak out). The gate's verdict is encoded on a hot path: a plain dict literal, nothing more.
"""

from __future__ import annotations

from results import (
    browse,
    compare,
    dashboard,
    flakiness,
    gate,
    history,
    ingest,
    patch,
    trends,
    users,
)
from results.encoders.schemas import (
    Baseline,
    CaseChange,
    Comparison,
    Diagnostic,
    FileDelta,
    Flakiness,
    FlakyList,
    GateVerdict,
    IngestResult,
    Outcome,
    PatchCoverage,
    PatchFile,
    Principal,
    Project,
    ProjectDetail,
    Run,
    RunDetail,
    RunEvent,
    Test,
    TestCaseResult,
    TestHistory,
    Trend,
)
from results.runs import RunSummary


def pct(value: float | None) -> float | None:
    """Percentages go out with two decimals: more is noise, and clients compare what they see."""
    return None if value is None else round(value, 2)


def project_path(project_id: int) -> str:
    return f"/projects/{project_id}"


def test_path(project_id: int, test_id: int) -> str:
    return f"/projects/{project_id}/tests/{test_id}"


def encode_run(run: RunSummary) -> Run:
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
        "patchCoverage": encode_patch_totals(run),
        "baseCommit": run.base_commit,
    }


def encode_patch_totals(run: RunSummary) -> PatchCoverage | None:
    """The run's patch coverage, or None when it came without a diff."""
    if run.patch_lines_valid is None:
        return None
    return {
        "coverable": run.patch_lines_valid,
        "covered": run.patch_lines_covered,
        "missed": run.patch_lines_valid - run.patch_lines_covered,
        "pct": pct(run.patch_coverage_pct),
    }


def encode_patch_file(file: patch.PatchFile) -> PatchFile:
    totals = file.totals
    return {
        "path": file.path,
        "coveragePath": file.coverage_path,
        "changed": len(file.changed),
        "coverable": totals.valid,
        "covered": totals.covered,
        "missed": totals.missed,
        "pct": pct(totals.pct),
        "missedLines": sorted(file.missed),
    }


def encode_project(item: dashboard.ProjectOverview) -> Project:
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


def encode_project_detail(found: browse.ProjectDetail) -> ProjectDetail:
    return {**encode_project(found.overview), "flags": found.flags, "branches": found.branches}


def encode_problem_case(run: RunSummary, case: dashboard.CaseRow) -> TestCaseResult:
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


def encode_run_detail(found: browse.RunFailures) -> RunDetail:
    return {
        **encode_run(found.run),
        "problems": [encode_problem_case(found.run, case) for case in found.cases],
        "problemsTotal": found.total,
        "patchFiles": None
        if found.patch is None
        else [encode_patch_file(f) for f in found.patch.files],
    }


def encode_trend(found: trends.Trend) -> Trend:
    return {
        "projectId": found.project.id,
        "project": found.project.name,
        "flag": found.query.flag,
        "branch": found.query.branch,
        "points": [encode_run(run) for run in found.runs],
    }


def encode_test(test: history.TestRef) -> Test:
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


def encode_flakiness(found: flakiness.Flakiness) -> Flakiness:
    return {
        "runs": found.runs,
        "flakyRuns": found.events,
        "scorePct": round(100.0 * found.score, 2),
        "rerunRuns": list(found.rerun_runs),
        "flips": [
            {
                "commit": flip.commit,
                "flag": flip.flag,
                "failedRuns": list(flip.failed_runs),
                "passedRuns": list(flip.passed_runs),
            }
            for flip in found.flips
        ],
    }


def encode_outcome(outcome: flakiness.Outcome) -> Outcome:
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


def encode_test_history(found: history.TestHistory) -> TestHistory:
    return {
        "test": encode_test(found.test),
        "flag": found.query.flag,
        "branch": found.query.branch,
        "outcomes": [encode_outcome(o) for o in found.outcomes],
        "flakiness": encode_flakiness(found.flakiness),
        "medianDurationMs": found.duration_ms(0.5),
        "p90DurationMs": found.duration_ms(0.9),
    }


def encode_flaky_list(found: history.FlakyList) -> FlakyList:
    return {
        "projectId": found.project.id,
        "flag": found.query.flag,
        "branch": found.query.branch,
        "runs": len(found.runs),
        "oldestRunId": found.runs[-1].run_id if found.runs else None,
        "newestRunId": found.runs[0].run_id if found.runs else None,
        "tests": [
            {"test": encode_test(t.test), "flakiness": encode_flakiness(t.flakiness)}
            for t in found.tests
        ],
        "total": found.total,
    }


def encode_change(change: compare.CaseChange) -> CaseChange:
    return {
        "test": encode_test(change.test),
        "status": change.status,
        "baseStatus": change.base_status,
        "message": change.message,
    }


def encode_file(delta: compare.FileDelta) -> FileDelta:
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


def encode_comparison(found: compare.Comparison) -> Comparison:
    return {
        "run": encode_run(found.run),
        "baseline": encode_baseline(found.baseline),
        "notes": list(found.notes),
        "coverageDelta": pct(found.coverage_delta),
        "newFailures": [encode_change(c) for c in found.new_failures],
        "stillFailing": [encode_change(c) for c in found.still_failing],
        "fixed": [encode_change(c) for c in found.fixed],
        "gone": [encode_change(c) for c in found.gone],
        "counts": found.counts,
        "files": [encode_file(f) for f in found.files],
        "filesChanged": found.files_changed,
    }


def encode_baseline(baseline: gate.Baseline | None) -> Baseline | None:
    if baseline is None:
        return None
    run = baseline.run
    return {
        "runId": run.run_id,
        "branch": run.branch,
        "commit": run.commit,
        "lineCoveragePct": pct(run.line_coverage_pct),
        "patchCoverage": encode_patch_totals(run),
        "createdAt": run.created_at,
        "source": baseline.source,
        "runPath": run.run_path,
    }


def encode_verdict(verdict: gate.Verdict) -> GateVerdict:
    run = verdict.run
    return {
        "project": run.project,
        "branch": run.branch,
        "commit": run.commit,
        "flag": run.flag,
        "runId": run.run_id,
        "status": verdict.status,
        "passed": verdict.passed,
        "coverageDelta": pct(verdict.coverage_delta),
        "lineCoveragePct": pct(run.line_coverage_pct),
        "patchCoverage": encode_patch_totals(run),
        "tests": run.tests,
        "failures": run.failures,
        "errors": run.errors,
        "rules": [{"name": r.name, "passed": r.passed, "detail": r.detail} for r in verdict.rules],
        "runPath": run.run_path,
        "baseline": encode_baseline(verdict.baseline),
        "missingData": list(verdict.missing),
        "notes": list(verdict.notes),
    }


def encode_ingest_result(result: ingest.IngestResult) -> IngestResult:
    outcome = result.outcome
    diagnostics: list[Diagnostic] = [
        {
            "part": report.part,
            "filename": report.filename,
            "code": d.code,
            "message": d.message,
            "count": d.count,
        }
        for report, d in result.diagnostics
    ]
    diagnostics += [
        {
            "part": r.part,
            "filename": r.filename,
            "code": "duplicate-upload",
            "message": f"the run already holds a file with this SHA-256 ({r.sha256[:12]}…); skipped",
            "count": 1,
        }
        for r in outcome.duplicates
    ]
    return {
        **encode_run(outcome.run),
        "created": outcome.created,
        "duplicates": len(outcome.duplicates),
        "diagnostics": diagnostics,
    }


def encode_principal(principal: users.Principal) -> Principal:
    user = principal.user
    return {
        "username": user.username,
        "displayName": user.display_name,
        "email": user.email,
        "role": user.role.value,
        "authenticatedBy": principal.via.value,
    }


def encode_run_event(run: RunSummary) -> RunEvent:
    """The ``data`` of a ``run`` event: the contract's fields, then ours."""
    return {
        "projectId": run.project_id,
        "runId": run.run_id,
        "branch": run.branch,
        "status": run.status.value,
        "passRatePct": pct(run.pass_rate_pct),
        "lineCoveragePct": pct(run.line_coverage_pct),
        "tests": run.tests,
        "failures": run.failures,
        "errors": run.errors,
        "skipped": run.skipped,
        "flag": run.flag,
        "commit": run.commit,
        "project": run.project,
    }
