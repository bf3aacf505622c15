"""Actions on cluster objects, each done exactly as kubectl does it (same requests, same bodies,
same annotations), so the cluster ends up where ``kubectl`` would have left it.

``objects`` holds delete, scale, rollout restart, suspend/resume and CronJob trigger; ``rollback``
holds ``rollout undo``; ``nodes`` holds cordon, uncordon and drain. Every action returns an
:class:`ActionResult`; refusals by the cluster propagate as ``cluster-refused`` problems. These
modules know nothing of HTTP or of the audit trail (the routes record outcomes).
"""

from __future__ import annotations

from typing import Any, TypedDict

import attrs


@attrs.frozen
class PodOutcome:
    """What a drain did with one pod."""

    namespace: str
    name: str
    outcome: str  # evicted | skipped | failed
    reason: str = ""


@attrs.frozen
class ActionResult:
    action: str
    resource_id: str
    namespace: str | None
    name: str
    message: str
    row: dict[str, Any] | None = None
    created: dict[str, Any] | None = None
    pods: tuple[PodOutcome, ...] = ()
    #: The object as the cluster answered the action (for previews; not part of the encoding).
    stored: dict[str, Any] | None = None


def dry_run_query(dry_run: bool) -> list[tuple[str, str]]:
    """The query that makes a write a server-side dry run (``dryRun=All``), or none."""
    return [("dryRun", "All")] if dry_run else []


class PodOutcomeBody(TypedDict):
    """``PodOutcome`` of ``spec/console.actions.yaml``."""

    namespace: str
    name: str
    outcome: str
    reason: str


def encode_pod(pod: PodOutcome) -> PodOutcomeBody:
    """A pod's outcome as a drain's answer and its ``drain-failed`` problem both list it: here,
    not in ``console.http.encode``, because the problem is built by :class:`nodes.DrainFailed`."""
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "outcome": pod.outcome,
        "reason": pod.reason,
    }


def kubectl_name(kind_name: str, group: str) -> str:
    """How kubectl names a kind in its messages: ``deployment.apps``, ``pod``."""
    return f"{kind_name.lower()}.{group}" if group else kind_name.lower()
