"""Identical reads share calls without serving anyone an answer older than their question."""

from __future__ import annotations

import asyncio

import pytest

from console.resources.flights import Flights


async def started(source: Source, calls: int) -> None:
    async with asyncio.timeout(2):
        while source.calls < calls:
            await asyncio.sleep(0)


class Source:
    """Counts its calls; each call answers the value current when it *started*, after a gate."""

    def __init__(self) -> None:
        self.value = 0
        self.calls = 0
        self.gate = asyncio.Event()

    async def read(self) -> int:
        self.calls += 1
        seen = self.value
        await self.gate.wait()
        return seen


async def test_callers_during_a_call_share_the_next_one_which_sees_their_writes() -> None:
    flights, source = Flights(), Source()
    first = asyncio.create_task(flights.run("k", source.read))
    await started(source, 1)
    source.value = 1  # a write that finished before the callers below asked
    later = [asyncio.create_task(flights.run("k", source.read)) for _ in range(50)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert flights.busy == 2  # one running, one queued: not 51 calls
    source.gate.set()
    assert await first == 0
    assert await asyncio.gather(*later) == [1] * 50  # none got the answer read before the write
    assert source.calls == 2
    assert flights.busy == 0


async def test_other_keys_do_not_wait() -> None:
    flights, source = Flights(), Source()
    source.gate.set()
    assert await asyncio.gather(*(flights.run(k, source.read) for k in "abc")) == [0, 0, 0]
    assert source.calls == 3


async def test_a_caller_leaving_does_not_cancel_the_others() -> None:
    flights, source = Flights(), Source()
    first = asyncio.create_task(flights.run("k", source.read))
    await started(source, 1)
    leaver, stayer = (asyncio.create_task(flights.run("k", source.read)) for _ in range(2))
    for _ in range(3):
        await asyncio.sleep(0)
    first.cancel()  # the running call's only caller leaves: the queued call still follows it
    leaver.cancel()  # one of the queued call's two callers leaves
    source.gate.set()
    assert await stayer == 0
    assert source.calls == 2
    for gone in (first, leaver):
        with pytest.raises(asyncio.CancelledError):
            await gone


async def test_a_failure_reaches_its_callers_only() -> None:
    flights = Flights()
    gate = asyncio.Event()

    async def fail() -> int:
        await gate.wait()
        raise LookupError("the cluster said no")

    async def succeed() -> int:
        return 7

    failing = asyncio.create_task(flights.run("k", fail))
    for _ in range(3):
        await asyncio.sleep(0)
    queued = asyncio.create_task(flights.run("k", succeed))
    await asyncio.sleep(0)
    gate.set()
    with pytest.raises(LookupError):
        await failing
    assert await queued == 7


async def test_close_cancels_what_is_under_way() -> None:
    flights, source = Flights(), Source()
    waiting = asyncio.create_task(flights.run("k", source.read))
    await started(source, 1)
    await flights.close()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_cache_fill_joins_the_running_call() -> None:
    """``join_running``: a caller that accepts an answer begun before it asked shares the running
    call instead of queuing for the next one."""
    flights, source = Flights(), Source()
    first = asyncio.create_task(flights.run("k", source.read))
    await started(source, 1)
    filler = asyncio.create_task(flights.run("k", source.read, join_running=True))
    for _ in range(3):
        await asyncio.sleep(0)
    assert flights.busy == 1  # nothing queued
    source.gate.set()
    assert list(await asyncio.gather(first, filler)) == [0, 0]
    assert source.calls == 1


async def test_a_call_after_close_runs_in_its_callers_task_and_leaves_none_behind() -> None:
    """A stream's re-check that asks during shutdown must not start a shared task that nobody
    will cancel (the console's flights are closed before its clients)."""
    flights = Flights()
    await flights.close()
    before = asyncio.all_tasks()

    async def call() -> int:
        assert asyncio.all_tasks() == before  # no task started for it
        return 7

    assert await flights.run("k", call) == 7
    assert flights.busy == 0
