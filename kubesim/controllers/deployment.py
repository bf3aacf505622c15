"""The Deployment controller: rolls ReplicaSets the way ``kubectl rollout`` expects.

Each distinct pod template gets a ReplicaSet named ``<deploy>-<pod-template-hash>`` with a
``deployment.kubernetes.io/revision`` annotation; going back to an earlier template (``kubectl
rollout undo``) reuses that ReplicaSet and gives it the next revision. The Deployment's own
annotations (``kubernetes.io/change-cause`` among them, which ``rollout history`` shows) are copied
to the ReplicaSet of its current template, as the real controller copies them. ``RollingUpdate`` honours
``maxSurge``/``maxUnavailable`` with the real controller's arithmetic, ``Recreate`` scales the old
ones to zero first, ``paused`` only scales. Status and the ``Available``/``Progressing`` conditions
(including ``ProgressDeadlineExceeded``) are what kstatus, Helm and ``rollout status`` read.
"""

from __future__ import annotations

import copy

from kubesim.controllers.base import Key
from kubesim.controllers.client import owner_ref, template_hash
from kubesim.controllers.deploystatus import (
    DEPLOY,
    HASH,
    REVISION,
    deployment_status,
    revision_of,
    strip_hash,
    surge_and_unavailable,
)
from kubesim.controllers.replicaset import RS
from kubesim.controllers.workload import WorkloadController
from kubesim.store import Obj

COMPONENT = "deployment-controller"
# Deployment annotations the controller never copies to a ReplicaSet (its annotationsToSkip).
_NOT_COPIED = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        "deployment.kubernetes.io/revision-history",
        "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas",
        "deprecated.deployment.rollback.to",
    }
)


def copied_annotations(d: Obj) -> dict[str, str]:
    annotations = d["metadata"].get("annotations") or {}
    return {k: v for k, v in annotations.items() if k not in _NOT_COPIED}


class DeploymentController(WorkloadController):
    name = "deployment"
    watches = (DEPLOY, RS)
    resource, kind, component = DEPLOY, "Deployment", COMPONENT

    def sync(self, key: Key, d: Obj) -> float | None:
        spec = d.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        rss = sorted(self.client.owned(RS, d), key=revision_of)
        template = spec.get("template") or {}
        new = next(
            (r for r in rss if strip_hash(r["spec"].get("template")) == strip_hash(template)),
            None,
        )
        olds = [r for r in rss if r is not new]
        created = False
        if new is None and not spec.get("paused"):
            new, created = self._create_rs(d, rss), True
        elif new is not None and rss and revision_of(new) < revision_of(rss[-1]):
            new = self._bump_revision(new, revision_of(rss[-1]) + 1)
        if new is not None and not created:
            new = self._copy_annotations(d, new)
        if new is not None:
            self._annotate(d, new)
        if spec.get("paused"):
            if new is not None and new["spec"].get("replicas") != replicas and not olds:
                self._scale(d, new, replicas)
        elif spec.get("strategy", {}).get("type") == "Recreate":
            self._recreate(d, new, olds, replicas)  # type: ignore[arg-type]
        else:
            self._rolling(d, new, olds, replicas)  # type: ignore[arg-type]
        self._cleanup(d, olds)
        live = self.client.get(DEPLOY, *key)
        if live is None:
            return None
        status, wake = deployment_status(live, self.client.owned(RS, live), created)
        self.client.update_status(DEPLOY, live, status)
        return wake

    # -- ReplicaSets ----------------------------------------------------------------------------
    def _create_rs(self, d: Obj, rss: list[Obj]) -> Obj:
        spec, meta = d["spec"], d["metadata"]
        collisions = int((d.get("status") or {}).get("collisionCount") or 0)
        h = template_hash(spec.get("template") or {}, collisions)
        template = copy.deepcopy(spec.get("template") or {})
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH] = h
        surge, _ = surge_and_unavailable(d)
        replicas = int(spec.get("replicas", 1))
        revision = max((revision_of(r) for r in rss), default=0) + 1
        body = {
            "metadata": {
                "name": f"{meta['name']}-{h}",
                "labels": dict(template["metadata"]["labels"]),
                "annotations": {
                    **copied_annotations(d),
                    "deployment.kubernetes.io/desired-replicas": str(replicas),
                    "deployment.kubernetes.io/max-replicas": str(replicas + surge),
                    REVISION: str(revision),
                },
                "ownerReferences": [owner_ref(d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        return self.client.create(RS, meta["namespace"], body)

    def _bump_revision(self, rs: Obj, revision: int) -> Obj:
        new = copy.deepcopy(rs)
        annotations = new["metadata"].setdefault("annotations", {})
        history = [
            h
            for h in (annotations.get("deployment.kubernetes.io/revision-history") or "").split(",")
            if h
        ]
        annotations["deployment.kubernetes.io/revision-history"] = ",".join(
            [*history, annotations.get(REVISION, "")]
        )
        annotations[REVISION] = str(revision)
        return self.client.update(RS, new)

    def _copy_annotations(self, d: Obj, rs: Obj) -> Obj:
        current = rs["metadata"].get("annotations") or {}
        wanted = copied_annotations(d)
        if all(current.get(k) == v for k, v in wanted.items()):
            return rs
        new = copy.deepcopy(rs)
        new["metadata"]["annotations"] = {**current, **wanted}
        return self.client.update(RS, new)

    def _annotate(self, d: Obj, new: Obj) -> None:
        revision = str(revision_of(new))
        if (d["metadata"].get("annotations") or {}).get(REVISION) == revision:
            return
        updated = copy.deepcopy(d)
        updated["metadata"].setdefault("annotations", {})[REVISION] = revision
        self.client.update(DEPLOY, updated)

    def _scale(self, d: Obj, rs: Obj, replicas: int) -> Obj:
        old = int(rs["spec"].get("replicas", 0))
        if old == replicas:
            return rs
        new = copy.deepcopy(rs)
        new["spec"]["replicas"] = replicas
        annotations = new["metadata"].setdefault("annotations", {})
        desired = int(d["spec"].get("replicas", 1))
        annotations["deployment.kubernetes.io/desired-replicas"] = str(desired)
        annotations["deployment.kubernetes.io/max-replicas"] = str(
            desired + surge_and_unavailable(d)[0]
        )
        direction = "up" if replicas > old else "down"
        self.recorder.normal(
            d,
            "ScalingReplicaSet",
            f"Scaled {direction} replica set {rs['metadata']['name']} from {old} to {replicas}",
            component=COMPONENT,
        )
        return self.client.update(RS, new)

    # -- strategies -----------------------------------------------------------------------------
    def _recreate(self, d: Obj, new: Obj, olds: list[Obj], replicas: int) -> None:
        for old in olds:
            self._scale(d, old, 0)
        if any(int((o.get("status") or {}).get("replicas") or 0) for o in olds):
            return
        self._scale(d, new, replicas)

    def _rolling(self, d: Obj, new: Obj, olds: list[Obj], replicas: int) -> None:
        surge, unavailable = surge_and_unavailable(d)
        every = [new, *olds]
        total = sum(int(r["spec"].get("replicas", 0)) for r in every)
        current = int(new["spec"].get("replicas", 0))
        if current > replicas:
            new = self._scale(d, new, replicas)
        elif current < replicas and total < replicas + surge:
            new = self._scale(d, new, current + min(replicas + surge - total, replicas - current))
        live_olds = [o for o in olds if int(o["spec"].get("replicas", 0))]
        if not live_olds:
            return
        every = [new, *olds]
        total = sum(int(r["spec"].get("replicas", 0)) for r in every)
        min_available = replicas - unavailable
        new_unavailable = int(new["spec"].get("replicas", 0)) - int(
            (new.get("status") or {}).get("availableReplicas") or 0
        )
        budget = total - min_available - max(0, new_unavailable)
        for old in live_olds:  # oldest first: unhealthy replicas go before anything else
            if budget <= 0:
                return
            unhealthy = int(old["spec"]["replicas"]) - int(
                (old.get("status") or {}).get("availableReplicas") or 0
            )
            cut = min(budget, max(0, unhealthy))
            if cut:
                self._scale(d, old, int(old["spec"]["replicas"]) - cut)
                old["spec"]["replicas"] = int(old["spec"]["replicas"]) - cut
                budget -= cut
        available = sum(int((r.get("status") or {}).get("availableReplicas") or 0) for r in every)
        down = available - min_available
        for old in live_olds:
            if down <= 0:
                return
            cut = min(down, int(old["spec"]["replicas"]))
            if cut:
                self._scale(d, old, int(old["spec"]["replicas"]) - cut)
                down -= cut

    def _cleanup(self, d: Obj, olds: list[Obj]) -> None:
        limit = int(d["spec"].get("revisionHistoryLimit", 10))
        idle = [
            o
            for o in olds
            if not int(o["spec"].get("replicas", 0))
            and not int((o.get("status") or {}).get("replicas") or 0)
        ]
        for old in idle[: max(0, len(idle) - limit)]:
            self.client.delete(RS, old)
