"""The handle pool: bounded by count and weight, and a handle is closed exactly once, never in use."""

from __future__ import annotations

from chartsvc.helm.handles import HandlePool


class Handle:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_reuse_and_count_bound() -> None:
    pool: HandlePool[str, Handle] = HandlePool(max_count=2)
    made: list[Handle] = []

    def make(name: str) -> Handle:
        made.append(Handle(name))
        return made[-1]

    with pool.use("a", lambda: make("a")) as a1:
        pass
    with pool.use("a", lambda: make("a")) as a2:
        assert a2 is a1
    with pool.use("b", lambda: make("b")), pool.use("c", lambda: make("c")):
        pass
    assert [h.name for h in made] == ["a", "b", "c"]
    assert [h.closed for h in made] == [1, 0, 0]  # a was least recently used


def test_weight_bound_evicts_oldest() -> None:
    pool: HandlePool[str, Handle] = HandlePool(max_count=10, max_weight=100)
    first, second = Handle("first"), Handle("second")
    with pool.use("first", lambda: first, weight=60):
        pass
    with pool.use("second", lambda: second, weight=60):
        pass
    assert (first.closed, second.closed) == (1, 0)


def test_busy_handle_closes_once_when_its_last_user_leaves() -> None:
    pool: HandlePool[str, Handle] = HandlePool(max_count=1)
    busy = Handle("busy")
    with pool.use("busy", lambda: busy):
        with pool.use("other", lambda: Handle("other")):
            assert busy.closed == 0  # evicted but still in use
        assert busy.closed == 0
    assert busy.closed == 1
    pool.close()
    assert busy.closed == 1


def test_discard_closes_idle_handles_now_and_busy_ones_after_use() -> None:
    pool: HandlePool[str, Handle] = HandlePool(max_count=10, max_weight=100)
    idle, busy = Handle("idle"), Handle("busy")
    with pool.use("idle", lambda: idle, weight=40):
        pass
    with pool.use("busy", lambda: busy, weight=40) as held:
        pool.discard(["idle", "busy", "never-made"])
        assert (idle.closed, held.closed) == (1, 0)  # in use: kept open until released
    assert busy.closed == 1
    fresh = Handle("fresh")
    with pool.use("busy", lambda: fresh, weight=90) as again:
        assert again is fresh  # made anew; the discarded weight no longer counts
    assert fresh.closed == 0
