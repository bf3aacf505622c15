"""Fixtures shared by every test: the no-task-left-behind guard, the API client factory,
databases and the browser (headless Chromium, see ``tests/browser.py``)."""

from __future__ import annotations

import ast
import asyncio
import threading
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpClient

from common.openapi import check_responses
from tests import pgserver
from tests.browser import browser as browser  # real Chromium for the page tests
from tests.browser import chromium as chromium
from tests.typing_support import Client


def _one_ast_parse_at_a_time() -> None:
    """Serialise ``ast.parse`` across the test process's threads. CPython 3.11 keeps the counter
    that checks an AST's construction in one place per interpreter, not per thread: when the
    browser's thread formats a traceback (3.11's traceback module parses each line it underlines)
    while pytest parses the source of a failing test, one overwrites the other's count and the
    parse fails with ``SystemError: AST constructor recursion depth mismatch``. Inside pytest's
    report that error kills the xdist worker and hides the test's own failure. Re-entrant: a
    collection inside one parse may finalise objects whose code parses again on the same thread."""
    parse = ast.parse
    lock = threading.RLock()

    def serialised(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return parse(*args, **kwargs)

    ast.parse = serialised


_one_ast_parse_at_a_time()

#: Files whose tests take a minute or more together, longest first. ``scripts/test`` hands whole
#: files to its workers in collection order (``--no-loadscope-reorder``): these start first, so
#: that they run beside the many short files instead of keeping one worker busy at the end.
LONG_FILES = (
    "tests/console/test_credentials_refresh.py",  # a 60 s watch and exec session (issue 33)
    "tests/bench/test_smoke_services.py",
    "tests/bench/test_smoke_others.py",
)


@pytest.hookimpl(trylast=True)  # after any plugin that shuffles the order
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of ``LONG_FILES`` first, then the others with the most tests first (what xdist
    itself would do), each file's tests in the order they came."""
    per_file = Counter(_file(item) for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        path = _file(item)
        long = LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)
        return long, -per_file[path]

    items.sort(key=rank)


def _file(item: pytest.Item) -> str:
    return item.nodeid.partition("::")[0]


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


ApiClient = Callable[[web.Application], Awaitable[Client]]


@pytest.fixture
def api_client(aiohttp_client: AiohttpClient) -> ApiClient:
    """A test client for a service app, with response validation against the spec turned on."""

    async def make(app: web.Application) -> Client:
        check_responses(app)
        return await aiohttp_client(app)

    return make


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pgserver.PgServer]:
    """One real PostgreSQL server for the whole session, started on first use."""
    server = pgserver.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: pgserver.PgServer) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each engine in turn: a SQLite file in ``tmp_path``, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'db' / 'store.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url
