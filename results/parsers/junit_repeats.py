"""Test cases that share a classname and name within one report: retries or parametrisations.

Two shapes exist in the wild. Gradle without ``mergeReruns`` (and retry plugins) write each
attempt as its own ``<testcase>``: failures followed by a final pass in one suite. That is one
flaky test, and counting it as a failure plus a pass would fail a gate on a test that passed, so
it is folded into one flaky case. Anything else (data-driven tests with identical display names,
such as .NET's ``Multiply_ReturnsEight(1,2)`` twice) is kept: every case stays, numbered by its
occurrence so the identities do not collapse. Both are reported as diagnostics.
This module must not reorder cases or touch reports without repeats.
"""

from __future__ import annotations

from collections import Counter

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.model import TestCase, TestStatus

_FAILING = (TestStatus.FAILED, TestStatus.ERROR)
_PASSING = (TestStatus.PASSED, TestStatus.FLAKY)


def identity(case: TestCase) -> tuple[str, str]:
    """Classname and name; the suite stands in for an empty classname (jest, Go TestMain)."""
    return (case.classname or case.suite, case.name)


def number_repeats(per_frame: list[list[TestCase]], log: DiagnosticLog) -> list[list[TestCase]]:
    """Number or fold repeated identities; the input comes back untouched when there are none."""
    keys = [(case.classname or case.suite, case.name) for cases in per_frame for case in cases]
    if len(set(keys)) == len(keys):
        return per_frame
    counts = Counter(keys)
    repeated = {key for key, count in counts.items() if count > 1}
    if not repeated:
        return per_frame
    groups: dict[tuple[str, str], list[tuple[int, int]]] = {key: [] for key in repeated}
    for frame_index, cases in enumerate(per_frame):
        for case_index, case in enumerate(cases):
            key = identity(case)
            if key in groups:
                groups[key].append((frame_index, case_index))
    replaced: dict[tuple[int, int], TestCase | None] = {}
    for key, positions in groups.items():
        replaced.update(_resolve(key, positions, per_frame, log))
    return [_apply(f, cases, replaced) for f, cases in enumerate(per_frame)]


def _apply(
    frame: int, cases: list[TestCase], replaced: dict[tuple[int, int], TestCase | None]
) -> list[TestCase]:
    kept = []
    for index, case in enumerate(cases):
        new = replaced.get((frame, index), case) if (frame, index) in replaced else case
        if new is not None:
            kept.append(new)
    return kept


def _resolve(
    key: tuple[str, str],
    positions: list[tuple[int, int]],
    per_frame: list[list[TestCase]],
    log: DiagnosticLog,
) -> dict[tuple[int, int], TestCase | None]:
    cases = [per_frame[f][c] for f, c in positions]
    label = " ".join(part for part in key if part)
    if _is_retry_sequence(positions, cases):
        log.note(
            "reruns-folded",
            f"'{label}' ran {len(cases)} times in one suite, failing before it passed; "
            "reported once, as flaky",
        )
        folded: dict[tuple[int, int], TestCase | None] = dict.fromkeys(positions[:-1])
        folded[positions[-1]] = _fold(cases)
        return folded
    log.note(
        "duplicate-test",
        f"{len(cases)} test cases share classname and name '{label}'; "
        f"all kept, told apart as occurrences #1..#{len(cases)}",
    )
    return {
        position: case._replace(occurrence=number)
        for number, (position, case) in enumerate(zip(positions, cases, strict=True), start=1)
    }


def _is_retry_sequence(positions: list[tuple[int, int]], cases: list[TestCase]) -> bool:
    same_suite = len({frame for frame, _ in positions}) == 1
    return (
        same_suite
        and cases[-1].status in _PASSING
        and all(case.status in _FAILING for case in cases[:-1])
    )


def _fold(cases: list[TestCase]) -> TestCase:
    last_failure = cases[-2]
    durations = [case.duration_s for case in cases if case.duration_s is not None]
    return cases[-1]._replace(
        status=TestStatus.FLAKY,
        message=last_failure.message,
        failure_type=last_failure.failure_type,
        trace=last_failure.trace,
        reruns=cases[-1].reruns + len(cases) - 1,
        duration_s=sum(durations) if durations else None,
    )
