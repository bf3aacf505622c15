"""Port-forwards: a listening socket of this service bridged to a port of a pod.

A forward names a pod, a Service or a workload and a remote port; it resolves once, as
``kubectl port-forward`` does, to one running pod and a container port (``podports``).

Upstream, a forward speaks what kubectl 1.31+ speaks: one WebSocket per forward tunnelling SPDY
(``spdy``), opened at its first connection and kept, each local connection a pair of streams on it
(an error stream and a data stream, paired by a ``requestID`` header): no TLS handshake and upgrade
per connection. A server that does not offer the tunnel gets the WebSocket channel protocol
``v4.channel.k8s.io``, which carries one connection per socket: a socket per local connection,
channel 0 data, channel 1 errors, each channel's port first as two little-endian bytes. Either
way, an error (the pod refused the port) ends that connection and is kept as ``last_error``.

Every forward is owned by :class:`PortForwards`, which closes a cluster's forwards when the
cluster is removed or re-pointed, and all of them at shutdown. Each forward also records the
person who started it (``owner``): a person sees and stops only their own, the admin groups all
of them; and it keeps the credential that started it, so that the account behind it being
removed or changed stops it (``console.standing``, through ``guard``). This module must not know
HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import attrs

from common import tasks
from common.errors import NotFound, WharfError
from common.sse import Credential
from console.errors import PortForwardFailed
from console.identity import Identity
from console.resources.kubeapi import KubeApi, path_of
from console.streams import spdy
from console.streams.podports import ForwardRequest, PodPort, resolve

logger = logging.getLogger(__name__)

CHANNELS = "v4.channel.k8s.io"
#: What a forward offers, in order of preference.
PROTOCOLS = (spdy.PROTOCOL, CHANNELS)
READ_CHUNK = spdy.MAX_DATA
#: Seconds a finished connection waits for the reason on its error stream (kubectl waits for it).
ERROR_WAIT_S = 1.0


class UnknownPortForward(NotFound, code="unknown-port-forward"): ...


@attrs.define(eq=False)
class Forward:
    """One running forward: its listener, its upstream tunnel, counters and open connections."""

    id: str
    cluster_id: str
    wanted: ForwardRequest
    target: PodPort
    api: KubeApi
    #: Who started it: only they (and the admin groups) see and stop it.
    owner: Identity
    #: What authenticated its start; while it holds, the forward may run (``console.standing``).
    credential: Credential | None = None
    protocols: tuple[str, ...] = PROTOCOLS
    created: float = attrs.field(factory=time.time)
    server: asyncio.Server | None = None
    address: tuple[str, int] = ("", 0)  # where it listens, kept after it stopped
    bytes_in: int = 0  # local client -> pod
    bytes_out: int = 0  # pod -> local client
    connections: int = 0
    upstream_sockets: int = 0  # upgrades made to the cluster: 1 while the tunnel holds
    last_error: str | None = None
    _tasks: set[asyncio.Task[Any]] = attrs.field(factory=set)
    _tunnel: spdy.Tunnel | None = None
    _opening: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    _requests: int = 0
    closing: bool = False
    #: Told when the forward must stop on its own (its credential no longer holds).
    on_end: Callable[[Forward], None] | None = None

    @property
    def active(self) -> int:
        return len(self._tasks)

    def end(self, error: WharfError) -> None:
        """Stop, because what started it no longer holds; ``last_error`` says why."""
        if self.closing:
            return
        self.closing = True
        self.last_error = error.detail
        logger.info("port-forward %s ends: %s", self.id, error.detail)
        if self.on_end is not None:
            self.on_end(self)

    async def serve(self, host: str) -> None:
        try:
            self.server = await asyncio.start_server(self._accept, host, self.wanted.local_port)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise PortForwardFailed(
                f"cannot listen on {host}:{self.wanted.local_port}: {reason}"
            ) from None
        host, port = self.server.sockets[0].getsockname()[:2]
        self.address = (str(host), int(port))

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            upstream = await self._upstream()
            if isinstance(upstream, spdy.Tunnel):
                await self._over_tunnel(upstream, reader, writer)
            else:
                try:
                    await self._bridge(upstream, reader, writer)
                finally:
                    await upstream.close()
        except WharfError as exc:
            self.last_error = exc.detail
            logger.info("port-forward %s: connection failed: %s", self.id, exc.detail)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _upstream(self) -> spdy.Tunnel | aiohttp.ClientWebSocketResponse:
        """The forward's tunnel (opened at first use, and again once it died), or, from a server
        that does not speak it, a socket of the channel protocol for one connection."""
        async with self._opening:
            if self._tunnel is not None and self._tunnel.alive:
                return self._tunnel
            path = path_of("", "v1", "pods", namespace=self.wanted.namespace, name=self.target.pod)
            ws = await self.api.connect_channels(
                path + "/portforward", query=[("ports", str(self.target.port))],
                protocols=self.protocols,
            )  # fmt: skip
            self.upstream_sockets += 1
            if ws.protocol != spdy.PROTOCOL:
                self.protocols = tuple(p for p in self.protocols if p != spdy.PROTOCOL)
                return ws
            if self._tunnel is not None:
                await self._tunnel.close()
            self._tunnel = spdy.Tunnel(ws)
            self._tunnel.start()
            return self._tunnel

    async def _over_tunnel(
        self, tunnel: spdy.Tunnel, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """One local connection as kubectl makes it: an error stream (never written, so opened
        half-closed) and a data stream; the data stream's end, then the error's, end it."""
        self._requests += 1
        headers = {"port": str(self.target.port), "requestID": str(self._requests)}
        try:
            error = await tunnel.open_stream({"streamType": "error", **headers}, fin=True)
            data = await tunnel.open_stream({"streamType": "data", **headers})
        except ConnectionError as exc:
            raise PortForwardFailed(f"the tunnel to the cluster closed: {exc}") from None
        up = asyncio.create_task(self._stream_up(data, reader))
        try:
            await self._stream_down(data, writer)
            async with asyncio.timeout(ERROR_WAIT_S):
                message = b"".join([chunk async for chunk in _chunks(error)])
            if message:
                self.last_error = message.decode("utf-8", "replace")[:500]
        except TimeoutError:
            pass  # the server never closed the error stream: there was no error to tell
        finally:
            await tasks.cancel(up)
            await tunnel.reset(data)
            await tunnel.reset(error)

    async def _stream_up(self, data: spdy.Stream, reader: asyncio.StreamReader) -> None:
        """Local client -> pod; its end of input half-closes the stream (the reply still comes)."""
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(READ_CHUNK):
                self.bytes_in += len(chunk)
                await data.write(chunk)
            await data.close()

    async def _stream_down(self, data: spdy.Stream, writer: asyncio.StreamWriter) -> None:
        async for chunk in _chunks(data):
            if not await self._deliver(writer, chunk):
                return

    async def _deliver(self, writer: asyncio.StreamWriter, data: bytes) -> bool:
        """Pod -> local client; False once the local client is gone."""
        self.bytes_out += len(data)
        writer.write(data)
        try:
            await writer.drain()
        except (ConnectionError, OSError):
            return False
        return True

    async def _bridge(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        up = asyncio.create_task(self._upstream_channels(ws, reader))
        try:
            await self._downstream_channels(ws, writer)
        finally:
            await tasks.cancel(up)

    async def _upstream_channels(
        self, ws: aiohttp.ClientWebSocketResponse, reader: asyncio.StreamReader
    ) -> None:
        """Local client -> pod; its end of input ends the connection (v4 cannot half-close)."""
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(READ_CHUNK):
                self.bytes_in += len(data)
                await ws.send_bytes(b"\x00" + data)
        await ws.close()

    async def _downstream_channels(
        self, ws: aiohttp.ClientWebSocketResponse, writer: asyncio.StreamWriter
    ) -> None:
        """Pod -> local client, after each channel's port prefix, until either side closes."""
        prefixed: set[int] = set()
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.BINARY or not msg.data:
                continue
            channel, data = msg.data[0], bytes(msg.data[1:])
            if channel not in prefixed:
                prefixed.add(channel)  # the first message of each channel is its port
                continue
            if channel == 1 and data:
                self.last_error = data.decode("utf-8", "replace")[:500]
                return
            if channel == 0 and data and not await self._deliver(writer, data):
                return

    async def close(self) -> None:
        self.closing = True
        if self.server is not None:
            self.server.close()
        await tasks.cancel(*self._tasks)
        if self._tunnel is not None:
            await self._tunnel.close()
        if self.server is not None:
            await self.server.wait_closed()


async def _chunks(stream: spdy.Stream) -> AsyncIterator[bytes]:
    while chunk := await stream.read():
        yield chunk


@attrs.define(eq=False)
class PortForwards:
    """Every forward of the service, by id."""

    host: str = "127.0.0.1"
    limit: int = 64
    protocols: tuple[str, ...] = PROTOCOLS  # what forwards offer the cluster, preferred first
    forwards: dict[str, Forward] = attrs.field(factory=dict)
    #: Told of each forward started and stopped: the app's stream registry, which ends a forward
    #: whose credential no longer holds (``common.sse.StreamRegistry.guard``).
    guard: Callable[[Forward], None] = lambda forward: None
    unguard: Callable[[Forward], None] = lambda forward: None
    _ending: set[asyncio.Task[Any]] = attrs.field(factory=set)

    async def start(
        self,
        cluster_id: str,
        api: KubeApi,
        wanted: ForwardRequest,
        *,
        owner: Identity,
        credential: Credential | None = None,
    ) -> Forward:
        if len(self.forwards) >= self.limit:
            raise PortForwardFailed(f"at most {self.limit} port-forwards at once: stop one first")
        target = await resolve(api, wanted)
        forward = Forward(
            secrets.token_hex(8), cluster_id, wanted, target, api, owner, credential,
            protocols=self.protocols, on_end=self._ended,
        )  # fmt: skip
        await forward.serve(self.host)
        self.forwards[forward.id] = forward
        self.guard(forward)
        return forward

    def of_cluster(self, cluster_id: str, *, seen_by: Identity | None = None) -> list[Forward]:
        """The cluster's forwards, oldest first; with ``seen_by``, only that person's."""
        found = [
            f
            for f in self.forwards.values()
            if f.cluster_id == cluster_id and (seen_by is None or f.owner.user == seen_by.user)
        ]
        return sorted(found, key=lambda f: f.created)

    def get(self, cluster_id: str, forward_id: str, *, seen_by: Identity | None = None) -> Forward:
        """The forward; another person's is as unknown as a missing one (with ``seen_by``)."""
        forward = self.forwards.get(forward_id)
        if (
            forward is None
            or forward.cluster_id != cluster_id
            or (seen_by is not None and forward.owner.user != seen_by.user)
        ):
            raise UnknownPortForward(f"no port-forward {forward_id[:40]!r} on cluster {cluster_id}")
        return forward

    async def stop(
        self, cluster_id: str, forward_id: str, *, seen_by: Identity | None = None
    ) -> Forward:
        forward = self.get(cluster_id, forward_id, seen_by=seen_by)
        del self.forwards[forward.id]
        self.unguard(forward)
        await forward.close()
        return forward

    def _ended(self, forward: Forward) -> None:
        if self.forwards.get(forward.id) is not forward:
            return
        task = asyncio.create_task(
            self._stop_ended(forward), name=f"port-forward {forward.id} ends"
        )
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def cluster_changed(self, cluster_id: str, event: str) -> None:
        """The registry's listener: a removed or re-pointed cluster's forwards are released."""
        for forward in self.of_cluster(cluster_id):
            logger.info(
                "port-forward %s released: cluster %r was %s", forward.id, cluster_id, event
            )
            await self.stop(cluster_id, forward.id)

    async def _stop_ended(self, forward: Forward) -> None:
        with contextlib.suppress(UnknownPortForward):  # stopped meanwhile by a request
            await self.stop(forward.cluster_id, forward.id)

    async def close(self) -> None:
        await tasks.cancel(*self._ending)
        for forward in list(self.forwards.values()):
            await self.stop(forward.cluster_id, forward.id)
