"""What a shell knows about the container it runs in: host name, clock scale, network, processes.

The kubelet builds one :class:`Host` per container; commands such as ``hostname``, ``sleep``,
``wget`` and ``ps`` read it. The shell itself never imports cluster code: the network is a small
protocol the kubelet implements on top of Services and EndpointSlices.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs


@attrs.frozen
class HttpReply:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    address: str


class Network(Protocol):
    def resolve(self, name: str) -> str | None:
        """The IP a name resolves to from inside the pod, or None (NXDOMAIN)."""

    async def http(self, host: str, port: int, path: str) -> HttpReply | str:
        """GET ``path`` from ``host:port``; a string is the connection error."""


@attrs.define
class Host:
    hostname: str = "localhost"
    namespace: str = "default"
    pod_ip: str = ""
    sleep_scale: float = 1.0
    pid: int = 1
    user: str = "root"
    network: Network | None = None
    processes: Callable[[], list[tuple[int, str]]] = attrs.field(
        factory=lambda: lambda: [(1, "sh")]
    )
    unknown: Callable[..., Awaitable[int]] | None = None
    """Runs a program the shell does not know (the kubelet's opaque programs); None: not found."""
