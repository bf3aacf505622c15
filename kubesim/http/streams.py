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

from kubesim.api.params import flag
from kubesim.cluster import LiveCluster
from kubesim.http.channels import CLOSE, EXEC_PROTOCOLS, Channels
from kubesim.kubelet import Container, PodRuntime
from kubesim.machinery.status import bad_request, not_found
from kubesim.shell import (
    COMMANDS,
    IO,
    BytesReader,
    FuncWriter,
    NullWriter,
    Pipe,
    Reader,
    Shell,
    TtyInput,
    Writer,
    process_streams,
)
from kubesim.shell.builtins import BUILTINS
from kubesim.store import Obj

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


def pod_or_404(live: LiveCluster, namespace: str, name: str) -> Obj:
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


def require_upgrade(request: web.Request) -> None:
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise bad_request("Upgrade request required")


async def open_channels(
    request: web.Request, live: LiveCluster, *, want_out: bool, want_err: bool
) -> Channels:
    """The WebSocket upgrade of exec and attach: the channel protocol the client offered, opened
    with an empty frame on the first stream it asked for, and ready for output once the stream
    set-up a real server goes through is over.

    A real API server only reaches the process after the upgrade: its StreamTranslator opens
    SPDY streams to the kubelet and the runtime starts the exec, round trips that take tens of
    milliseconds. client-go relies on that: its read loop starts before it has created its
    streams and drops frames for streams it does not have yet ("Unknown stream id 1, discarding
    message"), so output sent at once is sometimes lost. ``Timings.exec_start`` is that set-up.
    """
    require_upgrade(request)
    ws = web.WebSocketResponse(protocols=EXEC_PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    chans = Channels(ws, ws.ws_protocol or "")
    await chans.send(1 if want_out else 2 if want_err else 3, b"")
    await asyncio.sleep(live.timings.exec_start)
    return chans


async def _pump(chans: Channels, stdin: Reader | None) -> None:
    """Client → container: stdin bytes, resize messages, v5 CLOSE; EOF when the client leaves."""
    try:
        async for channel, data in chans.messages():
            if channel == 0:
                await feed_stdin(stdin, data)
            elif channel == 4 and isinstance(stdin, TtyInput):
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    size = json.loads(data)
                    stdin.resize(int(size["Width"]), int(size["Height"]))
            elif channel == CLOSE and data[:1] == b"\x00" and stdin is not None:
                close_stdin(stdin)
    finally:
        if stdin is not None:
            close_stdin(stdin)


async def feed_stdin(stdin: Reader | None, data: bytes) -> None:
    """Bytes the client sent on stdin, into the process's terminal or pipe (dropped without one)."""
    if isinstance(stdin, TtyInput):
        await stdin.feed(data)
    elif isinstance(stdin, Pipe):
        stdin.feed(data)


def close_stdin(stdin: Reader) -> None:
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
    pod = pod_or_404(live, namespace, name)
    rt, container = target_container(live, pod, q.get("container", ""))
    chans = await open_channels(request, live, want_out=want_out, want_err=want_err)
    out, err, stdin = _streams(chans, want_out, want_err, want_in, tty)
    sh = live.kubelet.shell_for(rt, container, pid=next(_PIDS))
    if not executable(sh, container, argv[0]):
        await finish(chans, None, _not_found(argv[0]))
        return chans.ws
    if tty:
        sh.env.setdefault("TERM", "xterm")
    pump = asyncio.create_task(_pump(chans, stdin))
    code = await _run_until_gone(
        chans, pump, sh.run_program(argv, IO(stdin or BytesReader(b""), out, err))
    )
    await finish(chans, pump, status_for(code, argv, chans.version) if code >= 0 else None)
    return chans.ws


def _streams(
    chans: Channels, want_out: bool, want_err: bool, want_in: bool, tty: bool
) -> tuple[Writer, Writer, Reader | None]:
    async def to(channel: int, data: bytes) -> None:
        await chans.send(channel, data)

    null = NullWriter()
    out, stdin = process_streams(
        FuncWriter(lambda d: to(1, d)) if want_out else null, stdin=want_in, tty=tty
    )
    if tty:  # a terminal has one output, which stderr shares
        return out, out, stdin
    return out, FuncWriter(lambda d: to(2, d)) if want_err else null, stdin


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


def executable(sh: Shell, container: Container, program: str) -> bool:
    """Whether the container has ``program``: a distroless image has nothing but its app."""
    if container.behaviour.flavor == "distroless":
        return False
    if program in COMMANDS or program in BUILTINS:
        return True
    return "/" in program and sh.fs.exists(program, sh.cwd)


def _not_found(program: str) -> bytes:
    message = (
        "OCI runtime exec failed: exec failed: unable to start container process: exec: "
        f'"{program}": executable file not found in $PATH: unknown'
    )
    return json.dumps(
        {
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "InternalError",
            "code": 500,
        }
    ).encode()


async def finish(chans: Channels, pump: asyncio.Task[None] | None, status: bytes | None) -> None:
    if status is not None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await chans.send(3, status)
    with contextlib.suppress(ConnectionError, RuntimeError):
        await chans.ws.close()
    if pump is not None:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
