"""The response bodies of the results API as TypedDicts, each named and spelled as its spec schema.

``spec/results.yaml`` (ingest, gate), ``spec/results.read.yaml`` (runs, projects, tests, flakiness,
comparisons) and ``spec/results.accounts.yaml`` (``/me``, the ``run`` events); a schema that
extends another (``allOf``) is a subclass here. ``tests/results/test_encoders.py`` holds the keys
to the spec's. Declarations only: the encoders (``results.encoders``) fill them in.
"""

from __future__ import annotations

from typing import TypedDict


class Run(TypedDict):
    runId: int
    projectId: int
    project: str
    branch: str
    commit: str
    flag: str
    runKey: str | None
    buildUrl: str | None
    status: str
    tests: int
    passed: int
    failures: int
    errors: int
    skipped: int
    flaky: int
    passRatePct: float | None
    lineCoveragePct: float | None
    branchCoveragePct: float | None
    durationMs: int
    uploads: int
    createdAt: str
    runPath: str
    patchCoverage: PatchCoverage | None
    baseCommit: str | None


class PatchCoverage(TypedDict):
    coverable: int
    covered: int
    missed: int
    pct: float | None


class PatchFile(TypedDict):
    path: str
    coveragePath: str | None
    changed: int
    coverable: int
    covered: int
    missed: int
    pct: float | None
    missedLines: list[int]


class Project(TypedDict):
    id: int
    name: str
    visibility: str
    createdAt: str
    runs: int
    latestRun: Run | None
    path: str


class ProjectDetail(Project):
    flags: list[str]
    branches: list[str]


class TestCaseResult(TypedDict):
    testId: int
    key: str
    suite: str
    classname: str
    name: str
    status: str
    durationMs: int | None
    message: str | None
    failureType: str | None
    trace: str | None
    reruns: int
    historyPath: str


class RunDetail(Run):
    problems: list[TestCaseResult]
    problemsTotal: int
    patchFiles: list[PatchFile] | None


class Trend(TypedDict):
    projectId: int
    project: str
    flag: str
    branch: str | None
    points: list[Run]


class Test(TypedDict):
    testId: int
    projectId: int
    key: str
    suite: str
    classname: str
    name: str
    firstRunId: int
    historyPath: str


class Flip(TypedDict):
    commit: str
    flag: str
    failedRuns: list[int]
    passedRuns: list[int]


class Flakiness(TypedDict):
    runs: int
    flakyRuns: int
    scorePct: float
    rerunRuns: list[int]
    flips: list[Flip]


class Outcome(TypedDict):
    runId: int
    branch: str
    commit: str
    flag: str
    createdAt: str
    status: str
    durationMs: int | None
    reruns: int
    message: str | None


class TestHistory(TypedDict):
    test: Test
    flag: str | None
    branch: str | None
    outcomes: list[Outcome]
    flakiness: Flakiness
    medianDurationMs: int | None
    p90DurationMs: int | None


class FlakyTest(TypedDict):
    test: Test
    flakiness: Flakiness


class FlakyList(TypedDict):
    projectId: int
    flag: str | None
    branch: str | None
    runs: int
    oldestRunId: int | None
    newestRunId: int | None
    tests: list[FlakyTest]
    total: int


class CaseChange(TypedDict):
    test: Test
    status: str | None
    baseStatus: str | None
    message: str | None


class FileDelta(TypedDict):
    path: str
    linesCovered: int | None
    linesValid: int | None
    baseLinesCovered: int | None
    baseLinesValid: int | None
    lineCoveragePct: float | None
    baseLineCoveragePct: float | None
    deltaPct: float | None


class Baseline(TypedDict):
    runId: int
    branch: str
    commit: str
    lineCoveragePct: float | None
    patchCoverage: PatchCoverage | None
    createdAt: str
    source: str
    runPath: str


class Comparison(TypedDict):
    run: Run
    baseline: Baseline | None
    notes: list[str]
    coverageDelta: float | None
    newFailures: list[CaseChange]
    stillFailing: list[CaseChange]
    fixed: list[CaseChange]
    gone: list[CaseChange]
    counts: dict[str, int]  # by group name, as ``results.compare`` counts them
    files: list[FileDelta]
    filesChanged: int


class Rule(TypedDict):
    name: str
    passed: bool
    detail: str


class GateVerdict(TypedDict):
    project: str
    branch: str
    commit: str
    flag: str
    runId: int
    status: str
    passed: bool
    coverageDelta: float | None
    lineCoveragePct: float | None
    patchCoverage: PatchCoverage | None
    tests: int
    failures: int
    errors: int
    rules: list[Rule]
    runPath: str
    baseline: Baseline | None
    missingData: list[str]
    notes: list[str]


class Diagnostic(TypedDict):
    part: str
    filename: str | None
    code: str
    message: str
    count: int


class IngestResult(Run):
    created: bool
    duplicates: int
    diagnostics: list[Diagnostic]


class Principal(TypedDict):
    username: str
    displayName: str
    email: str
    role: str
    authenticatedBy: str


class RunEvent(TypedDict):
    projectId: int
    runId: int
    branch: str
    status: str
    passRatePct: float | None
    lineCoveragePct: float | None
    tests: int
    failures: int
    errors: int
    skipped: int
    flag: str
    commit: str
    project: str
