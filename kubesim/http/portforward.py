"""``pods/portforward``: reach a simulated container port through the API server.

Two transports, as a 1.32 API server offers them:

* the WebSocket channel protocol (``v4.channel.k8s.io`` and its base64 variant), which
  kubernetes-asyncio speaks: ``?ports=8080,9090`` opens a data and an error channel per port
  (2·i and 2·i+1); the server first sends each channel's port as 2 bytes little-endian;
* SPDY tunnelled in a WebSocket (``SPDY/3.1+portforward.k8s.io``), which ``kubectl
  port-forward`` uses: each local connection becomes an error stream and a data stream, paired by
  their ``requestid`` header.

Behind either, a port a container declares answers HTTP (``podhttp``); any other port refuses the
connection with the kubelet's error text on the error channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Any

import aiohttp
from aiohttp import web

from kubesim.cluster import LiveCluster
from kubesim.http import spdy
from kubesim.http.channels import PORTFORWARD_PROTOCOLS, Channels, offered
from kubesim.kubelet import podhttp
from kubesim.machinery.status import bad_request, not_found
from kubesim.store import Obj

SPDY_TUNNEL = "SPDY/3.1+portforward.k8s.io"


def refused(pod: Obj, port: int) -> str:
    uid = pod["metadata"]["uid"]
    return (
        f"error forwarding port {port} to pod {uid}, uid : failed to execute portforward in network "
        f'namespace "/var/run/netns/cni-{uid[:8]}": failed to connect to localhost:{port} inside '
        f'namespace "{uid[:12]}", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused '
        f"IPv6 dial tcp6 [::1]:{port}: connect: connection refused "
    )


def _running_pod(live: LiveCluster, namespace: str, name: str) -> Obj:
    pod = live.objs.store.get(("", "pods"), namespace, name)
    if pod is None:
        raise not_found("", "pods", name)
    if (pod.get("status") or {}).get("phase") != "Running":
        raise bad_request(f"unable to upgrade connection: pod {name} is not running")
    return pod


def _ports(request: web.Request) -> list[int]:
    raw = [p for value in request.query.getall("ports", []) for p in value.split(",") if p.strip()]
    if not raw:
        raise bad_request('query parameter "port" is required')
    try:
        ports = [int(p) for p in raw]
    except ValueError:
        raise bad_request(f"invalid port: {raw}") from None
    if any(not 0 < p < 65536 for p in ports):
        raise bad_request(f"invalid port: {raw}")
    return ports


async def handler(
    request: web.Request, live: LiveCluster, namespace: str, name: str
) -> web.StreamResponse:
    pod = _running_pod(live, namespace, name)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise bad_request("Upgrade request required")
    if SPDY_TUNNEL in offered(request):
        ws = web.WebSocketResponse(protocols=(SPDY_TUNNEL,), max_msg_size=0)
        await ws.prepare(request)
        await _spdy(ws, live, pod)
        return ws
    ports = _ports(request)
    ws = web.WebSocketResponse(protocols=PORTFORWARD_PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    await _channels(Channels(ws, ws.ws_protocol or ""), live, pod, ports)
    return ws


async def _channels(chans: Channels, live: LiveCluster, pod: Obj, ports: list[int]) -> None:
    inbox = [asyncio.Queue[bytes]() for _ in ports]
    for i, port in enumerate(ports):
        prefix = struct.pack("<H", port)
        await chans.send(2 * i, prefix)
        await chans.send(2 * i + 1, prefix)

    async def serve(i: int, port: int) -> None:
        current = (
            live.objs.store.get(("", "pods"), pod["metadata"]["namespace"], pod["metadata"]["name"])
            or pod
        )
        if podhttp.declared_port(current, port) is None:
            await chans.send(2 * i + 1, refused(current, port).encode())
            return

        async def write(data: bytes) -> None:
            await chans.send(2 * i, data)

        files = podhttp.files_of(current, port, live.objs.store.get)
        await podhttp.serve(inbox[i].get, write, current, port, files)

    async def receive() -> None:
        async for channel, data in chans.messages():
            if channel % 2 == 0 and channel // 2 < len(ports) and data:
                inbox[channel // 2].put_nowait(data)
        for q in inbox:
            q.put_nowait(b"")

    reader = asyncio.create_task(receive())
    workers = [asyncio.create_task(serve(i, p)) for i, p in enumerate(ports)]
    served: asyncio.Future[Any] = asyncio.gather(*workers)
    waiting: set[asyncio.Future[Any]] = {reader, served}
    try:
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (*workers, reader, served):
            task.cancel()
        for task in (*workers, reader, served):
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
                await task
        with contextlib.suppress(ConnectionError, RuntimeError):
            await chans.ws.close()


async def _spdy(ws: web.WebSocketResponse, live: LiveCluster, pod: Obj) -> None:
    pairs: dict[str, dict[str, spdy.Stream]] = {}
    tasks: set[asyncio.Task[None]] = set()

    async def send(frame: bytes) -> None:
        if not ws.closed:
            await ws.send_bytes(frame)

    async def forward(error: spdy.Stream, data: spdy.Stream) -> None:
        port = int(data.headers.get("port", "0") or 0)
        current = (
            live.objs.store.get(("", "pods"), pod["metadata"]["namespace"], pod["metadata"]["name"])
            or pod
        )
        try:
            if podhttp.declared_port(current, port) is None:
                await error.write(refused(current, port).encode())
            else:
                files = podhttp.files_of(current, port, live.objs.store.get)
                await podhttp.serve(data.read, data.write, current, port, files)
        finally:
            await data.close()
            await error.close()

    async def on_stream(stream: spdy.Stream) -> None:
        request_id = stream.headers.get("requestid", str(stream.id))
        pair = pairs.setdefault(request_id, {})
        pair[stream.headers.get("streamtype", "")] = stream
        if "error" in pair and "data" in pair:
            del pairs[request_id]
            task = asyncio.create_task(forward(pair["error"], pair["data"]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    session = spdy.Session(send, on_stream)
    try:
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                await session.feed(msg.data)
            elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.ERROR):
                break
    finally:
        for task in list(tasks):
            task.cancel()
        for task in list(tasks):
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
                await task
