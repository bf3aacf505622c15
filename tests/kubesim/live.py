"""Helpers for in-process tests of the living cluster: the API core and LiveCluster on the test's loop.

No HTTP and no thread: controllers, scheduler and kubelet run as tasks of the test's own loop, with
timings fast enough that a whole rollout takes a fraction of a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from kubesim.api import seed
from kubesim.api.objects import Objects
from kubesim.cluster import LiveCluster
from kubesim.http.state import State
from kubesim.machinery.meta import WriteOptions
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.timings import Timings

Obj = dict[str, Any]
FAST = Timings(
    start=0.01,
    pull=0.01,
    ready=0.01,
    crash_after=0.05,
    job_run=0.05,
    backoff=0.05,
    backoff_max=0.2,
    log_interval=0.05,
    probe_period=0.1,
)
USER = WriteOptions(manager="kubectl")
DEPLOY, RS, STS, DS, CR = (
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("apps", "controllerrevisions"),
)
PODS, NODES, SVC, EPS = ("", "pods"), ("", "nodes"), ("", "services"), ("", "endpoints")
JOBS, CRONJOBS = ("batch", "jobs"), ("batch", "cronjobs")
SLICES, PDB = ("discovery.k8s.io", "endpointslices"), ("policy", "poddisruptionbudgets")


async def running_cluster(
    nodes: int = 2,
    timings: Timings = FAST,
    clock: Callable[[], float] = time.time,
    scenario: str = "empty",
    namespaces: tuple[str, ...] = (),
) -> AsyncIterator[LiveCluster]:
    state = State.new(token=None)
    seed.populate(state.objects)
    for name in namespaces:
        namespace(state.objects, name)
    cluster = LiveCluster(
        state.objects, nodes=nodes, timings=timings, ca_pem="CA", clock=clock, scenario=scenario
    )
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()


def live_fixture(*, nodes: int, namespaces: tuple[str, ...] = ()) -> object:
    """A module's ``live`` fixture: a cluster of ``nodes`` holding ``namespaces``, new for each test
    (``live = live_fixture(nodes=2, namespaces=("app",))``)."""

    @pytest.fixture
    async def live() -> AsyncIterator[LiveCluster]:
        async for cluster in running_cluster(nodes=nodes, namespaces=namespaces):
            yield cluster

    return live


@contextlib.asynccontextmanager
async def started(
    nodes: int = 2,
    timings: Timings = FAST,
    clock: Callable[[], float] = time.time,
    scenario: str = "empty",
) -> AsyncIterator[LiveCluster]:
    async for cluster in running_cluster(nodes, timings, clock, scenario):
        yield cluster


def rt(objs: Objects, gr: tuple[str, str]) -> ResourceType:
    found = objs.registry.by_group_resource(*gr)
    assert found is not None
    return found


def create(objs: Objects, gr: tuple[str, str], namespace: str, body: Obj) -> Obj:
    return objs.create(rt(objs, gr), namespace, body, USER)


def update(objs: Objects, gr: tuple[str, str], obj: Obj) -> Obj:
    meta = obj["metadata"]
    return objs.update(rt(objs, gr), meta.get("namespace", ""), meta["name"], obj, USER)


def stored(objs: Objects, gr: tuple[str, str], namespace: str, name: str) -> Obj:
    """The object as the store holds it now; the test fails if there is none."""
    found = objs.store.get(gr, namespace, name)
    assert found is not None, f"no {gr[1]} {namespace}/{name} in the store"
    return found


def namespace(objs: Objects, name: str) -> None:
    create(objs, ("", "namespaces"), "", {"metadata": {"name": name}})


async def until(check: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll ``check`` (a function, or one whose answer is awaited) until it returns something
    truthy (test helper; controllers never poll)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.01)


def deployment(name: str, image: str = "nginx:1.27", replicas: int = 2, **pod: Any) -> Obj:
    container = {
        "name": "main",
        "image": image,
        "ports": [{"containerPort": 80, "name": "http"}],
        **pod,
    }
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
        },
    }


def pods_of(objs: Objects, namespace: str, app: str) -> list[Obj]:
    return [
        p
        for p in objs.store.list(("", "pods"), namespace)
        if (p["metadata"].get("labels") or {}).get("app") == app
    ]


def phase(pod: Obj | None) -> str:
    return str(((pod or {}).get("status") or {}).get("phase", ""))


def ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def cond(obj: Obj | None, kind: str) -> Obj:
    return next(
        (
            c
            for c in ((obj or {}).get("status") or {}).get("conditions") or []
            if c.get("type") == kind
        ),
        {},
    )


def events_for(objs: Objects, name: str) -> list[Obj]:
    return [e for e in objs.store.list(("", "events")) if e["involvedObject"]["name"] == name]
