"""StatefulSets, DaemonSets, Jobs, CronJobs, Services and PodDisruptionBudgets, in process."""

from __future__ import annotations

import copy
import datetime

from kubesim.cluster import LiveCluster
from kubesim.controllers.base import run_once
from tests.kubesim.live import (
    CR,
    CRONJOBS,
    DS,
    EPS,
    JOBS,
    PDB,
    PODS,
    SLICES,
    STS,
    SVC,
    Obj,
    cond,
    create,
    deployment,
    events_for,
    live_fixture,
    namespace,
    phase,
    pods_of,
    ready,
    started,
    stored,
    until,
    update,
)

live = live_fixture(nodes=3, namespaces=("w",))


def _template(app: str, image: str = "redis:7.4", **spec: object) -> dict[str, object]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": image}], **spec},
    }


async def test_statefulset_ordinals_claims_and_rolling_update(live: LiveCluster) -> None:
    objs = live.objs
    body = {
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": _template("db"),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    create(objs, STS, "w", body)

    def rolled(revision: str | None = None) -> bool:
        s = (objs.store.get(STS, "w", "db") or {}).get("status") or {}
        return (
            s.get("readyReplicas") == 3
            and s.get("currentRevision") == s.get("updateRevision")
            and (revision is None or s["updateRevision"] != revision)
        )

    await until(rolled, what="statefulset ready")
    pods = sorted(pods_of(objs, "w", "db"), key=lambda p: p["metadata"]["name"])
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    assert pods[0]["spec"]["hostname"] == "db-0"
    assert pods[0]["spec"]["subdomain"] == "db"
    data = next(v for v in pods[1]["spec"]["volumes"] if v["name"] == "data")
    assert data["persistentVolumeClaim"]["claimName"] == "data-db-1"
    pvc = objs.store.get(("", "persistentvolumeclaims"), "w", "data-db-2")
    assert pvc is not None
    assert pvc["status"]["phase"] == "Bound"
    created = [
        e["message"]
        for e in events_for(objs, "db")
        if e["reason"] == "SuccessfulCreate" and e["message"].startswith("create Pod")
    ]
    assert created[:3] == [f"create Pod db-{i} in StatefulSet db successful" for i in range(3)]
    first = stored(objs, STS, "w", "db")["status"]["updateRevision"]
    sts = copy.deepcopy(stored(objs, STS, "w", "db"))
    sts["spec"]["template"]["spec"]["containers"][0]["image"] = "redis:7.5"
    update(objs, STS, sts)
    await until(lambda: rolled(first), what="rolling update")
    assert {p["spec"]["containers"][0]["image"] for p in pods_of(objs, "w", "db")} == {"redis:7.5"}
    revisions = sorted(r["revision"] for r in objs.store.list(CR, "w"))
    assert revisions == [1, 2]
    cr = next(r for r in objs.store.list(CR, "w") if r["revision"] == 1)
    assert cr["data"]["spec"]["template"]["$patch"] == "replace"
    assert cr["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:7.4"


async def test_daemonset_one_pod_per_eligible_node(live: LiveCluster) -> None:
    objs = live.objs
    body = {
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": _template("agent", "prom/node-exporter:v1.8.2"),
        },
    }
    create(objs, DS, "w", body)
    await until(
        lambda: (
            ((objs.store.get(DS, "w", "agent") or {}).get("status") or {}).get("numberReady") == 3
        )
    )
    assert sorted(p["spec"]["nodeName"] for p in pods_of(objs, "w", "agent")) == [
        "kubesim-node-1",
        "kubesim-node-2",
        "kubesim-node-3",
    ]
    node = copy.deepcopy(stored(objs, ("", "nodes"), "", "kubesim-node-3"))
    node["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    update(objs, ("", "nodes"), node)
    await until(lambda: len(pods_of(objs, "w", "agent")) == 2, what="pod leaves the tainted node")
    status = stored(objs, DS, "w", "agent")["status"]
    await until(lambda: stored(objs, DS, "w", "agent")["status"]["desiredNumberScheduled"] == 2)
    assert status["observedGeneration"] == 1
    assert len(objs.store.list(CR, "w")) == 1


async def test_job_completions_and_backoff_limit(live: LiveCluster) -> None:
    objs = live.objs
    spec: Obj = {
        "completions": 3,
        "parallelism": 2,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "command": ["sh", "-c", "echo working; exit 0"],
                    }
                ],
            }
        },
    }
    create(objs, JOBS, "w", {"metadata": {"name": "ok"}, "spec": spec})
    job = await until(
        lambda: (
            cond(objs.store.get(JOBS, "w", "ok"), "Complete").get("status") == "True"
            and objs.store.get(JOBS, "w", "ok")
        )
    )
    assert (
        job["status"]["succeeded"] == 3 and job["status"]["active"]
        if "active" in job["status"]
        else True
    )
    assert cond(job, "SuccessCriteriaMet")["status"] == "True"
    assert "completionTime" in job["status"]
    pods = [
        p for p in objs.store.list(PODS, "w") if p["metadata"]["labels"].get("job-name") == "ok"
    ]
    assert len(pods) == 3
    assert all(phase(p) == "Succeeded" for p in pods)
    failing = copy.deepcopy(spec)
    failing.update({"completions": 1, "parallelism": 1, "backoffLimit": 1})
    failing["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "echo boom >&2; exit 3"]
    create(objs, JOBS, "w", {"metadata": {"name": "bad"}, "spec": failing})
    job = await until(
        lambda: (
            cond(objs.store.get(JOBS, "w", "bad"), "Failed").get("status") == "True"
            and objs.store.get(JOBS, "w", "bad")
        )
    )
    assert cond(job, "Failed")["reason"] == "BackoffLimitExceeded"
    assert job["status"]["failed"] == 2
    pod = next(
        p for p in objs.store.list(PODS, "w") if p["metadata"]["labels"].get("job-name") == "bad"
    )
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


async def test_cronjob_schedules_prunes_and_sees_manual_jobs() -> None:
    clock = [datetime.datetime.now(datetime.UTC).timestamp()]
    async with started(nodes=1, clock=lambda: clock[0]) as live:
        objs, key = live.objs, ("w", "tick")
        namespace(objs, "w")
        template = {
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                    }
                }
            }
        }
        spec = {"schedule": "*/5 * * * *", "successfulJobsHistoryLimit": 1, "jobTemplate": template}
        cj = create(objs, CRONJOBS, "w", {"metadata": {"name": "tick"}, "spec": spec})
        wait = run_once(live.cronjobs, key)
        assert wait is not None
        assert 0 < wait <= 300.1
        clock[0] += wait
        run_once(live.cronjobs, key)
        (job,) = objs.store.list(JOBS, "w")
        assert job["metadata"]["ownerReferences"][0]["uid"] == cj["metadata"]["uid"]
        assert job["metadata"]["name"] == f"tick-{round(clock[0] - 0.05) // 60}"
        assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        active = stored(objs, CRONJOBS, "w", "tick")["status"]["active"]
        assert active[0]["name"] == job["metadata"]["name"]
        await until(lambda: cond(objs.store.get(JOBS, "w", job["metadata"]["name"]), "Complete"))
        ref = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": "tick",
            "uid": cj["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": False,
        }
        manual = {
            "metadata": {
                "name": "tick-manual",
                "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                "ownerReferences": [ref],
            },
            "spec": template["spec"],
        }
        create(objs, JOBS, "w", manual)
        await until(lambda: any(e["reason"] == "UnexpectedJob" for e in events_for(objs, "tick")))
        await until(
            lambda: not objs.store.get(JOBS, "w", job["metadata"]["name"]),
            what="history limit prunes",
        )
        assert cond(objs.store.get(JOBS, "w", "tick-manual"), "Complete")
        status = stored(objs, CRONJOBS, "w", "tick")["status"]
        assert "lastScheduleTime" in status
        assert "lastSuccessfulTime" in status
        assert "active" not in status
        suspended = copy.deepcopy(stored(objs, CRONJOBS, "w", "tick"))
        suspended["spec"]["suspend"] = True
        update(objs, CRONJOBS, suspended)
        clock[0] += 3600
        assert run_once(live.cronjobs, key) is None
        assert [j["metadata"]["name"] for j in objs.store.list(JOBS, "w")] == ["tick-manual"]


async def test_service_endpoints_and_pdb_status(live: LiveCluster) -> None:
    objs = live.objs
    create(objs, ("apps", "deployments"), "w", deployment("web", replicas=2))
    unready = deployment(
        "flaky", replicas=1, readinessProbe={"httpGet": {"path": "/fail", "port": 80}}
    )
    create(objs, ("apps", "deployments"), "w", unready)
    for name in ("web", "flaky"):
        create(
            objs,
            SVC,
            "w",
            {
                "metadata": {"name": name},
                "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": "http"}]},
            },
        )
    create(
        objs,
        PDB,
        "w",
        {
            "metadata": {"name": "web"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )

    def ready_endpoints(name: str) -> list[dict[str, object]]:
        slices = [
            s
            for s in objs.store.list(SLICES, "w")
            if s["metadata"]["labels"].get("kubernetes.io/service-name") == name
        ]
        return [e for s in slices for e in s.get("endpoints") or [] if e["conditions"]["ready"]]

    await until(lambda: len(ready_endpoints("web")) == 2, what="web endpoints")
    (es,) = [
        s
        for s in objs.store.list(SLICES, "w")
        if s["metadata"]["labels"]["kubernetes.io/service-name"] == "web"
    ]
    assert es["ports"] == [{"name": "", "port": 80, "protocol": "TCP"}]
    assert (
        es["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"]
        == "endpointslice-controller.k8s.io"
    )
    ep = objs.store.get(EPS, "w", "web")
    assert ep is not None
    assert len(ep["subsets"][0]["addresses"]) == 2
    flaky = await until(lambda: next(iter(pods_of(objs, "w", "flaky")), None))
    await until(lambda: (objs.store.get(EPS, "w", "flaky") or {}).get("subsets"))
    assert "notReadyAddresses" in stored(objs, EPS, "w", "flaky")["subsets"][0]
    await until(
        lambda: any(e["reason"] == "Unhealthy" for e in events_for(objs, flaky["metadata"]["name"]))
    )
    assert not ready(stored(objs, PODS, "w", flaky["metadata"]["name"]))
    pdb = await until(
        lambda: (
            ((objs.store.get(PDB, "w", "web") or {}).get("status") or {}).get("currentHealthy") == 2
            and objs.store.get(PDB, "w", "web")
        )
    )
    assert pdb["status"]["disruptionsAllowed"] == 1
    assert pdb["status"]["desiredHealthy"] == 1
    assert cond(pdb, "DisruptionAllowed")["status"] == "True"
    default = await until(lambda: objs.store.get(EPS, "default", "kubernetes"))
    assert default["subsets"][0]["ports"][0]["port"] == 6443
