"""Starting a container's program: scripts run in the built-in shell, other programs are simulated.

A script (see ``behaviour``) runs as an asyncio task owned by the kubelet; its output is the run's
log and its exit status ends the run. Opaque programs need no task: their log is a startup banner
plus a :class:`~kubesim.kubelet.logbuf.Ticker`, and a crashing, OOM-killed or completing
program has a planned exit that the kubelet's timer picks up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from kubesim.kubelet import logtext
from kubesim.kubelet.logbuf import RunLog, Ticker
from kubesim.kubelet.model import Container, Run, container_id
from kubesim.kubelet.runtime import PodRuntime
from kubesim.machinery.timings import Timings
from kubesim.shell import IO, BytesReader, Shell, Writer, process_streams


class Services(Protocol):
    """What starting a program needs from the kubelet."""

    timings: Timings

    def shell_for(self, rt: PodRuntime, c: Container, *, pid: int) -> Shell: ...

    def wake(self, rt: PodRuntime) -> None: ...


class LogWriter(Writer):
    def __init__(self, log: RunLog) -> None:
        self.log = log

    async def write(self, data: bytes) -> None:
        self.log.write(time.time(), data)


def start(services: Services, rt: PodRuntime, c: Container, at: float) -> Run:
    b, t = c.behaviour, services.timings
    seed = f"{rt.namespace}/{rt.name}/{c.name}/{c.restarts}"
    run = Run(c.restarts, at, RunLog(at), container_id(rt.uid, c.name, c.restarts))
    if not b.has_probe:
        run.ready_at = at
    elif b.ready:
        run.ready_at = at + t.ready
    log = run.log
    if b.mode == "serve":
        banner = logtext.startup(b.flavor, c.image, at)
        if banner:
            log.add(at, "\n".join(banner))
        log.ticker = Ticker(
            at, t.log_interval, lambda k, when: logtext.steady(b.flavor, seed, k, when)
        )
    elif b.mode == "complete":
        for i, line in enumerate(logtext.completion(seed, at, b.argv)):
            log.add(at + t.job_run * i / 2, line)
        run.planned = (at + t.job_run, 0, "Completed")
    elif b.mode == "crash":
        log.add(at, "\n".join(logtext.startup("app", c.image, at)))
        log.add(at + t.crash_after, "\n".join(logtext.crash(seed, at + t.crash_after)))
        run.planned = (at + t.crash_after, 1, "Error")
    elif b.mode == "oom":
        steps = max(1, int(t.crash_after / max(t.log_interval, 0.001)))
        for k in range(steps):
            log.add(at + t.crash_after * k / steps, logtext.oom(seed, at, k + 1))
        run.planned = (at + t.crash_after, 137, "OOMKilled")
    else:
        run.task = asyncio.create_task(
            _script(services, rt, c, run), name=f"kubesim-{rt.name}-{c.name}"
        )
        run.task.add_done_callback(_finisher(services, rt, run))
    return run


def _finisher(services: Services, rt: PodRuntime, run: Run) -> Callable[[asyncio.Task[int]], None]:
    def done(task: asyncio.Task[int]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        run.exit_code = 1 if exc is not None else task.result()
        run.finished = time.time()
        services.wake(rt)

    return done


async def _script(services: Services, rt: PodRuntime, c: Container, run: Run) -> int:
    sh = services.shell_for(rt, c, pid=1)
    stdin = bool(c.spec.get("stdin"))
    # A terminal only with stdin: the logs of a ``tty``-only container keep their bare newlines.
    out, c.stdin = process_streams(
        LogWriter(run.log), stdin=stdin, tty=stdin and bool(c.spec.get("tty"))
    )
    sh.host.unknown = _opaque(services, rt, c, run)
    return await sh.run_program(list(c.behaviour.argv), IO(c.stdin or BytesReader(b""), out, out))


def _opaque(
    services: Services, rt: PodRuntime, c: Container, run: Run
) -> Callable[[Shell, list[str], IO], Awaitable[int]]:
    """A program the shell does not know, run from a container script: served or completed."""
    t = services.timings

    async def program(sh: Shell, argv: list[str], io: IO) -> int:
        seed = f"{rt.namespace}/{rt.name}/{c.name}/{c.restarts}"
        if rt.policy == "Always" and not c.init:
            for line in logtext.startup(c.behaviour.flavor, c.image, time.time()):
                await io.stdout.write(line.encode() + b"\n")
            k = 0
            while True:
                await asyncio.sleep(t.log_interval)
                k += 1
                await io.stdout.write(
                    logtext.steady(c.behaviour.flavor, seed, k, time.time()).encode() + b"\n"
                )
        await asyncio.sleep(t.job_run)
        for line in logtext.completion(seed, time.time(), tuple(argv)):
            await io.stdout.write(line.encode() + b"\n")
        return 0

    return program
