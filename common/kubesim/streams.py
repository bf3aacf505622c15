"""``pods/exec`` and ``pods/attach`` over WebSocket, against the simulated containers.

Exec runs the command in the container's built-in shell (its filesystem and environment) with the
streams the client asked for; with ``tty`` the session gets a terminal (echo, line editing, Ctrl-C,
resize on channel 4). The end of the command is reported as a ``Status`` on channel 3 --
``Success``, or ``NonZeroExitCode`` with an ``ExitCode`` cause -- on v4/v5, and as plain text on
older protocols; then the connection closes. Attach joins the container's main process: its output
from now on and, for ``stdin: true`` containers, its input.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from common.kubesim import logs
from common.kubesim.channels import CLOSE, EXEC_PROTOCOLS, Channels
from common.kubesim.cluster import LiveCluster
from common.kubesim.kubelet import Container, PodRuntime, Run
from common.kubesim.params import flag
from common.kubesim.shell import (
    IO,
    BytesReader,
    ExitShell,
    FuncWriter,
    Pipe,
    Reader,
    Shell,
    TtyInput,
    TtyOutput,
    Writer,
)
from common.kubesim.status import KubeError, bad_request, not_found
from common.kubesim.store import Obj

_PIDS = itertools.count(100)


def target_container(live: LiveCluster, pod: Obj, name: str) -> tuple[PodRuntime, Container]:
    meta, spec = pod["metadata"], pod.get("spec") or {}
    names = [c["name"] for c in spec.get("containers") or []] + [
        c["name"] for c in spec.get("initContainers") or []
    ]
    if not name:
        apps = [c["name"] for c in spec.get("containers") or []]
        if len(apps) != 1:
            raise bad_request(
                f"a container name must be specified for pod {meta['name']}, choose one of: [{' '.join(apps)}]"
            )
        name = apps[0]
    if name not in names:
        raise bad_request(f"container {name} is not valid for pod {meta['name']}")
    rt = live.kubelet.runtime(meta["namespace"], meta["name"])
    container = rt.container(name) if rt is not None else None
    if rt is None or container is None or container.phase != "running":
        raise bad_request(f'unable to upgrade connection: container not found ("{name}")')
    return rt, container


def _pod(live: LiveCluster, namespace: str, name: str) -> Obj:
    pod = live.objs.store.get(("", "pods"), namespace, name)
    if pod is None:
        raise not_found("", "pods", name)
    return pod


def status_for(code: int, argv: list[str], version: int) -> bytes | None:
    if version < 4:
        return (
            None
            if code == 0
            else f"command terminated with non-zero exit code: exit status {code}".encode()
        )
    if code == 0:
        return json.dumps({"metadata": {}, "status": "Success"}).encode()
    return json.dumps(
        {
            "metadata": {},
            "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
        }
    ).encode()


def _upgrade_required(request: web.Request) -> None:
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise bad_request("Upgrade request required")


async def _pump(chans: Channels, stdin: Reader | None) -> None:
    """Client → container: stdin bytes, resize messages, v5 CLOSE; EOF when the client leaves."""
    try:
        async for channel, data in chans.messages():
            if channel == 0 and stdin is not None:
                if isinstance(stdin, TtyInput):
                    await stdin.feed(data)
                elif isinstance(stdin, Pipe):
                    stdin.feed(data)
            elif channel == 4 and isinstance(stdin, TtyInput):
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    size = json.loads(data)
                    stdin.resize(int(size["Width"]), int(size["Height"]))
            elif channel == CLOSE and data[:1] == b"\x00" and stdin is not None:
                _eof(stdin)
    finally:
        if stdin is not None:
            _eof(stdin)


def _eof(stdin: Reader) -> None:
    if isinstance(stdin, TtyInput | Pipe):
        stdin.feed_eof()


async def exec_handler(
    request: web.Request, live: LiveCluster, namespace: str, name: str
) -> web.StreamResponse:
    q = request.query
    argv = q.getall("command", [])
    if not argv:
        raise bad_request("you must specify at least one command for the container")
    want_in, want_out, want_err, tty = (flag(q, k) for k in ("stdin", "stdout", "stderr", "tty"))
    if not (want_in or want_out or want_err):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    pod = _pod(live, namespace, name)
    rt, container = target_container(live, pod, q.get("container", ""))
    _upgrade_required(request)
    ws = web.WebSocketResponse(protocols=EXEC_PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    chans = Channels(ws, ws.ws_protocol or "")
    await chans.send(1 if want_out else 2 if want_err else 3, b"")
    out, err, stdin = _streams(chans, want_out, want_err, want_in, tty)
    sh = live.kubelet.shell_for(rt, container, pid=next(_PIDS))
    if tty:
        sh.env.setdefault("TERM", "xterm")
    pump = asyncio.create_task(_pump(chans, stdin))
    code = await _run_until_gone(
        chans, pump, _call(sh, argv, IO(stdin or BytesReader(b""), out, err))
    )
    await _finish(chans, pump, status_for(code, argv, chans.version) if code >= 0 else None)
    return ws


def _streams(
    chans: Channels, want_out: bool, want_err: bool, want_in: bool, tty: bool
) -> tuple[Writer, Writer, Reader | None]:
    async def to(channel: int, data: bytes) -> None:
        await chans.send(channel, data)

    null = FuncWriter(lambda data: asyncio.sleep(0))
    out: Writer = FuncWriter(lambda d: to(1, d)) if want_out else null
    err: Writer = FuncWriter(lambda d: to(2, d)) if want_err else null
    if tty:
        out = TtyOutput(out)
        err = out
    stdin: Reader | None = None
    if want_in:
        stdin = TtyInput(out) if tty else Pipe()
    return out, err, stdin


async def _call(sh: Shell, argv: list[str], io: IO) -> int:
    try:
        return await sh.call(argv, io)
    except ExitShell as exc:
        return exc.code


async def _run_until_gone(
    chans: Channels, pump: asyncio.Task[None], work: Coroutine[Any, Any, int]
) -> int:
    """The command's exit code, or -1 when the client went away first (the command is killed).

    A client that only half-closes stdin (v5 CLOSE, or the end of piped input) keeps the
    connection open and still gets the exit status; a closed connection ends the command.
    """
    task = asyncio.ensure_future(work)
    await asyncio.wait({task, pump}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done() and chans.ws.closed:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return -1
    return await task


async def _finish(chans: Channels, pump: asyncio.Task[None], status: bytes | None) -> None:
    if status is not None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await chans.send(3, status)
    with contextlib.suppress(ConnectionError, RuntimeError):
        await chans.ws.close()
    pump.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await pump


async def attach_handler(
    request: web.Request, live: LiveCluster, namespace: str, name: str
) -> web.StreamResponse:
    q = request.query
    want_in, want_out, want_err = (flag(q, k) for k in ("stdin", "stdout", "stderr"))
    if not (want_in or want_out or want_err):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    pod = _pod(live, namespace, name)
    _, container = target_container(live, pod, q.get("container", ""))
    if want_in and not container.spec.get("stdin"):
        raise KubeError(
            400, f"unable to upgrade connection: container {container.name} does not accept stdin"
        )
    _upgrade_required(request)
    ws = web.WebSocketResponse(protocols=EXEC_PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    chans = Channels(ws, ws.ws_protocol or "")
    await chans.send(1 if want_out else 2 if want_err else 3, b"")
    run = container.runs[-1]
    stdin = container.stdin if want_in else None
    pump = asyncio.create_task(_pump_attached(chans, stdin))
    channel = 1 if want_out else 2
    try:
        if container.stdin is not None:
            await _relay_raw(chans, channel, run, pump)
        else:
            await _relay_log(chans, channel, run, pump)
    finally:
        if container.spec.get("stdinOnce") and stdin is not None:
            _eof(stdin)
    await _finish(chans, pump, status_for(0, [], chans.version))
    return ws


async def _relay_raw(chans: Channels, channel: int, run: Run, pump: asyncio.Task[None]) -> None:
    """An interactive main process: its output bytes as they are written (prompts included)."""
    outgoing: asyncio.Queue[bytes] = asyncio.Queue()
    run.log.listeners.add(outgoing.put_nowait)
    try:
        while not pump.done():
            getter = asyncio.ensure_future(outgoing.get())
            ended = asyncio.ensure_future(_run_end(run))
            done, pending = await asyncio.wait(
                {getter, ended, pump}, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending - {pump}:
                task.cancel()
            if getter in done:
                await chans.send(channel, getter.result())
            if ended in done:
                return
    finally:
        run.log.listeners.discard(outgoing.put_nowait)


async def _relay_log(chans: Channels, channel: int, run: Run, pump: asyncio.Task[None]) -> None:
    """Any other process: its log lines from now on, until it exits or the client leaves."""

    async def write(data: bytes) -> None:
        await chans.send(channel, data)

    follower = asyncio.create_task(
        logs.follow(run, logs.LogOptions(follow=True, tail_lines=0), write, lambda: True)
    )
    await asyncio.wait({follower, pump}, return_when=asyncio.FIRST_COMPLETED)
    if not follower.done():
        follower.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
        await follower


async def _pump_attached(chans: Channels, stdin: Reader | None) -> None:
    async for channel, data in chans.messages():
        if channel == 0 and isinstance(stdin, TtyInput):
            await stdin.feed(data)
        elif channel == 0 and isinstance(stdin, Pipe):
            stdin.feed(data)


async def _run_end(run: Run) -> None:
    while run.finished is None:
        await run.log.wait(1.0)
