"""Storage admission: DefaultStorageClass (a new claim that names no class gets the default one)
and StorageObjectInUseProtection (new claims and volumes get their protection finalizers).

As plugin/pkg/admission/storage/storageclass/setdefault/admission.go does, only a claim whose
``storageClassName`` is absent (not ``""``, which asks for no class) is given one: the class
annotated ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta annotation), the
newest when there are several (``GetDefaultClass``). Without a default class the claim is left as
it is. The protection finalizers (plugin/pkg/admission/storage/storageobjectinuseprotection) are
removed by the volume controller once nothing uses the object; a cluster without controllers
keeps deleted claims and volumes Terminating, as an API server alone (envtest) does.
"""

from __future__ import annotations

from typing import Any

from kubesim.api.core import Core

Obj = dict[str, Any]
CLASSES = ("storage.k8s.io", "storageclasses")
DEFAULT_MARK = "storageclass.kubernetes.io/is-default-class"
_DEFAULT_MARKS = (DEFAULT_MARK, "storageclass.beta.kubernetes.io/is-default-class")
#: The finalizers admission gives and the volume controller takes away once nothing uses the object.
PV_PROTECTION = "kubernetes.io/pv-protection"
PVC_PROTECTION = "kubernetes.io/pvc-protection"


def admit_volume(volume: Obj) -> None:
    _protect(volume, PV_PROTECTION)


def admit_claim(objs: Core, claim: Obj) -> None:
    _protect(claim, PVC_PROTECTION)
    spec = claim.get("spec")
    if not isinstance(spec, dict) or "storageClassName" in spec:
        return
    defaults = [
        c
        for c in objs.store.list(CLASSES)
        if any((c["metadata"].get("annotations") or {}).get(m) == "true" for m in _DEFAULT_MARKS)
    ]
    if defaults:
        # The newest, and by name among equals: the one GetDefaultClass picks.
        by_name = sorted(defaults, key=lambda c: str(c["metadata"]["name"]))
        newest = max(by_name, key=lambda c: str(c["metadata"].get("creationTimestamp", "")))
        spec["storageClassName"] = newest["metadata"]["name"]


def _protect(obj: Obj, finalizer: str) -> None:
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if isinstance(finalizers, list) and finalizer not in finalizers:
        finalizers.append(finalizer)
