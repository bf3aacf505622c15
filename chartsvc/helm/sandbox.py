"""Bounded renders: every chart render runs in a worker process the limits can really stop.

A template is code (``{{ range until 100000000 }}`` renders for a minute into gigabytes), Helm's
render cannot be cancelled, and a Go heap once grown is not given back. So renders run in a small
pool of worker processes (``chartsvc.helm.renderworker``), at most ``workers`` at once (more wait
for a free one). A worker that overruns the time limit or the memory bound is killed (its memory
goes with it) and replaced; a render whose text would pass the output bound is refused by the
worker before it is sent. Workers start when first needed and then stay warm, so a small render
costs one pipe round trip. Blocking: called from the Helm runner's threads, never the event loop.
This module knows nothing of HTTP.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs
import helm_python as helm

from chartsvc.helm import renderworker
from chartsvc.helm.errors import HelmFailed, RenderTimedOut, RenderTooLarge, translate
from common.errors import WharfError

logger = logging.getLogger(__name__)

#: How often a running render's worker is checked against the memory bound, in seconds.
POLL_S = 0.05
#: Seconds a new worker may take to start (a busy machine loads an interpreter and Go slowly).
START_S = 60.0
#: How much one read of a worker's answer asks for: at least a pipe's whole buffer, so that an
#: answer's frames (its header, then the text) come in one read; at most 1 MiB of a large text.
_READ_MIN, _READ_MAX = 64 * 1024, 1024 * 1024
_PAGE = os.sysconf("SC_PAGE_SIZE")


@attrs.frozen
class RenderLimits:
    """Bounds on one render: wall time (seconds), rendered text (bytes), the worker's resident
    memory (bytes), and how many renders run at once."""

    timeout: float = 30.0
    max_output: int = 64 * 1024 * 1024
    max_memory: int = 1024 * 1024 * 1024
    workers: int = 2


def worker_environment(limits: RenderLimits) -> dict[str, str]:
    """The worker's environment: the service's, with Go's collector tuned for renders unless the
    operator tuned it. A render allocates short-lived garbage and keeps little: collecting at 5x
    the live heap (``GOGC=400``) rather than 2x took 15 % less CPU per small render (1.49 against
    1.76 ms, three runs each); ``GOMEMLIMIT`` at half the memory bound makes the collector work
    harder well before the bound kills the worker."""
    return {"GOGC": "400", "GOMEMLIMIT": f"{limits.max_memory // 2}B", **os.environ}


class _Worker:
    def __init__(self, limits: RenderLimits) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chartsvc.helm.renderworker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=worker_environment(limits),
            start_new_session=True,  # a terminal's ^C reaches the service, which stops us
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout.fileno()
        #: Bytes read from the pipe but not yet taken as a frame: the rest of the answer.
        self._unread = bytearray()
        self._started = False

    def wait_started(self, limits: RenderLimits) -> None:
        """Wait for a new worker's first frame: its start (an interpreter and the Helm engine
        loading, slow on a busy machine) is not counted against the render's time limit."""
        if self._started:
            return
        try:
            frame = self.receive(time.monotonic() + START_S, limits)
        except RenderTimedOut:
            raise HelmFailed(f"the render worker did not start within {START_S:g} s") from None
        if frame != renderworker.READY:
            raise HelmFailed("the render worker started wrongly")
        self._started = True

    def send(self, *frames: bytes) -> None:
        for frame in frames:
            self._in.write(len(frame).to_bytes(8, "big"))
            self._in.write(frame)
        self._in.flush()

    def receive(self, deadline: float, limits: RenderLimits) -> bytes:
        """One answer frame; raises when the deadline or memory bound passes first."""
        head = self._read(8, deadline, limits)
        return self._read(int.from_bytes(head, "big"), deadline, limits)

    def _read(self, size: int, deadline: float, limits: RenderLimits) -> bytes:
        """``size`` bytes of the answer. Each read takes all the pipe holds (within ``_READ_MAX``):
        every system call lets the GIL go, and getting it back from a busy event loop can take
        the interpreter's whole switch interval (5 ms), so an answer costs as few as it can."""
        while len(self._unread) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RenderTimedOut(
                    f"the render took longer than the limit of {limits.timeout:g} s "
                    "(chartsvc.charts.render-timeout)"
                )
            ready, _, _ = select.select([self._out], [], [], min(left, POLL_S))
            if not ready:
                self._check_memory(limits)
                continue
            wanted = size - len(self._unread)
            chunk = os.read(self._out, min(max(wanted, _READ_MIN), _READ_MAX))
            if not chunk:
                raise HelmFailed("the render worker ended unexpectedly")
            self._unread += chunk
        with memoryview(self._unread) as view:
            data = bytes(view[:size])  # one copy, also of a large text
        del self._unread[:size]
        return data

    def _check_memory(self, limits: RenderLimits) -> None:
        try:
            with open(f"/proc/{self.process.pid}/statm", "rb") as statm:
                resident = int(statm.read().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            return
        if resident > limits.max_memory:
            raise RenderTooLarge(
                f"the render used more than the limit of {limits.max_memory} bytes of memory "
                "(chartsvc.charts.max-render-memory)"
            )

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._in.close()
        assert self.process.stdout is not None
        self.process.stdout.close()


class RenderPool:
    """The worker processes; :meth:`close` kills them."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def render(
        self,
        archive: bytes,
        values: dict[str, Any],
        *,
        name: str,
        options: dict[str, Any],
        cluster: Mapping[str, str | None] | None = None,
    ) -> str:
        """Helm's render of ``archive`` as ``helm template`` prints it, within the limits.

        ``cluster`` (``kubeconfig``: the path of a kubeconfig file, None for the in-cluster
        account; ``context``) renders as Helm's install and upgrade do, ``lookup`` reading the
        live objects; without it ``lookup`` finds nothing, as in ``helm template``."""
        header = {
            "name": name,
            "values": values,
            "options": options,
            "maxOutput": self.limits.max_output,
            **({"cluster": dict(cluster)} if cluster is not None else {}),
        }
        request = json.dumps(header).encode()
        with self._slots:
            worker = self._take()
            try:
                answer = self._exchange(worker, request, archive)
            except BaseException:
                worker.kill()  # its memory goes with it; a fresh one waits warm
                self._give_back(_Worker(self.limits))
                raise
            self._give_back(worker)
        if isinstance(answer, WharfError):
            raise answer
        return answer

    def _exchange(self, worker: _Worker, request: bytes, archive: bytes) -> str | WharfError:
        """The rendered text, or the refusal of a worker that stays usable."""
        worker.wait_started(self.limits)
        deadline = time.monotonic() + self.limits.timeout
        try:
            worker.send(request, archive)
        except OSError as exc:  # the worker died between renders
            raise HelmFailed("the render worker ended unexpectedly") from exc
        answer = json.loads(worker.receive(deadline, self.limits))
        if answer.get("ok"):
            return worker.receive(deadline, self.limits).decode()
        if "tooLarge" in answer:
            return RenderTooLarge(
                f"the rendered manifests ({answer['tooLarge']} bytes) are larger than the limit "
                f"of {self.limits.max_output} bytes (chartsvc.charts.max-render-output)"
            )
        error_type = getattr(helm, str(answer.get("error")), helm.HelmError)
        return translate(error_type(str(answer.get("message")), code=answer.get("code")))

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise HelmFailed("the render pool is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.process.poll() is None:
                    return worker
                worker.kill()
        return _Worker(self.limits)

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.kill()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()
