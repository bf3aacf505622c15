"""Projects and runs as the rest of the service sees them: immutable value objects, no I/O.

The store returns these, the gate judges them, ingest answers with them, and the live-event hub
receives a ``RunSummary`` after each ingest commits. This module must not know SQL or HTTP.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable

import attrs

from results.parsers.model import percentage


class Visibility(enum.StrEnum):
    PUBLIC = "PUBLIC"
    PRIVATE = "PRIVATE"


class RunStatus(enum.StrEnum):
    """A run FAILED when any test failed or errored; flaky tests (passed on retry) do not count."""

    PASSED = "PASSED"
    FAILED = "FAILED"


@attrs.frozen
class Project:
    id: int
    name: str
    visibility: Visibility
    created_at: str

    @property
    def private(self) -> bool:
        return self.visibility is Visibility.PRIVATE


@attrs.frozen
class RunSummary:
    """A run with its totals; after a shard joins a run, the totals are the joined ones."""

    run_id: int
    project_id: int
    project: str
    visibility: Visibility
    branch: str
    commit: str
    flag: str
    run_key: str | None
    build_url: str | None
    status: RunStatus
    tests: int
    passed: int  # flaky ones included: they passed on a rerun
    failures: int
    errors: int
    skipped: int
    flaky: int
    duration_ms: int
    line_coverage_pct: float | None
    branch_coverage_pct: float | None
    uploads: int
    created_at: str
    #: Changed lines that are coverable, and covered; None when the run came without a diff.
    patch_lines_valid: int | None = None
    patch_lines_covered: int = 0
    base_commit: str | None = None

    @property
    def patch_coverage_pct(self) -> float | None:
        """Covered changed lines over coverable changed lines; None without a diff or with no
        coverable changed line."""
        if self.patch_lines_valid is None:
            return None
        return percentage(self.patch_lines_covered, self.patch_lines_valid)

    @property
    def run_path(self) -> str:
        return run_path(self.run_id)

    @property
    def pass_rate_pct(self) -> float | None:
        """Passed (flaky included) over tests that ran (skipped left out); None when none ran."""
        return percentage(self.passed, self.tests - self.skipped)


def run_path(run_id: int) -> str:
    """Where the dashboard shows a run (relative to the service root)."""
    return f"/runs/{run_id}"


def run_status(failures: int, errors: int) -> RunStatus:
    return RunStatus.FAILED if failures or errors else RunStatus.PASSED


#: Called after each ingest transaction commits (the live-event hub appends one).
RunListener = Callable[[RunSummary], Awaitable[None]]
#: Whether the caller may see a project (``results.accounts.can_read`` bound to the principal).
CanRead = Callable[[Project], bool]


def public_only(project: Project) -> bool:
    """``CanRead`` of an anonymous caller."""
    return not project.private
