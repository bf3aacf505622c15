"""Exec and attach sessions in a pod's container over the Kubernetes channel protocol.

The upstream socket speaks ``v5.channel.k8s.io`` when the API server offers it and
``v4.channel.k8s.io`` otherwise: each message is one channel byte then data (0 stdin, 1 stdout,
2 stderr, 3 status, 4 resize); v5 adds CLOSE (``255, channel``) that half-closes stdin. The end of
the process arrives on channel 3 as a ``Status``: ``Success``, or ``NonZeroExitCode`` with an
``ExitCode`` cause. The container is checked first (the pod, the name, a running process), so a
refusal is a problem of its own and not a failed upgrade with no reason.

This module must not know HTTP (it gets a ``KubeApi`` and hands back output items).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
import attrs

from common.errors import BadRequest
from console.resources.kubeapi import KubeApi
from console.streams.logs import container_status, pick_container, pod_path

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, STATUS, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
#: What exec runs when the client names no command: the image's shell.
DEFAULT_COMMAND = ("sh",)


class ContainerNotRunning(BadRequest, code="container-not-running"): ...


@attrs.frozen
class ExecRequest:
    namespace: str
    pod: str
    container: str | None = None
    command: tuple[str, ...] = DEFAULT_COMMAND
    tty: bool = False
    attach: bool = False


@attrs.frozen
class Output:
    """Bytes the process wrote: ``frame`` is the upstream message as it came, the channel byte
    (``STDOUT`` or ``STDERR``) then the data, which is also how ``/ws/exec`` frames them, so a
    relay passes it on without slicing and joining."""

    frame: bytes

    @property
    def channel(self) -> int:
        return self.frame[0]

    @property
    def data(self) -> bytes:
        return self.frame[1:]


@attrs.frozen
class Exit:
    """The end of the process: its exit code when known, and the server's message when not 0."""

    code: int | None
    message: str | None = None


class Session:
    """One upstream exec or attach socket; the caller owns it (``open_session`` closes it)."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, container: str) -> None:
        self.ws = ws
        self.container = container
        self.protocol = ws.protocol or ""

    @property
    def can_close_stdin(self) -> bool:
        return self.protocol.startswith("v5.")

    async def stdin(self, data: bytes) -> None:
        if data:
            await self._send(bytes([STDIN]) + data)

    async def stdin_frame(self, frame: bytes) -> None:
        """A client's message already framed for channel ``STDIN``, sent as it is."""
        if len(frame) > 1:
            await self._send(frame)

    async def close_stdin(self) -> None:
        """Half-close stdin (v5); on v4 there is no such message and stdin stays open."""
        if self.can_close_stdin:
            await self._send(bytes([CLOSE, STDIN]))

    async def resize(self, width: int, height: int) -> None:
        size = json.dumps({"Width": width, "Height": height}).encode()
        await self._send(bytes([RESIZE]) + size)

    async def _send(self, message: bytes) -> None:
        """Send unless the process has ended: what it did not read is lost, as with a pipe."""
        if not self.ws.closed:
            with contextlib.suppress(ConnectionError):
                await self.ws.send_bytes(message)

    async def output(self) -> AsyncIterator[Output | Exit]:
        """stdout/stderr as it comes, then one ``Exit`` if the server reported one."""
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.BINARY or not msg.data:
                continue
            channel, frame = msg.data[0], msg.data
            if channel in (STDOUT, STDERR) and len(frame) > 1:
                yield Output(frame)
            elif channel == STATUS and len(frame) > 1:
                yield exit_of(frame[1:])
                return

    async def close(self) -> None:
        await self.ws.close()


def exit_of(data: bytes) -> Exit:
    """The exit a v4/v5 ``Status`` reports (``Success`` is 0)."""
    try:
        status: Any = json.loads(data)
    except ValueError:
        return Exit(None, data.decode("utf-8", "replace")[:2000])
    if not isinstance(status, dict):
        return Exit(None, None)
    if status.get("status") == "Success":
        return Exit(0)
    message = str(status.get("message") or "")[:2000] or None
    causes = (status.get("details") or {}).get("causes") or []
    for cause in causes:
        if isinstance(cause, dict) and cause.get("reason") == "ExitCode":
            with contextlib.suppress(TypeError, ValueError):
                return Exit(int(str(cause.get("message"))), message)
    return Exit(None, message)


@attrs.frozen
class Target:
    """The container a session runs in, and for attach whether its process reads stdin and has
    a terminal (attach takes both from the container's spec, as ``kubectl attach`` does)."""

    container: str
    stdin: bool = True
    tty: bool = False


async def running_target(api: KubeApi, request: ExecRequest) -> Target:
    """The container the request means (kubectl's default when none is named), if it runs."""
    pod = await api.get(pod_path(request.namespace, request.pod))
    name = pick_container(pod, request.container)
    state = (container_status(pod, name) or {}).get("state") or {}
    if "running" not in state:
        raise ContainerNotRunning(
            f"container {name!r} of pod {request.pod} is not running: nothing to "
            f"{'attach to' if request.attach else 'exec in'}"
        )
    if not request.attach:
        return Target(name, stdin=True, tty=request.tty)
    spec = pod.get("spec") or {}
    every = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    own: dict[str, Any] = next((c for c in every if c.get("name") == name), {})
    return Target(name, stdin=bool(own.get("stdin")), tty=bool(own.get("tty")))


def upstream_query(request: ExecRequest, target: Target) -> list[tuple[str, str]]:
    query = [("container", target.container), ("stdout", "true")]
    query.append(("stdin", "true" if target.stdin else "false"))
    query.append(("stderr", "false" if target.tty else "true"))  # a terminal has one stream
    query.append(("tty", "true" if target.tty else "false"))
    if not request.attach:
        query.extend(("command", part) for part in request.command)
    return query


@contextlib.asynccontextmanager
async def open_session(
    api: KubeApi, request: ExecRequest, *, protocols: Sequence[str] = PROTOCOLS
) -> AsyncIterator[Session]:
    target = await running_target(api, request)
    path = pod_path(request.namespace, request.pod) + ("/attach" if request.attach else "/exec")
    query = upstream_query(request, target)
    async with api.open_channels(path, query=query, protocols=protocols) as ws:
        yield Session(ws, target.container)
