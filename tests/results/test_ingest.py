"""POST /api/v1/ingest through real HTTP: real reports, shards, re-sends, fields and listeners."""

from __future__ import annotations

import asyncio
import gzip
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from results import keys
from results.app import create_app
from results.runs import RunSummary
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.results.support import (
    coverage_for,
    db_path,
    form,
    ingest_ok,
    junit_xml,
    lcov,
    reference,
    row_counts,
    settings_for,
    upload,
)
from tests.typing_support import Client

# name: (tests, passed, failures, errors, skipped, flaky), counted independently from the files.
JUNIT_TRUTH = {
    "junit-surefire3-rerun-flaky.xml": (4, 2, 1, 1, 0, 2),
    "junit-gradle-TEST-BarTest.xml": (1, 1, 0, 0, 0, 0),
    "junit-pytest-xunit1-skipped.xml": (14, 10, 0, 0, 4, 0),
    "junit-jest-junit.xml": (2, 2, 0, 0, 0, 0),
    "junit-gotestsum-golden.xml": (47, 38, 5, 0, 4, 0),
    "junit-dotnet-JunitXml.TestLogger.xml": (9, 5, 4, 0, 0, 0),
    "junit-bazel-generated-suite-logs.xml": (1, 0, 0, 1, 0, 0),
    "junit-phpunit-nested-testsuites.xml": (15, 15, 0, 0, 0, 0),
}
# name: (line %, branch %) from the report's own totals; None is "unknown", not 0.
COVERAGE_TRUTH = {
    "jacoco-default-package.xml": (66.67, 50.0),
    "jacoco-aggregate-empty-report.xml": (None, None),
    "cobertura-java-2.0.3-doctype.xml": (0.0, 0.0),
    "cobertura-coveragepy-4.5.1.xml": (55.92, None),
}


@pytest.fixture
async def client(api_client: ApiClient, tmp_path: Path) -> Client:
    return await api_client(create_app(settings_for(tmp_path)))


def counts(body: dict[str, Any]) -> tuple[int, ...]:
    fields = ("tests", "passed", "failures", "errors", "skipped", "flaky")
    return tuple(body[f] for f in fields)


@pytest.mark.parametrize("name", sorted(JUNIT_TRUTH))
async def test_every_reference_junit_report_has_its_true_counts(client: Client, name: str) -> None:
    body = await ingest_ok(client, project=name.removesuffix(".xml"), junit=[reference(name)])
    assert counts(body) == JUNIT_TRUTH[name]
    assert body["status"] == ("FAILED" if body["failures"] + body["errors"] else "PASSED")
    assert body["lineCoveragePct"] is None
    assert body["diagnostics"][0]["code"] == "dialect"
    assert body["diagnostics"][0]["filename"] == name


@pytest.mark.parametrize("name", sorted(COVERAGE_TRUTH))
async def test_every_reference_coverage_report_has_its_true_percentages(
    client: Client, name: str
) -> None:
    body = await ingest_ok(client, project=name.removesuffix(".xml"), jacoco=[reference(name)])
    assert (body["lineCoveragePct"], body["branchCoveragePct"]) == COVERAGE_TRUTH[name]
    assert body["tests"] == 0


async def test_all_reference_reports_in_one_run(client: Client, tmp_path: Path) -> None:
    body = await ingest_ok(
        client,
        junit=[reference(n) for n in sorted(JUNIT_TRUTH)],
        jacoco=[reference("jacoco-default-package.xml")],
    )
    totals = [sum(t[i] for t in JUNIT_TRUTH.values()) for i in range(6)]
    assert list(counts(body)) == totals
    assert body["uploads"] == len(JUNIT_TRUTH) + 1
    stored = row_counts(db_path(settings_for(tmp_path)))
    assert stored["test_cases"] == totals[0]
    assert stored["runs"] == 1


async def test_the_contract_fields_and_a_created_project(client: Client) -> None:
    body = await ingest_ok(
        client,
        junit=[reference("junit-gradle-TEST-BarTest.xml")],
        buildUrl="https://ci.example.com/build/7",
    )
    for field in ("runId", "project", "tests", "failures", "skipped", "lineCoveragePct"):
        assert field in body
    assert body["project"] == "demo"
    assert body["runPath"] == f"/runs/{body['runId']}"
    assert body["created"] is True


async def test_gzip_uploads_are_read_and_hashed_as_sent(client: Client) -> None:
    name, content = reference("junit-gotestsum-golden.xml")
    body = await ingest_ok(client, junit=[(name + ".gz", gzip.compress(content))])
    assert counts(body) == JUNIT_TRUTH[name]


async def test_shards_with_one_run_key_join_and_merge_coverage_by_line_union(
    client: Client,
) -> None:
    shard_a = lcov({"src/a.py": {1: 1, 2: 1, 3: 0, 4: 0}, "src/b.py": {1: 1}}, name="a.info")
    shard_b = lcov({"src/a.py": {1: 0, 2: 0, 3: 1, 4: 0}, "src/c.py": {1: 0}}, name="b.info")
    first = await ingest_ok(
        client, runKey="build-9", junit=[junit_xml([("t1", "pass")], suite="s1")], jacoco=[shard_a]
    )
    second = await ingest_ok(
        client, runKey="build-9", junit=[junit_xml([("t2", "fail")], suite="s2")], jacoco=[shard_b]
    )
    assert second["runId"] == first["runId"]
    assert second["created"] is False
    assert (second["tests"], second["failures"], second["uploads"]) == (2, 1, 4)
    # a.py: 1, 2, 3 covered of 4; b.py 1 of 1; c.py 0 of 1 → 4 of 6, not a sum of counters.
    assert second["lineCoveragePct"] == round(100 * 4 / 6, 2)


async def test_a_re_sent_file_is_not_counted_twice(client: Client, tmp_path: Path) -> None:
    report = reference("junit-pytest-xunit1-skipped.xml")
    coverage = coverage_for(40)
    first = await ingest_ok(client, runKey="k", junit=[report], jacoco=[coverage])
    again = await ingest_ok(client, runKey="k", junit=[report], jacoco=[coverage])
    assert again["runId"] == first["runId"]
    assert counts(again) == counts(first)
    assert again["lineCoveragePct"] == 40.0
    assert again["duplicates"] == 2
    assert {d["code"] for d in again["diagnostics"]} == {"duplicate-upload"}
    assert row_counts(db_path(settings_for(tmp_path)))["test_cases"] == 14


async def test_the_same_file_twice_in_one_request_counts_once(client: Client) -> None:
    report = junit_xml([("a", "pass"), ("b", "fail")])
    body = await ingest_ok(client, junit=[report, report])
    assert (body["tests"], body["uploads"], body["duplicates"]) == (2, 1, 1)


async def test_without_a_run_key_each_upload_is_a_new_run(client: Client) -> None:
    report = junit_xml([("a", "pass")])
    first = await ingest_ok(client, junit=[report])
    second = await ingest_ok(client, junit=[report])
    assert second["runId"] > first["runId"]


async def test_a_run_key_with_another_commit_is_a_conflict(client: Client) -> None:
    await ingest_ok(client, runKey="k", junit=[junit_xml([("a", "pass")])])
    resp = await upload(client, runKey="k", commit="ffff0000", junit=[junit_xml([("b", "pass")])])
    body = await assert_problem(resp, 409, code="run-key-conflict")
    assert "runId" in body


async def test_flag_defaults_and_scopes_runs(client: Client) -> None:
    plain = await ingest_ok(client, junit=[junit_xml([("a", "pass")])])
    unit = await ingest_ok(client, flag="unit", junit=[junit_xml([("a", "pass")])])
    assert (plain["flag"], unit["flag"]) == ("default", "unit")


async def test_identifiers_are_normalised(client: Client) -> None:
    body = await ingest_ok(
        client, branch="refs/heads/feature/x", commit="ABCDEF12", junit=[junit_xml([("a", "pass")])]
    )
    assert (body["branch"], body["commit"]) == ("feature/x", "abcdef12")


@pytest.mark.parametrize(
    ("fields", "bad"),
    [
        ({"project": "../etc"}, "project"),
        ({"project": ""}, "project"),
        ({"branch": "has space"}, "branch"),
        ({"commit": "x" * 101}, "commit"),
        ({"flag": "a b"}, "flag"),
        ({"runKey": ""}, "runKey"),
        ({"buildUrl": "javascript:alert(1)"}, "buildUrl"),
        ({"colour": "blue"}, "colour"),
    ],
)
async def test_bad_fields_are_named(client: Client, fields: dict[str, str], bad: str) -> None:
    resp = await upload(client, junit=[junit_xml([("a", "pass")])], **fields)
    body = await assert_problem(resp, 400)
    assert [e["field"] for e in body["errors"]] == [bad]


async def test_required_fields_are_named(client: Client) -> None:
    resp = await upload(client, branch=None, commit=None, junit=[junit_xml([("a", "pass")])])
    body = await assert_problem(resp, 400)
    assert {e["field"] for e in body["errors"]} == {"branch", "commit"}


async def test_a_request_without_reports_is_refused(client: Client) -> None:
    await assert_problem(await upload(client), 400, code="no-reports")


async def test_a_report_sent_as_a_text_field_is_refused_with_a_hint(client: Client) -> None:
    data = form()
    data.add_field("junit", "<testsuite/>")
    body = await assert_problem(await client.post("/api/v1/ingest", data=data), 400)
    assert body["errors"][0]["field"] == "junit"
    assert "file part" in body["errors"][0]["message"]


async def test_a_file_under_an_unknown_part_is_refused(client: Client, tmp_path: Path) -> None:
    data = form(junit=[junit_xml([("a", "pass")])])
    data.add_field("junitt", b"<testsuite/>", filename="typo.xml", content_type="text/xml")
    body = await assert_problem(await client.post("/api/v1/ingest", data=data), 400)
    assert [e["field"] for e in body["errors"]] == ["junitt"]
    assert row_counts(db_path(settings_for(tmp_path)))["runs"] == 0


async def test_non_multipart_bodies_are_refused(client: Client) -> None:
    resp = await client.post("/api/v1/ingest", json={"project": "p"})
    body = await assert_problem(resp, 415, code="unsupported-media-type")
    assert body["detail"] == "Content-Type must be multipart/form-data"


async def test_listeners_hear_each_committed_run(api_client: ApiClient, tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path))
    heard: list[RunSummary] = []

    async def listen(run: RunSummary) -> None:
        stored = sqlite3.connect(db_path(settings_for(tmp_path)))
        try:  # the run is committed before listeners hear of it
            assert stored.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == run.run_id
        finally:
            stored.close()
        heard.append(run)

    async def broken(run: RunSummary) -> None:
        raise RuntimeError("listener bug")

    app[keys.RUN_LISTENERS].extend([broken, listen])
    client = await api_client(app)
    body = await ingest_ok(client, junit=[junit_xml([("a", "pass"), ("b", "fail")])])
    assert [r.run_id for r in heard] == [body["runId"]]
    assert (heard[0].tests, heard[0].failures, heard[0].project) == (2, 1, "demo")
    assert heard[0].pass_rate_pct == 50.0


async def test_a_private_project_is_invisible_to_anonymous_ingest(
    client: Client, tmp_path: Path
) -> None:
    await ingest_ok(client, project="secret", junit=[junit_xml([("a", "pass")])])
    conn = sqlite3.connect(db_path(settings_for(tmp_path)))
    with conn:
        conn.execute("UPDATE projects SET visibility = 'PRIVATE' WHERE name = 'secret'")
    conn.close()
    resp = await upload(client, project="secret", junit=[junit_xml([("b", "pass")])])
    await assert_problem(resp, 404, code="project-not-found")
    assert row_counts(db_path(settings_for(tmp_path)))["runs"] == 1


async def test_private_default_visibility_applies_to_new_projects(
    api_client: ApiClient, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, "results.projects.default-visibility=PRIVATE")
    client = await api_client(create_app(settings))
    await ingest_ok(client, project="hidden", junit=[junit_xml([("a", "pass")])])
    resp = await client.get("/api/v1/gate", params={"project": "hidden", "branch": "main"})
    await assert_problem(resp, 404, code="project-not-found")


async def test_concurrent_shards_of_one_run_all_land_in_it(client: Client, tmp_path: Path) -> None:
    shards = [
        junit_xml([(f"t{n}a", "pass"), (f"t{n}b", "fail")], suite=f"shard{n}") for n in range(6)
    ]
    bodies = await asyncio.gather(
        *(ingest_ok(client, runKey="parallel", junit=[shard]) for shard in shards)
    )
    assert len({body["runId"] for body in bodies}) == 1
    assert sum(body["created"] for body in bodies) == 1
    final = max(bodies, key=lambda body: body["uploads"])
    assert (final["tests"], final["failures"], final["uploads"]) == (12, 6, 6)
    assert row_counts(db_path(settings_for(tmp_path)))["runs"] == 1
