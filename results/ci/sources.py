"""What an upload sends, found the way a CI job has it: report files, commit, branch, build URL.

Files may be named one by one, as directories (their ``*.xml`` files, or every file of a coverage
directory that looks like a report) or as glob patterns the shell did not expand (``**``
included). Commit, branch and build URL default to what the CI system puts in the environment
(GitHub Actions, GitLab CI, Jenkins, CircleCI, Buildkite, Azure Pipelines). This module must not
do network I/O; the environment is handed in, never read here.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

#: Environment variables of each CI system, in order of preference: (commit, branch, build URL).
CI_COMMIT = (
    "WHARF_RESULTS_COMMIT",
    "GITHUB_SHA",
    "CI_COMMIT_SHA",
    "GIT_COMMIT",
    "CIRCLE_SHA1",
    "BUILDKITE_COMMIT",
    "BUILD_SOURCEVERSION",
)
#: A pull request's source branch first (GitHub's GITHUB_REF_NAME is "42/merge" there).
CI_BRANCH = (
    "WHARF_RESULTS_BRANCH",
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BRANCH_NAME",
    "GIT_BRANCH",
    "CIRCLE_BRANCH",
    "BUILDKITE_BRANCH",
    "BUILD_SOURCEBRANCHNAME",
)
CI_BUILD_URL = ("WHARF_RESULTS_BUILD_URL", "CI_JOB_URL", "BUILD_URL", "CIRCLE_BUILD_URL",
                "BUILDKITE_BUILD_URL")  # fmt: skip
#: Suffixes of coverage reports in a directory given as --coverage.
COVERAGE_SUFFIXES = (".xml", ".info", ".lcov", ".out", ".gz")


class SourceError(ValueError):
    """A file argument or a required value that could not be resolved; ``str()`` says which."""


@attrs.frozen
class Target:
    commit: str | None
    branch: str | None
    build_url: str | None


def ci_target(environ: Mapping[str, str]) -> Target:
    """Commit, branch and build URL as the CI system in ``environ`` knows them."""
    commit = _first(environ, CI_COMMIT)
    branch = _first(environ, CI_BRANCH)
    if branch is not None and environ.get("GIT_BRANCH") == branch:
        branch = branch.removeprefix("origin/")  # Jenkins' Git plugin names the remote branch
    build_url = _first(environ, CI_BUILD_URL) or _github_run(environ)
    return Target(commit, branch, build_url)


def report_files(arguments: Iterable[str], *, coverage: bool) -> list[Path]:
    """Every file the arguments name, in order, each once. Raises ``SourceError`` for an
    argument that names nothing, so a typo in a CI script fails the job instead of uploading
    less than it meant to."""
    found: list[Path] = []
    for argument in arguments:
        matched = _expand(argument, coverage=coverage)
        if not matched:
            raise SourceError(f"{argument}: no such file, or no report in it")
        found.extend(path for path in matched if path not in found)
    return found


def _expand(argument: str, *, coverage: bool) -> list[Path]:
    path = Path(argument)
    if path.is_file():
        return [path]
    if path.is_dir():
        suffixes = COVERAGE_SUFFIXES if coverage else (".xml", ".gz")
        return sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(suffixes))
    if glob.has_magic(argument):
        return sorted(Path(p) for p in glob.glob(argument, recursive=True) if Path(p).is_file())
    return []


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((environ[n].strip() for n in names if environ.get(n, "").strip()), None)


def _github_run(environ: Mapping[str, str]) -> str | None:
    parts = [
        environ.get(n, "") for n in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    ]
    if not all(parts):
        return None
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}"
