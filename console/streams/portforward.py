"""Port-forwards: a listening socket of this service bridged to a port of a pod.

A forward names a pod, a Service or a workload and a remote port; it resolves once, as
``kubectl port-forward`` does, to one running pod (ready ones first) and a container port (a
Service's port becomes its ``targetPort``, a named one looked up in the pod). Each accepted local
connection opens its own upstream socket (the WebSocket channel protocol ``v4.channel.k8s.io``
carries one data stream per port per socket): channel 0 is data, channel 1 errors, and the server
first sends each channel's port as two little-endian bytes. An error-channel message (the pod
refused the port) ends that connection and is kept as the forward's ``last_error``.

Every forward is owned by :class:`PortForwards`, which closes a cluster's forwards when the
cluster is removed or re-pointed, and all of them at shutdown. This module must not know HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
import attrs

from common.errors import BadRequest, NotFound, WharfError
from console.resources.kubeapi import KubeApi, path_of
from console.streams.selectors import pod_selector

logger = logging.getLogger(__name__)

PROTOCOLS = ("v4.channel.k8s.io",)
READ_CHUNK = 64 * 1024
#: kind (as kubectl spells it: name, plural or short name) -> (group, version, resource)
KINDS: Mapping[str, tuple[str, str, str]] = {
    **dict.fromkeys(("pod", "pods", "po"), ("", "v1", "pods")),
    **dict.fromkeys(("service", "services", "svc"), ("", "v1", "services")),
    **dict.fromkeys(("deployment", "deployments", "deploy"), ("apps", "v1", "deployments")),
    **dict.fromkeys(("replicaset", "replicasets", "rs"), ("apps", "v1", "replicasets")),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), ("apps", "v1", "statefulsets")),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), ("apps", "v1", "daemonsets")),
}


class PortForwardFailed(BadRequest):
    default_code = "port-forward-failed"


class UnknownPortForward(NotFound):
    default_code = "unknown-port-forward"


@attrs.frozen
class ForwardRequest:
    kind: str
    namespace: str
    name: str
    remote_port: int
    local_port: int = 0  # 0: any free port


@attrs.frozen
class PodPort:
    pod: str
    port: int


async def resolve(api: KubeApi, wanted: ForwardRequest) -> PodPort:
    """The pod and container port ``wanted`` reaches; a ``port-forward-failed`` problem if none."""
    found = KINDS.get(wanted.kind.lower())
    if found is None:
        kinds = "pod, service, deployment, replicaset, statefulset, daemonset"
        raise PortForwardFailed(f"cannot forward to kind {wanted.kind[:60]!r}: one of {kinds}")
    group, version, resource = found
    path = path_of(group, version, resource, namespace=wanted.namespace, name=wanted.name)
    obj = await api.get(path)
    what = f"{resource}/{wanted.name}"
    if resource == "pods":
        if (obj.get("status") or {}).get("phase") != "Running":
            raise PortForwardFailed(f"pod {wanted.name} is not running")
        return PodPort(wanted.name, wanted.remote_port)
    selector = pod_selector(obj, what)
    pods_path = path_of("", "v1", "pods", namespace=wanted.namespace)
    pods = await api.list_all(pods_path, query=[("labelSelector", selector.query())])
    pod = _first_pod(pods)
    if pod is None:
        raise PortForwardFailed(f"{what} has no running pod to forward to")
    port = wanted.remote_port
    if resource == "services":
        port = _target_port(obj, pod, wanted.remote_port)
    return PodPort(pod["metadata"]["name"], port)


def _first_pod(pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """kubectl's choice: a running pod, ready ones first, then the oldest."""
    running = [
        p
        for p in pods
        if (p.get("status") or {}).get("phase") == "Running"
        and not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    running.sort(key=lambda p: (not _ready(p), p["metadata"].get("creationTimestamp") or ""))
    return running[0] if running else None


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _target_port(service: Mapping[str, Any], pod: Mapping[str, Any], port: int) -> int:
    """The container port behind the Service's ``port`` (kubectl: ``remotePort`` is a Service
    port; its ``targetPort``, by number or by container port name, is what the pod listens on)."""
    name = (service.get("metadata") or {}).get("name", "")
    entries = (service.get("spec") or {}).get("ports") or []
    entry = next((e for e in entries if e.get("port") == port), None)
    if entry is None:
        offered = ", ".join(str(e.get("port")) for e in entries)
        raise PortForwardFailed(f"service {name} has no port {port} (it has: {offered})")
    target = entry.get("targetPort", port)
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in (pod.get("spec") or {}).get("containers") or []:
        for declared in container.get("ports") or []:
            if declared.get("name") == target and declared.get("protocol", "TCP") == "TCP":
                return int(declared["containerPort"])
    raise PortForwardFailed(f"service {name}: pod declares no port named {target!r}")


@attrs.define(eq=False)
class Forward:
    """One running forward: its listener, counters and open connections."""

    id: str
    cluster_id: str
    wanted: ForwardRequest
    target: PodPort
    api: KubeApi
    created: float = attrs.field(factory=time.time)
    server: asyncio.Server | None = None
    address: tuple[str, int] = ("", 0)  # where it listens, kept after it stopped
    bytes_in: int = 0  # local client -> pod
    bytes_out: int = 0  # pod -> local client
    connections: int = 0
    last_error: str | None = None
    _tasks: set[asyncio.Task[Any]] = attrs.field(factory=set)

    @property
    def active(self) -> int:
        return len(self._tasks)

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
            path = path_of("", "v1", "pods", namespace=self.wanted.namespace, name=self.target.pod)
            query = [("ports", str(self.target.port))]
            async with self.api.open_channels(
                path + "/portforward", query=query, protocols=PROTOCOLS
            ) as ws:
                await self._bridge(ws, reader, writer)
        except WharfError as exc:
            self.last_error = exc.detail
            logger.info("port-forward %s: connection failed: %s", self.id, exc.detail)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _bridge(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        up = asyncio.create_task(self._upstream(ws, reader))
        try:
            await self._downstream(ws, writer)
        finally:
            up.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await up

    async def _upstream(
        self, ws: aiohttp.ClientWebSocketResponse, reader: asyncio.StreamReader
    ) -> None:
        """Local client -> pod; its end of input ends the connection (v4 cannot half-close)."""
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(READ_CHUNK):
                self.bytes_in += len(data)
                await ws.send_bytes(b"\x00" + data)
        await ws.close()

    async def _downstream(
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
            if channel == 0 and data:
                self.bytes_out += len(data)
                writer.write(data)
                try:
                    await writer.drain()
                except (ConnectionError, OSError):
                    return

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.server is not None:
            await self.server.wait_closed()


@attrs.define(eq=False)
class PortForwards:
    """Every forward of the service, by id."""

    host: str = "127.0.0.1"
    limit: int = 64
    forwards: dict[str, Forward] = attrs.field(factory=dict)

    async def start(self, cluster_id: str, api: KubeApi, wanted: ForwardRequest) -> Forward:
        if len(self.forwards) >= self.limit:
            raise PortForwardFailed(f"at most {self.limit} port-forwards at once: stop one first")
        target = await resolve(api, wanted)
        forward = Forward(secrets.token_hex(8), cluster_id, wanted, target, api)
        await forward.serve(self.host)
        self.forwards[forward.id] = forward
        return forward

    def of_cluster(self, cluster_id: str) -> list[Forward]:
        found = [f for f in self.forwards.values() if f.cluster_id == cluster_id]
        return sorted(found, key=lambda f: f.created)

    def get(self, cluster_id: str, forward_id: str) -> Forward:
        forward = self.forwards.get(forward_id)
        if forward is None or forward.cluster_id != cluster_id:
            raise UnknownPortForward(f"no port-forward {forward_id[:40]!r} on cluster {cluster_id}")
        return forward

    async def stop(self, cluster_id: str, forward_id: str) -> Forward:
        forward = self.get(cluster_id, forward_id)
        del self.forwards[forward.id]
        await forward.close()
        return forward

    async def cluster_changed(self, cluster_id: str, event: str) -> None:
        """The registry's listener: a removed or re-pointed cluster's forwards are released."""
        for forward in self.of_cluster(cluster_id):
            logger.info(
                "port-forward %s released: cluster %r was %s", forward.id, cluster_id, event
            )
            await self.stop(cluster_id, forward.id)

    async def close(self) -> None:
        for forward in list(self.forwards.values()):
            await self.stop(forward.cluster_id, forward.id)
