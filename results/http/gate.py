"""``GET /gate``: the quality-gate verdict for the latest run of a commit or branch."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from common.openapi import validated
from results import gate, keys
from results.http.encode import pct
from results.http.viewer import can_read

routes = web.RouteTableDef()


@routes.get("/gate", name="getGate")
async def get_gate(request: web.Request) -> web.Response:
    query = gate.read_query(validated(request).query)
    settings = request.app[keys.SETTINGS].gate
    kept = request.app[keys.VERDICTS]
    verdict = await gate.evaluate(
        request.app[keys.STORE], settings, query, can_read=can_read(request), cache=kept
    )
    request.app[keys.METRICS].gave(verdict.status)
    body = kept.encoded(verdict, _json)
    return web.Response(body=body, content_type="application/json", charset="utf-8")


def _json(verdict: gate.Verdict) -> bytes:
    return json.dumps(encode_verdict(verdict)).encode("utf-8")


def encode_verdict(verdict: gate.Verdict) -> dict[str, Any]:
    run = verdict.run
    return {
        "project": run.project,
        "branch": run.branch,
        "commit": run.commit,
        "flag": run.flag,
        "runId": run.run_id,
        "status": verdict.status,
        "passed": verdict.passed,
        "coverageDelta": pct(verdict.coverage_delta),
        "lineCoveragePct": pct(run.line_coverage_pct),
        "tests": run.tests,
        "failures": run.failures,
        "errors": run.errors,
        "rules": [{"name": r.name, "passed": r.passed, "detail": r.detail} for r in verdict.rules],
        "runPath": run.run_path,
        "baseline": encode_baseline(verdict.baseline),
        "missingData": list(verdict.missing),
        "notes": list(verdict.notes),
    }


def encode_baseline(baseline: gate.Baseline | None) -> Mapping[str, Any] | None:
    if baseline is None:
        return None
    run = baseline.run
    return {
        "runId": run.run_id,
        "branch": run.branch,
        "commit": run.commit,
        "lineCoveragePct": pct(run.line_coverage_pct),
        "createdAt": run.created_at,
        "source": baseline.source,
        "runPath": run.run_path,
    }
