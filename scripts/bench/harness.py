"""What several benchmarks share: a free loopback port, a process's CPU and RSS from ``/proc``,
the services started as child processes for the length of a block and waited for (``ready`` on
stdout or the readiness endpoint), a kubernetes_asyncio client of a kubeconfig, timed GETs and
percentiles. Imported by the sibling scripts (run as scripts, their own
folder is on ``sys.path``); the services never import it. The console benchmarks run every process
of theirs on the event loop ``wharf serve`` would pick (``WHARF_EVENT_LOOP``,
:mod:`common.eventloop`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import aiohttp
import report

from common import eventloop

if TYPE_CHECKING:
    from aiohttp import web
    from kubernetes_asyncio.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (0.95: the 95th percentile)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def timed_get(
    session: aiohttp.ClientSession, url: str, params: dict[str, str] | None = None
) -> float:
    """Milliseconds from sending a GET to its whole body read; raises unless it answered 200."""
    started = time.perf_counter()
    async with session.get(url, params=params) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{url} {params or ''} answered {resp.status}")
    return (time.perf_counter() - started) * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """Process ``pid`` and its descendants (a service's render workers, started by any thread)."""
    children = [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]
    return [pid] + [p for child in children for p in process_tree(child)]


class Served(NamedTuple):
    """A service running as a child process: where it answers, and its process id."""

    base: str
    pid: int


@contextlib.asynccontextmanager
async def running_results(
    data_dir: Path, *, db_url: str | None = None, sets: Sequence[str] = ()
) -> AsyncIterator[Served]:
    """``wharf serve results`` on a free loopback port with its own data directory (and
    ``db_url``'s database when given; ``sets`` are further ``--set`` values), ready to answer;
    stopped when the block ends."""
    database = [f"results.db.url={db_url}"] if db_url is not None else []
    async with running_service("results", data_dir, [*database, *sets]) as served:
        yield served


@contextlib.asynccontextmanager
async def running_chartsvc(data_dir: Path, *, sets: Sequence[str] = ()) -> AsyncIterator[Served]:
    """``wharf serve chartsvc``, as :func:`running_results`."""
    async with running_service("chartsvc", data_dir, sets) as served:
        yield served


@contextlib.asynccontextmanager
async def running_service(
    service: str, data_dir: Path, sets: Sequence[str]
) -> AsyncIterator[Served]:
    port = free_port()
    command = [sys.executable, "-m", "wharf", "serve", service, "--port", str(port)]
    command += ["--host", "127.0.0.1", "--set", f"{service}.data-dir={data_dir}"]
    for item in sets:
        command += ["--set", item]
    server = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_ready(session, base)
        yield Served(base, server.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it has already exited
            server.terminate()
        await asyncio.wait_for(server.wait(), 30)


async def wait_ready(session: aiohttp.ClientSession, base: str) -> None:
    """Wait until the service at ``base`` answers its readiness probe (start-up takes seconds on a
    busy machine: :func:`wait_until`'s minute)."""

    async def ready() -> bool:
        async with session.get(f"{base}/actuator/health/readiness") as resp:
            return resp.status == 200

    await wait_until(ready, f"the service at {base}")


def loop_name() -> str:
    """The kind of the running event loop: ``uvloop`` or ``asyncio``."""
    return (
        "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"
    )


def announce_ready(_: str) -> None:
    """``run_app``'s ``print``: ``ready`` and the loop, the line :func:`read_ready` waits for."""
    print(f"ready {loop_name()}", flush=True)


def read_ready(line: str, what: str) -> str:
    """The loop a child announced in ``line`` (:func:`announce_ready`); exits when it did not."""
    word, _, loop = line.strip().partition(" ")
    if word != "ready":
        raise SystemExit(f"the {what} did not start")
    print(f"{what}: {loop} event loop", file=sys.stderr, flush=True)
    return loop


def serve_console(kubeconfig: str, port: int, data_dir: str, *overrides: str) -> None:
    """Child side: the console over ``kubeconfig`` on loopback; prints ``ready`` and its event
    loop once listening. ``overrides`` are further ``console.*=value`` settings (the admin
    password is ``bench``)."""
    from aiohttp import web

    from common.config import load_settings
    from console.app import create_app
    from console.settings import Settings

    given = [f"console.data-dir={data_dir}", "console.security.admin.password=bench"]
    given += ["console.clusters.impersonate=off", *overrides]  # the console's own rights
    app = create_app(load_settings(Settings, overrides=given), environ={"KUBECONFIG": kubeconfig})
    as_wharf_serves(app)
    loop = eventloop.new_event_loop(eventloop.chosen(os.environ))
    web.run_app(app, host="127.0.0.1", port=port, print=announce_ready, access_log=None, loop=loop)


def as_wharf_serves(app: web.Application) -> None:
    """What ``wharf serve`` adds to an app it serves, for a benchmark that serves one itself: the
    start-up heap frozen once started (without it a full collection of that heap, about 100 ms on
    two cores, lands on one of the first requests measured)."""
    from wharf.cli import freeze_heap

    app.on_startup.append(freeze_heap)


def start_child(script: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """``script *args`` as a child that prints ``ready [what]`` once it serves, and that ``what``
    (a kubeconfig path, or nothing); the child runs until :func:`stop_child` closes its stdin."""
    child = subprocess.Popen(
        [sys.executable, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if not line.startswith("ready"):
        child.kill()
        raise SystemExit(f"child {args[0]} did not start: {line!r}")
    return child, line.removeprefix("ready").strip()


@contextlib.contextmanager
def running_console(
    script: str, kubeconfig: Path | str, port: int, data_dir: str, *extra: str
) -> Iterator[subprocess.Popen[str]]:
    """Parent side: ``script --serve-console kubeconfig port data_dir [extra...]`` (which calls
    :func:`serve_console`), waited for, and stopped when the block ends."""
    args = ("--serve-console", str(kubeconfig), str(port), data_dir, *extra)
    with running_child(script, *args) as (child, loop):
        print(f"console: {loop} event loop", file=sys.stderr, flush=True)
        yield child


@contextlib.contextmanager
def running_child(script: str, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """:func:`start_child` for the length of a block, stopped with :func:`stop_child` after."""
    child, what = start_child(script, *args)
    try:
        yield child, what
    finally:
        stop_child(child)


@contextlib.asynccontextmanager
async def kube_api(kubeconfig: Path | str) -> AsyncIterator[ApiClient]:
    """A kubernetes_asyncio client of the cluster ``kubeconfig`` names (imported here, not at the
    top, so that a benchmark's ``--serve-…`` children never load it for nothing)."""
    from kubernetes_asyncio import client, config

    cfg = client.Configuration()
    await config.load_kube_config(str(kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api:
        yield api


def stop_child(child: subprocess.Popen[str]) -> None:
    if child.stdin:
        child.stdin.close()
    child.terminate()
    child.wait(timeout=30)


def rss_kib(pid: int) -> dict[str, int]:
    """Resident set size now (``VmRSS``) and at its peak (``VmHWM``) of process ``pid``, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


@contextlib.contextmanager
def child(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``args`` as a child process writing to ``log``; terminated (killed if it must) after."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def wait_until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 60) -> None:
    """Poll ``check`` (connection errors count as not yet) until true; exit when it never is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, aiohttp.ClientError):
            if await check():
                return
        await asyncio.sleep(0.1)
    raise SystemExit(f"{what} did not start within {timeout:g}s")


def bench_main(
    name: str,
    parser: argparse.ArgumentParser,
    bench: Callable[[argparse.Namespace], Coroutine[Any, Any, None]],
    *,
    quick: Mapping[str, Any],
    smoke: Mapping[str, Any],
    chosen_loop: bool = False,
) -> int:
    """Parse ``parser`` with ``--quick``/``--smoke`` (:func:`report.options`), give a ``--port``
    left at 0 a free one, run ``bench(args)`` (on the loop :mod:`common.eventloop` picks when
    ``chosen_loop``) with its figures recorded in ``args.report``, and print them: the verdict."""
    args = report.options(parser, quick=quick, smoke=smoke)
    if getattr(args, "port", None) == 0:
        args.port = free_port()
    args.report = report.Report.of(name, args)
    if chosen_loop:
        eventloop.run(bench(args), eventloop.chosen(os.environ))
    else:
        asyncio.run(bench(args))
    return int(args.report.emit())


def console_bench_main(
    doc: str | None,
    bench: Callable[[argparse.Namespace], Coroutine[Any, Any, None]],
    options: Callable[[argparse.ArgumentParser], None],
    *,
    name: str,
    quick: Mapping[str, Any],
    smoke: Mapping[str, Any],
) -> None:
    """``main`` of a benchmark whose console runs as its child: this same script started with
    ``--serve-console`` serves it (:func:`running_console`, whose ``extra`` arguments are its
    settings overrides); otherwise ``options`` are parsed and
    ``bench`` runs as :func:`bench_main` runs it, on the chosen loop; exits with its verdict."""
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-console":
        serve_console(sys.argv[2], int(sys.argv[3]), sys.argv[4], *sys.argv[5:])
        return
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    options(parser)
    raise SystemExit(bench_main(name, parser, bench, quick=quick, smoke=smoke, chosen_loop=True))
