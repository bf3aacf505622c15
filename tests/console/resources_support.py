"""Helpers for the browse, objects, apply and actions tests: talk to a simulator directly (to set
up objects and read what an action left behind) and run the real kubectl as the oracle.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import config
from kubernetes_asyncio.client import ApiClient, Configuration

from console.resources.kubeapi import KubeApi, path_of
from kubesim import Simulator
from kubesim.http.state import State
from kubesim.machinery.meta import WriteOptions
from tests.crds import OPEN, crd

KUBECTL = "/usr/bin/kubectl"
_PLURALS = {
    "Namespace": ("", "namespaces", False),
    "Node": ("", "nodes", False),
    "Pod": ("", "pods", True),
    "Service": ("", "services", True),
    "ConfigMap": ("", "configmaps", True),
    "Secret": ("", "secrets", True),
    "Event": ("", "events", True),
    "PersistentVolumeClaim": ("", "persistentvolumeclaims", True),
    "PersistentVolume": ("", "persistentvolumes", False),
    "ServiceAccount": ("", "serviceaccounts", True),
    "Deployment": ("apps", "deployments", True),
    "ReplicaSet": ("apps", "replicasets", True),
    "StatefulSet": ("apps", "statefulsets", True),
    "DaemonSet": ("apps", "daemonsets", True),
    "ControllerRevision": ("apps", "controllerrevisions", True),
    "Job": ("batch", "jobs", True),
    "CronJob": ("batch", "cronjobs", True),
    "Ingress": ("networking.k8s.io", "ingresses", True),
    "StorageClass": ("storage.k8s.io", "storageclasses", False),
    "HorizontalPodAutoscaler": ("autoscaling", "horizontalpodautoscalers", True),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets", True),
    "CustomResourceDefinition": ("apiextensions.k8s.io", "customresourcedefinitions", False),
}
_names = itertools.count(1)


def live_alpha(factory: pytest.TempPathFactory, *, nodes: int = 1) -> Iterator[Simulator]:
    """The ``alpha`` cluster alive (nodes, scheduler, controllers, kubelet): a module that needs
    controllers imports ``tests.console.live_cluster.sim``, one that needs more nodes overrides
    ``sim`` with ``yield from live_alpha(tmp_path_factory, nodes=...)``."""
    with Simulator(factory.mktemp("sim-alpha"), context="alpha", nodes=nodes) as live:
        yield live


def seeded_namespace(sim: Simulator, prefix: str, *objects: dict[str, Any]) -> str:
    """A new namespace holding ``objects``, made from a module-scoped fixture (no loop runs yet)."""

    async def seed() -> str:
        async with kube_in_new_namespace(sim, prefix) as (api, name):
            for obj in objects:
                await create(api, {**obj, "metadata": {**obj["metadata"], "namespace": name}})
        return name

    return asyncio.run(seed())


def unique(prefix: str) -> str:
    """A name no other test of this process uses (simulators live for a whole module)."""
    return f"{prefix}-{os.getpid() % 1000}-{next(_names)}"


@contextlib.asynccontextmanager
async def kube(sim: Simulator) -> AsyncIterator[KubeApi]:
    cfg = Configuration()
    await config.load_kube_config(config_file=str(sim.kubeconfig_path), client_configuration=cfg)
    async with ApiClient(cfg) as client:
        yield KubeApi(client)


def _version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def obj_path(obj: dict[str, Any], *, name: bool = False) -> str:
    group, plural, namespaced = _PLURALS[obj["kind"]]
    _, version = _version(obj["apiVersion"])
    meta = obj.get("metadata") or {}
    return path_of(
        group,
        version,
        plural,
        namespace=meta.get("namespace") if namespaced else None,
        name=meta["name"] if name else None,
    )


async def create(api: KubeApi, obj: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = await api.send("POST", obj_path(obj), obj)
    return created


async def create_all(api: KubeApi, objs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [await create(api, o) for o in objs]


async def read(api: KubeApi, obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = await api.get(obj_path(obj, name=True))
    return found


async def set_status(api: KubeApi, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    current = await read(api, obj)
    current["status"] = status
    updated: dict[str, Any] = await api.send("PUT", obj_path(obj, name=True) + "/status", current)
    return updated


def seed(sim: Simulator, kind: str, namespace: str, bodies: list[dict[str, Any]]) -> None:
    """Create many objects straight in the simulator's store (fast; no HTTP per object)."""
    group, plural, _ = _PLURALS[kind]
    version = "v1"

    def run(state: State) -> None:
        rt = state.objects.registry.get(group, version, plural)
        assert rt is not None
        opts = WriteOptions(manager="test-seed")
        for body in bodies:
            state.objects.create(rt, namespace, body, opts)

    sim.call(run)


async def eventually(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 15.0, what: str = "condition"
) -> Any:
    """Poll ``check`` until it returns something truthy (the simulator's controllers are live)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {found!r}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def kube_in_new_namespace(
    sim: Simulator, prefix: str = "h"
) -> AsyncIterator[tuple[KubeApi, str]]:
    """A client on ``sim`` and a new, empty namespace named after ``prefix``, to fill."""
    name = unique(prefix)
    async with kube(sim) as api:
        await create(api, namespace(name))
        yield api, name


async def fresh_namespace(sim: Simulator, prefix: str = "h") -> str:
    """A new, empty namespace named after ``prefix``."""
    async with kube_in_new_namespace(sim, prefix) as (_, name):
        return name


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


WIDGET_COLUMNS: list[dict[str, Any]] = [
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {"name": "Colour", "type": "string", "jsonPath": ".spec.colour", "priority": 1,
     "description": "what it looks like"},
]  # fmt: skip


def widget_crd(group: str = "example.com", *, columns: bool = True) -> dict[str, Any]:
    return crd(group, "Widget", schema=OPEN, columns=WIDGET_COLUMNS if columns else None)


def labels_selector(labels: dict[str, str]) -> dict[str, Any]:
    return {"matchLabels": labels}


def pod_template(labels: dict[str, str], *, image: str = "nginx:1.27") -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }


def deployment(
    ns: str,
    name: str,
    *,
    replicas: int = 1,
    app: str | None = None,
    image: str = "nginx:1.27",
    **spec: Any,
) -> dict[str, Any]:
    """A Deployment labelled ``app: <app or name>`` (twins share ``app``), one container ``app``."""
    labels = {"app": app or name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": labels_selector(labels),
            "template": pod_template(labels, image=image),
            **spec,
        },
    }


def cronjob(ns: str, name: str, **template_meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "metadata": template_meta,
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "run", "image": "busybox:1.36"}],
                        }
                    }
                },
            },
        },
    }


class Kubectl:
    """The real kubectl against a simulator, with its own cache directory."""

    def __init__(self, sim: Simulator, cache: Path) -> None:
        self.sim = sim
        self.cache = cache

    def run(self, *args: str, input: str | None = None) -> str:
        cmd = [KUBECTL, f"--kubeconfig={self.sim.kubeconfig_path}", f"--cache-dir={self.cache}"]
        env = {**os.environ, "HOME": str(self.cache), "KUBECACHEDIR": str(self.cache)}
        proc = subprocess.run(
            [*cmd, *args], input=input, capture_output=True, text=True, timeout=60, env=env,
            check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))
