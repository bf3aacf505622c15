"""Flakiness with its evidence: which runs show a test failing where it also passes.

Two kinds of evidence count, and only these: a failure for no reason the code can have changed.
- An in-run rerun: the test failed and then passed on a retry in the same run (Surefire
  ``flakyFailure``/``flakyError``, Gradle and retry plugins writing each attempt). Such a test
  passed, and is flaky.
- A flip on one commit: the test failed in one run and passed in another run of the same commit
  and flag (a CI retry of the same code).
A test failing every time is broken, not flaky: its score is 0. The score is the share of the runs
considered that show flakiness (each such run counted once), so a test that flaked in 3 of its
last 100 runs scores 3 %. This module must not do I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from results.parsers.model import TestStatus

FAILING = frozenset({TestStatus.FAILED.value, TestStatus.ERROR.value})
PASSING = frozenset({TestStatus.PASSED.value, TestStatus.FLAKY.value})


@attrs.frozen
class Outcome:
    """A test's result in one run."""

    run_id: int
    branch: str
    commit: str
    flag: str
    created_at: str
    status: str  # a TestStatus value
    duration_ms: int | None
    reruns: int = 0
    message: str | None = None

    @property
    def failing(self) -> bool:
        return self.status in FAILING


@attrs.frozen
class Flip:
    """A commit (and flag) on which the test both failed and passed."""

    commit: str
    flag: str
    failed_runs: tuple[int, ...]
    passed_runs: tuple[int, ...]


@attrs.frozen
class Flakiness:
    runs: int  # runs considered, the test present in each
    rerun_runs: tuple[int, ...]  # failed, then passed on a retry within the run
    flips: tuple[Flip, ...]

    @property
    def flaky_runs(self) -> frozenset[int]:
        """Runs that show flakiness: reruns, and the failing runs of flipped commits."""
        return frozenset(self.rerun_runs).union(*(f.failed_runs for f in self.flips))

    @property
    def events(self) -> int:
        return len(self.flaky_runs)

    @property
    def score(self) -> float:
        """0.0 (never flaky) to 1.0 (flaky in every run considered)."""
        return min(1.0, self.events / self.runs) if self.runs else 0.0

    @property
    def last_event(self) -> int | None:
        return max(self.flaky_runs, default=None)


def assess(outcomes: Iterable[Outcome], *, runs: int | None = None) -> Flakiness:
    """The evidence in ``outcomes`` (any order). ``runs`` is how many runs the test was present
    in when the outcomes are only the interesting ones; by default, one per outcome's run."""
    seen: set[int] = set()
    reruns: set[int] = set()
    commits: dict[tuple[str, str], tuple[set[int], set[int]]] = {}
    for outcome in outcomes:
        seen.add(outcome.run_id)
        if outcome.status == TestStatus.FLAKY:
            reruns.add(outcome.run_id)
        failed, passed = commits.setdefault((outcome.commit, outcome.flag), (set(), set()))
        if outcome.status in FAILING:
            failed.add(outcome.run_id)
        elif outcome.status in PASSING:
            passed.add(outcome.run_id)
    flips = tuple(
        Flip(commit, flag, tuple(sorted(failed)), tuple(sorted(passed)))
        for (commit, flag), (failed, passed) in sorted(commits.items())
        if failed and passed
    )
    return Flakiness(runs if runs is not None else len(seen), tuple(sorted(reruns)), flips)


def ranked(assessed: Sequence[tuple[int, Flakiness]]) -> list[tuple[int, Flakiness]]:
    """Most flaky first: most flaky runs, then the highest share, then the most recent."""
    flaky = [(test, f) for test, f in assessed if f.events]
    return sorted(flaky, key=lambda item: (-item[1].events, -item[1].score,
                                           -(item[1].last_event or 0), item[0]))  # fmt: skip
