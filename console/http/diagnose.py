"""Diagnosis routes: deterministic findings (``GET …/diagnose``), the LLM summary
(``POST …/diagnose/summary``, the only call that uses a model: admin, audited, 409
``ai-unavailable`` before anything is read or sent when no model is configured), and
remediations: proposals (read-only), a preview (``dryRun=All``, not audited) and the apply
(``confirm: true`` required; audited as ``remediate.<action>``).

The summary service (model client and cache) opens in this group's cleanup context.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from common.errors import BadRequest
from common.netguard import AddressPolicy
from common.openapi import validated
from console.audit import audited
from console.diagnose import remediations
from console.diagnose.llm import ChatClient, ModelEndpoint
from console.diagnose.service import diagnose
from console.diagnose.summary import Summaries
from console.errors import AiUnavailable
from console.http.clusterapi import target
from console.http.encode.diagnose import (
    encode_diagnosis,
    encode_finding,
    encode_outcome,
    encode_proposals,
)
from console.keys import OUTBOUND_ALLOW, SETTINGS, SUMMARIES

routes = web.RouteTableDef()
DIAGNOSE = "/clusters/{clusterId}/diagnose"


def setup(app: web.Application) -> None:
    app.cleanup_ctx.append(_summaries)


async def _summaries(app: web.Application) -> AsyncIterator[None]:
    svc = app[SETTINGS]
    client = None
    if svc.ai_enabled:
        assert svc.ai.model is not None
        assert svc.ai_base_url is not None
        endpoint = ModelEndpoint(
            svc.ai_base_url, svc.ai.model, svc.ai.api_key, svc.ai.timeout_seconds
        )
        policy = AddressPolicy(allow=app.get(OUTBOUND_ALLOW, ()))
        client = ChatClient(policy, endpoint=endpoint)
    app[SUMMARIES] = summaries = Summaries(client, encode_finding)
    try:
        yield
    finally:
        await summaries.close()


@routes.get(DIAGNOSE, name="diagnose")
async def diagnose_cluster(request: web.Request) -> web.Response:
    found = await target(request)
    result = await diagnose(found.api, validated(request).query.get("namespace"))
    summary = request.app[SUMMARIES].cached(found.cluster_id, result)
    return web.json_response(encode_diagnosis(found.cluster_id, result, summary))


@routes.post(DIAGNOSE + "/summary", name="summariseDiagnosis")
async def summarise_diagnosis(request: web.Request) -> web.Response:
    summaries = request.app[SUMMARIES]
    if summaries.client is None:
        raise AiUnavailable()
    found = await target(request)
    namespace = validated(request).query.get("namespace")
    where = namespace or "*"
    with audited(request, action="diagnose.summary", cluster=found.cluster_id, target=where):
        result = await diagnose(found.api, namespace)
        summary = await summaries.summarise(found.cluster_id, result)
    return web.json_response(encode_diagnosis(found.cluster_id, result, summary))


REMEDIATIONS = "/clusters/{clusterId}/remediations"


@routes.get(REMEDIATIONS, name="listRemediations")
async def list_remediations(request: web.Request) -> web.Response:
    found = await target(request)
    result = await diagnose(found.api, validated(request).query.get("namespace"))
    proposals = await remediations.propose(found.api, found.catalogs, result.findings)
    return web.json_response(encode_proposals(found.cluster_id, result, proposals))


@routes.post(REMEDIATIONS + "/preview", name="previewRemediation")
async def preview_remediation(request: web.Request) -> web.Response:
    found, body = await target(request), validated(request).body
    outcome = await remediations.run(found.api, found.catalogs, **_order(body), dry_run=True)
    return web.json_response(encode_outcome(outcome))


@routes.post(REMEDIATIONS + "/apply", name="applyRemediation")
async def apply_remediation(request: web.Request) -> web.Response:
    body = validated(request).body
    if body.get("confirm") is not True:
        raise BadRequest(
            "applying a remediation changes the cluster: send confirm=true (preview it first "
            "with POST …/remediations/preview)",
            code="confirmation-required",
        )
    found, order = await target(request), _order(body)
    where = f"{order['namespace']}/{order['target']}"
    action = f"remediate.{order['action']}"
    with audited(request, action=action, cluster=found.cluster_id, target=where):
        outcome = await remediations.run(found.api, found.catalogs, **order, dry_run=False)
    return web.json_response(encode_outcome(outcome))


def _order(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "namespace": body["namespace"],
        "action": body["action"],
        "target": body["target"],
        "params": body.get("params") or {},
    }
