"""Swagger UI of each service, opened in headless Chromium as a new user would open it.

The page must render our OpenAPI 3.1 document (Swagger UI 4 could not), list every operation of the
spec, and run one call with "Try it out" against the live service, all offline and with no error in
the browser console.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_aiohttp import AiohttpServer

from common.openapi import SPEC
from tests.browser import Pages, Visit
from tests.e2e.services import SERVICES

#: The call each service's "Try it out" makes: one that needs no setup.
TRY = {"chartsvc": "listRepositories", "results": "listProjects", "console": "getAbout"}


async def try_it_out(visit: Visit, operation_id: str) -> tuple[set[str], str]:
    """Open the UI, read the listed operation ids, run ``operation_id``; → (ids, status shown)."""
    page = visit.page
    await page.wait_for_selector(".opblock", state="attached")
    ids = await page.eval_on_selector_all(".opblock", "els => els.map(e => e.id)")
    block = page.locator(f'.opblock[id$="-{operation_id}"]').first
    await block.locator(".opblock-summary-control").click()
    await block.locator(".try-out__btn").click()
    await block.locator(".execute").click()
    status = block.locator(".live-responses-table tbody .response-col_status").first
    await status.scroll_into_view_if_needed()  # the visit's screenshot shows the response
    return {i.rsplit("-", 1)[-1] for i in ids}, (await status.inner_text()).strip()


@pytest.mark.parametrize("service", SERVICES)
async def test_swagger_ui_lists_operations_and_runs_a_call(
    service: str, browser: Pages, aiohttp_server: AiohttpServer, tmp_path: Path
) -> None:
    operation_id = TRY[service]
    app = SERVICES[service](tmp_path)
    server = await aiohttp_server(app)
    url = str(server.make_url("/swagger-ui"))

    async def steps(visit: Visit) -> tuple[set[str], str]:
        await visit.page.goto(url)
        return await try_it_out(visit, operation_id)

    listed, status = await browser.visit(f"{service}-swagger-ui", steps)
    assert listed == set(app[SPEC].operations)
    assert status == "200"
