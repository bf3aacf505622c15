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
from console.diagnose.model import Severity
from console.diagnose.service import Diagnosis, diagnose
from console.diagnose.summary import Summaries, Summary
from console.errors import AiUnavailable
from console.http.clusterapi import target
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
    app[SUMMARIES] = summaries = Summaries(client)
    try:
        yield
    finally:
        await summaries.close()


def encode(cluster: str, found: Diagnosis, summary: Summary | None) -> dict[str, Any]:
    findings = [f.to_json() for f in found.findings]
    return {
        "cluster": cluster,
        "namespace": found.namespace,
        "fingerprint": found.fingerprint,
        "counts": {s.value: sum(f.severity is s for f in found.findings) for s in Severity},
        "findings": findings,
        "summary": summary.to_json() if summary is not None else None,
    }


@routes.get(DIAGNOSE, name="diagnose")
async def diagnose_cluster(request: web.Request) -> web.Response:
    found = await target(request)
    result = await diagnose(found.api, validated(request).query.get("namespace"))
    summary = request.app[SUMMARIES].cached(found.cluster_id, result)
    return web.json_response(encode(found.cluster_id, result, summary))


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
    return web.json_response(encode(found.cluster_id, result, summary))


REMEDIATIONS = "/clusters/{clusterId}/remediations"


@routes.get(REMEDIATIONS, name="listRemediations")
async def list_remediations(request: web.Request) -> web.Response:
    found = await target(request)
    result = await diagnose(found.api, validated(request).query.get("namespace"))
    proposals = await remediations.propose(found.api, found.catalogs, result.findings)
    return web.json_response(
        {
            "cluster": found.cluster_id,
            "namespace": result.namespace,
            "fingerprint": result.fingerprint,
            "proposals": [p.to_json() for p in proposals],
        }
    )


@routes.post(REMEDIATIONS + "/preview", name="previewRemediation")
async def preview_remediation(request: web.Request) -> web.Response:
    found, body = await target(request), validated(request).body
    outcome = await remediations.run(found.api, found.catalogs, **_order(body), dry_run=True)
    return web.json_response(outcome.to_json())


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
    return web.json_response(outcome.to_json())


def _order(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "namespace": body["namespace"],
        "action": body["action"],
        "target": body["target"],
        "params": body.get("params") or {},
    }
