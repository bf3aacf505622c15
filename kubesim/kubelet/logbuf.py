"""One container run's log: the lines it wrote, with the time each was written.

A run's lines come from two places: what its program explicitly writes (a script's ``echo``, a
startup banner, the panic before a crash, possibly dated in the near future) and, for long-running
servers, a :class:`Ticker` whose lines exist virtually at a fixed cadence and are computed only
when read, so an idle demo costs nothing. Readers only ever see lines dated up to "now"; like the
kubelet's log rotation, only the newest :data:`CAP` lines are kept.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import heapq
import math
from collections.abc import Callable

CAP = 10_000
Line = tuple[float, int, int, str]  # (time, source 0=explicit/1=ticker, index, text)


class Ticker:
    """Lines ``gen(k, t)`` at ``start + k * interval`` for k = 1, 2, ..."""

    def __init__(self, start: float, interval: float, gen: Callable[[int, float], str]) -> None:
        self.start, self.interval, self.gen = start, max(interval, 0.001), gen

    def lines(self, until: float, cap: int = CAP, *, after: float | None = None) -> list[Line]:
        """The newest ``cap`` lines dated at or before ``until`` (and not before ``after``)."""
        if until < self.start + self.interval:
            return []
        last = math.floor((until - self.start) / self.interval)
        first = max(1, last - cap + 1)
        if after is not None:
            first = max(first, math.floor((after - self.start) / self.interval))
        out = []
        for k in range(first, last + 1):
            t = self.start + k * self.interval
            out.append((t, 1, k, self.gen(k, t)))
        return out

    def next_after(self, t: float) -> float:
        k = max(1, math.floor((t - self.start) / self.interval) + 1)
        return self.start + k * self.interval


class RunLog:
    def __init__(self, started: float) -> None:
        self.started = started
        self.ended: float | None = None
        self.ticker: Ticker | None = None
        self._lines: list[Line] = []
        self._partial = ""
        self._count = 0
        self._waiters: set[asyncio.Future[None]] = set()
        self.listeners: set[Callable[[bytes], None]] = set()
        """Called with every raw write (``kubectl attach`` to an interactive container)."""

    def add(self, t: float, text: str) -> None:
        """Record ``text`` (one or more lines) as written at time ``t``."""
        for line in text.split("\n"):
            self._count += 1
            bisect.insort(self._lines, (t, 0, self._count, line))
        if len(self._lines) > CAP:
            del self._lines[: len(self._lines) - CAP]
        self._wake()

    def write(self, t: float, data: bytes) -> None:
        """Stream output: complete lines are recorded, a trailing partial line waits."""
        for listener in list(self.listeners):
            listener(data)
        text = self._partial + data.decode(errors="replace")
        *complete, self._partial = text.split("\n")
        if complete:
            self.add(t, "\n".join(complete))

    def end(self, t: float) -> None:
        if self._partial:
            self.add(t, self._partial)
            self._partial = ""
        if self.ended is None:
            self.ended = t
        self._wake()

    def lines(self, now: float) -> list[Line]:
        """Every line dated at or before ``now`` (the newest :data:`CAP`), in order."""
        cut = bisect.bisect_right(self._lines, (now, 2, 0, ""))
        explicit = self._lines[:cut]
        if self.ticker is None:
            return explicit
        limit = now if self.ended is None else min(now, self.ended)
        merged = list(heapq.merge(explicit, self.ticker.lines(limit)))
        return merged[-CAP:]

    def lines_after(self, cursor: Line | None, now: float) -> list[Line]:
        """:meth:`lines` that sort after ``cursor`` (all of them without one), computed from the
        cursor on: a follower reading every few milliseconds must not regenerate the history."""
        if cursor is None:
            return self.lines(now)
        start = bisect.bisect_right(self._lines, cursor)
        cut = bisect.bisect_right(self._lines, (now, 2, 0, ""))
        explicit = self._lines[start:cut]
        if self.ticker is None:
            return explicit
        limit = now if self.ended is None else min(now, self.ended)
        ticks = [line for line in self.ticker.lines(limit, after=cursor[0]) if line > cursor]
        return list(heapq.merge(explicit, ticks))[-CAP:]

    def next_time(self, now: float) -> float | None:
        """When the next line becomes visible after ``now``, if any is planned."""
        cut = bisect.bisect_right(self._lines, (now, 2, 0, ""))
        times = [self._lines[cut][0]] if cut < len(self._lines) else []
        if self.ticker is not None:
            t = self.ticker.next_after(now)
            if self.ended is None or t <= self.ended:
                times.append(t)
        return min(times) if times else None

    def finished(self, now: float) -> bool:
        """The run ended and every line it wrote is visible."""
        return self.ended is not None and self.ended <= now and self.next_time(now) is None

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def wait(self, timeout: float) -> None:
        """Until something is written or the run ends, or ``timeout`` seconds pass."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, timeout=max(0.0, timeout))
        finally:
            self._waiters.discard(waiter)
