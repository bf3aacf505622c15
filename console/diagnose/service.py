"""Diagnose one cluster (or one namespace of it): read, analyse, fetch the wanted log excerpts.

Deterministic: the same cluster state gives the same findings in the same order. It never calls a
model; the summary cache is only read (``console.diagnose.summary``).
"""

from __future__ import annotations

import asyncio

import attrs

from console.diagnose import snapshot
from console.diagnose.analyzers import analyse, with_log
from console.diagnose.model import Finding, fingerprint
from console.resources.kubeapi import KubeApi

#: Log excerpts fetched at once.
LOG_CONCURRENCY = 8


@attrs.frozen
class Diagnosis:
    namespace: str | None
    findings: list[Finding]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.findings)


async def diagnose(api: KubeApi, namespace: str | None) -> Diagnosis:
    snap = await snapshot.read(api, namespace)
    findings, wanted = analyse(snap)
    gate = asyncio.Semaphore(LOG_CONCURRENCY)

    async def fetch(ns: str, pod: str, container: str, previous: bool) -> str | None:
        async with gate:
            return await snapshot.log_tail(api, ns, pod, container, previous=previous)

    logs = await asyncio.gather(
        *(fetch(w.namespace, w.pod, w.container, w.previous) for w in wanted)
    )
    for want, text in zip(wanted, logs, strict=True):
        findings[want.index] = with_log(findings[want.index], text)
    return Diagnosis(namespace, findings)
