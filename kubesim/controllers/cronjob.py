"""The CronJob controller: creates Jobs on real-time schedules and keeps their history short.

Schedules are evaluated in ``spec.timeZone`` (UTC by default) against the wall clock; a Job is
named ``<cronjob>-<minutes since epoch>`` and annotated with its scheduled time. ``suspend``,
``startingDeadlineSeconds``, the ``Allow``/``Forbid``/``Replace`` concurrency policies and the
successful/failed history limits behave as in 1.32. A Job someone created by hand with
``cronjob.kubernetes.io/instantiate: manual`` (``kubectl create job --from=cronjob/x``) is owned
by the CronJob: it is pruned with the history and, like the real controller, reported with an
``UnexpectedJob`` event rather than tracked as active. The controller sleeps until the next
scheduled minute; it never polls.
"""

from __future__ import annotations

import copy
import datetime
import time
import zoneinfo
from collections.abc import Callable

from kubesim.controllers.base import Key
from kubesim.controllers.client import Client, fmt_time, owner_ref, parse_time
from kubesim.controllers.events import Recorder
from kubesim.controllers.job import JOB, finished
from kubesim.controllers.workload import WorkloadController
from kubesim.machinery import cron
from kubesim.store import Obj

CRONJOB = ("batch", "cronjobs")
COMPONENT = "cronjob-controller"
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 100


class CronJobController(WorkloadController):
    name = "cronjob"
    watches = (CRONJOB, JOB)
    resource, kind, component = CRONJOB, "CronJob", COMPONENT

    def __init__(
        self, client: Client, recorder: Recorder, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(client, recorder)
        self.clock = clock

    def sync(self, key: Key, cj: Obj) -> float | None:
        spec, old = cj.get("spec") or {}, cj.get("status") or {}
        jobs = self.client.owned(JOB, cj)
        status = self._track(cj, jobs, old)
        self._prune(cj, jobs)
        try:
            schedule = cron.parse(str(spec.get("schedule", "")))
            tz = zoneinfo.ZoneInfo(spec["timeZone"]) if spec.get("timeZone") else datetime.UTC
        except (cron.CronError, zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            self.recorder.warning(
                cj,
                "UnparseableSchedule",
                f"unparseable schedule: {spec.get('schedule')!r} : {exc}",
                component=COMPONENT,
            )
            self._write(cj, status)
            return None
        now = datetime.datetime.fromtimestamp(self.clock(), tz)
        if spec.get("suspend"):
            self._write(cj, status)
            return None
        last = (
            parse_time(status.get("lastScheduleTime"))
            or parse_time(cj["metadata"].get("creationTimestamp"))
            or now
        )
        due = self._due(schedule, last.astimezone(tz), now)
        if due is not None:
            deadline = spec.get("startingDeadlineSeconds")
            if deadline is not None and (now - due).total_seconds() > int(deadline):
                self.recorder.warning(
                    cj,
                    "MissSchedule",
                    f"Missed scheduled time to start a job: {fmt_time(due)}",
                    component=COMPONENT,
                )
                status["lastScheduleTime"] = fmt_time(due)
            else:
                status = self._run(cj, due, status)
        self._write(cj, status)
        nxt = schedule.next_after(now)
        return None if nxt is None else max(0.05, nxt.timestamp() - self.clock() + 0.05)

    @staticmethod
    def _due(
        schedule: cron.Schedule, last: datetime.datetime, now: datetime.datetime
    ) -> datetime.datetime | None:
        """The most recent scheduled time in (last, now], if any."""
        due = None
        t = schedule.next_after(last)
        for _ in range(MAX_MISSED):
            if t is None or t > now:
                break
            due, t = t, schedule.next_after(t)
        return due

    def _run(self, cj: Obj, due: datetime.datetime, status: Obj) -> Obj:
        policy = cj["spec"].get("concurrencyPolicy", "Allow")
        active = status.get("active") or []
        if active and policy == "Forbid":
            return status
        if active and policy == "Replace":
            for ref in active:
                job = self.client.get(JOB, cj["metadata"]["namespace"], ref["name"])
                if job is not None:
                    self.delete_owned(cj, JOB, job, f"Deleted job {ref['name']}")
            active = []
        template = cj["spec"].get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        name = f"{cj['metadata']['name']}-{int(due.timestamp()) // 60}"
        body = {
            "metadata": {
                "name": name,
                "labels": dict(tmeta.get("labels") or {}),
                "annotations": {**(tmeta.get("annotations") or {}), SCHEDULED: fmt_time(due)},
                "ownerReferences": [owner_ref(cj)],
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        if self.client.get(JOB, cj["metadata"]["namespace"], name) is None:
            job = self.client.create(JOB, cj["metadata"]["namespace"], body)
            self.recorder.normal(cj, "SuccessfulCreate", f"Created job {name}", component=COMPONENT)
            active = [*active, _ref(job)]
        return {**status, "active": active, "lastScheduleTime": fmt_time(due)}

    def _track(self, cj: Obj, jobs: list[Obj], old: Obj) -> Obj:
        status = copy.deepcopy(old)
        by_uid = {j["metadata"]["uid"]: j for j in jobs}
        active = []
        for ref in old.get("active") or []:
            job = by_uid.get(ref.get("uid"))
            if job is None:
                continue
            outcome = finished(job)
            if outcome:
                self.recorder.normal(
                    cj,
                    "SawCompletedJob",
                    f"Saw completed job: {job['metadata']['name']}, status: {outcome}",
                    component=COMPONENT,
                )
            else:
                active.append(ref)
        tracked = {r.get("uid") for r in active}
        for job in jobs:
            if (
                job["metadata"]["uid"] not in tracked
                and not finished(job)
                and job["metadata"]["uid"] not in {r.get("uid") for r in old.get("active") or []}
            ):
                self.recorder.warning(
                    cj,
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job['metadata']['name']}",
                    component=COMPONENT,
                )
        status["active"] = active
        done = [
            parse_time((j.get("status") or {}).get("completionTime"))
            for j in jobs
            if finished(j) == "Complete"
        ]
        latest = max((d for d in done if d is not None), default=None)
        if latest is not None:
            status["lastSuccessfulTime"] = fmt_time(latest)
        return status

    def _prune(self, cj: Obj, jobs: list[Obj]) -> None:
        spec = cj.get("spec") or {}
        for outcome, field, default in (
            ("Complete", "successfulJobsHistoryLimit", 3),
            ("Failed", "failedJobsHistoryLimit", 1),
        ):
            done = sorted(
                (j for j in jobs if finished(j) == outcome),
                key=lambda j: (
                    (j.get("status") or {}).get("startTime")
                    or j["metadata"].get("creationTimestamp", "")
                ),
            )
            limit = int(spec.get(field, default))
            for job in done[: max(0, len(done) - limit)]:
                self.delete_owned(cj, JOB, job, f"Deleted job {job['metadata']['name']}")

    def _write(self, cj: Obj, status: Obj) -> None:
        if not status.get("active"):
            status.pop("active", None)
        live = self.client.get(CRONJOB, cj["metadata"]["namespace"], cj["metadata"]["name"])
        if live is not None:
            self.client.update_status(CRONJOB, live, status)


def _ref(job: Obj) -> Obj:
    meta = job["metadata"]
    return {
        "kind": "Job",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": "batch/v1",
        "resourceVersion": meta["resourceVersion"],
    }
