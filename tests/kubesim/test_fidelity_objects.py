"""The fidelity suite's object flows of issue 40 on a living one-node cluster over HTTP (items 7,
8, 12 and 17's validation gaps): volumes provisioned for claims, the last finalizer, the
service-account token volume, and pod spec validation. Each expectation names the upstream source
it was taken from (kubernetes v1.32, apiserver v0.32)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, create_namespace
from tests.kubesim.fidelity_live import (
    claim,
    events,
    get,
    has_event,
    phase_is,
    pod,
    sim,
)
from tests.kubesim.live import Obj, until

__all__ = ["sim"]


# --- item 7: claims get real volumes ---------------------------------------------------------------


async def test_a_claim_waits_for_its_first_consumer_then_gets_a_provisioned_volume(
    raw: Raw,
) -> None:
    """kind's default class (rancher.io/local-path, WaitForFirstConsumer, Delete); the
    DefaultStorageClass admission plugin (plugin/pkg/admission/storage/storageclass/setdefault,
    ``Admit``); pkg/controller/volume/persistentvolume/pv_controller.go ``syncUnboundClaim`` and
    ``provisionClaimOperationExternal``; the scheduler's VolumeBinding plugin (selected-node)."""
    ns = await create_namespace(raw)
    classes = (await raw("GET", "/apis/storage.k8s.io/v1/storageclasses"))[1]["items"]
    standard = next(c for c in classes if c["metadata"]["name"] == "standard")
    assert standard["metadata"]["annotations"] == {
        "storageclass.kubernetes.io/is-default-class": "true"
    }
    assert (standard["provisioner"], standard["volumeBindingMode"], standard["reclaimPolicy"]) == (
        "rancher.io/local-path",
        "WaitForFirstConsumer",
        "Delete",
    )
    claims = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    status, created, _ = await raw("POST", claims, claim("data"))
    assert status == 201
    assert created["spec"]["storageClassName"] == "standard"
    assert created["status"] == {"phase": "Pending"}
    waiting = (
        "Normal",
        "WaitForFirstConsumer",
        "waiting for first consumer to be created before binding",
        "persistentvolume-controller",
    )
    await until(lambda: has_event(raw, ns, "data", waiting), what="WaitForFirstConsumer event")
    assert (await get(raw, f"{claims}/data") or {})["status"]["phase"] == "Pending"

    volume = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    assert (await raw("POST", f"/api/v1/namespaces/{ns}/pods", pod("user", volume)))[0] == 201

    async def bound() -> Obj | None:
        found = await get(raw, f"{claims}/data")
        return found if found and found["status"]["phase"] == "Bound" else None

    live = await until(bound, what="claim bound")
    pv_name = f"pvc-{created['metadata']['uid']}"
    assert live["spec"]["volumeName"] == pv_name
    assert live["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "2Gi"},
    }
    annotations = live["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/selected-node"] == "kubesim-node-1"
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "rancher.io/local-path"
    assert annotations["pv.kubernetes.io/bind-completed"] == "yes"

    pv = await get(raw, f"/api/v1/persistentvolumes/{pv_name}")
    assert pv is not None
    assert pv["status"]["phase"] == "Bound"
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == (
        "rancher.io/local-path"
    )
    spec = pv["spec"]
    assert spec["claimRef"]["uid"] == created["metadata"]["uid"]
    assert (spec["storageClassName"], spec["persistentVolumeReclaimPolicy"]) == (
        "standard",
        "Delete",
    )
    assert spec["capacity"] == {"storage": "2Gi"}
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["kubesim-node-1"]}
    ]
    scheduled = await until(
        lambda: _scheduled(raw, ns, "user"), what="the pod scheduled once its claim is bound"
    )
    assert scheduled == "kubesim-node-1"
    reasons = [e[1] for e in await events(raw, ns, "data")]
    assert {"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} <= set(reasons)

    # A claim in use waits for its pod (pkg/controller/volume/pvcprotection); then, with reclaim
    # policy Delete, the volume goes with it.
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    status, deleting, _ = await raw("DELETE", f"{claims}/data")
    assert status == 200
    assert deleting["metadata"]["deletionTimestamp"]
    await asyncio.sleep(0.2)
    assert await get(raw, f"{claims}/data") is not None  # Terminating while the pod runs
    await raw("DELETE", f"/api/v1/namespaces/{ns}/pods/user", gracePeriodSeconds="0")

    async def gone(path: str) -> bool:
        return (await raw("GET", path))[0] == 404

    await until(lambda: gone(f"{claims}/data"), what="the claim deleted once unused")
    await until(lambda: gone(f"/api/v1/persistentvolumes/{pv_name}"), what="the volume deleted too")


async def test_an_immediate_class_binds_without_a_consumer_and_a_missing_class_never_does(
    raw: Raw,
) -> None:
    """pv_controller.go ``syncUnboundClaim``: Immediate classes provision at once; a class that
    does not exist is a ``ProvisioningFailed`` warning and the claim stays Pending; the
    scheduler refuses a pod of an unbound immediate claim (VolumeBinding ``PreFilter``)."""
    ns = await create_namespace(raw)
    instant = {
        "metadata": {"name": f"instant-{ns}"},
        "provisioner": "rancher.io/local-path",
        "reclaimPolicy": "Retain",
    }
    status, sc, _ = await raw("POST", "/apis/storage.k8s.io/v1/storageclasses", instant)
    assert (status, sc["volumeBindingMode"]) == (201, "Immediate")
    claims = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    await raw("POST", claims, claim("now", storageClassName=f"instant-{ns}"))
    await raw("POST", claims, claim("never", storageClassName="fast-ssd"))

    async def phase(name: str) -> str:
        return str(((await get(raw, f"{claims}/{name}")) or {})["status"]["phase"])

    await until(lambda: _equals(phase("now"), "Bound"), what="immediate claim bound")
    failed = (
        "Warning",
        "ProvisioningFailed",
        'storageclass.storage.k8s.io "fast-ssd" not found',
        "persistentvolume-controller",
    )
    await until(lambda: has_event(raw, ns, "never", failed), what="ProvisioningFailed event")
    assert await phase("never") == "Pending"

    volume = {"name": "never", "persistentVolumeClaim": {"claimName": "never"}}
    await raw("POST", f"/api/v1/namespaces/{ns}/pods", pod("stuck", volume))
    message = (
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: "
        "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    unschedulable = ("Warning", "FailedScheduling", message, "default-scheduler")
    await until(lambda: has_event(raw, ns, "stuck", unschedulable), what="FailedScheduling event")

    # A volume made by hand binds the claim of its class it fits (pv_controller ``syncUnboundClaim``
    # finds it with findBestMatchForClaim), whether or not the class exists.
    manual = {
        "metadata": {"name": f"manual-{ns}"},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "storageClassName": f"manual-{ns}",
            "hostPath": {"path": "/srv/data"},
        },
    }
    status, created, _ = await raw("POST", "/api/v1/persistentvolumes", manual)
    assert (status, created["spec"]["persistentVolumeReclaimPolicy"]) == (201, "Retain")
    await raw("POST", claims, claim("handmade", storageClassName=f"manual-{ns}"))
    await until(
        lambda: _equals(phase("handmade"), "Bound"), what="claim bound to the manual volume"
    )
    handmade = await get(raw, f"{claims}/handmade")
    assert handmade is not None
    assert handmade["spec"]["volumeName"] == f"manual-{ns}"
    assert handmade["status"]["capacity"] == {"storage": "5Gi"}
    made = await get(raw, f"/api/v1/persistentvolumes/manual-{ns}")
    assert made is not None
    assert made["spec"]["claimRef"]["name"] == "handmade"
    assert made["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}

    # Retain: the claim's deletion leaves the volume Released.
    pv_name = str(((await get(raw, f"{claims}/now")) or {})["spec"]["volumeName"])
    await raw("DELETE", f"{claims}/now")

    async def released() -> bool:
        pv = await get(raw, f"/api/v1/persistentvolumes/{pv_name}")
        return bool(pv and pv["status"]["phase"] == "Released")

    await until(released, what="the retained volume released")


async def _scheduled(raw: Raw, ns: str, name: str) -> str:
    found = await get(raw, f"/api/v1/namespaces/{ns}/pods/{name}")
    return str(((found or {}).get("spec") or {}).get("nodeName") or "")


async def _equals(value: Awaitable[str], expected: str) -> bool:
    return await value == expected


# --- item 8: the last finalizer --------------------------------------------------------------------


async def test_removing_the_last_finalizer_answers_the_object_without_it(raw: Raw) -> None:
    """apiserver registry/generic/registry/store.go ``deleteWithoutFinalizers``: the update that
    empties the finalizers of an object being deleted answers the object in the request."""
    ns = await create_namespace(raw)
    path = f"/api/v1/namespaces/{ns}/configmaps/held"
    body = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {"a": "1"}}
    await raw("POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    status, lingering, _ = await raw("DELETE", path)
    assert status == 200
    assert lingering["metadata"]["finalizers"] == ["example.com/hold"]
    status, answer, _ = await raw(
        "PATCH",
        path,
        {"metadata": {"finalizers": None}},
        content_type="application/merge-patch+json",
    )
    assert status == 200
    assert "finalizers" not in answer["metadata"]
    assert answer["metadata"]["deletionTimestamp"] == lingering["metadata"]["deletionTimestamp"]
    assert answer["data"] == {"a": "1"}
    assert (await raw("GET", path))[0] == 404


# --- item 12: the service-account token volume ----------------------------------------------------


async def test_pods_get_the_kube_api_access_volume_unless_they_opt_out(
    raw: Raw, kubectl: Kubectl
) -> None:
    """plugin/pkg/admission/serviceaccount/admission.go ``mountServiceAccountToken`` and
    ``TokenVolumeSource``; the root CA publisher (pkg/controller/certificates/rootcacertpublisher)
    keeps ``kube-root-ca.crt`` in every namespace."""
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"
    body = pod("plain")
    body["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox:1.36", "command": ["true"]}
    ]
    status, created, _ = await raw("POST", pods, body)
    assert status == 201
    volumes = created["spec"]["volumes"]
    assert len(volumes) == 1
    name = volumes[0]["name"]
    assert name.startswith("kube-api-access-")
    assert len(name) == len("kube-api-access-") + 5
    assert volumes[0]["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }
    mount = {
        "name": name,
        "readOnly": True,
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
    }
    for c in created["spec"]["containers"] + created["spec"]["initContainers"]:
        assert c["volumeMounts"] == [mount]

    root_ca = await until(
        lambda: get(raw, f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt"),
        what="kube-root-ca.crt",
    )
    await until(lambda: phase_is(raw, pods, "plain", "Running"), what="pod running")
    token_dir = "/var/run/secrets/kubernetes.io/serviceaccount"
    out = kubectl.run("-n", ns, "exec", "plain", "--", "cat", f"{token_dir}/namespace").stdout
    assert out == ns
    out = kubectl.run("-n", ns, "exec", "plain", "--", "cat", f"{token_dir}/ca.crt").stdout
    assert out == root_ca["data"]["ca.crt"]

    opted_out = pod("quiet", automountServiceAccountToken=False)
    assert "volumes" not in (await raw("POST", pods, opted_out))[1]["spec"]
    sa = {"metadata": {"name": "robot"}, "automountServiceAccountToken": False}
    await raw("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", sa)
    robot = (await raw("POST", pods, pod("robot", serviceAccountName="robot")))[1]
    assert "volumes" not in robot["spec"]
    assert not robot["spec"]["containers"][0].get("volumeMounts")


# --- item 17: validation gaps ----------------------------------------------------------------------


async def test_ids_spread_constraints_and_volume_sources_are_validated(raw: Raw) -> None:
    """pkg/apis/core/validation/validation.go: ``validatePodSpecSecurityContext`` and
    ``ValidateSecurityContext`` (IsValidUserID), ``validateTopologySpreadConstraints``
    (``ValidateMaxSkew``, ``ValidateWhenUnsatisfiable``) and ``validateVolumeSource``."""
    ns = await create_namespace(raw)

    async def refused(name: str, **spec: Any) -> tuple[str, list[str]]:
        body = pod(name)
        body["spec"].update(spec)
        status, answer, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods", body)
        assert (status, answer["reason"]) == (422, "Invalid"), answer
        return answer["message"], [c["field"] for c in answer["details"]["causes"]]

    message, _ = await refused("minus", securityContext={"runAsUser": -5})
    assert message == (
        'Pod "minus" is invalid: spec.securityContext.runAsUser: Invalid value: -5: '
        "must be between 0 and 2147483647, inclusive"
    )
    container = {"name": "main", "image": "nginx:1.27", "securityContext": {"runAsGroup": -1}}
    message, _ = await refused("group", containers=[container])
    assert message == (
        'Pod "group" is invalid: spec.containers[0].securityContext.runAsGroup: Invalid value: '
        "-1: must be between 0 and 2147483647, inclusive"
    )
    spread = {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}
    message, fields = await refused("spread", topologySpreadConstraints=[spread])
    assert fields == [
        "spec.topologySpreadConstraints[0].maxSkew",
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
    ]
    assert message == (
        'Pod "spread" is invalid: [spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: '
        "must be greater than zero, spec.topologySpreadConstraints[0].whenUnsatisfiable: "
        'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"]'
    )
    both = {"name": "both", "emptyDir": {}, "configMap": {"name": "c"}}
    message, _ = await refused("volume", volumes=[both])
    assert message == (
        'Pod "volume" is invalid: spec.volumes[0].configMap: Forbidden: '
        "may not specify more than 1 volume type"
    )
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {**pod("x")["spec"], "securityContext": {"runAsUser": -5}},
            },
        },
    }
    status, answer, _ = await raw("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment)
    assert status == 422
    assert answer["details"]["causes"][0]["field"] == "spec.template.spec.securityContext.runAsUser"
