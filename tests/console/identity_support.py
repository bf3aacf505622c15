"""People and their RBAC on a simulator, for the identity tests: alice (group team-a) may edit
namespace ``a``, bob (group team-b) may view everything, the group ``wharf:admins`` is bound to
``cluster-admin``. Namespaces are made unique per module (simulators live for a whole module)."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from console.identity import Identity
from console.resources.kubeapi import KubeApi, path_of
from kubesim import Simulator
from tests.console.resources_support import create, eventually, kube, namespace, unique
from tests.console.support import ADMIN
from tests.typing_support import Client

ALICE = Identity("alice", ("team-a", "system:authenticated"))
BOB = Identity("bob", ("team-b", "system:authenticated"))
ADMINS_GROUP = "wharf:admins"
RBAC = "rbac.authorization.k8s.io"


@attrs.frozen
class Spaces:
    a: str
    b: str
    #: alice's RoleBinding in ``a`` (deleting it takes her rights away).
    alice_binding: str


def binding(
    name: str, role: str, subject: dict[str, str], *, namespace: str | None = None
) -> dict[str, Any]:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta: dict[str, str] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": RBAC, **subject}],
    }


async def bind(api: KubeApi, body: dict[str, Any]) -> None:
    resource = "rolebindings" if body["kind"] == "RoleBinding" else "clusterrolebindings"
    ns = body["metadata"].get("namespace")
    await api.send("POST", path_of(RBAC, "v1", resource, namespace=ns), body)


async def unbind(api: KubeApi, namespace: str, name: str) -> None:
    await api.send(
        "DELETE", path_of(RBAC, "v1", "rolebindings", namespace=namespace, name=name), None
    )


def sleeper_pod(name: str) -> dict[str, Any]:
    """A pod whose container sleeps and declares port 80 (exec and port-forward targets)."""
    main = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"],
            "ports": [{"containerPort": 80}]}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [main]}}  # fmt: skip


async def shell_running(client: Client, ns: str) -> None:
    """Waits until the :func:`sleeper_pod` named ``shell`` in ``ns`` runs, as the admin sees it."""

    async def check() -> bool:
        resp = await client.get("/api/v1/clusters/alpha/resources/pods/object",
                                params={"namespace": ns, "name": "shell"}, headers=ADMIN)  # fmt: skip
        statuses = (await resp.json()).get("status", {}).get("containerStatuses") or []
        return any("running" in s.get("state", {}) for s in statuses)

    await eventually(check, what=f"the pod in {ns} to run")


def alice_edit(spaces: Spaces) -> dict[str, Any]:
    """alice's RoleBinding: her group ``team-a`` may edit namespace ``a``."""
    subject = {"kind": "Group", "name": "team-a"}
    return binding(spaces.alice_binding, "edit", subject, namespace=spaces.a)


def people(sim: Simulator, *objects: dict[str, Any]) -> Spaces:
    """Namespaces ``a`` and ``b`` (``objects`` made in both) and everyone's bindings; run from a
    module-scoped fixture (no loop runs yet)."""

    async def make() -> Spaces:
        a, b = unique("a"), unique("b")
        async with kube(sim) as api:
            for name in (a, b):
                await create(api, namespace(name))
                for obj in objects:
                    await create(api, {**obj, "metadata": {**obj["metadata"], "namespace": name}})
            spaces = Spaces(a, b, unique("alice-edit"))
            group = {"kind": "Group"}
            await bind(api, alice_edit(spaces))
            await bind(api, binding(unique("bob-view"), "view", {**group, "name": "team-b"}))
            await bind(
                api, binding(unique("admins"), "cluster-admin", {**group, "name": ADMINS_GROUP})
            )
        return spaces

    return asyncio.run(make())
