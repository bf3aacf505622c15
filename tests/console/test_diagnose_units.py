"""Diagnosis pieces without a cluster: redaction of what reaches a model, fingerprints."""

from __future__ import annotations

from console.diagnose.model import Evidence, Finding, ObjectRef, fingerprint
from console.diagnose.service import Diagnosis
from console.diagnose.summary import prompt, redact
from console.http.encode.diagnose import encode_finding


def test_credentials_never_reach_the_prompt() -> None:
    log = (
        "connecting with password=hunter2 and token: 'abc def'\n"
        "Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2ln\n"
        "dsn postgres://app:s3cr3t@db:5432/app api_key=AKIAXYZ, "
        "blob aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8gd29ybGQK\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
    )
    finding = Finding(
        "crash-loop",
        ObjectRef("Deployment", "broken", "api"),
        "container app keeps crashing: exit code 1 (Error)",
        Evidence(pods=("api-1",), previous_log=log),
    )
    text = prompt(Diagnosis("broken", [finding]), "alpha", encode_finding)[1]["content"]
    for secret in ("hunter2", "abc def", "eyJhbGciOi", "s3cr3t", "AKIAXYZ", "aGVsbG8g", "MIIEow"):
        assert secret not in text
    assert "Deployment" in text
    assert "exit code 1" in text
    assert redact("plain log line, nothing secret") == "plain log line, nothing secret"


def test_fingerprint_ignores_evidence_but_not_causes() -> None:
    ref = ObjectRef("Deployment", "broken", "api")
    first = Finding("crash-loop", ref, "exit code 1", Evidence(restarts=3))
    later = Finding("crash-loop", ref, "exit code 1", Evidence(restarts=9))
    other = Finding("crash-loop", ref, "exit code 2", Evidence(restarts=3))
    assert fingerprint([first]) == fingerprint([later])
    assert fingerprint([first]) != fingerprint([other])
