"""Port-forwards (``spec/console.portforwards.yaml``)."""

from __future__ import annotations

from typing import TypedDict

from console.http.encode import utc_stamp
from console.streams.portforward import Forward


class PortForward(TypedDict):
    id: str
    cluster: str
    kind: str
    namespace: str
    name: str
    remotePort: int
    localAddress: str
    localPort: int
    pod: str
    targetPort: int
    state: str
    bytesIn: int
    bytesOut: int
    connections: int
    activeConnections: int
    lastError: str | None
    createdAt: str
    owner: str


def encode_forward(forward: Forward, *, stopped: bool = False) -> PortForward:
    wanted = forward.wanted
    host, port = forward.address
    return {
        "id": forward.id,
        "cluster": forward.cluster_id,
        "kind": wanted.kind,
        "namespace": wanted.namespace,
        "name": wanted.name,
        "remotePort": wanted.remote_port,
        "localAddress": host,
        "localPort": port,
        "pod": forward.target.pod,
        "targetPort": forward.target.port,
        "state": "stopped" if stopped else "active",
        "bytesIn": forward.bytes_in,
        "bytesOut": forward.bytes_out,
        "connections": forward.connections,
        "activeConnections": forward.active,
        "lastError": forward.last_error,
        "createdAt": utc_stamp(forward.created),
        "owner": forward.owner.user,
    }
