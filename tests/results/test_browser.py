"""The dashboard in a real browser after a project's story of ingests (``story.tell``).

Each page a person would open (project, trends, run, test history, flaky tests, comparison) is
loaded in headless Chromium: it must answer 200 with no console error (a script or style the
Content-Security-Policy blocks shows up there), no failed request, charts that take up space, no
sideways scrolling at a laptop's width, and every link on it must lead somewhere. The screenshots
stay under ``var/test-artifacts/`` for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser import Pages, Visit
from tests.conftest import ApiClient
from tests.results import story
from tests.results.people import start

LINKS = "els => [...new Set(els.map(a => a.getAttribute('href')))].filter(h => h.startsWith('/'))"
CHART_SIZES = (
    "els => els.map(e => { const r = e.getBoundingClientRect(); return r.width * r.height })"
)
OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


async def open_page(visit: Visit, url: str, name: str) -> list[str]:
    """Load ``url``, check it looks whole, screenshot it; → the same-site links on it."""
    page = visit.page
    response = await page.goto(url)
    assert response is not None
    assert response.status == 200, f"{name}: {response.status}"
    assert await page.locator("h1").count() == 1, f"{name}: no heading"
    sizes = await page.eval_on_selector_all("svg.chart, svg.strip", CHART_SIZES)
    assert all(size > 0 for size in sizes), f"{name}: a chart is drawn with no size"
    assert await page.evaluate(OVERFLOW) <= 0, f"{name}: the page scrolls sideways"
    await visit.screenshot(name, full_page=True)
    links: list[str] = await page.eval_on_selector_all("a[href]", LINKS)
    return links


async def test_dashboard_pages_in_a_browser(
    api_client: ApiClient, tmp_path: Path, browser: Pages
) -> None:
    client = await start(api_client, tmp_path)
    s = await story.tell(client)
    base = str(client.make_url("")).rstrip("/")
    project = f"/projects/{s.project_id}"

    async def steps(visit: Visit) -> dict[str, Any]:
        links: dict[str, list[str]] = {}
        for name, path in [
            ("project", project),
            ("trends", f"{project}/trends"),
            ("run", f"/runs/{s.surefire}"),
            ("flaky", f"{project}/flaky"),
            ("compare", f"/runs/{s.dropped}/compare"),
        ]:
            links[name] = await open_page(visit, base + path, name)
        history = next(h for h in links["run"] if h.startswith(f"{project}/tests/"))
        links["history"] = await open_page(visit, base + history, "history")
        broken = {}
        for href in sorted({h for found in links.values() for h in found}):
            answer = await visit.page.request.get(base + href)
            if answer.status >= 400:
                broken[href] = answer.status
        return {"links": links, "broken": broken, "history": history}

    seen = await browser.visit("dashboard", steps)
    assert seen["broken"] == {}
    assert f"/runs/{s.surefire}" in seen["links"]["trends"]  # the trend links to its runs
    assert any(h.startswith(f"{project}/tests/") for h in seen["links"]["flaky"])
