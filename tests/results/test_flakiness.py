"""Flakiness as evidence: reruns within a run and flips on one commit count; steady failures do not."""

from __future__ import annotations

from results.flakiness import Outcome, assess, ranked


def outcome(run: int, status: str, commit: str = "c1", flag: str = "default") -> Outcome:
    return Outcome(run, "main", commit, flag, "2026-01-01T00:00:00Z", status, 10)


def test_a_rerun_within_a_run_is_evidence() -> None:
    found = assess([outcome(1, "passed"), outcome(2, "flaky"), outcome(3, "passed")])
    assert found.rerun_runs == (2,)
    assert (found.events, found.runs, found.score) == (1, 3, 1 / 3)


def test_a_flip_on_one_commit_is_evidence_and_counts_each_failing_run_once() -> None:
    found = assess(
        [
            outcome(1, "failed", "c1"),
            outcome(2, "error", "c1"),
            outcome(3, "passed", "c1"),
            outcome(4, "failed", "c2"),
        ]
    )
    assert [(f.commit, f.failed_runs, f.passed_runs) for f in found.flips] == [("c1", (1, 2), (3,))]
    assert found.flaky_runs == {1, 2}  # run 4 failed on a commit that never passed: not flaky
    assert found.last_event == 2


def test_a_flaky_pass_also_counts_as_the_pass_of_a_flip() -> None:
    found = assess([outcome(1, "failed"), outcome(2, "flaky")])
    assert found.flaky_runs == {1, 2}
    assert found.score == 1.0


def test_flags_are_separate_commits_and_steady_failures_score_zero() -> None:
    found = assess([outcome(1, "failed", flag="unit"), outcome(2, "passed", flag="e2e")])
    assert found.flips == ()
    assert assess([outcome(n, "failed", f"c{n}") for n in range(5)]).score == 0.0
    assert assess([]).score == 0.0


def test_runs_present_can_be_given() -> None:
    assert assess([outcome(7, "flaky")], runs=20).score == 0.05


def test_ranked_puts_the_most_flaky_runs_first_and_drops_clean_tests() -> None:
    many = assess([outcome(1, "flaky"), outcome(2, "flaky")], runs=50)
    few = assess([outcome(3, "flaky")], runs=1)
    clean = assess([outcome(4, "passed")])
    assert [test for test, _ in ranked([(1, few), (2, many), (3, clean)])] == [2, 1]
