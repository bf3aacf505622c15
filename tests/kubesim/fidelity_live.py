"""What the fidelity suite's living-cluster modules share: a one-node cluster over HTTP, with
fast timings, and helpers that poll it the way a client would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from kubesim import Simulator
from tests.kubesim.conftest import Raw
from tests.kubesim.live import FAST, Obj

LEASE_RENEW = 0.2  # seconds; the kubelet's is 10
NODE_STATUS = 0.5  # seconds; the kubelet's is 300


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """Each module's own: one node, test-speed timings (leases and node status included)."""
    timings = attrs.evolve(FAST, lease_renew=LEASE_RENEW, node_status=NODE_STATUS)
    folder = tmp_path_factory.mktemp("kubesim")
    with Simulator(folder, nodes=1, timings=timings, bookmark_interval=0.5) as s:
        yield s


async def get(raw: Raw, path: str) -> Obj | None:
    status, body, _ = await raw("GET", path)
    return body if status == 200 else None


async def events(raw: Raw, ns: str, name: str) -> list[tuple[str, str, str, str]]:
    """(type, reason, message, source component) of the events about ``name``."""
    _, body, _ = await raw("GET", f"/api/v1/namespaces/{ns}/events")
    return [
        (e["type"], e["reason"], e["message"], e["source"].get("component", ""))
        for e in body["items"]
        if e["involvedObject"]["name"] == name
    ]


def pod(name: str, *volumes: Obj, **spec: Any) -> Obj:
    container: Obj = {"name": "main", "image": "nginx:1.27"}
    if volumes:
        container["volumeMounts"] = [
            {"name": v["name"], "mountPath": f"/data/{v['name']}"} for v in volumes
        ]
        spec["volumes"] = list(volumes)
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def claim(name: str, **spec: Any) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "2Gi"}},
            **spec,
        },
    }


async def has_event(raw: Raw, ns: str, name: str, event: tuple[str, str, str, str]) -> bool:
    return event in await events(raw, ns, name)


async def phase_is(raw: Raw, pods: str, name: str, phase: str) -> bool:
    found = await get(raw, f"{pods}/{name}")
    return bool(found and found["status"].get("phase") == phase)


async def ready(raw: Raw, pods: str, name: str) -> bool:
    found = await get(raw, f"{pods}/{name}")
    conditions = ((found or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
