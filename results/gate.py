"""The quality gate: the latest matching run, its baseline, and three rules with explicit answers.

Semantics follow the original project where it was right and fix where it was not:
- The run: newest of the project and flag on ``commit`` (preferred) or else ``branch``.
- The baseline: the run for ``baseSha`` when given and present; else the newest run before this one
  on the base branch with the same flag. The verdict names the baseline run and how it was chosen.
- ``new-failures``: failing (failed or errored) test keys absent from the baseline's failing keys;
  with no baseline every failure counts as new.
- ``coverage-drop``: line coverage may fall at most ``max-coverage-drop-pct`` points below the
  baseline's.
- ``min-coverage``: present only when configured; an absolute floor.
- ``patch-coverage``: present only when a floor is set (the project's own, set with ``wharf
  results project patch-coverage-min``, else ``patch-coverage-min``); a floor for the
  coverage of the lines the run's diff added. A run without a diff (or whose diff adds no line the
  coverage counts) skips it: the rule passes and its detail says it was skipped and why.
Missing data (no coverage, no baseline, zero tests) is never a silent pass: the rule's detail
names what is missing, ``missing`` lists it, and a configured policy decides the answer.

CI asks the gate far more often than it uploads, so verdicts are kept (``VerdictCache``) while the
store's data version stays the same: any commit by anyone (an ingest, an admin command changing a
project's visibility, whatever comes later) changes it, and a store that cannot tell without a
round trip (PostgreSQL, whose other replicas commit unseen) gets nothing kept. A door keeps its
answer (the HTTP JSON) beside the verdict, by what it was asked with (``VerdictCache.made``). Who
may read the project is decided per request, against the project as of the same version.

This module must not know HTTP or SQL.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, NoReturn

import attrs

from results import fields
from results.errors import CommitOrBranchRequired, NoMatchingRun, ProjectNotFound
from results.runs import CanRead, Project, RunSummary
from results.runstore import Store
from results.settings import GateSettings, MissingDataPolicy

#: Failing test names listed in a new-failures detail before "and N more".
LISTED_FAILURES = 5
#: Verdicts kept at most (the oldest goes first): a few hundred bytes each.
KEPT_VERDICTS = 1024


@attrs.frozen(cache_hash=True)  # the key of kept verdicts, looked up per request
class GateQuery:
    project: str
    commit: str | None = None
    branch: str | None = None
    flag: str = fields.DEFAULT_FLAG
    base_sha: str | None = None


@attrs.frozen
class Rule:
    name: str
    passed: bool
    detail: str


@attrs.frozen
class Baseline:
    run: RunSummary
    source: str  # "baseSha" or "base-branch"

    def coverage_delta(self, run: RunSummary) -> float | None:
        """``run``'s line coverage minus this baseline's, in points; None when either is unknown."""
        current, base = run.line_coverage_pct, self.run.line_coverage_pct
        return None if current is None or base is None else current - base


@attrs.frozen
class Verdict:
    run: RunSummary
    rules: tuple[Rule, ...]
    baseline: Baseline | None
    missing: tuple[str, ...]
    notes: tuple[str, ...] = ()
    #: Every rule passed (made once: a kept verdict is read by every poll).
    passed: bool = attrs.field(init=False)

    @passed.default
    def _passed(self) -> bool:
        return all(rule.passed for rule in self.rules)

    @property
    def status(self) -> str:
        return "PASSED" if self.passed else "FAILED"

    @property
    def coverage_delta(self) -> float | None:
        return self.baseline.coverage_delta(self.run) if self.baseline else None


def read_query(params: Mapping[str, Any]) -> GateQuery:
    """The query in the normal forms ingest stored (hex commits lower-case, no refs/heads/)."""
    return _normal_query(tuple(params.items()))


@functools.lru_cache(maxsize=KEPT_VERDICTS)
def _normal_query(items: tuple[tuple[str, Any], ...]) -> GateQuery:
    """``read_query`` once per set of parameters: CI asks the same again and again."""
    values = fields.read_query(dict(items))
    return GateQuery(
        project=values["project"],
        commit=values.get("commit"),
        branch=values.get("branch"),
        flag=values.get("flag", fields.DEFAULT_FLAG),
        base_sha=values.get("baseSha"),
    )


@attrs.define
class VerdictCache:
    """Verdicts (with their project) by query, each valid for the data version it was made at."""

    limit: int = KEPT_VERDICTS
    _kept: dict[GateQuery, tuple[int, Project, Verdict]] = attrs.field(factory=dict)
    #: What a door answered (JSON for HTTP), by the identity of what it was asked with: see
    #: ``made``.
    _made: dict[int, Made] = attrs.field(factory=dict)

    def get(self, query: GateQuery, version: int | None) -> tuple[Project, Verdict] | None:
        kept = self._kept.get(query)
        if kept is None or version is None or kept[0] != version:
            return None
        return kept[1], kept[2]

    def put(
        self, query: GateQuery, version: int | None, project: Project, verdict: Verdict
    ) -> None:
        if version is None:
            return
        self._kept.pop(query, None)
        if len(self._kept) >= self.limit:
            del self._kept[next(iter(self._kept))]
        self._kept[query] = (version, project, verdict)

    def made(self, asked: object, version: int | None) -> Made | None:
        """The answer a door made when asked with ``asked`` (the same object: HTTP's validated
        query, which the validation memo hands to every poll of one URL), if it was made at
        ``version``. A repeated poll then costs a lookup: no normal form, no judging, no
        encoding. Who may read the project is still the caller's to check."""
        made = self._made.get(id(asked))
        if made is None or made.asked is not asked or version is None or made.version != version:
            return None
        return made

    def keep_made(
        self, asked: object, version: int | None, query: GateQuery, verdict: Verdict, body: bytes
    ) -> None:
        """Keep a door's answer to ``asked``: only a verdict kept for ``query`` at ``version``
        (a verdict judged from data newer than ``version`` is not kept under it)."""
        kept = self.get(query, version)
        if kept is None or kept[1] is not verdict or version is None:
            return
        if len(self._made) >= self.limit:
            del self._made[next(iter(self._made))]
        self._made[id(asked)] = Made(asked, version, kept[0], verdict, body)


@attrs.frozen
class Made:
    """A door's answer to one way of asking (``VerdictCache.made``)."""

    asked: object  # held, so its id is not reused while the answer is kept
    version: int
    project: Project
    verdict: Verdict
    body: bytes


async def evaluate(
    store: Store,
    settings: GateSettings,
    query: GateQuery,
    *,
    can_read: CanRead,
    cache: VerdictCache | None = None,
) -> Verdict:
    """The verdict for ``query``; through ``cache`` when given (one per app: ``settings`` are
    the app's, fixed while it runs)."""
    if query.commit is None and query.branch is None:
        raise CommitOrBranchRequired()
    # Read before the queries: a commit while they run leaves the kept verdict already stale.
    version = store.data_version() if cache is not None else None
    kept = cache.get(query, version) if cache is not None else None
    if kept is not None:
        project, verdict = kept
        if not can_read(project):
            raise ProjectNotFound(query.project)
        return verdict
    project, verdict = await _judge(store, settings, query, can_read)
    if cache is not None:
        cache.put(query, version, project, verdict)
    return verdict


async def _judge(
    store: Store, settings: GateSettings, query: GateQuery, can_read: CanRead
) -> tuple[Project, Verdict]:
    found = await store.project_run(
        query.project, flag=query.flag, commit=query.commit, branch=query.branch
    )
    if found is None:
        await _explain_miss(store, query, can_read)
    project, run = found
    if not can_read(project):
        raise ProjectNotFound(query.project)
    baseline, notes = await find_baseline(store, settings, run, query.base_sha)
    wanted = [run.run_id, baseline.run.run_id] if baseline else [run.run_id]
    failing = await store.failing_keys(wanted) if run.tests else {}
    judge = _Judge(settings, run, baseline, failing)
    rules = [judge.new_failures(), judge.coverage_drop()]
    if settings.min_line_coverage is not None:
        rules.append(judge.min_coverage(settings.min_line_coverage))
    patch_min = await store.patch_coverage_min(project.id)  # the project's own, else the setting
    if patch_min is None:
        patch_min = settings.patch_coverage_min
    if patch_min is not None:
        rules.append(judge.patch_coverage(patch_min))
    return project, Verdict(run, tuple(rules), baseline, tuple(judge.missing), notes)


async def _explain_miss(store: Store, query: GateQuery, can_read: CanRead) -> NoReturn:
    """No run matched: a project the caller cannot see looks exactly like a missing one."""
    project = await store.find_project(query.project)
    if project is None or not can_read(project):
        raise ProjectNotFound(query.project)
    what = f"commit {query.commit!r}" if query.commit else f"branch {query.branch!r}"
    raise NoMatchingRun(query.project, what=what, flag=query.flag)


async def find_baseline(
    store: Store, settings: GateSettings, run: RunSummary, base_sha: str | None
) -> tuple[Baseline | None, tuple[str, ...]]:
    notes: list[str] = []
    if base_sha is not None:
        found = await store.latest_run(
            run.project_id, flag=run.flag, commit=base_sha, exclude_run_id=run.run_id
        )
        if found is not None:
            return Baseline(found, "baseSha"), ()
        notes.append(
            f"baseSha {base_sha} has no run with flag {run.flag!r}; "
            f"fell back to the latest run on {settings.base_branch!r}"
        )
    found = await store.latest_run(
        run.project_id, flag=run.flag, branch=settings.base_branch, before_run_id=run.run_id
    )
    return (Baseline(found, "base-branch") if found else None), tuple(notes)


@attrs.define
class _Judge:
    settings: GateSettings
    run: RunSummary
    baseline: Baseline | None
    failing: Mapping[int, frozenset[str]]
    missing: list[str] = attrs.field(factory=list)

    def _policy(self, code: str, policy: MissingDataPolicy, setting: str) -> tuple[bool, str]:
        if code not in self.missing:
            self.missing.append(code)
        return policy is MissingDataPolicy.PASS, f"results.gate.{setting}={policy.value}"

    def _no_baseline(self) -> str:
        return (
            f"no baseline: no earlier run on {self.settings.base_branch!r} "
            f"with flag {self.run.flag!r}"
        )

    def new_failures(self) -> Rule:
        if self.run.tests == 0:
            passed, why = self._policy("zero-tests", self.settings.on_zero_tests, "on-zero-tests")
            return Rule("new-failures", passed, f"the run holds no test results (0 tests) ({why})")
        failing = self.failing[self.run.run_id]
        if self.baseline is None:
            new, against = failing, f"({self._no_baseline()}, so every failure counts as new)"
        else:
            new = failing - self.failing[self.baseline.run.run_id]
            against = f"vs baseline run {self.baseline.run.run_id}"
        if not new:
            also = f"; {len(failing)} failing, all failing in the baseline too" if failing else ""
            return Rule("new-failures", True, f"no new failures {against}{also}")
        detail = f"{len(new)} new failure(s) {against}: {_listing(new)}"
        if not self.settings.fail_on_new_failures:
            return Rule(
                "new-failures", True, f"{detail} (not enforced: fail-on-new-failures=false)"
            )
        return Rule("new-failures", False, detail)

    def coverage_drop(self) -> Rule:
        current = self.run.line_coverage_pct
        if current is None:
            return self._no_coverage("coverage-drop")
        policy, setting = self.settings.on_missing_baseline, "on-missing-baseline"
        if self.baseline is None:
            passed, why = self._policy("no-baseline", policy, setting)
            return Rule("coverage-drop", passed, f"{self._no_baseline()} ({why})")
        base_run = self.baseline.run
        base = base_run.line_coverage_pct
        if base is None:
            passed, why = self._policy("no-baseline-coverage", policy, setting)
            detail = f"baseline run {base_run.run_id} reported no line coverage ({why})"
            return Rule("coverage-drop", passed, detail)
        drop, limit = base - current, self.settings.max_coverage_drop_pct
        change = f"drop {drop:.2f}pp" if drop > 0 else f"gain {-drop:.2f}pp"
        detail = (
            f"{current:.2f}% vs baseline {base:.2f}% (run {base_run.run_id}; "
            f"{change}, max drop {limit:.2f}pp)"
        )
        return Rule("coverage-drop", drop <= limit + 1e-9, detail)

    def min_coverage(self, minimum: float) -> Rule:
        current = self.run.line_coverage_pct
        if current is None:
            return self._no_coverage("min-coverage")
        detail = f"{current:.2f}% line coverage (min {minimum:.2f}%)"
        return Rule("min-coverage", current >= minimum - 1e-9, detail)

    def patch_coverage(self, minimum: float) -> Rule:
        run = self.run
        if run.patch_lines_valid is None:
            return Rule("patch-coverage", True, "skipped: the run was uploaded without a diff")
        current = run.patch_coverage_pct
        if current is None:
            detail = "skipped: the diff adds no line that the coverage counts as executable"
            return Rule("patch-coverage", True, detail)
        detail = (
            f"{current:.2f}% of the changed lines covered ({run.patch_lines_covered} of "
            f"{run.patch_lines_valid}; min {minimum:.2f}%)"
        )
        return Rule("patch-coverage", current >= minimum - 1e-9, detail)

    def _no_coverage(self, name: str) -> Rule:
        passed, why = self._policy(
            "no-coverage", self.settings.on_missing_coverage, "on-missing-coverage"
        )
        return Rule(name, passed, f"the run reported no line coverage ({why})")


def _listing(keys: frozenset[str]) -> str:
    shown = sorted(keys)[:LISTED_FAILURES]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")
