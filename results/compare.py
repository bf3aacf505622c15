"""A run against its gate baseline: new failures, fixed tests, still failing, coverage per file.

The baseline is the gate's (``results.gate.find_baseline``): the run of ``baseSha`` when given and
present, else the newest earlier run of the same flag on the base branch. Tests are matched by
their catalog id (their stable key), so a renamed test is one gone and one new. A test failing in
the baseline that does not fail now is ``fixed`` when it passed now (a pass on a rerun included)
and ``gone`` when it was skipped or not run at all: neither is a fix anyone can trust.
This module must not know HTTP or SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from results.browse import readable_run
from results.flakiness import PASSING
from results.gate import Baseline, find_baseline
from results.history import HistoryStore, TestRef
from results.parsers.model import percentage
from results.runs import CanRead, RunSummary
from results.runstore import Store
from results.settings import GateSettings

#: Entries listed per group (and files listed); the counts always cover everything.
MAX_LISTED = 500


@attrs.frozen
class FailingCase:
    test: TestRef
    status: str  # failed or error
    message: str | None


@attrs.frozen
class CaseChange:
    test: TestRef
    status: str | None  # in the run; None: not run
    base_status: str | None  # in the baseline; None: not run
    message: str | None  # of the failure, where one side failed


@attrs.frozen
class FileDelta:
    path: str
    covered: int | None  # None: the file is not in the run's coverage
    valid: int | None
    base_covered: int | None  # None: not in the baseline's
    base_valid: int | None

    @property
    def pct(self) -> float | None:
        return _pct(self.covered, self.valid)

    @property
    def base_pct(self) -> float | None:
        return _pct(self.base_covered, self.base_valid)

    @property
    def delta(self) -> float | None:
        pct, base = self.pct, self.base_pct
        return None if pct is None or base is None else pct - base

    @property
    def changed(self) -> bool:
        same = (self.covered, self.valid) == (self.base_covered, self.base_valid)
        return not same


@attrs.frozen
class Comparison:
    run: RunSummary
    baseline: Baseline | None
    notes: tuple[str, ...]
    new_failures: list[CaseChange]
    still_failing: list[CaseChange]
    fixed: list[CaseChange]
    gone: list[CaseChange]  # failing in the baseline, skipped or not run now
    counts: dict[str, int]  # the size of each group above, before MAX_LISTED
    files: list[FileDelta]  # changed files: dropped most first, then new, then removed
    files_changed: int

    @property
    def coverage_delta(self) -> float | None:
        return self.baseline.coverage_delta(self.run) if self.baseline else None


class CompareStore(HistoryStore, Protocol):
    async def failing_cases(self, run_id: int) -> list[FailingCase]:
        """The failed and errored cases of a run."""

    async def coverage_pairs(self, run_id: int, base_run_id: int) -> list[FileDelta]:
        """Every file in either run's coverage, side by side."""


async def compare(
    store: Store,
    reads: CompareStore,
    settings: GateSettings,
    run_id: int,
    *,
    base_sha: str | None = None,
    can_read: CanRead,
) -> Comparison:
    run = await readable_run(reads, run_id, can_read)
    baseline, notes = await find_baseline(store, settings, run, base_sha)
    now = {case.test.id: case for case in await reads.failing_cases(run_id)}
    before: dict[int, FailingCase] = {}
    files: list[FileDelta] = []
    if baseline is not None:
        before = {c.test.id: c for c in await reads.failing_cases(baseline.run.run_id)}
        files = [f for f in await reads.coverage_pairs(run_id, baseline.run.run_id) if f.changed]
    new = await _new_failures(reads, baseline, [c for t, c in now.items() if t not in before])
    still = [_change(c, c.status, before[t]) for t, c in now.items() if t in before]
    fixed, gone = await _recovered(reads, run_id, [c for t, c in before.items() if t not in now])
    groups = {"newFailures": new, "stillFailing": still, "fixed": fixed, "gone": gone}
    files.sort(key=_file_order)
    return Comparison(
        run=run,
        baseline=baseline,
        notes=notes,
        new_failures=_listed(new),
        still_failing=_listed(still),
        fixed=_listed(fixed),
        gone=_listed(gone),
        counts={name: len(group) for name, group in groups.items()},
        files=files[:MAX_LISTED],
        files_changed=len(files),
    )


async def _new_failures(
    reads: CompareStore, baseline: Baseline | None, cases: list[FailingCase]
) -> list[CaseChange]:
    """Failing now, not in the baseline: there it passed, was skipped or did not run."""
    was: dict[int, str] = {}
    if baseline is not None and cases:
        found = await reads.statuses([baseline.run.run_id], [c.test.id for c in cases])
        was = {test: value for _, test, value in found}
    return [CaseChange(c.test, c.status, was.get(c.test.id), c.message) for c in cases]


async def _recovered(
    reads: CompareStore, run_id: int, cases: list[FailingCase]
) -> tuple[list[CaseChange], list[CaseChange]]:
    """Split the baseline's failures that do not fail now into passing now, and not run now."""
    if not cases:
        return [], []
    found = await reads.statuses([run_id], [c.test.id for c in cases])
    status = {test: value for _, test, value in found}
    fixed: list[CaseChange] = []
    gone: list[CaseChange] = []
    for case in cases:
        now = status.get(case.test.id)
        change = CaseChange(case.test, now, case.status, case.message)
        (fixed if now in PASSING else gone).append(change)
    return fixed, gone


def _change(case: FailingCase, status: str | None, base: FailingCase) -> CaseChange:
    return CaseChange(case.test, status, base.status, case.message)


def _listed(changes: Sequence[CaseChange]) -> list[CaseChange]:
    return sorted(changes, key=lambda c: c.test.key)[:MAX_LISTED]


def _file_order(delta: FileDelta) -> tuple[int, float, str]:
    if delta.delta is not None:
        return (0, delta.delta, delta.path)  # the biggest drop first
    return (1 if delta.base_valid is None else 2, 0.0, delta.path)  # new files, then removed


def _pct(covered: int | None, valid: int | None) -> float | None:
    return None if covered is None or valid is None else percentage(covered, valid)
