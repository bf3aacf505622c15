"""``GET /gate``: the quality-gate verdict for the latest run of a commit or branch."""

from __future__ import annotations

import json

from aiohttp import web

from common.app import encoded_json
from common.openapi import validated
from results import accounts, gate, keys
from results.auth import can_read, principal
from results.encoders import encode_verdict

routes = web.RouteTableDef()


@routes.get("/gate", name="getGate")
async def get_gate(request: web.Request) -> web.Response:
    app = request.app  # a property: read once
    asked = validated(request).query
    kept = app[keys.VERDICTS]
    # Read before judging: a commit meanwhile leaves what is made here already stale.
    version = app[keys.STORE].data_version()
    made = kept.made(asked, version)
    if made is None or not accounts.can_read(principal(request), made.project):
        query = gate.read_query(asked)
        verdict = await gate.evaluate(
            app[keys.STORE], app[keys.SETTINGS].gate, query, can_read=can_read(request), cache=kept
        )
        body = json.dumps(encode_verdict(verdict)).encode("utf-8")
        kept.keep_made(asked, version, query, verdict, body)
    else:
        verdict, body = made.verdict, made.body
    app[keys.METRICS].gave(verdict.status)
    return encoded_json(body)
