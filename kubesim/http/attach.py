"""``pods/attach``: join a running container's main process over the channel protocol.

Output from the moment of attaching: the raw bytes of an interactive main process (a shell started
with ``stdin: true``, so prompts show) or the log lines of any other program; input goes to the
main process when the container accepts stdin. ``stdinOnce`` closes that input when the client
leaves, as ``kubectl run -it --rm`` relies on.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from kubesim.api.params import flag
from kubesim.cluster import LiveCluster
from kubesim.http import logs
from kubesim.http.channels import Channels
from kubesim.http.streams import (
    close_stdin,
    feed_stdin,
    finish,
    open_channels,
    pod_or_404,
    status_for,
    target_container,
)
from kubesim.kubelet import Run
from kubesim.machinery.status import KubeError, bad_request
from kubesim.shell import Reader


async def handler(
    request: web.Request, live: LiveCluster, namespace: str, name: str
) -> web.StreamResponse:
    q = request.query
    want_in, want_out, want_err = (flag(q, k) for k in ("stdin", "stdout", "stderr"))
    if not (want_in or want_out or want_err):
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    pod = pod_or_404(live, namespace, name)
    _, container = target_container(live, pod, q.get("container", ""))
    if want_in and not container.spec.get("stdin"):
        raise KubeError(
            400, f"unable to upgrade connection: container {container.name} does not accept stdin"
        )
    chans = await open_channels(request, live, want_out=want_out, want_err=want_err)
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
            close_stdin(stdin)
    await finish(chans, pump, status_for(0, [], chans.version))
    return chans.ws


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
        if channel == 0:
            await feed_stdin(stdin, data)


async def _run_end(run: Run) -> None:
    while run.finished is None:
        await run.log.wait(1.0)
