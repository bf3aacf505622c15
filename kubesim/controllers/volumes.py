"""Persistent volumes as a kind cluster has them: a default StorageClass and a provisioner.

A live cluster starts with kind's ``standard`` StorageClass (the default, ``rancher.io/local-path``,
``WaitForFirstConsumer``, reclaim ``Delete``). :class:`VolumeController` plays two parts:

* the PersistentVolume controller (pkg/controller/volume/persistentvolume, ``syncClaim`` and
  ``syncVolume``): a Pending claim binds to an Available volume of its class that fits, else waits
  for its first consumer (an event ``WaitForFirstConsumer``), else is handed to its class's
  provisioner; a claim naming a class that does not exist stays Pending with a
  ``ProvisioningFailed`` warning. A volume whose claim is gone is ``Released``, and with reclaim
  ``Delete`` it is deleted; the ``kubernetes.io/pv-protection`` finalizer goes once the volume is
  no longer bound.
* local-path-provisioner: for a claim its class hands it (on the node the scheduler selected), a
  PersistentVolume ``pvc-<claim uid>`` with a hostPath under ``/var/local-path-provisioner`` and
  node affinity to that node, bound to the claim. Claims of other provisioners wait with
  ``ExternalProvisioning``, as they do when nothing serves their class.

The scheduler's side (a pod's claims: missing, unbound, which node a bound volume pins it to, and
selecting a node for a waiting claim) is :func:`pod_claims` and :func:`select_node`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import attrs

from kubesim.api.storage import CLASSES, DEFAULT_MARK, PV_PROTECTION, PVC_PROTECTION
from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import PODS, Client, fmt_time, now_utc, pod_active
from kubesim.controllers.events import Recorder
from kubesim.machinery import quantity
from kubesim.machinery.status import KubeError
from kubesim.store import Event, Obj, key_of

CLAIMS = ("", "persistentvolumeclaims")
VOLUMES = ("", "persistentvolumes")
LOCAL_PATH = "rancher.io/local-path"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
COMPONENT = "persistentvolume-controller"
PROVISIONER_COMPONENT = "rancher.io/local-path_local-path-provisioner"
_PROVISIONER_KEYS = (
    "volume.beta.kubernetes.io/storage-provisioner",
    "volume.kubernetes.io/storage-provisioner",
)


def ensure_default_class(client: Client) -> None:
    """kind's default StorageClass, created with the cluster unless some class exists already."""
    if client.list(CLASSES):
        return
    client.create(
        CLASSES,
        "",
        {
            "metadata": {"name": "standard", "annotations": {DEFAULT_MARK: "true"}},
            "provisioner": LOCAL_PATH,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )


class VolumeController(Controller):
    """Keys are ``(namespace, claim)`` for claims and ``("", volume)`` for volumes."""

    name = "persistentvolume"
    watches = (CLAIMS, VOLUMES, CLASSES, PODS)

    def __init__(self, client: Client, recorder: Recorder) -> None:
        super().__init__(client)
        self.recorder = recorder

    def keys(self, event: Event) -> Iterable[Key]:
        obj, meta = event.obj, event.obj["metadata"]
        if event.gr == CLASSES:  # a class that appears lets its waiting claims go on
            return [key_of(c) for c in self.client.list(CLAIMS) if _phase(c) == "Pending"]
        if event.gr == PODS:  # a pod that stops or goes may free the claims it used
            gone = event.type == "DELETED" or not pod_active(obj)
            return [(meta["namespace"], name) for name in _claims_of(obj)] if gone else []
        if event.gr == VOLUMES:
            ref = (obj.get("spec") or {}).get("claimRef") or {}
            claim = [(str(ref["namespace"]), str(ref["name"]))] if ref.get("name") else []
            return [("", meta["name"]), *claim]
        volume = (obj.get("spec") or {}).get("volumeName")
        return [key_of(obj), *([("", str(volume))] if volume else [])]

    def reconcile(self, key: Key) -> float | None:
        if key[0]:
            self._sync_claim(key)
        else:
            self._sync_volume(key[1])
        return None

    # -- claims -------------------------------------------------------------------------------
    def _sync_claim(self, key: Key) -> None:
        claim = self.client.get(CLAIMS, *key)
        if claim is not None and claim["metadata"].get("deletionTimestamp"):
            self._release(claim)
            return
        if claim is None or _phase(claim) != "Pending":
            return
        spec = claim.get("spec") or {}
        class_name = str(spec.get("storageClassName") or "")
        volume = self._match(claim, class_name)
        if volume is not None:
            self._bind(claim, volume)
            return
        if spec.get("volumeName"):
            return  # bound by name to a volume that is not there (yet)
        if not class_name:
            message = "no persistent volumes available for this claim and no storage class is set"
            self.recorder.normal(claim, "FailedBinding", message, component=COMPONENT)
            return
        sc = self.client.get(CLASSES, "", class_name)
        if sc is None:
            message = f'storageclass.storage.k8s.io "{class_name}" not found'
            self.recorder.warning(claim, "ProvisioningFailed", message, component=COMPONENT)
            return
        annotations = claim["metadata"].get("annotations") or {}
        if (
            sc.get("volumeBindingMode") == "WaitForFirstConsumer"
            and SELECTED_NODE not in annotations
        ):
            message = "waiting for first consumer to be created before binding"
            self.recorder.normal(claim, "WaitForFirstConsumer", message, component=COMPONENT)
            return
        provisioner = str(sc.get("provisioner") or "")
        claim = self._annotate(claim, dict.fromkeys(_PROVISIONER_KEYS, provisioner))
        self.recorder.normal(
            claim,
            "ExternalProvisioning",
            f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
            "or manually by the system administrator. If volume creation is delayed, please verify "
            "that the provisioner is running and correctly registered.",
            component=COMPONENT,
        )
        if provisioner == LOCAL_PATH:
            self._provision(claim, sc)

    def _match(self, claim: Obj, class_name: str) -> Obj | None:
        """``findBestMatchForClaim``: the smallest Available volume of the claim's class that has
        its access modes and room for its request (or the volume it names)."""
        spec = claim.get("spec") or {}
        wanted = spec.get("volumeName")
        need = quantity.as_int(
            ((spec.get("resources") or {}).get("requests") or {}).get("storage", 0)
        )
        modes = set(spec.get("accessModes") or [])
        fits = []
        for pv in self.client.list(VOLUMES):
            pv_spec = pv.get("spec") or {}
            ref = pv_spec.get("claimRef") or {}
            if ref and (ref.get("namespace"), ref.get("name")) != key_of(claim):
                continue
            size = quantity.as_int((pv_spec.get("capacity") or {}).get("storage", 0))
            if (
                pv["metadata"].get("deletionTimestamp")
                or (wanted and pv["metadata"]["name"] != wanted)
                or _phase(pv) not in ("Available", "Pending")
                or str(pv_spec.get("storageClassName") or "") != class_name
                or size < need
                or not modes <= set(pv_spec.get("accessModes") or [])
                or pv_spec.get("volumeMode", "Filesystem") != spec.get("volumeMode", "Filesystem")
            ):
                continue
            fits.append((size, pv["metadata"]["name"], pv))
        return min(fits, key=lambda f: f[:2])[2] if fits else None

    def _provision(self, claim: Obj, sc: Obj) -> None:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        ns, name, uid = meta["namespace"], meta["name"], meta["uid"]
        volume_name = f"pvc-{uid}"
        message = f'External provisioner is provisioning volume for claim "{ns}/{name}"'
        self.recorder.normal(claim, "Provisioning", message, component=PROVISIONER_COMPONENT)
        node = (meta.get("annotations") or {}).get(SELECTED_NODE)
        annotations = {"pv.kubernetes.io/provisioned-by": LOCAL_PATH}
        pv_spec: Obj = {
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "capacity": {
                "storage": ((spec.get("resources") or {}).get("requests") or {}).get(
                    "storage", "1Gi"
                )
            },
            "claimRef": _claim_ref(claim),
            "hostPath": {
                "path": f"/var/local-path-provisioner/{volume_name}_{ns}_{name}",
                "type": "DirectoryOrCreate",
            },
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
        }
        if node:
            annotations["local.path.provisioner/selected-node"] = node
            term = {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
            pv_spec["nodeAffinity"] = {
                "required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
            }
        body = {
            "metadata": {"name": volume_name, "annotations": annotations},
            "spec": pv_spec,
        }
        try:
            volume = self.client.create(VOLUMES, "", body)
        except KubeError as exc:
            if exc.code != 409:
                raise
            return  # provisioned already; the volume's own event binds it
        self.recorder.normal(
            claim,
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {volume_name}",
            component=PROVISIONER_COMPONENT,
        )
        self._bind(claim, volume)

    def _bind(self, claim: Obj, volume: Obj) -> None:
        """``bind``: the volume's claimRef and phase, then the claim's volumeName and phase."""
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if ref.get("uid") != claim["metadata"]["uid"]:
            volume = copy.deepcopy(volume)
            volume["spec"]["claimRef"] = _claim_ref(claim)
            if not ref:  # chosen by the controller, not pre-bound by its author
                volume["metadata"].setdefault("annotations", {})[
                    "pv.kubernetes.io/bound-by-controller"
                ] = "yes"
            volume = self.client.update(VOLUMES, volume)
        self.client.update_status(VOLUMES, volume, _phase_status(volume, "Bound"))
        claim = copy.deepcopy(claim)
        by_controller = not claim["spec"].get("volumeName")
        claim["spec"]["volumeName"] = volume["metadata"]["name"]
        marks = {"pv.kubernetes.io/bind-completed": "yes"}
        if by_controller:
            marks["pv.kubernetes.io/bound-by-controller"] = "yes"
        claim["metadata"]["annotations"] = {**(claim["metadata"].get("annotations") or {}), **marks}
        claim = self.client.update(CLAIMS, claim)
        status = {
            "phase": "Bound",
            "accessModes": volume["spec"].get("accessModes") or [],
            "capacity": dict(volume["spec"].get("capacity") or {}),
        }
        self.client.update_status(CLAIMS, claim, status)

    def _release(self, claim: Obj) -> None:
        """The pvc-protection controller: a claim being deleted keeps its finalizer while a pod
        that has not finished uses it (pkg/controller/volume/pvcprotection)."""
        meta = claim["metadata"]
        if PVC_PROTECTION not in (meta.get("finalizers") or []):
            return
        for p in self.client.list(PODS, meta["namespace"]):
            if pod_active(p) and meta["name"] in _claims_of(p):
                return
        claim = copy.deepcopy(claim)
        claim["metadata"]["finalizers"] = [f for f in meta["finalizers"] if f != PVC_PROTECTION]
        self.client.update(CLAIMS, claim)

    def _annotate(self, claim: Obj, marks: dict[str, str]) -> Obj:
        annotations = claim["metadata"].get("annotations") or {}
        if all(annotations.get(k) == v for k, v in marks.items()):
            return claim
        claim = copy.deepcopy(claim)
        claim["metadata"]["annotations"] = {**annotations, **marks}
        return self.client.update(CLAIMS, claim)

    # -- volumes ------------------------------------------------------------------------------
    def _sync_volume(self, name: str) -> None:
        volume = self.client.get(VOLUMES, "", name)
        if volume is None:
            return
        if volume["metadata"].get("deletionTimestamp"):
            if _phase(volume) != "Bound":  # the pv-protection controller lets it go
                self._drop_protection(volume)
            return
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if not ref.get("uid"):  # free, or pre-bound to a claim that may come later
            if _phase(volume) == "Pending":
                self.client.update_status(VOLUMES, volume, _phase_status(volume, "Available"))
            return
        claim = self.client.get(CLAIMS, str(ref.get("namespace", "")), str(ref.get("name", "")))
        if claim is not None and ref["uid"] == claim["metadata"]["uid"]:
            return
        if _phase(volume) != "Released":
            volume = self.client.update_status(VOLUMES, volume, _phase_status(volume, "Released"))
        policy = (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy")
        provisioned = (volume["metadata"].get("annotations") or {}).get(
            "pv.kubernetes.io/provisioned-by"
        )
        if policy == "Delete" and provisioned == LOCAL_PATH:
            self.client.delete(VOLUMES, volume)

    def _drop_protection(self, volume: Obj) -> None:
        finalizers = volume["metadata"].get("finalizers") or []
        if PV_PROTECTION not in finalizers:
            return
        volume = copy.deepcopy(volume)
        volume["metadata"]["finalizers"] = [f for f in finalizers if f != PV_PROTECTION]
        self.client.update(VOLUMES, volume)


# -- the scheduler's side ---------------------------------------------------------------------------
@attrs.frozen
class PodClaims:
    """What a pod's claims mean for scheduling it. ``failure``: why it cannot be scheduled at all
    (kube-scheduler's VolumeBinding PreFilter); ``waiting``: unbound claims that wait for this
    pod's node; ``terms``: the node affinity of the volumes its bound claims use."""

    failure: str = ""
    waiting: tuple[Obj, ...] = ()
    terms: tuple[Obj, ...] = ()


def pod_claims(client: Client, pod: Obj) -> PodClaims:
    ns = pod["metadata"]["namespace"]
    waiting: list[Obj] = []
    terms: list[Obj] = []
    for name in _claims_of(pod):
        claim = client.get(CLAIMS, ns, name)
        if claim is None:
            return PodClaims(failure=f'persistentvolumeclaim "{name}" not found')
        if claim["metadata"].get("deletionTimestamp"):
            return PodClaims(failure=f'persistentvolumeclaim "{name}" is being deleted')
        if _phase(claim) == "Bound":
            pv = client.get(VOLUMES, "", str(claim["spec"].get("volumeName") or ""))
            required = ((pv or {}).get("spec") or {}).get("nodeAffinity", {}).get("required")
            if required:
                terms.append(required)
            continue
        class_name = (claim.get("spec") or {}).get("storageClassName")
        sc = client.get(CLASSES, "", str(class_name)) if class_name else None
        if sc is None or sc.get("volumeBindingMode") != "WaitForFirstConsumer":
            return PodClaims(failure="pod has unbound immediate PersistentVolumeClaims")
        waiting.append(claim)
    return PodClaims(waiting=tuple(waiting), terms=tuple(terms))


def select_node(client: Client, claims: Iterable[Obj], node: str) -> None:
    """The VolumeBinding plugin's PreBind: tell each waiting claim's provisioner the node."""
    for claim in claims:
        if SELECTED_NODE in (claim["metadata"].get("annotations") or {}):
            continue
        claim = copy.deepcopy(claim)
        claim["metadata"].setdefault("annotations", {})[SELECTED_NODE] = node
        client.update(CLAIMS, claim)


def _claims_of(pod: Obj) -> list[str]:
    return [
        str(v["persistentVolumeClaim"]["claimName"])
        for v in (pod.get("spec") or {}).get("volumes") or []
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    ]


def _phase(obj: Obj) -> str:
    return str((obj.get("status") or {}).get("phase") or "Pending")


def _phase_status(obj: Obj, phase: str) -> Obj:
    status = dict(obj.get("status") or {})
    if status.get("phase") != phase:
        status["phase"] = phase
        status["lastPhaseTransitionTime"] = fmt_time(now_utc())
    return status


def _claim_ref(claim: Obj) -> Obj:
    meta = claim["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "name": meta["name"],
        "namespace": meta["namespace"],
        "resourceVersion": meta["resourceVersion"],
        "uid": meta["uid"],
    }
