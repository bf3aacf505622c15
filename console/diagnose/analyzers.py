"""Findings from a :class:`~console.diagnose.snapshot.Snapshot`: pure functions, no I/O.

The failure taxonomy (research: KW's, k8sgpt's analyzers, Popeye's checks): a crash-looping
container is explained by its ``lastState.terminated`` (OOMKilled is its own finding) and its
previous log; a pod that fits nowhere by its ``PodScheduled`` condition and FailedScheduling
events; a pending claim by its events; a Service without ready endpoints by ``notReadyAddresses``.
A pod's finding is reported on the workload that owns it (a Deployment through its ReplicaSet, a
StatefulSet, a DaemonSet), once for all its pods, naming the pods in the evidence. Pods of Jobs
are judged through their Job. Each finding names the one log excerpt it wants (``LogWanted``); the
caller fetches those and fills them in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from console.diagnose.model import EventNote, Evidence, Finding, ObjectRef, sort_key
from console.diagnose.snapshot import Obj, Snapshot

MAX_EVENTS = 5
#: Restarts after which a running container whose last run failed counts as crash-looping.
RELAPSES = 3
PULL_REASONS = frozenset(
    {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"}
)
CONFIG_REASONS = frozenset(
    {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}
)


@attrs.frozen
class LogWanted:
    """Finding ``index`` wants the tail of this container's log (``previous``: the last run's)."""

    index: int
    namespace: str
    pod: str
    container: str
    previous: bool


def analyse(snap: Snapshot) -> tuple[list[Finding], list[LogWanted]]:
    events = _EventIndex(snap.events)
    owners = _Owners(snap.replicasets)
    found: list[tuple[Finding, tuple[str, str, bool] | None]] = []
    found += _pods(snap, events, owners)
    found += _jobs(snap, events)
    found += _services(snap, events)
    found += _claims(snap, events)
    found += _nodes(snap, events)
    found.sort(key=lambda pair: sort_key(pair[0]))
    findings = [f for f, _ in found]
    wanted = [
        LogWanted(i, f.object.namespace or "", pod, container, previous)
        for i, (f, log) in enumerate(found)
        if log is not None
        for pod, container, previous in [log]
    ]
    return findings, wanted


def with_log(finding: Finding, text: str | None) -> Finding:
    return attrs.evolve(finding, evidence=attrs.evolve(finding.evidence, previous_log=text))


# -- pods ------------------------------------------------------------------------------------


@attrs.frozen
class _PodProblem:
    code: str
    reason: str
    container: str | None = None
    last_state: Mapping[str, Any] | None = None
    exit_code: int | None = None
    restarts: int | None = None
    message: str | None = None
    log: bool = False  # the previous run's log explains it


def _pods(
    snap: Snapshot, events: _EventIndex, owners: _Owners
) -> Iterator[tuple[Finding, tuple[str, str, bool] | None]]:
    groups: dict[tuple[str, ObjectRef], list[tuple[Obj, _PodProblem]]] = defaultdict(list)
    for pod in snap.pods:
        owner = owners.workload(pod)
        if owner is not None and owner.kind == "Job":
            continue  # judged through the Job
        problem = pod_problem(pod)
        if problem is not None:
            groups[(problem.code, owner or _ref("Pod", pod))].append((pod, problem))
    for (code, ref), members in groups.items():
        members.sort(key=lambda m: _name(m[0]))
        pod, problem = members[0]
        notes = events.about([("Pod", _name(m[0])) for m in members] + [(ref.kind, ref.name)])
        evidence = Evidence(
            pods=tuple(_name(m[0]) for m in members),
            container=problem.container,
            events=notes,
            last_state=problem.last_state,
            exit_code=problem.exit_code,
            restarts=problem.restarts,
            message=problem.message,
        )
        log = (_name(pod), problem.container, True) if problem.log and problem.container else None
        yield Finding(code, ref, problem.reason, evidence), log


def pod_problem(pod: Obj) -> _PodProblem | None:
    """The one thing most wrong with ``pod``, or None when nothing is."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed") or _meta(pod).get("deletionTimestamp"):
        return None
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    for cs in statuses:
        found = _container_problem(cs)
        if found is not None:
            return found
    scheduled = _condition(status, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        message = str(scheduled.get("message") or scheduled.get("reason") or "")
        return _PodProblem(
            "unschedulable", f"no node fits the pod: {_first_line(message)}", message=message
        )
    ready = _condition(status, "Ready")
    running = status.get("phase") == "Running" and statuses
    if running and ready is not None and ready.get("status") == "False":
        waiting = [
            cs["name"]
            for cs in statuses
            if not cs.get("ready") and (cs.get("state") or {}).get("running")
        ]
        if waiting:
            return _PodProblem(
                "not-ready",
                f"container {waiting[0]} runs but is not ready (readiness probe failing)",
                container=waiting[0],
                message=str(ready.get("message") or ""),
            )
    return None


def _container_problem(cs: Obj) -> _PodProblem | None:
    name = cs.get("name", "")
    state = cs.get("state") or {}
    waiting = state.get("waiting") or {}
    last = (cs.get("lastState") or {}).get("terminated")
    restarts = int(cs.get("restartCount") or 0)
    w_reason = waiting.get("reason")
    if w_reason in PULL_REASONS:
        image = cs.get("image", "")
        return _PodProblem(
            "image-pull",
            f"image {image} of container {name} cannot be pulled",
            container=name,
            message=f"{w_reason}: {waiting.get('message') or ''}".rstrip(": "),
        )
    if w_reason in CONFIG_REASONS:
        return _PodProblem(
            "container-config",
            f"container {name} cannot be created ({w_reason})",
            container=name,
            message=waiting.get("message"),
        )
    oom = bool(last and last.get("reason") == "OOMKilled") or (
        (state.get("terminated") or {}).get("reason") == "OOMKilled"
    )
    if oom:
        return _PodProblem(
            "oom-killed",
            f"container {name} was OOMKilled: it exceeds its memory limit",
            container=name,
            last_state=last,
            exit_code=_exit(last),
            restarts=restarts,
            log=True,
        )
    # Between back-offs the container runs for a moment: it still crash-loops.
    relapsing = restarts >= RELAPSES and last is not None and _exit(last) != 0
    if w_reason == "CrashLoopBackOff" or relapsing:
        code = _exit(last)
        why = f"exit code {code} ({last.get('reason') or 'Error'})" if last else "it keeps exiting"
        return _PodProblem(
            "crash-loop",
            f"container {name} keeps crashing: {why}",
            container=name,
            last_state=last,
            exit_code=code,
            restarts=restarts,
            message=waiting.get("message"),
            log=True,
        )
    return None


# -- jobs, services, claims, nodes -----------------------------------------------------------


def _jobs(
    snap: Snapshot, events: _EventIndex
) -> Iterator[tuple[Finding, tuple[str, str, bool] | None]]:
    by_job: dict[str, list[Obj]] = defaultdict(list)
    for pod in snap.pods:
        for ref in _meta(pod).get("ownerReferences") or []:
            if ref.get("kind") == "Job":
                by_job[f"{_meta(pod).get('namespace')}/{ref.get('name')}"].append(pod)
    for job in snap.jobs:
        failed = _condition(job.get("status") or {}, "Failed")
        if failed is None or failed.get("status") != "True":
            continue
        ref = _ref("Job", job)
        pods = sorted(by_job.get(f"{ref.namespace}/{ref.name}", []), key=_created)
        last_pod = pods[-1] if pods else None
        term, container = _terminated(last_pod) if last_pod is not None else (None, None)
        evidence = Evidence(
            pods=tuple(_name(p) for p in pods),
            container=container,
            events=events.about([("Job", ref.name), *(("Pod", _name(p)) for p in pods)]),
            last_state=term,
            exit_code=_exit(term),
            restarts=int((job.get("status") or {}).get("failed") or 0),
            message=str(failed.get("message") or ""),
        )
        why = failed.get("reason") or "Failed"
        log = (_name(last_pod), container, False) if last_pod is not None and container else None
        yield Finding("job-failed", ref, f"the Job failed ({why})", evidence), log


def _services(snap: Snapshot, events: _EventIndex) -> Iterator[tuple[Finding, None]]:
    endpoints = {(_meta(e).get("namespace"), _name(e)): e for e in snap.endpoints}
    for svc in snap.services:
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector or (svc.get("spec") or {}).get("type") == "ExternalName":
            continue
        ref = _ref("Service", svc)
        matching = [
            p
            for p in snap.pods
            if _meta(p).get("namespace") == ref.namespace
            and all((_meta(p).get("labels") or {}).get(k) == v for k, v in selector.items())
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        notes = events.about([("Service", ref.name), ("Endpoints", ref.name)])
        shown = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        if not matching:
            evidence = Evidence(
                events=notes, endpoints={"selector": shown, "ready": 0, "notReady": []}
            )
            yield (
                Finding("service-no-pods", ref, f"selector {shown} matches no pod", evidence),
                None,
            )
            continue
        ready, not_ready = _addresses(endpoints.get((ref.namespace, ref.name)))
        if ready:
            continue
        evidence = Evidence(
            pods=tuple(sorted(_name(p) for p in matching)),
            events=notes,
            endpoints={"selector": shown, "ready": 0, "notReady": not_ready},
        )
        reason = f"none of the {len(matching)} selected pods is ready"
        yield Finding("service-no-endpoints", ref, reason, evidence), None


def _claims(snap: Snapshot, events: _EventIndex) -> Iterator[tuple[Finding, None]]:
    for claim in snap.claims:
        if (claim.get("status") or {}).get("phase") not in (None, "Pending"):
            continue
        ref = _ref("PersistentVolumeClaim", claim)
        notes = events.about([("PersistentVolumeClaim", ref.name)])
        warning = next((n for n in notes if n.type == "Warning"), None)
        why = (
            f"{warning.reason}: {_first_line(warning.message)}"
            if warning
            else "no volume bound yet"
        )
        evidence = Evidence(events=notes, message=warning.message if warning else None)
        yield Finding("pvc-pending", ref, f"the claim is Pending ({why})", evidence), None


def _nodes(snap: Snapshot, events: _EventIndex) -> Iterator[tuple[Finding, None]]:
    for node in snap.nodes:
        ready = _condition(node.get("status") or {}, "Ready")
        if ready is not None and ready.get("status") == "True":
            continue
        ref = ObjectRef("Node", None, _name(node))
        why = (ready or {}).get("reason") or "no Ready condition"
        evidence = Evidence(
            events=events.about([("Node", ref.name)]), message=(ready or {}).get("message")
        )
        yield Finding("node-not-ready", ref, f"the node is not Ready ({why})", evidence), None


# -- helpers ---------------------------------------------------------------------------------


class _Owners:
    """Which workload owns a pod: ReplicaSets are followed up to their Deployment."""

    def __init__(self, replicasets: Iterable[Obj]) -> None:
        self._rs = {(_meta(rs).get("namespace"), _name(rs)): rs for rs in replicasets}

    def workload(self, pod: Obj) -> ObjectRef | None:
        namespace = _meta(pod).get("namespace")
        ref = _controller(pod)
        if ref is None:
            return None
        if ref["kind"] == "ReplicaSet":
            rs = self._rs.get((namespace, ref["name"]))
            above = _controller(rs) if rs is not None else None
            if above is not None:
                ref = above
        return ObjectRef(ref["kind"], namespace, ref["name"])


class _EventIndex:
    def __init__(self, events: Iterable[Obj]) -> None:
        self._by: dict[tuple[str, str, str], list[Obj]] = defaultdict(list)
        for ev in events:
            inv = ev.get("involvedObject") or ev.get("regarding") or {}
            key = (inv.get("namespace") or "", inv.get("kind", ""), inv.get("name", ""))
            self._by[key].append(ev)
        self._namespaces = {k[0] for k in self._by}

    def about(self, objects: Iterable[tuple[str, str]]) -> tuple[EventNote, ...]:
        found = [
            ev
            for kind, name in dict.fromkeys(objects)
            for ns in self._namespaces
            for ev in self._by.get((ns, kind, name), [])
        ]
        found.sort(key=lambda ev: (ev.get("type") != "Warning", _negated(_seen(ev))))
        return tuple(_note(ev) for ev in found[:MAX_EVENTS])


def _note(ev: Obj) -> EventNote:
    inv = ev.get("involvedObject") or ev.get("regarding") or {}
    return EventNote(
        object=f"{inv.get('kind', '')}/{inv.get('name', '')}",
        type=ev.get("type") or "Normal",
        reason=ev.get("reason") or "",
        message=_first_line(ev.get("message") or ev.get("note") or "", limit=500),
        count=int(ev.get("count") or (ev.get("series") or {}).get("count") or 1),
        last_seen=_seen(ev) or None,
    )


def _seen(ev: Obj) -> str:
    return str(
        ev.get("lastTimestamp") or ev.get("eventTime") or _meta(ev).get("creationTimestamp") or ""
    )


def _negated(stamp: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in stamp)


def _controller(obj: Obj) -> Obj | None:
    refs = _meta(obj).get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def _terminated(pod: Obj) -> tuple[Mapping[str, Any] | None, str | None]:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get(
            "terminated"
        )
        if term:
            return term, cs.get("name")
    return None, None


def _condition(status: Obj, kind: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def _addresses(endpoints: Obj | None) -> tuple[int, list[str]]:
    ready, not_ready = 0, []
    for subset in (endpoints or {}).get("subsets") or []:
        ready += len(subset.get("addresses") or [])
        for addr in subset.get("notReadyAddresses") or []:
            target = (addr.get("targetRef") or {}).get("name")
            not_ready.append(
                f"{addr.get('ip', '?')} ({target})" if target else str(addr.get("ip", "?"))
            )
    return ready, sorted(not_ready)


def _exit(term: Mapping[str, Any] | None) -> int | None:
    code = (term or {}).get("exitCode")
    return int(code) if isinstance(code, int) else None


def _first_line(text: str, *, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def _ref(kind: str, obj: Obj) -> ObjectRef:
    return ObjectRef(kind, _meta(obj).get("namespace"), _name(obj))


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name", ""))


def _created(obj: Obj) -> str:
    return str(_meta(obj).get("creationTimestamp") or "")
