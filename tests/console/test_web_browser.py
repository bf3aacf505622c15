"""The login page and the front-end shell in headless Chromium, in open and closed mode.

A person arrives anonymous, gets the login page (closed mode: the shell's API call answers 401 and
sends them there) or the cluster list (open mode), mistypes the password, signs in, sees the
clusters of the simulators and one added at runtime, and signs out. Any console error, blocked
script or style (the pages' Content-Security-Policy) or unexpected error answer fails the visit
(``tests.browser``); the 401s and 429s a step is about are declared with ``Visit.expect``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Page, expect

from kubesim import Simulator
from tests.browser import Pages, Visit
from tests.console.conftest import ConsoleApp
from tests.console.support import (
    ADMIN,
    ADMIN_PASSWORD,
    ADMIN_USER,
    kubeconfig_text,
    stop_the_throttle_clock,
)
from tests.typing_support import Client

SESSION = "/api/v1/auth/session"
CLUSTERS = "/api/v1/clusters"
#: A cluster name that would be markup if the shell ever put text in as HTML.
MARKUP_NAME = '<img src="/x" id="injected">gamma & co'


async def started(console_app: ConsoleApp, *, open_mode: bool) -> Client:
    return await console_app(f"security.open-mode={str(open_mode).lower()}")


async def sign_in(page: Page, password: str) -> None:
    await page.fill("#username", ADMIN_USER)
    await page.fill("#password", password)
    await page.click("button[type=submit]")


async def answered(page: Page, password: str) -> int:
    """Sign in with ``password``, wait until the page has taken the API's answer (it clears the
    password field then, and enables the button again), and return the answer's status."""
    async with page.expect_response(
        lambda r: r.url.endswith(SESSION) and r.request.method == "POST"
    ) as answer:
        await sign_in(page, password)
    await expect(page.locator("button[type=submit]")).to_be_enabled()
    return (await answer.value).status


async def cluster_rows(page: Page) -> list[list[str]]:
    await expect(page.locator("#clusters")).to_be_visible()
    rows: list[list[str]] = await page.eval_on_selector_all(
        "#clusters tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    return rows


@pytest.mark.parametrize("open_mode", [True, False])
async def test_sign_in_see_the_clusters_and_sign_out(
    console_app: ConsoleApp, browser: Pages, sim: Simulator, open_mode: bool
) -> None:
    client = await started(console_app, open_mode=open_mode)
    added = {"id": "gamma", "name": MARKUP_NAME, "kubeconfig": kubeconfig_text(sim)}
    assert (await client.post(CLUSTERS, json=added, headers=ADMIN)).status == 201
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        if open_mode:
            visit.expect(401, SESSION)  # the shell asks who is signed in: nobody
            await page.goto(base + "/")
            seen["anonymous"] = await cluster_rows(page)
            await page.click("#sign-in")
        else:
            visit.expect(401, CLUSTERS)  # the shell's call that sends an anonymous visitor away
            await page.goto(base + "/")
        await page.wait_for_url(base + "/login")
        await expect(page.locator("h1")).to_have_text("Sign in")
        visit.expect(401, SESSION)
        await sign_in(page, "not the password")
        await expect(page.locator("#error")).to_have_text("Wrong user name or password.")
        await visit.screenshot("wrong-password")
        await sign_in(page, ADMIN_PASSWORD)
        await page.wait_for_url(base + "/")
        seen["signed-in"] = await cluster_rows(page)
        seen["user"] = await page.locator("#user").text_content()
        seen["injected"] = await page.locator("#injected").count()
        links = await page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
        seen["links"] = {  # with this browser's session cookie, as a click would send it
            urlsplit(link).path: (await page.request.get(link)).status for link in links
        }
        await visit.screenshot("shell", full_page=True)
        await page.click("#sign-out")
        await page.wait_for_url(base + "/login")
        seen["api-after"] = (await page.request.get(base + CLUSTERS)).status
        return seen

    seen = await browser.visit(f"shell-{'open' if open_mode else 'closed'}", steps)
    listed = await (await client.get(CLUSTERS, headers=ADMIN)).json()
    assert [c["id"] for c in listed] == ["alpha", "beta", "gamma"]
    origins = {"STATIC": "kubeconfig", "RUNTIME": "added at runtime"}
    expected = [[c["id"], c["name"], c["masterUrl"], origins[c["origin"]]] for c in listed]
    assert seen["signed-in"] == expected
    assert expected[2][1] == MARKUP_NAME
    assert seen.get("anonymous") == (expected if open_mode else None)
    assert seen["user"] == f"Signed in as {ADMIN_USER}"
    assert seen["injected"] == 0  # the name shown as text, not made into an element
    assert seen["links"] == {
        "/": 200,
        "/login": 200,  # the hidden "Sign in" link
        "/swagger-ui": 200,
        "/v3/api-docs": 200,
        "/v3/api-docs.yaml": 200,
        CLUSTERS: 200,
    }
    # Signed out: in closed mode the API is closed to this browser again.
    assert seen["api-after"] == (200 if open_mode else 401)


async def test_wrong_passwords_are_throttled_on_the_login_page(
    console_app: ConsoleApp, browser: Pages
) -> None:
    client = await started(console_app, open_mode=False)
    stop_the_throttle_clock(client)  # the browser may take over a second between two sign-ins
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> str | None:
        page = visit.page
        visit.expect(401, SESSION)
        visit.expect(429, SESSION)
        await page.goto(base + "/login")
        error = page.locator("#error")
        for attempt in range(5):
            # Each answer taken before the next guess: the error's text stays from the last one,
            # and the page clears the password field when an answer comes, so a guess typed
            # before then is sent empty (a 400, not a failure) and the lock never comes.
            assert await answered(page, f"guess {attempt}") == 401
            await expect(error).to_have_text("Wrong user name or password.")
        assert await answered(page, ADMIN_PASSWORD) == 429  # even the right one waits while locked
        await expect(error).to_contain_text("Too many failed sign-ins: try again in")
        return await error.text_content()

    message = await browser.visit("throttled", steps)
    assert message is not None
    assert re.fullmatch(r"Too many failed sign-ins: try again in \d+ seconds?\.", message)
