"""The read API over real HTTP on one project's story: projects, runs, trends, tests, flakiness,
comparisons and badges, with PRIVATE projects hidden as everywhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from results import keys
from tests.conftest import ApiClient
from tests.guards import assert_json, assert_problem
from tests.results import story
from tests.results.people import bearer, make_token, make_user, start
from tests.typing_support import Client


@pytest.fixture
async def told(api_client: ApiClient, tmp_path: Path) -> tuple[Client, story.Story]:
    client = await start(api_client, tmp_path)
    return client, await story.tell(client)


async def get(client: Client, path: str, **headers: str) -> Any:
    return await assert_json(await client.get(f"/api/v1{path}", headers=headers))


async def test_projects_list_what_the_caller_may_read(told: tuple[Client, story.Story]) -> None:
    client, s = told
    body = await get(client, "/projects")
    assert [p["name"] for p in body["projects"]] == ["shop"]
    shop = body["projects"][0]
    assert (shop["id"], shop["runs"], shop["path"]) == (
        s.project_id,
        7,
        f"/projects/{s.project_id}",
    )
    assert shop["latestRun"]["runId"] == s.integration
    assert (await get(client, "/projects?name=vault"))["projects"] == []
    await make_user(client, "keeper")
    await client.app[keys.ACCOUNTS].grant("keeper", "vault")
    token = await make_token(client, "keeper")
    named = await get(client, "/projects?name=vault", **bearer(token))
    assert [p["name"] for p in named["projects"]] == ["vault"]


async def test_a_project_names_its_flags_and_recent_branches(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    body = await get(client, f"/projects/{s.project_id}")
    assert body["flags"] == ["default", "integration"]
    assert body["branches"] == ["main", "feature/x"]  # the most recently active first


async def test_runs_page_by_id_and_filter(told: tuple[Client, story.Story]) -> None:
    client, s = told
    resp = await client.get(f"/api/v1/projects/{s.project_id}/runs?limit=3&flag=default")
    first = await resp.json()
    assert [r["runId"] for r in first["runs"]] == [s.feature, s.dropped, s.surefire]
    assert first["nextBefore"] == s.surefire
    assert f"before={s.surefire}" in resp.headers["Link"]
    assert 'rel="next"' in resp.headers["Link"]
    rest = await get(
        client, f"/projects/{s.project_id}/runs?limit=3&flag=default&before={s.surefire}"
    )
    assert [r["runId"] for r in rest["runs"]] == [s.retried, s.broken, s.green]
    assert rest["nextBefore"] is None
    on_b = await get(client, f"/projects/{s.project_id}/runs?commit=bbbbbbb")  # a 7-hex prefix
    assert [r["runId"] for r in on_b["runs"]] == [s.retried, s.broken]
    feature = await get(client, f"/projects/{s.project_id}/runs?branch=refs/heads/feature/x")
    assert [r["runId"] for r in feature["runs"]] == [s.feature]
    resp = await client.get(f"/api/v1/projects/{s.project_id}/runs?limit=0")
    await assert_problem(resp, 400)
    resp = await client.get(f"/api/v1/projects/{s.project_id}/runs?flag=bad flag")
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["field"] == "flag"


async def test_trends_are_one_flag_and_optionally_one_branch(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    body = await get(client, f"/projects/{s.project_id}/trends?branch=main")
    points = body["points"]
    assert [p["runId"] for p in points] == [s.green, s.broken, s.retried, s.surefire, s.dropped]
    assert (body["flag"], body["branch"]) == ("default", "main")
    assert [p["passRatePct"] for p in points] == [100.0, 66.67, 100.0, 50.0, 66.67]
    assert [p["lineCoveragePct"] for p in points] == [81.82, 81.82, 81.82, 81.82, 63.64]
    assert (points[3]["flaky"], points[3]["passed"]) == (2, 2)
    every = await get(client, f"/projects/{s.project_id}/trends?points=2")
    assert [p["runId"] for p in every["points"]] == [s.dropped, s.feature]  # no integration run
    integration = await get(client, f"/projects/{s.project_id}/trends?flag=integration")
    assert [p["runId"] for p in integration["points"]] == [s.integration]


async def test_a_run_lists_its_failures_with_links_to_their_history(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    body = await get(client, f"/runs/{s.surefire}")
    # Surefire's flakyFailure: passed on the rerun, so passed and flaky, never "not passed".
    assert (body["tests"], body["passed"], body["flaky"], body["failures"], body["errors"]) == (
        4,
        2,
        2,
        1,
        1,
    )
    assert body["passRatePct"] == 50.0
    statuses = [p["status"] for p in body["problems"]]
    assert statuses == ["error", "failed", "flaky", "flaky"]  # failing first
    assert body["problemsTotal"] == 4
    flaky = body["problems"][2]
    assert flaky["reruns"] == 1
    assert flaky["historyPath"] == f"/projects/{s.project_id}/tests/{flaky['testId']}"


async def test_tests_are_found_by_text_or_exact_key(told: tuple[Client, story.Story]) -> None:
    client, s = told
    found = await get(client, f"/projects/{s.project_id}/tests?q=CHECK")
    assert [t["key"] for t in found["tests"]] == ["pkg.Tests checkout"]
    assert (await get(client, f"/projects/{s.project_id}/tests?q=%25"))["tests"] == []
    exact = await get(client, f"/projects/{s.project_id}/tests?key=pkg.Tests%20refund")
    assert [t["name"] for t in exact["tests"]] == ["refund"]
    resp = await client.get(f"/api/v1/projects/{s.project_id}/tests?key=pkg.Tests%20nothing")
    await assert_problem(resp, 404, code="test-not-found")


async def test_history_shows_outcomes_durations_and_a_flip(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    checkout = await _test_id(client, s, "pkg.Tests checkout")
    body = await get(client, f"/projects/{s.project_id}/tests/{checkout}/history")
    assert [(o["runId"], o["status"]) for o in body["outcomes"]] == [
        (s.green, "passed"),
        (s.broken, "failed"),
        (s.retried, "passed"),
        (s.dropped, "passed"),
        (s.feature, "passed"),
    ]
    assert body["medianDurationMs"] == 500
    flakiness = body["flakiness"]
    assert flakiness["flips"] == [
        {
            "commit": story.COMMITS["b"],
            "flag": "default",
            "failedRuns": [s.broken],
            "passedRuns": [s.retried],
        }
    ]
    assert (flakiness["runs"], flakiness["flakyRuns"], flakiness["scorePct"]) == (5, 1, 20.0)
    on_feature = await get(
        client, f"/projects/{s.project_id}/tests/{checkout}/history?branch=feature/x"
    )
    assert [o["runId"] for o in on_feature["outcomes"]] == [s.feature]
    assert on_feature["flakiness"]["flakyRuns"] == 0
    refund = await _test_id(client, s, "pkg.Tests refund")
    body = await get(client, f"/projects/{s.project_id}/tests/{refund}/history")
    assert body["flakiness"]["flakyRuns"] == 0  # failing on its own commit only: broken, not flaky
    resp = await client.get(f"/api/v1/projects/{s.project_id}/tests/999999/history")
    await assert_problem(resp, 404, code="test-not-found")


async def test_flaky_list_is_most_flaky_first_with_evidence(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    body = await get(client, f"/projects/{s.project_id}/flaky")
    listed = {t["test"]["name"]: t["flakiness"] for t in body["tests"]}
    assert set(listed) == {"checkout", "failsAssertionOnlyFirstAttempt", "throwsOnlyFirstAttempt"}
    assert listed["throwsOnlyFirstAttempt"]["rerunRuns"] == [s.surefire]
    assert listed["checkout"]["flips"][0]["failedRuns"] == [s.broken]
    assert listed["checkout"]["runs"] == 5
    assert body["tests"][-1]["test"]["name"] == "checkout"  # 1 of 5 runs ranks below 1 of 1
    assert (body["runs"], body["total"]) == (7, 3)
    narrow = await get(client, f"/projects/{s.project_id}/flaky?runs=2")
    assert narrow["tests"] == []  # the newest two runs show no flakiness
    assert (narrow["oldestRunId"], narrow["newestRunId"]) == (s.feature, s.integration)


async def test_compare_lists_new_fixed_still_failing_and_coverage_per_file(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    body = await get(client, f"/runs/{s.dropped}/compare")
    assert body["baseline"]["runId"] == s.surefire
    assert body["coverageDelta"] == -18.18
    new = body["newFailures"]
    assert [(c["test"]["key"], c["status"], c["baseStatus"]) for c in new] == [
        ("pkg.Tests refund", "failed", None)  # the Surefire run did not run it
    ]
    assert {c["test"]["name"] for c in body["gone"]} == {"throwsAlways", "failsAssertionAlways"}
    assert body["counts"] == {"newFailures": 1, "stillFailing": 0, "fixed": 0, "gone": 2}
    assert body["files"] == [
        {
            "path": "src/app.py",
            "linesCovered": 60,
            "linesValid": 100,
            "baseLinesCovered": 80,
            "baseLinesValid": 100,
            "lineCoveragePct": 60.0,
            "baseLineCoveragePct": 80.0,
            "deltaPct": -20.0,
        }
    ]
    retried = await get(client, f"/runs/{s.retried}/compare")
    assert [c["test"]["name"] for c in retried["fixed"]] == ["checkout"]
    assert retried["fixed"][0]["status"] == "passed"
    assert retried["files"] == []
    against_green = await get(client, f"/runs/{s.broken}/compare?baseSha={story.COMMITS['a']}")
    assert against_green["baseline"]["source"] == "baseSha"
    assert [c["baseStatus"] for c in against_green["newFailures"]] == ["passed"]
    first = await get(client, f"/runs/{s.green}/compare")
    assert first["baseline"] is None
    assert first["newFailures"] == []


async def test_an_id_past_64_bits_is_a_400_naming_it(told: tuple[Client, story.Story]) -> None:
    client, _ = told
    huge = 2**69
    for path in (f"/runs/{huge}", f"/runs/{huge}/compare", f"/projects/{huge}/tests/1/history"):
        resp = await client.get(f"/api/v1{path}")
        body = await assert_problem(resp, 400, code="invalid-request")
        assert body["errors"][0]["message"].startswith("must be between"), path
    assert (await client.get(f"/api/v1/runs/{2**63 - 1}")).status == 404


async def test_badges_say_coverage_and_gate(told: tuple[Client, story.Story]) -> None:
    client, _ = told
    resp = await client.get("/api/v1/badges/coverage.svg?project=shop")
    assert resp.content_type == "image/svg+xml"
    assert resp.headers["Cache-Control"] == "public, max-age=60"
    svg = await resp.text()
    assert "coverage: 63.6%" in svg
    assert "<script" not in svg
    feature = await (
        await client.get("/api/v1/badges/coverage.svg?project=shop&branch=feature/x")
    ).text()
    assert "86.4%" in feature
    gate = await (await client.get("/api/v1/badges/gate.svg?project=shop")).text()
    assert "quality gate: failed" in gate  # refund is a new failure on main
    passed = await (
        await client.get("/api/v1/badges/gate.svg?project=shop&branch=feature/x")
    ).text()
    assert "quality gate: passed" in passed
    none = await (await client.get("/api/v1/badges/gate.svg?project=shop&branch=nope")).text()
    assert "quality gate: unknown" in none
    resp = await client.get("/api/v1/badges/coverage.svg?project=nope")
    await assert_problem(resp, 404)


async def test_private_projects_are_hidden_from_every_read(
    told: tuple[Client, story.Story],
) -> None:
    client, _ = told
    vault = (await client.get("/api/v1/runs/8")).status
    assert vault == 404
    await make_user(client, "keeper")
    token = await make_token(client, "keeper")
    project_id = 2
    for path in (
        f"/projects/{project_id}",
        f"/projects/{project_id}/runs",
        f"/projects/{project_id}/trends",
        f"/projects/{project_id}/tests?q=a",
        f"/projects/{project_id}/tests/1/history",
        f"/projects/{project_id}/flaky",
        "/runs/8",
        "/runs/8/compare",
        "/badges/coverage.svg?project=vault",
        "/badges/gate.svg?project=vault",
    ):
        resp = await client.get(f"/api/v1{path}", headers=bearer(token))
        await assert_problem(resp, 404)
    await client.app[keys.ACCOUNTS].grant("keeper", "vault")
    assert (await client.get("/api/v1/runs/8", headers=bearer(token))).status == 200
    resp = await client.get("/api/v1/badges/coverage.svg?project=vault", headers=bearer(token))
    assert resp.headers["Cache-Control"] == "private, no-store"


async def test_closed_mode_needs_a_credential_for_reads(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path, "results.security.open-mode=false")
    for path in ("/projects", "/runs/1", "/badges/coverage.svg?project=shop"):
        await assert_problem(await client.get(f"/api/v1{path}"), 401)


async def _test_id(client: Client, s: story.Story, key: str) -> int:
    body = await get(client, f"/projects/{s.project_id}/tests?key={key.replace(' ', '%20')}")
    return int(body["tests"][0]["testId"])
