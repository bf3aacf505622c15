"""Fixtures shared by every test: the no-task-left-behind guard, the API client factory and the
browser (headless Chromium, see ``tests/browser.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from common.openapi import VALIDATE_RESPONSES
from tests.browser import browser as browser  # real Chromium for the page tests
from tests.browser import chromium as chromium


@pytest.fixture(autouse=True)
async def no_task_left_behind() -> AsyncIterator[None]:
    """Fails a test that leaves an asyncio task running on its loop after its fixtures closed."""
    before = asyncio.all_tasks()
    yield
    for _ in range(3):  # let cancelled tasks finish their last step
        await asyncio.sleep(0)
    current = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() - before if t is not current and not t.done()]
    if left:
        for task in left:
            task.cancel()
        pytest.fail(f"tasks left behind: {[t.get_coro() for t in left]}")


ApiClient = Callable[[web.Application], Awaitable[TestClient[Any, Any]]]


@pytest.fixture
def api_client(aiohttp_client: Any) -> ApiClient:
    """A test client for a service app, with response validation against the spec turned on."""

    async def make(app: web.Application) -> TestClient[Any, Any]:
        app[VALIDATE_RESPONSES] = True
        client: TestClient[Any, Any] = await aiohttp_client(app)
        return client

    return make
