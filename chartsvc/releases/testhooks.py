"""``helm test`` results: each test hook of the release with its phase and its pod's logs.

Helm records each hook's last run (phase, start, end) in the release; a successful run returns the
logs as one text, each pod's under a ``POD LOGS: <name>`` line as the CLI prints them. A failing or
timed-out run returns no logs, yet that is when they matter: the logs of a test pod that did not
succeed are read from the cluster (Helm keeps test pods until the next run, unless the hook's delete
policy says otherwise). A hook Helm did not get to run reports phase ``Unknown``; Helm's reason for
a failed run is the ``message`` of each hook that did not succeed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from chartsvc.clusters import ClusterTarget
from chartsvc.helm import TestRun
from chartsvc.releases.model import Release, TestResult
from chartsvc.releases.reads import ClusterReads
from common.errors import WharfError

_POD_LOGS = re.compile(r"^POD LOGS: (\S+)\s*$", re.MULTILINE)


def split_logs(text: str) -> dict[str, str]:
    """Pod name → its logs, from Helm's ``--logs`` output."""
    marks = list(_POD_LOGS.finditer(text))
    ends = [mark.start() for mark in marks[1:]] + [len(text)] * bool(marks)
    return {
        mark.group(1): text[mark.end() : end].strip("\n") + "\n"
        for mark, end in zip(marks, ends, strict=True)
    }


def results(release: Release, run: TestRun) -> list[TestResult]:
    logs = split_logs(run.logs)
    out = []
    for hook in release.hooks:
        if "test" not in (hook.get("events") or ()):
            continue
        last: Mapping[str, Any] = hook.get("last_run") or {}
        phase = str(last.get("phase") or "Unknown")
        out.append(
            TestResult(
                name=str(hook.get("name", "")),
                kind=str(hook.get("kind", "")),
                phase=phase,
                started_at=last.get("started_at") or None,
                completed_at=last.get("completed_at") or None,
                logs=logs.get(str(hook.get("name")), ""),
                message=run.error if phase != "Succeeded" else None,
            )
        )
    return out


async def collect(
    reads: ClusterReads, target: ClusterTarget, release: Release, run: TestRun
) -> list[TestResult]:
    """:func:`results`, with the cluster's logs for test pods that did not succeed."""
    out = []
    for result in results(release, run):
        if not result.logs and result.kind == "Pod" and result.phase != "Succeeded":
            result = attrs.evolve(result, logs=await _logs(reads, target, release, result.name))
        out.append(result)
    return out


async def _logs(reads: ClusterReads, target: ClusterTarget, release: Release, pod: str) -> str:
    try:
        return await reads.pod_logs(target, release.namespace, pod) or ""
    except WharfError:  # logs are a courtesy: the phase and Helm's reason are the result
        return ""
