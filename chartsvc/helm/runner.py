"""Where every helm_python call runs: one pool of worker threads, errors translated on the way out.

helm_python blocks (a Go runtime behind ctypes, which lets the threads overlap), so no call may run
on the event loop. Chart calls (render, show, create) and release calls (install, upgrade, ...)
share the one pool; a call's Helm failure leaves it as our error (``chartsvc.helm.errors``). A call
the caller stops waiting for cannot be stopped (a thread cannot be), so the caller waits for it to
end before its cancellation goes on: whatever the caller holds (a release's write lock, say) is
held until Helm is done. This module knows nothing of HTTP, charts or clusters.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import helm_python as helm

from chartsvc.helm.errors import translate

if TYPE_CHECKING:  # only handed on to the translator
    from chartsvc.clusters import ReleaseRef

T = TypeVar("T")
#: Told of every call when it ends: (operation, seconds, succeeded). Runs on the event loop.
Observer = Callable[[str, float, bool], None]

#: Helm calls in flight at once. They mostly wait on the cluster (ctypes releases the GIL), so the
#: default executor's few threads (cores + 4) would make concurrent installs of different releases
#: queue behind each other for no reason.
MAX_CALLS = 64


class HelmRunner:
    """The pool; ``close`` (blocking) waits for the calls in flight. ``observer`` (the service's
    metrics) hears how long each ``operation`` took and whether it failed."""

    def __init__(self, max_calls: int = MAX_CALLS, *, observer: Observer | None = None) -> None:
        self._executor = ThreadPoolExecutor(max_calls, thread_name_prefix="helm")
        self._observer = observer

    async def run(
        self, call: Callable[[], T], *, operation: str, release: ReleaseRef | None = None
    ) -> T:
        """``call()`` in a worker thread; a Helm failure on ``release`` (if any) becomes ours."""
        started = time.perf_counter()
        succeeded = False
        try:
            result = await self._run(call, release)
            succeeded = True
            return result
        finally:
            if self._observer is not None:
                self._observer(operation, time.perf_counter() - started, succeeded)

    async def _run(self, call: Callable[[], T], release: ReleaseRef | None) -> T:

        def work() -> T:
            try:
                return call()
            except helm.HelmError as exc:
                raise translate(exc, release) from exc

        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, contextvars.copy_context().run, work)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait([future])
            raise

    def close(self) -> None:
        self._executor.shutdown(wait=True)
