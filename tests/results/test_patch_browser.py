"""Patch coverage on the run and compare pages, in headless Chromium: whole pages (no console
error, no failed request, no sideways scrolling) with the missed changed lines highlighted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser import Pages, Visit
from tests.conftest import ApiClient
from tests.results.people import start
from tests.results.support import form, lcov
from tests.results.test_browser import open_page
from tests.results.test_patch_coverage import CART_DIFF, CART_LINES

MARKS = "els => els.map(e => [e.textContent, getComputedStyle(e).backgroundColor])"


async def test_patch_coverage_pages_in_a_browser(
    api_client: ApiClient, tmp_path: Path, browser: Pages
) -> None:
    client = await start(api_client, tmp_path)
    data = form(jacoco=[lcov({"shop/cart.py": CART_LINES})], diff=("d", CART_DIFF))
    response = await client.post("/api/v1/ingest", data=data)
    assert response.status == 201
    run_id = (await response.json())["runId"]
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        await open_page(visit, f"{base}/runs/{run_id}", "patch-run")
        card = await visit.page.locator("#patch-coverage").inner_text()
        marks = await visit.page.eval_on_selector_all("mark.missed", MARKS)
        await open_page(visit, f"{base}/runs/{run_id}/compare", "patch-compare")
        compare = await visit.page.locator("#patch-coverage").inner_text()
        return {"card": card, "marks": marks, "compare": compare}

    seen = await browser.visit("patch-coverage", steps)
    assert "50.0" in seen["card"]
    assert "(1/2)" in seen["card"]
    assert [text for text, _ in seen["marks"]] == ["4"]
    assert all(colour not in ("rgba(0, 0, 0, 0)", "transparent") for _, colour in seen["marks"])
    assert "50.0" in seen["compare"]
