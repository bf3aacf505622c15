"""GET /api/v1/gate through real HTTP: run selection, baselines, the three rules, missing data."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from results.app import create_app
from tests.conftest import ApiClient
from tests.guards import assert_json, assert_problem
from tests.results.support import coverage_for, db_path, ingest_ok, junit_xml, settings_for
from tests.typing_support import Client

CONTRACT_FIELDS = (
    "project",
    "branch",
    "commit",
    "flag",
    "runId",
    "status",
    "passed",
    "coverageDelta",
    "rules",
    "runPath",
)
MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
def make_client(api_client: ApiClient, tmp_path: Path) -> MakeClient:
    async def make(*sets: str) -> Any:
        return await api_client(create_app(settings_for(tmp_path, *sets)))

    return make


@pytest.fixture
async def client(make_client: MakeClient) -> Client:
    return await make_client()


async def seed(
    client: Client,
    *,
    branch: str = "main",
    commit: str,
    cases: Sequence[tuple[str, str]] = (("a", "pass"),),
    pct: int | None = None,
    flag: str = "default",
    project: str = "demo",
) -> int:
    reports: dict[str, Any] = {"junit": [junit_xml(cases, suite=commit)] if cases else []}
    if pct is not None:
        reports["jacoco"] = [coverage_for(pct, name=f"{commit}.info")]
    body = await ingest_ok(
        client, project=project, branch=branch, commit=commit, flag=flag, **reports
    )
    return int(body["runId"])


async def gate(client: Client, **params: str) -> dict[str, Any]:
    resp = await client.get("/api/v1/gate", params={"project": "demo", **params})
    body: dict[str, Any] = await assert_json(resp)
    return body


def rule(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in verdict["rules"] if r["name"] == name)


async def test_a_pull_request_against_main(client: Client) -> None:
    base = await seed(client, commit="aaaa1111", cases=[("a", "pass"), ("b", "fail")], pct=80)
    run = await seed(
        client, branch="feature", commit="bbbb2222", cases=[("a", "fail"), ("b", "fail")], pct=79
    )
    verdict = await gate(client, commit="bbbb2222")
    for field in CONTRACT_FIELDS:
        assert field in verdict
    assert (verdict["runId"], verdict["branch"], verdict["flag"]) == (run, "feature", "default")
    assert (verdict["status"], verdict["passed"]) == ("FAILED", False)
    assert verdict["runPath"] == f"/runs/{run}"
    assert verdict["coverageDelta"] == -1.0
    assert verdict["baseline"]["runId"] == base
    assert verdict["baseline"]["source"] == "base-branch"
    new = rule(verdict, "new-failures")
    assert not new["passed"]
    assert new["detail"] == f"1 new failure(s) vs baseline run {base}: pkg.Tests a"
    drop = rule(verdict, "coverage-drop")
    assert drop["passed"]  # exactly the default 1.0pp allowance
    assert "drop 1.00pp" in drop["detail"]
    assert [r["name"] for r in verdict["rules"]] == ["new-failures", "coverage-drop"]
    assert verdict["missingData"] == []


async def test_failures_already_failing_in_the_baseline_pass(client: Client) -> None:
    await seed(client, commit="aaaa1111", cases=[("a", "fail")], pct=50)
    await seed(client, branch="f", commit="bbbb2222", cases=[("a", "fail")], pct=52)
    verdict = await gate(client, branch="f")
    assert verdict["passed"] is True
    assert "1 failing, all failing in the baseline too" in rule(verdict, "new-failures")["detail"]
    assert verdict["coverageDelta"] == 2.0
    assert "gain 2.00pp" in rule(verdict, "coverage-drop")["detail"]


async def test_a_drop_beyond_the_limit_fails(client: Client) -> None:
    await seed(client, commit="aaaa1111", pct=80)
    await seed(client, branch="f", commit="bbbb2222", pct=78)
    verdict = await gate(client, commit="bbbb2222")
    assert rule(verdict, "coverage-drop")["passed"] is False
    assert verdict["status"] == "FAILED"


async def test_the_drop_limit_is_a_setting(make_client: MakeClient) -> None:
    client = await make_client("results.gate.max-coverage-drop-pct=5")
    await seed(client, commit="aaaa1111", pct=80)
    await seed(client, branch="f", commit="bbbb2222", pct=76)
    assert (await gate(client, commit="bbbb2222"))["passed"] is True


async def test_commit_is_preferred_over_branch(client: Client) -> None:
    on_commit = await seed(client, branch="f", commit="aaaa1111")
    await seed(client, branch="f", commit="bbbb2222")
    verdict = await gate(client, commit="aaaa1111", branch="f")
    assert verdict["runId"] == on_commit


async def test_branch_gates_its_latest_run_and_commit_prefixes_match(client: Client) -> None:
    await seed(client, branch="f", commit="aaaa1111")
    latest = await seed(client, branch="f", commit="bbbb2222cccc")
    assert (await gate(client, branch="f"))["runId"] == latest
    assert (await gate(client, branch="refs/heads/f"))["runId"] == latest
    assert (await gate(client, commit="BBBB2222"))["runId"] == latest


async def test_a_main_run_is_judged_against_the_main_run_before_it(client: Client) -> None:
    first = await seed(client, commit="aaaa1111", pct=70)
    second = await seed(client, commit="bbbb2222", pct=71)
    verdict = await gate(client, branch="main")
    assert verdict["runId"] == second
    assert verdict["baseline"]["runId"] == first


async def test_base_sha_picks_the_baseline(client: Client) -> None:
    chosen = await seed(client, commit="aaaa1111", cases=[("a", "fail")], pct=90)
    await seed(client, commit="bbbb2222", pct=60)
    await seed(client, branch="f", commit="cccc3333", cases=[("a", "fail")], pct=89)
    verdict = await gate(client, commit="cccc3333", baseSha="aaaa1111")
    assert verdict["baseline"]["runId"] == chosen
    assert verdict["baseline"]["source"] == "baseSha"
    assert verdict["baseline"]["commit"] == "aaaa1111"
    assert verdict["coverageDelta"] == -1.0
    assert verdict["passed"] is True
    assert verdict["notes"] == []


async def test_an_unknown_base_sha_falls_back_and_says_so(client: Client) -> None:
    main = await seed(client, commit="aaaa1111", pct=60)
    await seed(client, branch="f", commit="cccc3333", pct=60)
    verdict = await gate(client, commit="cccc3333", baseSha="dddd4444")
    assert verdict["baseline"]["runId"] == main
    assert verdict["baseline"]["source"] == "base-branch"
    assert "dddd4444" in verdict["notes"][0]


async def test_the_baseline_has_the_same_flag(client: Client) -> None:
    await seed(client, commit="aaaa1111", pct=90, flag="unit")
    other_flag = await gate(client, commit="aaaa1111", flag="unit")
    assert other_flag["baseline"] is None
    await seed(client, branch="f", commit="bbbb2222", pct=40)
    verdict = await gate(client, commit="bbbb2222")
    assert verdict["baseline"] is None  # main's only run has flag unit
    assert verdict["flag"] == "default"


async def test_no_baseline_is_explicit(client: Client) -> None:
    await seed(client, branch="f", commit="aaaa1111", cases=[("a", "fail")], pct=50)
    verdict = await gate(client, commit="aaaa1111")
    assert verdict["baseline"] is None
    assert verdict["coverageDelta"] is None
    assert verdict["missingData"] == ["no-baseline"]
    drop = rule(verdict, "coverage-drop")
    assert drop["passed"] is True
    assert "no baseline" in drop["detail"]
    assert "on-missing-baseline=PASS" in drop["detail"]
    new = rule(verdict, "new-failures")
    assert new["passed"] is False
    assert "every failure counts as new" in new["detail"]


async def test_no_baseline_can_fail_by_policy(make_client: MakeClient) -> None:
    client = await make_client("results.gate.on-missing-baseline=FAIL")
    await seed(client, branch="f", commit="aaaa1111", pct=50)
    verdict = await gate(client, commit="aaaa1111")
    assert verdict["passed"] is False
    assert rule(verdict, "coverage-drop")["passed"] is False


async def test_a_baseline_without_coverage_is_explicit(client: Client) -> None:
    await seed(client, commit="aaaa1111")
    await seed(client, branch="f", commit="bbbb2222", pct=50)
    verdict = await gate(client, commit="bbbb2222")
    assert verdict["missingData"] == ["no-baseline-coverage"]
    assert "reported no line coverage" in rule(verdict, "coverage-drop")["detail"]
    assert verdict["coverageDelta"] is None


async def test_no_coverage_is_explicit_and_can_fail_by_policy(make_client: MakeClient) -> None:
    client = await make_client()
    await seed(client, commit="aaaa1111", pct=50)
    await seed(client, branch="f", commit="bbbb2222")
    verdict = await gate(client, commit="bbbb2222")
    assert verdict["missingData"] == ["no-coverage"]
    drop = rule(verdict, "coverage-drop")
    assert (drop["passed"], drop["detail"]) == (
        True,
        "the run reported no line coverage (results.gate.on-missing-coverage=PASS)",
    )
    strict = await make_client("results.gate.on-missing-coverage=FAIL")
    await seed(strict, branch="f", commit="bbbb2222")
    assert (await gate(strict, commit="bbbb2222"))["passed"] is False


async def test_zero_tests_fail_by_default_and_say_so(make_client: MakeClient) -> None:
    client = await make_client()
    await seed(client, branch="f", commit="aaaa1111", cases=(), pct=70)
    verdict = await gate(client, commit="aaaa1111")
    new = rule(verdict, "new-failures")
    assert new["passed"] is False
    assert "0 tests" in new["detail"]
    assert "zero-tests" in verdict["missingData"]
    lenient = await make_client("results.gate.on-zero-tests=PASS")
    await seed(lenient, branch="f", commit="aaaa1111", cases=(), pct=70)
    assert rule(await gate(lenient, commit="aaaa1111"), "new-failures")["passed"] is True


async def test_min_coverage_when_configured(make_client: MakeClient) -> None:
    client = await make_client("results.gate.min-line-coverage=75")
    await seed(client, branch="f", commit="aaaa1111", pct=74)
    await seed(client, branch="f", commit="bbbb2222", pct=75)
    await seed(client, branch="f", commit="cccc3333")
    low = rule(await gate(client, commit="aaaa1111"), "min-coverage")
    assert (low["passed"], low["detail"]) == (False, "74.00% line coverage (min 75.00%)")
    assert rule(await gate(client, commit="bbbb2222"), "min-coverage")["passed"] is True
    none = await gate(client, commit="cccc3333")
    assert "no line coverage" in rule(none, "min-coverage")["detail"]
    assert none["missingData"] == ["no-coverage"]


async def test_new_failures_can_be_reported_without_failing(make_client: MakeClient) -> None:
    client = await make_client("results.gate.fail-on-new-failures=false")
    await seed(client, branch="f", commit="aaaa1111", cases=[("a", "fail")])
    new = rule(await gate(client, commit="aaaa1111"), "new-failures")
    assert new["passed"] is True
    assert "not enforced" in new["detail"]


async def test_neither_commit_nor_branch_is_a_400(client: Client) -> None:
    resp = await client.get("/api/v1/gate", params={"project": "demo"})
    await assert_problem(resp, 400, code="commit-or-branch-required")


async def test_a_missing_project_parameter_is_named(client: Client) -> None:
    resp = await client.get("/api/v1/gate", params={"branch": "main"})
    body = await assert_problem(resp, 400, code="invalid-request")
    assert body["errors"] == [{"in": "query", "field": "project", "message": "is required"}]


async def test_a_malformed_commit_is_named(client: Client) -> None:
    resp = await client.get("/api/v1/gate", params={"project": "demo", "commit": "a b"})
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["field"] == "commit"


async def test_an_unknown_project_is_a_404(client: Client) -> None:
    resp = await client.get("/api/v1/gate", params={"project": "nope", "branch": "main"})
    await assert_problem(resp, 404, code="project-not-found")


async def test_no_matching_run_is_a_404(client: Client) -> None:
    await seed(client, commit="aaaa1111")
    for params in ({"commit": "ffff0000"}, {"branch": "gone"}, {"branch": "main", "flag": "x"}):
        resp = await client.get("/api/v1/gate", params={"project": "demo", **params})
        await assert_problem(resp, 404, code="run-not-found")


async def test_a_private_project_is_a_404_to_anonymous_callers(
    client: Client, tmp_path: Path
) -> None:
    await seed(client, commit="aaaa1111")
    conn = sqlite3.connect(db_path(settings_for(tmp_path)))
    with conn:
        conn.execute("UPDATE projects SET visibility = 'PRIVATE'")
    conn.close()
    resp = await client.get("/api/v1/gate", params={"project": "demo", "commit": "aaaa1111"})
    body = await assert_problem(resp, 404, code="project-not-found")
    unknown = await client.get("/api/v1/gate", params={"project": "other", "commit": "a"})
    assert (await unknown.json())["detail"].replace("other", "demo") == body["detail"]


# --- kept verdicts: CI asks again and again; any commit must show in the next answer ------------


async def test_an_upload_changes_the_verdict_asked_for_before(client: Any) -> None:
    first = await seed(client, commit="aaaa1111", cases=[("a", "pass")], pct=80)
    for _ in range(2):  # the second answer is the kept one
        verdict = await gate(client, branch="main")
        assert (verdict["runId"], verdict["status"]) == (first, "PASSED")
    second = await seed(client, commit="bbbb2222", cases=[("a", "fail")], pct=80)
    verdict = await gate(client, branch="main")
    assert (verdict["runId"], verdict["status"]) == (second, "FAILED")
    assert verdict["baseline"]["runId"] == first


async def test_a_second_upload_into_the_same_run_changes_its_kept_verdict(client: Any) -> None:
    """A sharded CI job uploads its reports into one run (``runKey``): same run, new failures."""
    shard = {"project": "demo", "commit": "aaaa1111", "runKey": "build-7"}
    one = await ingest_ok(client, **shard, junit=[junit_xml([("a", "pass")], suite="one")])
    for _ in range(2):
        assert (await gate(client, commit="aaaa1111"))["status"] == "PASSED"
    two = await ingest_ok(client, **shard, junit=[junit_xml([("b", "fail")], suite="two")])
    assert two["runId"] == one["runId"]
    verdict = await gate(client, commit="aaaa1111")
    assert (verdict["runId"], verdict["status"]) == (one["runId"], "FAILED")
    assert verdict["tests"] == 2


async def test_a_commit_by_another_connection_reaches_a_kept_verdict(
    client: Any, tmp_path: Path
) -> None:
    """As ``wharf results project visibility`` does from the shell: another process's commit."""
    await seed(client, commit="aaaa1111")
    query = {"project": "demo", "commit": "aaaa1111"}
    for _ in range(2):
        assert (await client.get("/api/v1/gate", params=query)).status == 200
    conn = sqlite3.connect(db_path(settings_for(tmp_path)))
    with conn:
        conn.execute("UPDATE projects SET visibility = 'PRIVATE'")
    conn.close()
    await assert_problem(await client.get("/api/v1/gate", params=query), 404)
    conn = sqlite3.connect(db_path(settings_for(tmp_path)))
    with conn:
        conn.execute("UPDATE projects SET visibility = 'PUBLIC'")
    conn.close()
    assert (await client.get("/api/v1/gate", params=query)).status == 200


async def test_kept_verdicts_are_still_counted(client: Any) -> None:
    await seed(client, commit="aaaa1111")
    for _ in range(3):
        await gate(client, commit="aaaa1111")
    scrape = await (await client.get("/actuator/prometheus")).text()
    assert 'results_gate_verdicts_total{status="PASSED"} 3.0' in scrape
