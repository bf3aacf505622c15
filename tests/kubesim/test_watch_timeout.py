"""A watch gets a BOOKMARK 2 s before its timeout, however long the bookmark interval, as from
kube-apiserver's watch cache: a client that resumes after the timeout starts from a fresh
resourceVersion instead of one that may have been compacted."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from kubesim import Simulator
from tests.kubesim.conftest import Raw


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("kubesim"), bookmark_interval=60.0) as s:
        yield s


async def test_a_bookmark_comes_just_before_the_watch_times_out(raw: Raw) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    started = time.monotonic()
    async with raw.stream(
        path, watch="true", allowWatchBookmarks="true", timeoutSeconds="3"
    ) as resp:
        while True:
            event = json.loads(await asyncio.wait_for(resp.content.readline(), 5))
            if event["type"] == "BOOKMARK":
                break
    waited = time.monotonic() - started
    assert 0.8 < waited < 2.5  # at timeout - 2 s, not after the 60 s interval
    assert int(event["object"]["metadata"]["resourceVersion"]) > 0
