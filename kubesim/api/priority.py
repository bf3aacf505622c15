"""The Priority admission plugin: a new pod's ``priorityClassName`` becomes its ``spec.priority``.

As on a real server, a pod naming a PriorityClass that does not exist is refused (403 Forbidden),
a pod without one takes the ``globalDefault`` class if there is one, and a pod that states an
integer priority different from its class's is refused. Only creation is admitted: a class deleted
later does not block updates to the pods that use it. The two system classes are bootstrapped.
"""

from __future__ import annotations

from typing import Any

from kubesim.api.core import Core
from kubesim.machinery.status import KubeError

Obj = dict[str, Any]
CLASSES = ("scheduling.k8s.io", "priorityclasses")
# The classes kube-apiserver's bootstrap controller creates (scheduling/v1 SystemPriorityClasses).
SYSTEM = (
    {
        "metadata": {"name": "system-node-critical"},
        "value": 2000001000,
        "description": "Used for system critical pods that must not be moved from their current "
        "node.",
    },
    {
        "metadata": {"name": "system-cluster-critical"},
        "value": 2000000000,
        "description": "Used for system critical pods that must run in the cluster, but can be "
        "moved to another node if necessary.",
    },
)


def _forbidden(pod: Obj, why: str) -> KubeError:
    name = pod["metadata"].get("name", "")
    return KubeError(
        403, f'pods "{name}" is forbidden: {why}', details={"name": name, "kind": "pods"}
    )


def admit_pod(objs: Core, pod: Obj) -> None:
    """Resolve the pod's priority class into ``spec.priority`` (and its preemption policy)."""
    spec = pod.setdefault("spec", {})
    name = spec.get("priorityClassName")
    if name:
        found = objs.store.get(CLASSES, "", str(name))
        if found is None:
            raise _forbidden(pod, f"no PriorityClass with name {name} was found")
    else:
        defaults = [c for c in objs.store.list(CLASSES) if c.get("globalDefault")]
        found = min(defaults, key=lambda c: c.get("value", 0)) if defaults else None
        if found is not None:
            spec["priorityClassName"] = found["metadata"]["name"]
    value = int(found.get("value", 0)) if found is not None else 0
    stated = spec.get("priority")
    if stated is not None and stated != value:
        raise _forbidden(
            pod,
            f"the integer value of priority ({stated}) must not be provided in pod spec; "
            f"priority admission controller computed {value} from the given PriorityClass name",
        )
    spec["priority"] = value
    if found is not None and found.get("preemptionPolicy"):
        spec["preemptionPolicy"] = found["preemptionPolicy"]
