"""Read API of one run: ``/runs/{id}`` with its failures, ``/runs/{id}/compare`` against its
baseline. This module must not decide visibility or hold SQL."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import validated
from results import browse, compare, fields, keys
from results.http.encode import encode_change, encode_file, encode_problem_case, encode_run, pct
from results.http.gate import encode_baseline
from results.http.viewer import can_read

routes = web.RouteTableDef()


@routes.get("/runs/{runId}", name="getRun")
async def get_run(request: web.Request) -> web.Response:
    run_id = validated(request).path["runId"]
    found = await browse.run_failures(request.app[keys.READS], run_id, can_read=can_read(request))
    body = {
        **encode_run(found.run),
        "problems": [encode_problem_case(found.run, case) for case in found.cases],
        "problemsTotal": found.total,
    }
    return web.json_response(body)


@routes.get("/runs/{runId}/compare", name="compareRun")
async def compare_run(request: web.Request) -> web.Response:
    args = validated(request)
    base_sha = fields.read_query(args.query).get("baseSha")
    found = await compare.compare(
        request.app[keys.STORE],
        request.app[keys.READS],
        request.app[keys.SETTINGS].gate,
        args.path["runId"],
        base_sha=base_sha,
        can_read=can_read(request),
    )
    return web.json_response(encode_comparison(found))


def encode_comparison(found: compare.Comparison) -> dict[str, Any]:
    return {
        "run": encode_run(found.run),
        "baseline": encode_baseline(found.baseline),
        "notes": list(found.notes),
        "coverageDelta": pct(found.coverage_delta),
        "newFailures": [encode_change(c) for c in found.new_failures],
        "stillFailing": [encode_change(c) for c in found.still_failing],
        "fixed": [encode_change(c) for c in found.fixed],
        "gone": [encode_change(c) for c in found.gone],
        "counts": found.counts,
        "files": [encode_file(f) for f in found.files],
        "filesChanged": found.files_changed,
    }
