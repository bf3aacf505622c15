"""What a diagnosis finds: a :class:`Finding` (stable code, severity, object, one-line reason) and
its :class:`Evidence` (object events, the container's ``lastState`` and exit code, an excerpt of
the previous log, unschedulable reasons, endpoints, claim events).

Codes are stable and documented in ``spec/console.diagnose.yaml``; the reason line holds only what
identifies the cause (no counters or times), so the same fault gives the same finding and the same
fingerprint while it lasts, and the LLM summary cached for it stays valid.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


#: code → (severity, what it means); the contract of every finding a diagnosis can produce.
CODES: Mapping[str, tuple[Severity, str]] = {
    "crash-loop": (Severity.ERROR, "a container keeps exiting and is restarted with back-off"),
    "oom-killed": (Severity.ERROR, "a container was killed for exceeding its memory limit"),
    "image-pull": (Severity.ERROR, "a container image cannot be pulled"),
    "container-config": (Severity.ERROR, "a container cannot be created from its spec"),
    "unschedulable": (Severity.ERROR, "a pod fits on no node"),
    "not-ready": (Severity.WARNING, "a running pod fails its readiness probe"),
    "job-failed": (Severity.ERROR, "a Job gave up (backoff limit or deadline)"),
    "service-no-endpoints": (Severity.WARNING, "a Service selects pods but none is ready"),
    "service-no-pods": (Severity.WARNING, "a Service's selector matches no pod"),
    "pvc-pending": (Severity.ERROR, "a PersistentVolumeClaim is not bound"),
    "node-not-ready": (Severity.ERROR, "a node is not Ready"),
}


@attrs.frozen
class ObjectRef:
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@attrs.frozen
class EventNote:
    object: str
    type: str
    reason: str
    message: str
    count: int
    last_seen: str | None


@attrs.frozen
class Evidence:
    """Pointers to why: each field only when it applies."""

    pods: tuple[str, ...] = ()
    container: str | None = None
    events: tuple[EventNote, ...] = ()
    last_state: Mapping[str, Any] | None = None
    exit_code: int | None = None
    restarts: int | None = None
    previous_log: str | None = None
    message: str | None = None
    endpoints: Mapping[str, Any] | None = None


@attrs.frozen
class Finding:
    code: str
    object: ObjectRef
    reason: str
    evidence: Evidence = Evidence()

    @property
    def severity(self) -> Severity:
        return CODES[self.code][0]


def sort_key(finding: Finding) -> tuple[int, str, str, str, str]:
    ref = finding.object
    rank = 0 if finding.severity is Severity.ERROR else 1
    return (rank, ref.namespace or "", ref.kind, ref.name, finding.code)


def fingerprint(findings: list[Finding]) -> str:
    """Identity of a set of findings: codes, objects and reasons (not evidence, which moves)."""
    keys = sorted([f.code, str(f.object), f.reason] for f in findings)
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()
