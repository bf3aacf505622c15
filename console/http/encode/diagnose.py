"""Diagnoses, their LLM summary and remediations (``spec/console.diagnose.yaml``).

:func:`encode_finding` is also what the LLM summary is told about each finding: ``console.http``
hands it to :class:`~console.diagnose.summary.Summaries`, so the model sees the findings exactly
as the API shows them (after redaction) while the domain never imports this layer.
"""

from __future__ import annotations

from typing import Any, TypedDict

from console.diagnose.model import EventNote, Evidence, Finding, ObjectRef, Severity
from console.diagnose.remediations import Outcome, Proposal
from console.diagnose.service import Diagnosis
from console.diagnose.summary import Summary
from console.http.encode import utc_stamp


class ObjectRefBody(TypedDict):
    kind: str
    namespace: str | None
    name: str


class EventNoteBody(TypedDict):
    object: str
    type: str
    reason: str
    message: str
    count: int
    lastSeen: str | None


class EvidenceBody(TypedDict):
    pods: list[str]
    container: str | None
    events: list[EventNoteBody]
    lastState: dict[str, Any] | None
    exitCode: int | None
    restarts: int | None
    previousLog: str | None
    message: str | None
    endpoints: dict[str, Any] | None


class FindingBody(TypedDict):
    code: str
    severity: str
    object: ObjectRefBody
    reason: str
    evidence: EvidenceBody


class SummaryBody(TypedDict):
    fingerprint: str
    text: str
    model: str
    createdAt: str
    promptTokens: int | None
    completionTokens: int | None


class DiagnosisBody(TypedDict):
    cluster: str
    namespace: str | None
    fingerprint: str
    counts: dict[str, int]
    findings: list[FindingBody]
    summary: SummaryBody | None


class RemediationProposal(TypedDict):
    action: str
    namespace: str
    target: str
    finding: str
    description: str
    params: dict[str, Any]


class RemediationList(TypedDict):
    cluster: str
    namespace: str | None
    fingerprint: str
    proposals: list[RemediationProposal]


class RemediationOutcome(TypedDict):
    action: str
    namespace: str
    target: str
    dryRun: bool
    message: str
    object: dict[str, Any] | None
    diff: str


def encode_ref(ref: ObjectRef) -> ObjectRefBody:
    return {"kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def encode_event_note(note: EventNote) -> EventNoteBody:
    return {
        "object": note.object,
        "type": note.type,
        "reason": note.reason,
        "message": note.message,
        "count": note.count,
        "lastSeen": note.last_seen,
    }


def encode_evidence(evidence: Evidence) -> EvidenceBody:
    return {
        "pods": list(evidence.pods),
        "container": evidence.container,
        "events": [encode_event_note(e) for e in evidence.events],
        "lastState": _mapping(evidence.last_state),
        "exitCode": evidence.exit_code,
        "restarts": evidence.restarts,
        "previousLog": evidence.previous_log,
        "message": evidence.message,
        "endpoints": _mapping(evidence.endpoints),
    }


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if value is not None else None


def encode_finding(finding: Finding) -> FindingBody:
    return {
        "code": finding.code,
        "severity": finding.severity.value,
        "object": encode_ref(finding.object),
        "reason": finding.reason,
        "evidence": encode_evidence(finding.evidence),
    }


def encode_summary(summary: Summary) -> SummaryBody:
    return {
        "fingerprint": summary.fingerprint,
        "text": summary.text,
        "model": summary.model,
        "createdAt": utc_stamp(summary.created),
        "promptTokens": summary.prompt_tokens,
        "completionTokens": summary.completion_tokens,
    }


def encode_diagnosis(cluster: str, found: Diagnosis, summary: Summary | None) -> DiagnosisBody:
    return {
        "cluster": cluster,
        "namespace": found.namespace,
        "fingerprint": found.fingerprint,
        "counts": {s.value: sum(f.severity is s for f in found.findings) for s in Severity},
        "findings": [encode_finding(f) for f in found.findings],
        "summary": encode_summary(summary) if summary is not None else None,
    }


def encode_proposal(proposal: Proposal) -> RemediationProposal:
    return {
        "action": proposal.action,
        "namespace": proposal.namespace,
        "target": proposal.target,
        "finding": proposal.finding,
        "description": proposal.description,
        "params": dict(proposal.params),
    }


def encode_proposals(cluster: str, found: Diagnosis, proposals: list[Proposal]) -> RemediationList:
    return {
        "cluster": cluster,
        "namespace": found.namespace,
        "fingerprint": found.fingerprint,
        "proposals": [encode_proposal(p) for p in proposals],
    }


def encode_outcome(outcome: Outcome) -> RemediationOutcome:
    return {
        "action": outcome.action,
        "namespace": outcome.namespace,
        "target": outcome.target,
        "dryRun": outcome.dry_run,
        "message": outcome.message,
        "object": outcome.object,
        "diff": outcome.diff,
    }
