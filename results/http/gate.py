"""``GET /gate``: the quality-gate verdict for the latest run of a commit or branch."""

from __future__ import annotations

import json

from aiohttp import web

from common.app import encoded_json
from common.openapi import validated
from results import gate, keys
from results.auth import can_read
from results.encoders import encode_verdict

routes = web.RouteTableDef()


@routes.get("/gate", name="getGate")
async def get_gate(request: web.Request) -> web.Response:
    app = request.app  # a property: read once
    query = gate.read_query(validated(request).query)
    kept = app[keys.VERDICTS]
    verdict = await gate.evaluate(
        app[keys.STORE], app[keys.SETTINGS].gate, query, can_read=can_read(request), cache=kept
    )
    app[keys.METRICS].gave(verdict.status)
    body = kept.encoded(verdict, _json)
    return encoded_json(body)


def _json(verdict: gate.Verdict) -> bytes:
    return json.dumps(encode_verdict(verdict)).encode("utf-8")
