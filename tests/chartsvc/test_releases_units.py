"""Release domain pieces without HTTP or a cluster: readiness rules, Helm error translation, test
logs, manifest parsing, stored-record decoding, the per-release locks and the config pool."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import time
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest

from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.helm import Helm
from chartsvc.helm.errors import translate
from chartsvc.helm.releases import ConfigPool
from chartsvc.releases import KeyedLocks, Release, check_namespace, check_release_name, kstatus
from chartsvc.releases.clients import KubeClients
from chartsvc.releases.reads import RecordTooLarge, StoredRevision, decode_record
from chartsvc.releases.resources import manifest_objects
from chartsvc.releases.testhooks import split_logs
from common.errors import BadGateway, BadRequest


def deployment(replicas: int = 2, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"generation": 2},
        "spec": {"replicas": replicas},
        "status": {"observedGeneration": 2, **(status or {})},
    }


@pytest.mark.parametrize(
    ("obj", "state", "message"),
    [
        (None, kstatus.NOT_FOUND, "not found in the cluster"),
        (deployment(), kstatus.IN_PROGRESS, "replicas: 0/2"),
        (
            deployment(1, {"replicas": 1}),
            kstatus.IN_PROGRESS,
            "updated: 0/1",
        ),
        (
            deployment(
                2, {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}
            ),
            kstatus.IN_PROGRESS,
            "ready: 1/2",
        ),
        (
            deployment(
                1,
                {
                    "replicas": 1,
                    "updatedReplicas": 1,
                    "readyReplicas": 1,
                    "availableReplicas": 1,
                    "conditions": [{"type": "Available", "status": "True"}],
                },
            ),
            kstatus.CURRENT,
            "available, 1 replicas",
        ),
        (
            deployment(
                2, {"conditions": [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]}
            ),
            kstatus.FAILED,
            "progress deadline exceeded",
        ),
        (
            {**deployment(), "metadata": {"generation": 3}},
            kstatus.IN_PROGRESS,
            "generation 3 not yet observed (2)",
        ),
        (
            {"kind": "Pod", "status": {"phase": "Succeeded"}},
            kstatus.CURRENT,
            "completed",
        ),
        (
            {
                "kind": "Pod",
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {"name": "web", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                    ],
                },
            },
            kstatus.FAILED,
            "container web: CrashLoopBackOff",
        ),
        (
            {"kind": "Pod", "status": {"phase": "Running", "conditions": [{"type": "Ready"}]}},
            kstatus.IN_PROGRESS,
            "pod is running",
        ),
        (
            {"kind": "Job", "status": {"conditions": [{"type": "Complete", "status": "True"}]}},
            kstatus.CURRENT,
            "completed, 0 succeeded",
        ),
        (
            {"kind": "Service", "spec": {"type": "LoadBalancer"}, "status": {}},
            kstatus.IN_PROGRESS,
            "waiting for a load balancer address",
        ),
        (
            {"kind": "PersistentVolumeClaim", "status": {"phase": "Pending"}},
            kstatus.IN_PROGRESS,
            "claim is pending",
        ),
        (
            {"kind": "ConfigMap", "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}},
            kstatus.TERMINATING,
            "being deleted",
        ),
        (
            {
                "kind": "Widget",
                "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Wait"}]},
            },
            kstatus.IN_PROGRESS,
            "Wait",
        ),
        ({"kind": "ConfigMap"}, kstatus.CURRENT, "exists"),
    ],
)
def test_readiness_rules(obj: dict[str, Any] | None, state: str, message: str) -> None:
    result = kstatus.readiness(obj)
    assert (result.status, result.message) == (state, message)
    assert result.ready == (state == kstatus.CURRENT)


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (helm.HelmNotFoundError("release: not found"), 404, "release-not-found"),
        (
            helm.HelmReleaseError(
                "release name check failed: cannot reuse a name that is still in use"
            ),
            409,
            "release-exists",
        ),
        (helm.HelmReleaseError('"web" has no deployed releases'), 404, "release-not-found"),
        (helm.HelmReleaseError("release has no 7 version"), 404, "revision-not-found"),
        (
            helm.HelmReleaseError('create: failed to create: namespaces "x" not found'),
            404,
            "namespace-not-found",
        ),
        (
            helm.HelmReleaseError(
                'secrets is forbidden: User "sa" cannot list resource "secrets" in the namespace "a"'
            ),
            403,
            "cluster-forbidden",
        ),
        (
            helm.HelmReleaseError(
                'admission webhook "policy.example.com" denied the request: no latest tags'
            ),
            422,
            "cluster-admission",
        ),
        (
            helm.HelmReleaseError('Service "x" is invalid: spec.ports[0].port: Invalid value'),
            422,
            "cluster-invalid",
        ),
        (
            helm.HelmReleaseError("another operation (install/upgrade/rollback) is in progress"),
            409,
            "release-busy",
        ),
        (
            helm.HelmKubeError("kubernetes cluster unreachable: dial tcp: connection refused"),
            502,
            "cluster-unreachable",
        ),
        (
            helm.HelmReleaseError("list: failed to list: Unauthorized"),
            502,
            "cluster-unreachable",
        ),
        (helm.HelmReleaseError("pre-install hook failed: job failed"), 500, "release-failed"),
        (helm.HelmRenderError("template: x: nil pointer"), 400, "render-failed"),
    ],
)
def test_helm_errors_are_translated(error: helm.HelmError, status: int, code: str) -> None:
    translated = translate(error, ReleaseRef(ClusterTarget("east"), namespace="apps", name="web"))
    assert (translated.status, translated.code) == (status, code)


def test_a_busy_release_names_its_recovery() -> None:
    busy = helm.HelmReleaseError("another operation (install/upgrade/rollback) is in progress")
    translated = translate(busy, ReleaseRef(ClusterTarget("east"), namespace="apps", name="web"))
    assert "rollback" in translated.detail
    assert "uninstall a pending install" in translated.detail


def test_translated_detail_is_truncated() -> None:
    error = helm.HelmReleaseError("Service is invalid: " + "x" * 5000)
    assert len(translate(error, ReleaseRef(ClusterTarget("c"), "n", "r")).detail) < 1200


def test_split_logs() -> None:
    text = "POD LOGS: a-check\nline one\nline two\n\nPOD LOGS: b-check\nok\n\n"
    assert split_logs(text) == {"a-check": "line one\nline two\n", "b-check": "ok\n"}
    assert split_logs("") == {}


def test_manifest_objects_in_order_with_lists_flattened() -> None:
    manifest = (
        "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
        "---\n# Source: c/templates/empty.yaml\n"
        "---\napiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n"
        "---\nnot: an object\n"
    )
    assert [(o["kind"], o["metadata"]["name"]) for o in manifest_objects(manifest)] == [
        ("ConfigMap", "a"),
        ("Secret", "s"),
    ]


def test_a_stored_record_inflating_past_the_bound_is_refused_before_it_is_whole() -> None:
    """A Secret labelled as Helm's holding a gzip bomb: inflated no further than the bound."""
    record = {"name": "web", "version": 1, "manifest": "x" * (2 * 1024 * 1024)}
    packed = gzip.compress(json.dumps(record).encode())
    encoded = base64.b64encode(base64.b64encode(packed)).decode()
    assert len(packed) < 64 * 1024  # a small Secret...
    with pytest.raises(RecordTooLarge, match="revision 1 inflates past 1048576 bytes") as refused:
        decode_record(encoded, what="release 'web' revision 1", limit=1024 * 1024)
    assert refused.value.status == 502  # the cluster's data, not the caller's request
    assert decode_record(encoded, limit=3 * 1024 * 1024) == record  # ...fine within the bound


def test_stored_records_decode_like_helm() -> None:
    record = {"name": "web", "version": 2, "info": {"status": "deployed"}, "chart": {}}
    encoded = base64.b64encode(base64.b64encode(gzip.compress(json.dumps(record).encode())))
    assert decode_record(encoded.decode()) == record
    plain = base64.b64encode(base64.b64encode(json.dumps(record).encode())).decode()
    assert decode_record(plain) == record
    secret: dict[str, Any] = {
        "metadata": {"labels": {"name": "web", "version": "2", "status": "deployed"}}
    }
    secret["data"] = {"release": plain}
    stored = StoredRevision.from_secret(secret)
    assert stored is not None
    assert (stored.name, stored.version, stored.status) == ("web", 2, "deployed")
    assert StoredRevision.from_secret({"metadata": {"labels": {}}, "data": {}}) is None
    assert Release.from_record(record).status == "deployed"


def test_name_rules() -> None:
    check_release_name("a" * 53)
    check_release_name("web.v2")
    check_namespace("a" * 63)
    for bad in ("a" * 54, "Web", "web_", "-web", ""):
        with pytest.raises(BadRequest):
            check_release_name(bad)
    for bad in ("a" * 64, "a.b", "A"):
        with pytest.raises(BadRequest):
            check_namespace(bad)


async def test_locks_serialise_one_key_and_not_others() -> None:
    locks = KeyedLocks()
    order: list[str] = []

    async def hold(key: str, tag: str) -> None:
        async with locks.hold(("cluster", "ns", key)):
            order.append(f"{tag}+")
            await asyncio.sleep(0.01)
            order.append(f"{tag}-")

    await asyncio.gather(hold("a", "a1"), hold("a", "a2"), hold("b", "b1"))
    assert order.index("a1-") < order.index("a2+")
    assert order.index("b1+") < order.index("a1-")  # another release did not wait
    assert locks._locks == {}  # nothing left behind


def test_config_pool_reuses_and_evicts(tmp_path: Path) -> None:
    target = ClusterTarget(name="t", kubeconfig="apiVersion: v1\nkind: Config\n", context=None)
    pool = ConfigPool(tmp_path, max_configs=2)
    with pool.use(target, "a") as first, pool.use(target, "a") as again:
        assert first is again
    with pool.use(target, "b"), pool.use(target, "c") as third:
        assert third is not first
    with pool.use(target, "a") as fresh:
        assert fresh is not first  # "a" was evicted (and closed) as least recently used
    pool.close()


def fake_target(name: str) -> ClusterTarget:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": name, "user": {"token": "secret-token"}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    return ClusterTarget(name=name, kubeconfig=json.dumps(config), context=name)


def closed(client: Any) -> bool:
    return bool(client.rest_client.pool_manager.closed)


async def test_kube_clients_are_shared_bounded_and_closed_when_idle(tmp_path: Path) -> None:
    clients = KubeClients(tmp_path, max_clients=1)
    async with clients.use(fake_target("a")) as a, clients.use(fake_target("a")) as again:
        assert a is again
        async with clients.use(fake_target("b")) as b:
            assert not closed(a)  # evicted while in use: closed only once released
        assert not closed(b)
    assert closed(a)
    await clients.close()
    assert closed(b)


async def test_unusable_kubeconfig_is_a_502_without_its_content(tmp_path: Path) -> None:
    clients = KubeClients(tmp_path)
    broken = ClusterTarget(name="broken", kubeconfig="token: secret-token\nkind: [", context=None)
    with pytest.raises(BadGateway) as caught:
        async with clients.use(broken):
            pass
    assert "broken" in caught.value.detail
    assert "secret-token" not in caught.value.detail
    await clients.close()


async def test_a_cancelled_write_keeps_the_release_lock_until_helm_is_done(
    tmp_path: Path,
) -> None:
    helm = Helm(credentials_dir=tmp_path)
    locks = KeyedLocks()
    release = ReleaseRef(fake_target("slow"), "ns", "web")
    finished: list[str] = []

    def slow(config: Any) -> str:
        time.sleep(0.3)
        finished.append("helm")
        return "done"

    async def write() -> None:
        async with locks.hold(release.key):
            await helm.releases.run(release, slow, operation="install")

    task = asyncio.create_task(write())
    await asyncio.sleep(0.05)
    task.cancel()
    async with locks.hold(release.key):  # the next write to the same release
        assert finished == ["helm"]
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(helm.close)
