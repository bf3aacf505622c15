"""Tests across runs: one test's history, the search for a test, and a project's flaky tests.

A test is an entry of the project's catalog (``TestRef``): its key stays the same across runs, and
its id names it in URLs. A history is the test's outcomes in the newest runs that ran it (of one
flag and branch, or all), with their durations and the flakiness they show. The flaky list looks
at the newest runs of a project only at what can show flakiness (the failing, errored and flaky
cases, a handful per run) and asks about passes only where a failure shares its commit with
another run. This module must not know HTTP or SQL.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

import attrs

from common.errors import NotFound
from results.browse import BrowseStore, RunFilter, readable_project
from results.flakiness import Flakiness, Outcome, assess, ranked
from results.runs import CanRead, Project, RunSummary

DEFAULT_OUTCOMES = 100
MAX_OUTCOMES = 1000
DEFAULT_WINDOW = 100
MAX_WINDOW = 500
DEFAULT_FLAKY = 50
MAX_FLAKY = 200
MAX_SEARCH = 200


@attrs.frozen
class TestRef:
    """A test of a project, as its catalog knows it (suite and names as first seen)."""

    __test__ = False  # not a pytest test class

    id: int
    project_id: int
    key: str
    suite: str
    classname: str
    name: str
    first_run_id: int


@attrs.frozen
class HistoryQuery:
    flag: str | None = None
    branch: str | None = None
    limit: int = DEFAULT_OUTCOMES


@attrs.frozen
class TestHistory:
    __test__ = False

    project: Project
    test: TestRef
    query: HistoryQuery
    outcomes: list[Outcome]  # oldest first
    flakiness: Flakiness

    @property
    def last_failure(self) -> Outcome | None:
        return next((o for o in reversed(self.outcomes) if o.failing), None)

    def duration_ms(self, quantile: float) -> int | None:
        """A quantile of the passing runs' durations (0.5: the median)."""
        times = sorted(o.duration_ms for o in self.outcomes if not o.failing and o.duration_ms)
        if not times:
            return None
        if len(times) == 1:
            return times[0]
        cuts = statistics.quantiles(times, n=100, method="inclusive")
        return round(cuts[max(0, min(98, round(quantile * 100) - 1))])


@attrs.frozen
class FlakyQuery:
    flag: str | None = None
    branch: str | None = None
    window: int = DEFAULT_WINDOW  # newest runs looked at
    limit: int = DEFAULT_FLAKY


@attrs.frozen
class FlakyTest:
    test: TestRef
    flakiness: Flakiness


@attrs.frozen
class FlakyList:
    project: Project
    query: FlakyQuery
    runs: list[RunSummary]  # the window, newest first
    tests: list[FlakyTest]  # most flaky first
    total: int  # flaky tests found in the window, before ``limit``


class TestNotFound(NotFound, code="test-not-found"):
    def __init__(self, test: int | str) -> None:
        super().__init__(f"no test {test!r} in this project")


class HistoryStore(BrowseStore, Protocol):
    async def test(self, project_id: int, test_id: int) -> TestRef | None: ...
    async def test_by_key(self, project_id: int, key: str) -> TestRef | None: ...
    async def tests(self, test_ids: Sequence[int]) -> dict[int, TestRef]: ...
    async def search_tests(self, project_id: int, text: str, *, limit: int) -> list[TestRef]: ...
    async def outcomes(
        self, test: TestRef, *, flag: str | None, branch: str | None, limit: int
    ) -> list[Outcome]:
        """The test's outcomes in the newest runs that ran it, newest first."""

    async def evidence(self, run_ids: Sequence[int]) -> list[tuple[int, int, str, int]]:
        """(run, test, status, reruns) of the failed, errored and flaky cases of the runs."""

    async def statuses(
        self, run_ids: Sequence[int], test_ids: Sequence[int]
    ) -> list[tuple[int, int, str]]:
        """(run, test, status) of those tests in those runs, where they ran."""

    async def presence(self, run_ids: Sequence[int], test_ids: Sequence[int]) -> dict[int, int]:
        """In how many of the runs each test ran."""


async def test_history(
    store: HistoryStore, project_id: int, test_id: int, query: HistoryQuery, *, can_read: CanRead
) -> TestHistory:
    project = await readable_project(store, project_id, can_read)
    test = await store.test(project_id, test_id)
    if test is None:
        raise TestNotFound(test_id)
    query = attrs.evolve(query, limit=max(1, min(query.limit, MAX_OUTCOMES)))
    newest = await store.outcomes(test, flag=query.flag, branch=query.branch, limit=query.limit)
    return TestHistory(project, test, query, newest[::-1], assess(newest))


async def find_test(
    store: HistoryStore, project_id: int, key: str, *, can_read: CanRead
) -> TestRef:
    await readable_project(store, project_id, can_read)
    test = await store.test_by_key(project_id, key)
    if test is None:
        raise TestNotFound(key)
    return test


async def search_tests(
    store: HistoryStore, project_id: int, text: str, *, can_read: CanRead, limit: int = 50
) -> tuple[Project, list[TestRef]]:
    project = await readable_project(store, project_id, can_read)
    found = await store.search_tests(project_id, text, limit=max(1, min(limit, MAX_SEARCH)))
    return project, found


async def flaky_tests(
    store: HistoryStore, project_id: int, query: FlakyQuery, *, can_read: CanRead
) -> FlakyList:
    project = await readable_project(store, project_id, can_read)
    query = attrs.evolve(
        query,
        window=max(1, min(query.window, MAX_WINDOW)),
        limit=max(1, min(query.limit, MAX_FLAKY)),
    )
    window = await store.list_runs(
        project_id, RunFilter(branch=query.branch, flag=query.flag), before=None, limit=query.window
    )
    outcomes = await _evidence(store, window)
    candidates = ranked([(test, assess(found)) for test, found in outcomes.items()])
    shown = candidates[: query.limit]
    run_ids = [run.run_id for run in window]
    present = await store.presence(run_ids, [test for test, _ in shown])
    refs = await store.tests([test for test, _ in shown])
    scored = ranked([(t, attrs.evolve(f, runs=present.get(t, f.runs))) for t, f in shown])
    tests = [FlakyTest(refs[test], flakiness) for test, flakiness in scored if test in refs]
    return FlakyList(project, query, window, tests, total=len(candidates))


async def _evidence(store: HistoryStore, window: list[RunSummary]) -> dict[int, list[Outcome]]:
    """Per test, its outcomes that can show flakiness: failing, errored and flaky runs, and its
    outcomes in the other runs of a commit it failed on."""
    runs = {run.run_id: run for run in window}
    found: dict[int, dict[int, Outcome]] = defaultdict(dict)
    for run_id, test, status, reruns in await store.evidence(list(runs)):
        found[test][run_id] = _outcome(runs[run_id], status, reruns)
    siblings: dict[tuple[str, str], list[int]] = defaultdict(list)
    for run in window:
        siblings[(run.commit, run.flag)].append(run.run_id)
    ask_runs: set[int] = set()
    ask_tests: set[int] = set()
    for test, by_run in found.items():
        for run_id, outcome in by_run.items():
            others = siblings[(outcome.commit, outcome.flag)]
            if outcome.failing and len(others) > 1:
                ask_runs.update(r for r in others if r != run_id)
                ask_tests.add(test)
    if ask_runs:
        for run_id, test, status in await store.statuses(sorted(ask_runs), sorted(ask_tests)):
            found[test].setdefault(run_id, _outcome(runs[run_id], status, 0))
    return {test: list(by_run.values()) for test, by_run in found.items()}


def _outcome(run: RunSummary, status: str, reruns: int) -> Outcome:
    return Outcome(
        run_id=run.run_id,
        branch=run.branch,
        commit=run.commit,
        flag=run.flag,
        created_at=run.created_at,
        status=status,
        duration_ms=None,
        reruns=reruns,
    )
