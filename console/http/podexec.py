"""``/ws/exec``: a WebSocket into a pod's container (exec a command, or attach to its process).

Query: ``cluster``, ``namespace``, ``pod`` (required), ``container``, ``mode=attach``, ``command``
(repeated, one argv element each; default ``sh``) and ``tty=true``. The admin login is needed in
both security modes (``/ws/**`` is a secret path in ``console.auth``) and every session is audited
when it connects. Everything that can be refused (unknown cluster, pod or container, a container
not running, no upgrade) is refused before the upgrade, as a problem response.

Frames, client to console: text is stdin (UTF-8); binary is Kubernetes framing, one channel byte
then data: 0 stdin bytes, 4 resize ``{"Width": w, "Height": h}``, 255 then 0 closes stdin.
Console to client: binary, channel 1 stdout or 2 stderr then the bytes; when the process ends, one
text frame ``{"type": "exit", "exitCode": n, "message": ...}`` and a normal close. Closing either
side closes the other; shutdown closes every session (1001); the signed-in account removed or
changed, or the session ended, closes it with 1008 and the reason (``console.standing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from common.errors import BadRequest
from console.audit import audited
from console.http.clusterapi import cluster_api
from console.keys import EXEC_SESSIONS
from console.standing import guarded
from console.streams import podexec
from console.streams.podexec import ExecRequest, Exit, Output, Session

routes = web.RouteTableDef()
#: Longest frame a client may send (stdin is typed or pasted; 1 MiB is a large paste).
MAX_FRAME = 1024 * 1024
#: Most argv elements of a command, and their total length.
MAX_ARGS, MAX_ARGV_CHARS = 64, 16 * 1024
_FLAGS = {"true": True, "false": False}


@routes.get("/ws/exec", name="execSession")
async def exec_session(request: web.Request) -> web.StreamResponse:
    cluster_id, wanted = exec_request(request)
    api = await cluster_api(request, cluster_id)
    ws = web.WebSocketResponse(max_msg_size=MAX_FRAME)
    if not ws.can_prepare(request).ok:
        raise BadRequest("/ws/exec is a WebSocket: send an Upgrade request")
    action = "attach" if wanted.attach else "exec"
    target = f"pods/{wanted.namespace}/{wanted.pod}"
    async with contextlib.AsyncExitStack() as stack:
        with audited(request, action=action, cluster=cluster_id, target=target):
            session = await stack.enter_async_context(podexec.open_session(api, wanted))
        await ws.prepare(request)
        sessions = request.app[EXEC_SESSIONS]
        sessions.add(ws)
        try:
            async with guarded(request, ws):  # closed (1008) once its account no longer holds
                await _bridge(ws, session)
        finally:
            sessions.discard(ws)
    return ws


def exec_request(request: web.Request) -> tuple[str, ExecRequest]:
    query = request.query
    missing = [k for k in ("cluster", "namespace", "pod") if not query.get(k)]
    if missing:
        raise BadRequest(f"missing query parameter(s): {', '.join(missing)}")
    mode = query.get("mode", "exec")
    if mode not in ("exec", "attach"):
        raise BadRequest(f"mode must be exec or attach, not {mode[:40]!r}")
    tty = _FLAGS.get(query.get("tty", "false"))
    if tty is None:
        raise BadRequest("tty must be true or false")
    command = tuple(query.getall("command", [])) or podexec.DEFAULT_COMMAND
    if len(command) > MAX_ARGS or sum(map(len, command)) > MAX_ARGV_CHARS:
        raise BadRequest(f"command: at most {MAX_ARGS} parts of {MAX_ARGV_CHARS} characters")
    wanted = ExecRequest(
        namespace=query["namespace"],
        pod=query["pod"],
        container=query.get("container") or None,
        command=command,
        tty=tty,
        attach=mode == "attach",
    )
    return query["cluster"], wanted


async def _bridge(ws: web.WebSocketResponse, session: Session) -> None:
    feeder = asyncio.create_task(_feed(ws, session))
    try:
        async for item in session.output():
            if isinstance(item, Output):
                await ws.send_bytes(item.frame)
            elif isinstance(item, Exit):
                body = {"type": "exit", "exitCode": item.code, "message": item.message}
                await ws.send_str(json.dumps(body))
    except ConnectionError:
        pass  # the client left mid-write: closing below is all there is to do
    finally:
        feeder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeder
        await session.close()
        await ws.close()


async def _feed(ws: web.WebSocketResponse, session: Session) -> None:
    """Client → container until the client leaves; then the upstream session closes too."""
    try:
        async for data in _client_frames(ws):
            channel, payload = data[0], data[1:]
            if channel == podexec.STDIN:
                await session.stdin_frame(data)
            elif channel == podexec.RESIZE:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    size = json.loads(payload)
                    await session.resize(int(size["Width"]), int(size["Height"]))
            elif channel == podexec.CLOSE and payload[:1] == bytes([podexec.STDIN]):
                await session.close_stdin()
    finally:
        await session.close()


async def _client_frames(ws: web.WebSocketResponse) -> AsyncIterator[bytes]:
    """Each client message as channel-framed bytes (a text frame is stdin)."""
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.TEXT:
            yield bytes([podexec.STDIN]) + msg.data.encode()
        elif msg.type == aiohttp.WSMsgType.BINARY and msg.data:
            yield bytes(msg.data)


def setup(app: web.Application) -> None:
    sessions: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()
    app[EXEC_SESSIONS] = sessions

    async def close_sessions(_: web.Application) -> None:
        for ws in list(sessions):
            await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY, message=b"server shutdown")

    app.on_shutdown.append(close_sessions)
