"""LimitRange and ResourceQuota admission as kubectl sees it: defaults set on pods, limits and
quotas refused with the plugins' 403 messages, and a ReplicaSet reporting the pods it could not
create."""

from __future__ import annotations

import uuid

from kubesim.cluster import LiveCluster
from tests.kubesim.conftest import Kubectl, Raw, create_namespace
from tests.kubesim.live import DEPLOY, RS, create, deployment, events_for, live_fixture, until

LIMITS = """
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
    max: {cpu: "1", memory: 1Gi}
    min: {cpu: 50m}
    maxLimitRequestRatio: {cpu: "5"}
  - type: Pod
    max: {memory: 600Mi}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {requests.cpu: "1", limits.memory: 1Gi, pods: "5"}
"""


def _pod(name: str, **resources: dict[str, str]) -> str:
    return (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: {name}}}\n"
        f"spec: {{containers: [{{name: main, image: nginx, resources: {resources or {}}}}]}}\n"
    ).replace("'", '"')


HEAVY = """
apiVersion: v1
kind: Pod
metadata: {name: heavy}
spec:
  containers:
  - {name: a, image: nginx, resources: {limits: {memory: 400Mi}}}
  - {name: b, image: nginx, resources: {limits: {memory: 400Mi}}}
"""


def _setup(kubectl: Kubectl, *docs: str) -> tuple[str, str]:
    """A new namespace with the LimitRange and quota, then ``docs`` applied: (namespace, stderr)."""
    ns = f"a-{uuid.uuid4().hex[:8]}"
    manifest = f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---{LIMITS}"
    manifest += "".join(f"---\n{d}" for d in docs)
    return ns, kubectl.run("-n", ns, "apply", "-f", "-", input=manifest, check=False).stderr


def test_limit_range_defaults_and_limits_with_kubectl(kubectl: Kubectl) -> None:
    ns, errors = _setup(
        kubectl,
        _pod("bare"),
        # a limit without a request requests the limit (pod defaulting, before the LimitRange)
        _pod("sized", limits={"cpu": "200m"}),
        _pod("big", limits={"cpu": "2"}),
        _pod("greedy", limits={"cpu": "800m"}, requests={"cpu": "100m"}),
        HEAVY,
    )
    assert 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2' in (
        errors
    )
    assert (
        'pods "greedy" is forbidden: cpu max limit to request ratio per Container is 5, '
        "but provided ratio is 8.000000"
    ) in errors
    assert (
        'pods "heavy" is forbidden: maximum memory usage per Pod is 600Mi, but limit is 800Mi'
        in (errors)
    )
    items = kubectl.json("-n", ns, "get", "limitrange,pods")["items"]
    limits, bare, sized = items
    assert limits["spec"]["limits"][0]["defaultRequest"] == {"cpu": "100m", "memory": "256Mi"}
    assert bare["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert bare["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container main; "
        "cpu, memory limit for container main"
    )
    assert bare["status"]["qosClass"] == "Burstable"
    resources = sized["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "200m", "memory": "256Mi"}


def test_resource_quota_usage_and_refusals_with_kubectl(kubectl: Kubectl) -> None:
    ns, errors = _setup(
        kubectl,
        _pod("one", requests={"cpu": "400m"}),
        _pod("two", requests={"cpu": "400m"}),
        _pod("three", requests={"cpu": "400m"}),
    )
    assert (
        'pods "three" is forbidden: exceeded quota: compute, requested: requests.cpu=400m, '
        "used: requests.cpu=800m, limited: requests.cpu=1"
    ) in errors
    described = kubectl.run("-n", ns, "describe", "quota", "compute").stdout
    rows = {line.split()[0]: line.split()[1:] for line in described.splitlines()[3:]}
    assert rows["requests.cpu"] == ["800m", "1"]
    assert rows["limits.memory"] == ["512Mi", "1Gi"]
    assert rows["pods"] == ["2", "5"]


async def test_a_cpu_quota_makes_every_container_state_its_request(raw: Raw) -> None:
    ns = await create_namespace(raw)
    await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/resourcequotas",
        {
            "metadata": {"name": "q"},
            "spec": {"hard": {"requests.cpu": "1", "limits.memory": "1Gi"}},
        },
    )
    body = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {"name": "a", "image": "x", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "b", "image": "x"},
            ]
        },
    }
    status, refused, _ = await raw("POST", f"/api/v1/namespaces/{ns}/pods", body)
    assert (status, refused["reason"]) == (403, "Forbidden")
    assert refused["message"] == (
        'pods "p" is forbidden: failed quota: q: must specify limits.memory for: a,b; '
        "requests.cpu for: b"
    )


async def test_a_claim_larger_than_the_limit_range_allows_is_refused(raw: Raw) -> None:
    ns = await create_namespace(raw)
    item = {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}, "min": {"storage": "1Mi"}}
    await raw(
        "POST",
        f"/api/v1/namespaces/{ns}/limitranges",
        {"metadata": {"name": "claims"}, "spec": {"limits": [item]}},
    )
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}},
    }
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    status, refused, _ = await raw("POST", path, claim)
    assert (status, refused["message"]) == (
        403,
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per '
        "PersistentVolumeClaim is 1Gi, but request is 2Gi",
    )
    claim["spec"]["resources"]["requests"]["storage"] = "512Mi"  # type: ignore[index]
    assert (await raw("POST", path, claim))[0] == 201


live = live_fixture(nodes=1, namespaces=("app",))


async def test_a_replica_set_reports_pods_refused_by_a_quota(live: LiveCluster) -> None:
    objs = live.objs
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "2"}}}
    create(objs, ("", "resourcequotas"), "app", quota)
    create(objs, DEPLOY, "app", deployment("web", replicas=3))

    def failed() -> dict[str, str] | None:
        d = objs.store.get(DEPLOY, "app", "web") or {}
        conds = (d.get("status") or {}).get("conditions") or []
        return next((c for c in conds if c["type"] == "ReplicaFailure"), None)

    condition = await until(failed, what="ReplicaFailure on the deployment")
    assert condition["reason"] == "FailedCreate"
    assert (
        "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
        in (condition["message"])
    )
    (rs,) = objs.store.list(RS, "app")
    warnings = [e for e in events_for(objs, rs["metadata"]["name"]) if e["type"] == "Warning"]
    assert warnings[0]["reason"] == "FailedCreate"
    assert warnings[0]["message"].startswith('Error creating: pods "web-')
