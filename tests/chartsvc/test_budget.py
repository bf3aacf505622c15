"""The upload byte budget: uploads wait their turn, and give up with 503 rather than pile up."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import FormData

from chartsvc.budget import UploadBudget
from chartsvc.keys import UPLOADS
from common.errors import ServiceUnavailable
from tests.chartsvc.conftest import MakeClient
from tests.guards import assert_problem


async def test_reservations_wait_for_room_and_release() -> None:
    budget = UploadBudget(total=100)
    order: list[str] = []

    async def upload(name: str, size: int, hold: float) -> None:
        async with budget.reserve(size):
            order.append(f"{name}+")
            await asyncio.sleep(hold)
            order.append(f"{name}-")

    await asyncio.gather(upload("a", 70, 0.05), upload("b", 70, 0), upload("c", 20, 0))
    assert order.index("b+") > order.index("a-")  # b waited for a's bytes
    assert order.index("c+") < order.index("a-")  # c fitted beside a
    assert budget.used == 0


async def test_waiting_too_long_is_503_with_retry_after() -> None:
    budget = UploadBudget(total=100, wait_s=0.05)
    async with budget.reserve(100):
        with pytest.raises(ServiceUnavailable) as refused:
            async with budget.reserve(1):
                pass
    assert refused.value.headers["Retry-After"] == "5"
    assert budget.used == 0


async def test_a_request_larger_than_the_budget_still_runs_alone() -> None:
    budget = UploadBudget(total=100)
    async with budget.reserve(10_000):
        assert budget.used == 100


async def test_only_routes_that_read_uploads_wait_for_the_budget(make_client: MakeClient) -> None:
    client = await make_client()
    budget = client.app[UPLOADS]
    budget.wait_s = 0.05
    form = FormData()
    form.add_field("chart", b"x", filename="c.tgz", content_type="application/gzip")
    async with budget.reserve(budget.total):
        resp = await client.post("/api/v1/charts/lint/upload", data=form)
        await assert_problem(resp, 503)
        assert resp.headers["Retry-After"] == "5"
        # A route that never reads an upload holds no memory for one: a body claiming to be one
        # does not keep it waiting.
        resp = await client.post("/api/v1/repos/update-all", data=form)
        assert resp.status == 200, await resp.text()
