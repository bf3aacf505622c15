"""pods/log over HTTP: kubernetes-asyncio's log reads, the refusals, and a followed stream."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from kubesim import Simulator
from kubesim.kubelet.logbuf import RunLog, Ticker
from tests.kubesim.conftest import Raw
from tests.kubesim.livesim import demo_simulator, pods, wait_for


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from demo_simulator(tmp_path_factory.mktemp("kubesim"), nodes=1)


async def test_log_options(sim: Simulator, api: ApiClient) -> None:
    core = client.CoreV1Api(api)
    whole = await core.read_namespaced_pod_log("redis-0", "shop")
    assert "Ready to accept connections tcp" in whole
    tail = await core.read_namespaced_pod_log("redis-0", "shop", tail_lines=3)
    assert tail == "".join(whole.splitlines(keepends=True)[-3:]) or len(tail.splitlines()) == 3
    stamped = await core.read_namespaced_pod_log("redis-0", "shop", tail_lines=1, timestamps=True)
    assert stamped[:2] == "20"
    assert stamped.split(" ", 1)[0].endswith("Z")
    assert len(await core.read_namespaced_pod_log("redis-0", "shop", limit_bytes=7)) == 7
    assert await core.read_namespaced_pod_log("redis-0", "shop", since_seconds=3600) != ""
    job = wait_for(
        sim,
        lambda st: [
            p
            for p in st.objects.store.list(("", "pods"), "shop")
            if p["metadata"]["name"].startswith("db-migrate")
            and p["status"].get("phase") == "Succeeded"
        ],
    )
    migrate = await core.read_namespaced_pod_log(job[0]["metadata"]["name"], "shop")
    assert migrate == "applying migrations\n0042_add_orders_index ok\n12 migrations applied\n"


async def test_log_refusals(sim: Simulator, raw: Raw) -> None:
    pending = wait_for(sim, lambda st: pods(st, "broken", "too-big"))[0]["metadata"]["name"]
    status, body, _ = await raw("GET", f"/api/v1/namespaces/broken/pods/{pending}/log")
    assert (status, body["message"]) == (400, f"pod {pending} does not have a host assigned")
    status, body, _ = await raw("GET", "/api/v1/namespaces/shop/pods/redis-0/log", container="nope")
    assert (status, body["message"]) == (400, "container nope is not valid for pod redis-0")
    status, body, _ = await raw("GET", "/api/v1/namespaces/shop/pods/redis-0/log", previous="true")
    assert (status, body["message"]) == (
        400,
        'previous terminated container "redis" in pod "redis-0" not found',
    )
    status, body, _ = await raw("GET", "/api/v1/namespaces/shop/pods/redis-0/log", tailLines="-1")
    assert status == 422
    status, body, _ = await raw("GET", "/api/v1/namespaces/shop/pods/ghost/log")
    assert status == 404


async def test_follow_streams_until_the_client_leaves(raw: Raw) -> None:
    url = "/api/v1/namespaces/shop/pods/postgres-0/log"
    async with raw.stream(url, follow="true", tailLines="1") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        lines = [await asyncio.wait_for(resp.content.readline(), 5) for _ in range(4)]
    assert all(b" UTC [" in line for line in lines)


def test_a_follower_reads_only_what_came_after_its_cursor() -> None:
    """``lines_after`` is ``lines`` past the cursor, explicit and ticker lines merged, without
    generating the ticker's history (a follower of a chatty container reads every few ms)."""
    log = RunLog(1000.0)
    log.ticker = Ticker(1000.0, 0.01, lambda k, t: f"tick {k}")
    log.add(1000.015, "written\nand more")
    every = log.lines(1000.1)
    assert [text for *_, text in every[:4]] == ["tick 1", "written", "and more", "tick 2"]
    for i in (-1, 0, 1, 2, 5, len(every) - 1):
        cursor = every[i] if i >= 0 else None
        assert log.lines_after(cursor, 1000.1) == every[i + 1 :]
    generated: list[int] = []

    def text(k: int, t: float) -> str:
        generated.append(k)
        return f"tick {k}"

    log.ticker = Ticker(1000.0, 0.01, text)
    cursor = (1200.0, 1, 20000, "tick 20000")  # 200 s of history behind it
    assert len(log.lines_after(cursor, 1201.0)) == 100
    assert len(generated) <= 102  # the hundred new lines (and the cursor's own), not 10,000
