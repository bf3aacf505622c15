"""The apiserver's validation of built-in kinds: each mistake the fidelity probe found is refused
with the real server's 422 (or, for a quantity that does not parse, its 400), field path and words,
on create, update, patch and server-side apply alike."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from kubernetes_asyncio.client import ApiClient, AppsV1Api
from kubernetes_asyncio.client.exceptions import ApiException

from tests.kubesim.conftest import Kubectl, Raw, refusal
from tests.kubesim.live import Obj


def container(**extra: Any) -> Obj:
    return {"name": "web", "image": "nginx:1.27", **extra}


def deployment(name: str = "web", **pod: Any) -> Obj:
    spec = {"containers": [container()], **pod}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def pod(*containers: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": list(containers) or [container()], **spec},
    }


def service(*ports: Obj, kind: str = "ClusterIP") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"type": kind, "selector": {"app": "web"}, "ports": list(ports)},
    }


def recreate_with_rolling_update() -> Obj:
    obj = deployment()
    obj["spec"]["strategy"] = {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}
    return obj


INGRESS: Obj = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": {"name": "ing"},
    "spec": {
        "rules": [
            {
                "host": "shop.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "backend": {"service": {"name": "web", "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ]
    },
}
PVC: Obj = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {}},
}
HPA: Obj = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 5,
        "maxReplicas": 2,
    },
}
PDB: Obj = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web"},
    "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
}
CRONJOB: Obj = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "tick"},
    "spec": {
        "schedule": "not a cron",
        "jobTemplate": {
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container()]}}}
        },
    },
}
NETPOL: Obj = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {"name": "deny"},
    "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Sideways"]},
}
ROLEBINDING: Obj = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "RoleBinding",
    "metadata": {"name": "rb"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
    "subjects": [{"kind": "User", "name": "jane", "apiGroup": "v1"}],
}
SERVICE_PORT_80 = (
    'core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, '
    'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

# (object, field, reason, message) -- the cause each mistake produces on a real 1.32 server.
CASES: list[tuple[str, Obj, str, str, str]] = [
    (
        "ingress-path-without-pathType",
        INGRESS,
        "spec.rules[0].http.paths[0].pathType",
        "FieldValueRequired",
        "Required value: pathType must be specified",
    ),
    (
        "mount-of-a-missing-volume",
        pod(container(volumeMounts=[{"name": "data", "mountPath": "/data"}])),
        "spec.containers[0].volumeMounts[0].name",
        "FieldValueNotFound",
        'Not found: "data"',
    ),
    (
        "recreate-with-rollingUpdate",
        recreate_with_rolling_update(),
        "spec.strategy.rollingUpdate",
        "FieldValueForbidden",
        "Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ),
    (
        "user-subject-in-a-wrong-group",
        ROLEBINDING,
        "subjects[0].apiGroup",
        "FieldValueNotSupported",
        'Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"',
    ),
    (
        "nodePort-out-of-range",
        service({"port": 80, "nodePort": 80}, kind="NodePort"),
        "spec.ports[0].nodePort",
        "FieldValueInvalid",
        "Invalid value: 80: provided port is not in the valid range. "
        "The range of valid ports is 30000-32767",
    ),
    (
        "pvc-without-storage",
        PVC,
        "spec.resources[storage]",
        "FieldValueRequired",
        "Required value",
    ),
    (
        "hpa-min-above-max",
        HPA,
        "spec.maxReplicas",
        "FieldValueInvalid",
        "Invalid value: 2: must be greater than or equal to `minReplicas`",
    ),
    (
        "pdb-with-both-budgets",
        PDB,
        "spec",
        "FieldValueInvalid",
        "minAvailable and maxUnavailable cannot be both set",
    ),
    (
        "cron-schedule-that-does-not-parse",
        CRONJOB,
        "spec.schedule",
        "FieldValueInvalid",
        'Invalid value: "not a cron": expected exactly 5 fields, found 3: [not a cron]',
    ),
    (
        "duplicate-service-ports",
        service({"name": "a", "port": 80}, {"name": "b", "port": 80}),
        "spec.ports[1]",
        "FieldValueDuplicate",
        f"Duplicate value: {SERVICE_PORT_80}",
    ),
    (
        "port-name-over-15-characters",
        pod(container(ports=[{"name": "metrics-endpoint-http", "containerPort": 9090}])),
        "spec.containers[0].ports[0].name",
        "FieldValueInvalid",
        'Invalid value: "metrics-endpoint-http": must be no more than 15 characters',
    ),
    (
        "probe-without-a-handler",
        pod(container(livenessProbe={"periodSeconds": 5})),
        "spec.containers[0].livenessProbe",
        "FieldValueRequired",
        "Required value: must specify a handler type",
    ),
    (
        "imagePullPolicy-Sometimes",
        pod(container(imagePullPolicy="Sometimes")),
        "spec.containers[0].imagePullPolicy",
        "FieldValueNotSupported",
        'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ),
    (
        "networkpolicy-policy-type",
        NETPOL,
        "spec.policyTypes[1]",
        "FieldValueNotSupported",
        'Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    ),
    (
        "container-name-not-a-dns-label",
        pod(container(name="Web")),
        "spec.containers[0].name",
        "FieldValueInvalid",
        f'Invalid value: "Web": {LABEL_MSG}',
    ),
    (
        "duplicate-container-names",
        pod(container(), container(image="busybox")),
        "spec.containers[1].name",
        "FieldValueDuplicate",
        'Duplicate value: "web"',
    ),
    (
        "container-port-out-of-range",
        pod(container(ports=[{"containerPort": 70000}])),
        "spec.containers[0].ports[0].containerPort",
        "FieldValueInvalid",
        "Invalid value: 70000: must be between 1 and 65535, inclusive",
    ),
    (
        "requests-above-limits",
        pod(container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})),
        "spec.containers[0].resources.requests",
        "FieldValueInvalid",
        'Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    (
        "restartPolicy-outside-the-enum",
        pod(restartPolicy="Sometimes"),
        "spec.restartPolicy",
        "FieldValueNotSupported",
        'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ),
    (
        "label-key-with-two-slashes",
        {**pod(), "metadata": {"name": "p", "labels": {"a/b/c": "x"}}},
        "metadata.labels",
        "FieldValueInvalid",
        'Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters',
    ),
]


def path_of(obj: Obj, ns: str) -> str:
    group, _, version = obj["apiVersion"].rpartition("/")
    plural = {
        "Ingress": "ingresses",
        "NetworkPolicy": "networkpolicies",
        "PersistentVolumeClaim": "persistentvolumeclaims",
        "HorizontalPodAutoscaler": "horizontalpodautoscalers",
        "PodDisruptionBudget": "poddisruptionbudgets",
    }.get(obj["kind"], obj["kind"].lower() + "s")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    return f"{base}/namespaces/{ns}/{plural}"


@pytest.mark.parametrize(
    ("case", "obj", "field", "reason", "message"), CASES, ids=[c[0] for c in CASES]
)
async def test_invalid_objects_are_refused_as_the_apiserver_refuses_them(
    raw: Raw, namespace: str, case: str, obj: Obj, field: str, reason: str, message: str
) -> None:
    status, body, _ = await raw("POST", path_of(obj, namespace), obj)
    assert (status, body["reason"], body["code"]) == (422, "Invalid", 422), body
    causes = [c for c in body["details"]["causes"] if c["field"] == field]
    assert causes, body["details"]["causes"]
    assert causes[0]["reason"] == reason
    assert message in causes[0]["message"]
    assert f"{field}: {causes[0]['message']}" in body["message"]
    # Nothing was written.
    name = obj["metadata"]["name"]
    assert (await raw("GET", f"{path_of(obj, namespace)}/{name}"))[0] == 404


async def test_the_fixed_objects_are_accepted(raw: Raw, namespace: str) -> None:
    """Each case minus its mistake is valid: the rules do not refuse what a real server takes."""
    ingress = copy.deepcopy(INGRESS)
    ingress["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = "Prefix"
    pvc = copy.deepcopy(PVC)
    pvc["spec"]["resources"] = {"requests": {"storage": "1Gi"}}
    cron = copy.deepcopy(CRONJOB)
    cron["spec"]["schedule"] = "*/5 * * * *"
    fixed = [
        ingress,
        pvc,
        cron,
        {**HPA, "spec": {**HPA["spec"], "maxReplicas": 5}},
        {**PDB, "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}},
        {**NETPOL, "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}},
        service(
            {"name": "http", "port": 80, "nodePort": 30080},
            {"name": "https", "port": 443},
            kind="NodePort",
        ),
        pod(
            container(
                ports=[{"name": "http", "containerPort": 80}],
                volumeMounts=[{"name": "data", "mountPath": "/data"}],
                livenessProbe={"httpGet": {"path": "/", "port": "http"}},
                resources={
                    "requests": {"cpu": "100m", "memory": "64Mi"},
                    "limits": {"memory": "128Mi"},
                },
            ),
            volumes=[{"name": "data", "emptyDir": {}}],
        ),
    ]
    for obj in fixed:
        status, body, _ = await raw("POST", path_of(obj, namespace), obj)
        assert status == 201, body


async def test_user_subject_without_api_group_is_defaulted_as_rbac_v1_does(
    raw: Raw, namespace: str
) -> None:
    """rbac/v1 defaulting fills a User subject's apiGroup, so a real server accepts it."""
    binding = copy.deepcopy(ROLEBINDING)
    del binding["subjects"][0]["apiGroup"]
    status, body, _ = await raw("POST", path_of(binding, namespace), binding)
    assert status == 201, body
    assert body["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"


async def test_a_quantity_that_does_not_parse_fails_decoding(raw: Raw, namespace: str) -> None:
    obj = pod(container(resources={"limits": {"memory": "100mi"}}))
    status, body, _ = await raw("POST", path_of(obj, namespace), obj)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: unable to parse quantity\'s suffix'
    )


async def test_updates_and_patches_are_validated_too(raw: Raw, namespace: str) -> None:
    path = path_of(deployment(), namespace)
    status, body, _ = await raw("POST", path, deployment())
    assert status == 201, body
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "web", "imagePullPolicy": "Sometimes"}]}}
        }
    }
    for content_type in ("application/strategic-merge-patch+json",):
        status, body, _ = await raw("PATCH", f"{path}/web", patch, content_type=content_type)
        assert status == 422, body
        assert body["details"]["causes"][0]["field"] == (
            "spec.template.spec.containers[0].imagePullPolicy"
        )
    body = (await raw("GET", f"{path}/web"))[1]
    body["spec"]["strategy"] = {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}
    status, body, _ = await raw("PUT", f"{path}/web", body)
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "spec.strategy.rollingUpdate"
    # The classic trap: a merge patch to Recreate leaves the defaulted rollingUpdate behind.
    recreate: Obj = {"spec": {"strategy": {"type": "Recreate"}}}
    status, body, _ = await raw(
        "PATCH", f"{path}/web", recreate, content_type="application/merge-patch+json"
    )
    assert status == 422
    recreate["spec"]["strategy"]["rollingUpdate"] = None
    status, body, _ = await raw(
        "PATCH", f"{path}/web", recreate, content_type="application/merge-patch+json"
    )
    assert status == 200, body


async def test_several_causes_come_back_as_one_aggregate(raw: Raw, namespace: str) -> None:
    obj = pod(container(imagePullPolicy="Sometimes", livenessProbe={}))
    status, body, _ = await raw("POST", path_of(obj, namespace), obj)
    assert status == 422
    fields = [c["field"] for c in body["details"]["causes"]]
    assert fields == ["spec.containers[0].imagePullPolicy", "spec.containers[0].livenessProbe"]
    assert body["message"].startswith('Pod "p" is invalid: [spec.containers[0].imagePullPolicy: ')


async def test_status_shape_through_kubernetes_asyncio(api: ApiClient, namespace: str) -> None:
    apps = AppsV1Api(api)
    with pytest.raises(ApiException) as caught:
        # The client sends a dict body as it is; its stubs name only the model class.
        await apps.create_namespaced_deployment(namespace, recreate_with_rolling_update())  # type: ignore[arg-type]
    assert caught.value.status == 422
    status = refusal(caught.value)
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate: Forbidden: '
        "may not be specified when strategy `type` is 'Recreate'",
        "reason": "Invalid",
        "details": {
            "name": "web",
            "group": "apps",
            "kind": "Deployment",
            "causes": [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: may not be specified when strategy `type` is 'Recreate'",
                    "field": "spec.strategy.rollingUpdate",
                }
            ],
        },
        "code": 422,
    }


MANIFEST = """
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  type: NodePort
  selector: {{app: web}}
  ports: [{{port: 80, nodePort: 80}}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {{name: tick, namespace: {ns}}}
spec:
  schedule: "not a cron"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: tick, image: busybox, imagePullPolicy: Sometimes}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: {ns}}}
spec:
  containers: [{{name: web, image: nginx, resources: {{limits: {{memory: 100mi}}}}}}]
"""


@pytest.mark.parametrize("mode", ["client-side", "server-side"])
def test_kubectl_prints_the_real_errors(kubectl: Kubectl, mode: str) -> None:
    ns = f"vk-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", ns)
    args = ["apply", "-f", "-"] + (["--server-side"] if mode == "server-side" else [])
    proc = kubectl.run(*args, input=MANIFEST.format(ns=ns), check=False)
    assert proc.returncode == 1
    where = 'error when creating "STDIN": ' if mode == "client-side" else ""
    assert proc.stderr.splitlines() == [
        f"Error from server (Invalid): {where}"
        'Service "web" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port '
        "is not in the valid range. The range of valid ports is 30000-32767",
        f"Error from server (Invalid): {where}"
        'CronJob.batch "tick" is invalid: [spec.schedule: Invalid value: "not a cron": expected '
        "exactly 5 fields, found 3: [not a cron], "
        "spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "
        '"Sometimes": supported values: "Always", "IfNotPresent", "Never"]',
        f"Error from server (BadRequest): {where}"
        'Pod in version "v1" cannot be handled as a Pod: unable to parse quantity\'s suffix',
    ]
    proc = kubectl.run(
        "create", "-f", "-", input=MANIFEST.format(ns=ns).split("---")[1], check=False
    )
    assert proc.stderr == (
        'The CronJob "tick" is invalid: \n'
        '* spec.schedule: Invalid value: "not a cron": expected exactly 5 fields, found 3: '
        "[not a cron]\n"
        "* spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "
        '"Sometimes": supported values: "Always", "IfNotPresent", "Never"\n'
    )
    assert kubectl.run("get", "all", "-n", ns, "-o", "name").stdout.strip() == ""
