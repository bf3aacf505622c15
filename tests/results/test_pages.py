"""The dashboard's pages over real HTTP on one project's story: trends drawn as SVG with titles,
a run's place in its trend, test history, flaky tests, comparisons, and HTML for unknown pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ApiClient
from tests.results import story
from tests.results.people import start
from tests.results.support import ingest_ok, junit_xml
from tests.typing_support import Client


@pytest.fixture
async def told(api_client: ApiClient, tmp_path: Path) -> tuple[Client, story.Story]:
    client = await start(api_client, tmp_path)
    return client, await story.tell(client)


async def html(client: Client, path: str, status: int = 200) -> str:
    resp = await client.get(path)
    text = await resp.text()
    assert resp.status == status, text
    assert resp.content_type == "text/html"
    assert "Content-Security-Policy" in resp.headers
    assert "<script" not in text  # readable without JavaScript; none is allowed anyway
    return text


def charts(page: str) -> list[str]:
    return re.findall(r'<svg[^>]*class="chart".*?</svg>', page, flags=re.S)


async def test_trends_page_draws_four_accessible_charts(told: tuple[Client, story.Story]) -> None:
    client, s = told
    page = await html(client, f"/projects/{s.project_id}/trends")
    drawn = charts(page)
    assert len(drawn) == 4
    for svg in drawn:
        assert 'role="img"' in svg
        ident = re.search(r'aria-labelledby="(\S+)-t \1-d"', svg)
        assert ident, svg[:200]
        assert f'<title id="{ident.group(1)}-t">' in svg
        assert f'<desc id="{ident.group(1)}-d">' in svg
    titles = [re.search(r"<title[^>]*>([^<]*)</title>", svg).group(1) for svg in drawn]  # type: ignore[union-attr]
    assert titles == [
        "Pass rate, 5 runs",
        "Failures, 5 runs",
        "Duration, 5 runs",
        "Line coverage, 5 runs",
    ]  # the base branch (main) by default: the feature run is not in it
    assert f'href="/runs/{s.feature}"' not in page
    coverage = drawn[3]
    assert f'<a href="/runs/{s.dropped}">' in coverage
    assert "63.6 %" in coverage  # the point's tooltip
    assert "from 81.8 % to 63.6 %" in coverage  # the description says what the line does
    every = await html(client, f"/projects/{s.project_id}/trends?branch=&points=25")
    assert f'href="/runs/{s.feature}"' in every
    assert f'href="/runs/{s.integration}"' not in every  # another flag: never in this trend
    integration = await html(client, f"/projects/{s.project_id}/trends?flag=integration&branch=")
    assert "Pass rate, 1 run<" in integration


async def test_a_coverage_gap_breaks_the_line_instead_of_dropping_to_zero(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    await ingest_ok(client, project="shop", commit="f" * 40, junit=[junit_xml([("x", "pass")])])
    page = await html(client, f"/projects/{s.project_id}/trends?points=3")
    coverage = charts(page)[3]
    assert coverage.count("<circle") == 2  # the newest run has no coverage: no point at 0
    assert "<polyline" in coverage


async def test_project_page_has_a_small_trend_runs_and_filters(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    page = await html(client, f"/projects/{s.project_id}")
    assert len(charts(page)) == 2
    assert f'href="/runs/{s.integration}"' in page  # the runs list has every flag
    assert "/api/v1/badges/coverage.svg?project=shop" in page
    filtered = await html(client, f"/projects/{s.project_id}?branch=feature/x")
    assert f'href="/runs/{s.feature}">#{s.feature}<' in filtered
    assert f'href="/runs/{s.green}">#{s.green}<' not in filtered
    await html(client, f"/projects/{s.project_id}?flag=no%20spaces", status=400)


async def test_run_page_shows_its_place_in_the_trend(told: tuple[Client, story.Story]) -> None:
    client, s = told
    page = await html(client, f"/runs/{s.broken}")
    drawn = charts(page)
    assert len(drawn) == 4
    assert all("stroke-dasharray" in svg for svg in drawn)  # the run is marked on each chart
    assert f'href="/runs/{s.green}"' in drawn[0]
    assert f'href="/runs/{s.dropped}"' in drawn[0]
    assert f'href="/runs/{s.broken}/compare"' in page
    checkout = re.search(r'href="/projects/\d+/tests/(\d+)">history', page)
    assert checkout is not None


async def test_history_page_has_a_strip_durations_and_evidence(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    run = await html(client, f"/runs/{s.broken}")
    link = re.search(r'href="(/projects/\d+/tests/\d+)">history', run)
    assert link is not None
    page = await html(client, link.group(1))
    strip = re.search(r'<svg[^>]*class="strip".*?</svg>', page, flags=re.S)
    assert strip is not None
    cells = re.findall(r'fill="(#[0-9a-f]{6})"><title>([^<]*)</title>', strip.group(0))
    assert len(cells) == 5
    assert cells[1][0] == "#c62828"  # the broken run, in red
    assert "failed" in cells[1][1]
    assert "Commit <code>bbbbbbb000</code> (default): failed in" in page
    assert "20 %" in page
    assert len(re.findall(r'class="chart"', page)) >= 1  # the duration chart


async def test_flaky_tests_page_lists_evidence(told: tuple[Client, story.Story]) -> None:
    client, s = told
    page = await html(client, f"/projects/{s.project_id}/flaky")
    assert "throwsOnlyFirstAttempt" in page
    assert f'passed on a rerun in <a href="/runs/{s.surefire}">' in page
    assert page.index("throwsOnlyFirstAttempt") < page.index("pkg.Tests checkout")


async def test_tests_page_searches(told: tuple[Client, story.Story]) -> None:
    client, s = told
    page = await html(client, f"/projects/{s.project_id}/tests?q=refund")
    assert "pkg.Tests refund" in page
    assert "pkg.Tests checkout" not in page


async def test_compare_page(told: tuple[Client, story.Story]) -> None:
    client, s = told
    page = await html(client, f"/runs/{s.dropped}/compare")
    assert "New failures (1)" in page
    assert "src/app.py" in page
    assert "-20.00 pp" in page


async def test_hostile_names_are_escaped_in_charts_and_pages(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    report = (
        "evil.xml",
        f'<testsuite name="s"><testcase classname="C" name="{evil.replace("<", "&lt;").replace(chr(34), "&quot;")}">'
        '<failure message="m"/></testcase></testsuite>'.encode(),
    )
    body = await ingest_ok(client, project="evil", branch="x<b>y", junit=[report])
    for path in (f"/runs/{body['runId']}", f"/projects/{body['projectId']}/trends?branch="):
        page = await html(client, path)
        assert "<img src=x" not in page
        assert "x&lt;b&gt;y" in page


async def test_unknown_pages_answer_html_and_the_api_keeps_problems(
    told: tuple[Client, story.Story],
) -> None:
    client, s = told
    page = await html(client, f"/projects/{s.project_id}/nothing", status=404)
    assert "There is no page at this address." in page
    await html(client, "/projects/999/trends", status=404)
    resp = await client.get("/api/v1/nothing")
    assert resp.content_type == "application/problem+json"
    bad = await html(client, f"/projects/{s.project_id}/trends?points=x", status=400)
    assert "<code>points</code>" in bad
