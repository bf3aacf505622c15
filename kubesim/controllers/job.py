"""The Job controller: runs pods to ``completions`` with ``parallelism``, gives up at ``backoffLimit``.

``NonIndexed`` and ``Indexed`` completion modes (indexed pods get their completion index as
annotation, label, hostname and ``JOB_COMPLETION_INDEX``), the pod-failure back-off between
retries, ``activeDeadlineSeconds``, ``suspend`` and ``ttlSecondsAfterFinished``. A finished Job
carries ``SuccessCriteriaMet`` + ``Complete`` or ``FailureTarget`` + ``Failed`` conditions, as 1.32
writes them, and a ``completionTime`` when it succeeded.
"""

from __future__ import annotations

import time

from kubesim.controllers.base import Key
from kubesim.controllers.client import (
    PODS,
    Client,
    condition,
    fmt_time,
    now_utc,
    parse_time,
    pod_active,
    pod_from_template,
    pod_ready,
    set_condition,
)
from kubesim.controllers.events import Recorder
from kubesim.controllers.replicaset import PodNamer
from kubesim.controllers.workload import WorkloadController
from kubesim.machinery.timings import Timings
from kubesim.store import Obj

JOB = ("batch", "jobs")
COMPONENT = "job-controller"
INDEX = "batch.kubernetes.io/job-completion-index"


def finished(job: Obj) -> str:
    """``Complete``, ``Failed`` or ``""``."""
    for kind in ("Complete", "Failed"):
        c = condition(job, kind)
        if c is not None and c.get("status") == "True":
            return kind
    return ""


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


class JobController(WorkloadController):
    name = "job"
    watches = (JOB, PODS)
    resource, kind, component = JOB, "Job", COMPONENT

    def __init__(self, client: Client, recorder: Recorder, timings: Timings) -> None:
        super().__init__(client, recorder)
        self.timings = timings
        self.namer = PodNamer(client)

    def sync(self, key: Key, job: Obj) -> float | None:
        if finished(job):
            return self._ttl(job)
        spec = job.get("spec") or {}
        pods = self.client.owned(PODS, job)
        active = [p for p in pods if pod_active(p)]
        if spec.get("suspend"):
            for p in active:
                self.client.delete(PODS, p)
            self._write(job, [], pods, suspended=True)
            return None
        succeeded = [p for p in pods if _phase(p) == "Succeeded"]
        failed = [p for p in pods if _phase(p) == "Failed"]
        restarts = sum(
            c.get("restartCount", 0)
            for p in pods
            for c in (p.get("status") or {}).get("containerStatuses") or []
        )
        failures = len(failed) + restarts
        old = job.get("status") or {}
        start = parse_time(old.get("startTime")) or now_utc()
        deadline = spec.get("activeDeadlineSeconds")
        if failures > int(spec.get("backoffLimit", 6)):
            return self._fail(
                job,
                active,
                pods,
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            )
        if deadline is not None and (now_utc() - start).total_seconds() >= int(deadline):
            return self._fail(
                job,
                active,
                pods,
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            )
        completions = spec.get("completions")
        indexed = spec.get("completionMode") == "Indexed"
        done_indexes = {p["metadata"].get("annotations", {}).get(INDEX) for p in succeeded}
        done = (
            len(done_indexes) >= int(completions)
            if indexed and completions
            else (
                len(succeeded) >= int(completions)
                if completions is not None
                else bool(succeeded) and not active
            )
        )
        if done:
            for p in active:
                self.client.delete(PODS, p)
            return self._complete(job, pods)
        parallelism = int(spec.get("parallelism", 1))
        want = (
            min(parallelism, int(completions) - len(succeeded))
            if completions is not None
            else (0 if succeeded else parallelism)
        )
        wait = self._backoff_left(failed, failures)
        if len(active) < want and wait <= 0:
            taken = {p["metadata"].get("annotations", {}).get(INDEX) for p in active} | done_indexes
            for _ in range(want - len(active)):
                index = (
                    next(
                        (str(i) for i in range(int(completions or want)) if str(i) not in taken),
                        None,
                    )
                    if indexed
                    else None
                )
                if indexed and index is None:
                    break
                active.append(self._create(job, index))
                taken.add(index)
        self._write(job, active, pods)
        return wait if wait > 0 else None

    def _backoff_left(self, failed: list[Obj], failures: int) -> float:
        if not failed:
            return 0.0
        last = max((parse_time(_finished_at(p)) or now_utc()).timestamp() for p in failed)
        return last + self.timings.back_off(failures) - time.time()

    def _create(self, job: Obj, index: str | None) -> Obj:
        meta = job["metadata"]
        labels = {
            "batch.kubernetes.io/controller-uid": meta["uid"],
            "batch.kubernetes.io/job-name": meta["name"],
            "controller-uid": meta["uid"],
            "job-name": meta["name"],
        }
        template = job["spec"].get("template") or {}
        name = self.namer.next(
            job
            if index is None
            else {**job, "metadata": {**meta, "name": f"{meta['name']}-{index}"}}
        )
        pod = pod_from_template(template, job, name, labels)
        if index is not None:
            pod["metadata"].setdefault("annotations", {})[INDEX] = index
            pod["metadata"]["labels"][INDEX] = index
            pod["spec"]["hostname"] = f"{meta['name']}-{index}"
            for c in pod["spec"].get("containers") or []:
                c.setdefault("env", []).append(
                    {
                        "name": "JOB_COMPLETION_INDEX",
                        "valueFrom": {
                            "fieldRef": {"fieldPath": f"metadata.annotations['{INDEX}']"}
                        },
                    }
                )
        created = self.client.create(PODS, meta["namespace"], pod)
        self.recorder.normal(job, "SuccessfulCreate", f"Created pod: {name}", component=COMPONENT)
        return created

    def _fail(
        self, job: Obj, active: list[Obj], pods: list[Obj], reason: str, message: str
    ) -> float | None:
        for p in active:
            self.client.delete(PODS, p)
        self.recorder.warning(job, reason, message, component=COMPONENT)
        now = fmt_time(now_utc())
        conditions = list((job.get("status") or {}).get("conditions") or [])
        conditions = set_condition(conditions, "FailureTarget", "True", reason, message, now)
        conditions = set_condition(conditions, "Failed", "True", reason, message, now)
        self._write(job, [], pods, conditions=conditions)
        return self._ttl(job)

    def _complete(self, job: Obj, pods: list[Obj]) -> float | None:
        self.recorder.normal(job, "Completed", "Job completed", component=COMPONENT)
        now = fmt_time(now_utc())
        conditions = list((job.get("status") or {}).get("conditions") or [])
        conditions = set_condition(
            conditions,
            "SuccessCriteriaMet",
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
            now,
        )
        conditions = set_condition(
            conditions,
            "Complete",
            "True",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
            now,
        )
        self._write(job, [], pods, conditions=conditions, completed=now)
        return self._ttl(job)

    def _write(
        self,
        job: Obj,
        active: list[Obj],
        pods: list[Obj],
        *,
        suspended: bool = False,
        conditions: list[Obj] | None = None,
        completed: str = "",
    ) -> None:
        live = self.client.get(JOB, job["metadata"]["namespace"], job["metadata"]["name"]) or job
        old = live.get("status") or {}
        status: Obj = (
            {"startTime": old.get("startTime") or fmt_time(now_utc())} if not suspended else {}
        )
        if completed:
            status["completionTime"] = completed
        status.update(
            {
                "active": len(active),
                "ready": sum(1 for p in active if pod_ready(p)),
                "succeeded": sum(1 for p in pods if _phase(p) == "Succeeded"),
                "failed": sum(1 for p in pods if _phase(p) == "Failed"),
                "terminating": 0,
                "uncountedTerminatedPods": {},
            }
        )
        status = {
            k: v
            for k, v in status.items()
            if v or k in ("ready", "terminating", "uncountedTerminatedPods")
        }
        if live["spec"].get("completionMode") == "Indexed":
            done = sorted(
                int(p["metadata"].get("annotations", {}).get(INDEX, -1))
                for p in pods
                if _phase(p) == "Succeeded"
            )
            if done:
                status["completedIndexes"] = ",".join(str(i) for i in done)
        now = fmt_time(now_utc())
        conds = conditions if conditions is not None else list(old.get("conditions") or [])
        if suspended:
            conds = set_condition(conds, "Suspended", "True", "JobSuspended", "Job suspended", now)
        elif condition(live, "Suspended") is not None:
            conds = set_condition(conds, "Suspended", "False", "JobResumed", "Job resumed", now)
        if conds:
            status["conditions"] = conds
        self.client.update_status(JOB, live, status)

    def _ttl(self, job: Obj) -> float | None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        live = self.client.get(JOB, job["metadata"]["namespace"], job["metadata"]["name"])
        if ttl is None or live is None:
            return None
        conds = [
            c
            for c in (live.get("status") or {}).get("conditions") or []
            if c.get("type") in ("Complete", "Failed")
        ]
        when = parse_time(conds[0].get("lastTransitionTime")) if conds else None
        left = int(ttl) - ((now_utc() - when).total_seconds() if when else 0)
        if left > 0:
            return left
        self.client.delete(JOB, live)
        return None


def _finished_at(pod: Obj) -> str | None:
    for c in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (c.get("state") or {}).get("terminated")
        if term:
            return str(term.get("finishedAt"))
    return None
