"""A real browser for the tests: the OS package's headless Chromium, driven by Playwright.

One Chromium serves the whole session (starting it costs seconds; a page costs milliseconds). It
runs on a thread of its own with its own event loop, so a test keeps its aiohttp servers on the
test's loop and hands the browser a coroutine of page steps; the test's loop stays free to answer
the browser's requests while it waits.

Every visit opens a fresh browser context (no cookies or storage shared between visits), records
each console error, uncaught page error, failed request (an event stream the page closed
excepted) and HTTP error response, keeps a
screenshot under ``var/test-artifacts/<test>/`` whatever happens, and then fails the test if
anything was recorded. An error answer the test is about (a 401 that sends a page to sign in) is
declared with ``Visit.expect`` first: that answer, and Chromium's console line about it, pass.
Playwright's own browser download is never used: ``executable_path`` points at
``/usr/bin/chromium`` (``./scripts/test`` installs it), and Playwright gives each launch a new empty
profile directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import attrs
import pytest
from playwright.async_api import (
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    ViewportSize,
    async_playwright,
)

T = TypeVar("T")

CHROMIUM = Path(os.environ.get("WHARF_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[1] / "var" / "test-artifacts"
# Flags that keep Chromium quiet on a machine with no route out: no GPU, no QUIC probing, no
# first-run, sync, update or background calls home.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
# Generous: on a loaded 2-core machine Swagger UI alone takes over 10 s to read a large 3.1 spec.
STEP_TIMEOUT_MS = 45_000


@attrs.define
class Visit:
    """One browser context and page, what went wrong in it, and where its screenshots go."""

    page: Page
    artifacts: Path
    problems: list[str] = attrs.field(factory=list)
    expected: set[tuple[int, str]] = attrs.field(factory=set)
    failures: set[str] = attrs.field(factory=set)

    def expect(self, status: int, path: str) -> None:
        """An answer ``status`` to a request for ``path`` (no query) is wanted, not a problem."""
        self.expected.add((status, path))

    def expect_failure(self, reason: str) -> None:
        """A request failing with ``reason`` (``net::ERR_INTERNET_DISCONNECTED`` while the test has
        taken the browser offline) is wanted, not a problem."""
        self.failures.add(reason)

    async def screenshot(self, name: str, *, full_page: bool = False) -> Path:
        """A PNG named ``name`` in this test's artifact folder: the viewport, or the whole page
        (several times slower on a long page)."""
        self.artifacts.mkdir(parents=True, exist_ok=True)
        path = self.artifacts / f"{_slug(name)}.png"
        await self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def watch(self) -> None:
        # Lambdas, not bound methods: Playwright tags a bound method's instance, and ours has slots.
        self.page.on("console", lambda message: self._console(message))
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on("requestfailed", lambda request: self._request_failed(request))
        self.page.on("response", lambda response: self._response(response))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        # How Chromium reports an error answer: "Failed to load resource: the server responded
        # with a status of 401 (Unauthorized)", located at the resource's URL.
        status = re.search(r"responded with a status of (\d{3})", message.text)
        resource = urlsplit(message.location.get("url", "")).path
        if status and (int(status.group(1)), resource) in self.expected:
            return
        self.problems.append(f"console error: {message.text} ({message.location})")

    def _request_failed(self, request: Request) -> None:
        # A page closes its event streams when the person moves on: the abort is their end.
        if request.resource_type == "eventsource" and request.failure == "net::ERR_ABORTED":
            return
        if request.failure in self.failures:
            return
        self.problems.append(f"request failed: {request.method} {request.url}: {request.failure}")

    def _response(self, response: Response) -> None:
        if (response.status, urlsplit(response.url).path) in self.expected:
            return
        if response.status >= 400:
            self.problems.append(
                f"HTTP {response.status}: {response.request.method} {response.url}"
            )


Steps = Callable[[Visit], Awaitable[T]]


class Chromium:
    """The session's browser on its own thread and loop; see the module docstring."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="chromium", daemon=True)
        self._thread.start()
        self._browser: Browser | None = None
        self._stop: Callable[[], Awaitable[None]] | None = None

    def start(self) -> None:
        self._call(self._launch()).result()

    def close(self) -> None:
        if self._stop is not None:
            self._call(self._stop()).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def visit(self, artifacts: Path, name: str, steps: Steps[T]) -> T:
        """Run ``steps`` on a fresh page; screenshot ``name`` at the end; fail on any problem."""
        return await asyncio.wrap_future(self._call(self._visit(artifacts, name, steps)))

    def _call(self, coro: Awaitable[T]) -> Future[T]:
        async def run() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    async def _launch(self) -> None:
        if self._stop is not None:
            await self._stop()
        playwright = await async_playwright().start()
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=list(FLAGS), headless=True
        )
        self._browser = browser

        async def stop() -> None:
            # The browser or Playwright's driver may be gone already; closing is then moot.
            with contextlib.suppress(Exception):
                await browser.close()
            with contextlib.suppress(Exception):
                await playwright.stop()

        self._stop = stop

    async def _visit(self, artifacts: Path, name: str, steps: Steps[T]) -> T:
        if self._browser is None or not self._browser.is_connected():
            # Chromium went away between visits (a crash, or a kill from outside the suite on a
            # shared machine): start another rather than fail every later browser test.
            await self._launch()
        assert self._browser is not None
        context = await self._browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(STEP_TIMEOUT_MS)
        try:
            visit = Visit(page=await context.new_page(), artifacts=artifacts)
            visit.watch()
            try:
                result = await steps(visit)
            finally:
                await visit.screenshot(name)
            if visit.problems:
                raise AssertionError(f"{name}: " + "; ".join(visit.problems))
            return result
        finally:
            await context.close()


@attrs.frozen
class Pages:
    """The ``browser`` fixture: the session's Chromium with this test's artifact folder."""

    chromium: Chromium
    artifacts: Path

    async def visit(self, name: str, steps: Steps[T]) -> T:
        return await self.chromium.visit(self.artifacts, name, steps)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "page"


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: ./scripts/test installs the 'chromium' OS package "
            "(or: apt-get install chromium)"
        )
    browser = Chromium()
    try:
        browser.start()
        yield browser
    finally:
        browser.close()


@pytest.fixture
def browser(chromium: Chromium, request: pytest.FixtureRequest) -> Pages:
    """Visits pages in the session's Chromium; screenshots go to ``var/test-artifacts/<test>/``."""
    return Pages(chromium, ARTIFACTS / _slug(request.node.nodeid.removeprefix("tests/")))
