"""The results service's own errors, as members of the project's hierarchy (``common.errors``).

Each carries the context a client needs to act, and a stable ``code``. Report parse refusals are
``results.parsers.errors``. This module must not know HTTP: the problem middleware renders these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from common.errors import BadRequest, Conflict, NotFound, ValidationFailed

if TYPE_CHECKING:
    from results.batch import RunTarget


class ProjectNotFound(NotFound, code="project-not-found"):
    """Unknown project (by name, or by id in the browse reads), or a private one the caller may
    not see (the two look the same)."""

    def __init__(self, project: str | int) -> None:
        if isinstance(project, int):
            super().__init__(f"no project {project}")
        else:
            super().__init__(f"no project named {project!r}", extra={"project": project})


class RunNotFound(NotFound, code="run-not-found"):
    def __init__(self, run_id: int) -> None:
        super().__init__(f"no run {run_id}")


class NoMatchingRun(NotFound, code="run-not-found"):
    def __init__(self, project: str, *, what: str, flag: str) -> None:
        super().__init__(
            f"project {project!r} has no run for {what} with flag {flag!r}",
            extra={"project": project, "flag": flag},
        )


class CommitOrBranchRequired(BadRequest, code="commit-or-branch-required"):
    def __init__(self) -> None:
        super().__init__("give commit or branch (commit wins when both are given)")


class InvalidIngestField(ValidationFailed):
    """Multipart text fields are checked here (the spec cannot validate multipart field values)."""


class NoReports(BadRequest, code="no-reports"):
    def __init__(self) -> None:
        super().__init__(
            "the upload holds no report: send at least one junit or jacoco file part "
            "(curl -F junit=@TEST-results.xml -F jacoco=@jacoco.xml)"
        )


class RunKeyConflict(Conflict, code="run-key-conflict"):
    """A shard named an existing run but disagrees with it on branch, commit or flag."""

    def __init__(self, target: RunTarget, *, run_id: int) -> None:
        super().__init__(
            f"runKey {target.run_key!r} already names run {run_id} of project "
            f"{target.project!r} with another branch, commit or flag; shards of one run must "
            "send the same branch, commit and flag",
            extra={"runId": run_id},
        )
