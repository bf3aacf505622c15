"""Diagnosis of the demo cluster: every broken workload found with its cause and evidence, a
healthy namespace with none; the LLM summary against a loopback OpenAI-compatible model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from kubesim import Simulator
from tests.chartsvc.conftest import LOOPBACK
from tests.conftest import ApiClient
from tests.console.llmserver import KEY, ModelServer, model
from tests.console.resources_support import eventually, kube
from tests.console.support import ADMIN, make_settings
from tests.guards import assert_json, assert_problem
from tests.kubesim.live import FAST
from tests.typing_support import Client

__all__ = ["model"]

URL = "/api/v1/clusters/alpha/diagnose"
BROKEN = {
    ("crash-loop", "Deployment", "crashloop"),
    ("image-pull", "Deployment", "bad-image"),
    ("oom-killed", "Deployment", "memory-hog"),
    ("unschedulable", "Deployment", "too-big"),
    ("not-ready", "Deployment", "not-ready"),
    ("job-failed", "Job", "failing-job"),
    ("service-no-endpoints", "Service", "not-ready"),
    ("service-no-pods", "Service", "orphan"),
    ("pvc-pending", "PersistentVolumeClaim", "reports"),
}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """``alpha`` runs the demo scenario on three nodes, with the fast timings."""
    with Simulator(
        tmp_path_factory.mktemp("demo"), context="alpha", nodes=3, scenario="demo", timings=FAST
    ) as live:
        yield live


AiConsole = Callable[[float], Awaitable[Client]]


@pytest.fixture
def ai_console_timing_out(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, model: ModelServer
) -> AiConsole:
    """``await ai_console_timing_out(seconds)`` → a console whose model calls time out then."""

    async def make(timeout_seconds: float) -> Client:
        settings = make_settings(
            tmp_path / f"console-{timeout_seconds:g}",
            "ai.provider=openai",
            "ai.model=gpt-test",
            f"ai.base-url={model.base_url}",
            f"ai.api-key={KEY}",
            f"ai.timeout-seconds={timeout_seconds:g}",
        )
        app = create_app(settings, environ={"KUBECONFIG": str(kubeconfig)})
        app[OUTBOUND_ALLOW] = LOOPBACK
        return await api_client(app)

    return make


@pytest.fixture
async def ai_console(ai_console_timing_out: AiConsole) -> Client:
    """A console with the model; its calls wait as long as a loaded machine may need (the short
    timeout is only for the test of a model that does not answer)."""
    return await ai_console_timing_out(30)


def _keys(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["code"], f["object"]["kind"], f["object"]["name"]) for f in body["findings"]}


async def _settled(client: Client, namespace: str = "broken") -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        resp = await client.get(URL, params={"namespace": namespace})
        body: dict[str, Any] = await assert_json(resp)
        return body if _keys(body) == BROKEN else None

    found: dict[str, Any] = await eventually(check, timeout=30, what="every broken workload")
    return found


async def test_every_broken_workload_is_found_with_its_cause(
    client: Client, sim: Simulator
) -> None:
    body = await _settled(client)
    by_code = {f["code"]: f for f in body["findings"]}
    assert body["counts"] == {"error": 6, "warning": 3}
    assert [f["severity"] for f in body["findings"]] == ["error"] * 6 + ["warning"] * 3
    async with kube(sim) as api:
        pods = (await api.get("/api/v1/namespaces/broken/pods"))["items"]
    by_pod = {p["metadata"]["name"]: p for p in pods}

    crash = by_code["crash-loop"]
    pod = by_pod[crash["evidence"]["pods"][0]]
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]  # what kubectl shows
    assert crash["evidence"]["exitCode"] == last["exitCode"] == 1
    assert "panic" in crash["evidence"]["previousLog"]
    assert any(e["reason"] == "BackOff" for e in crash["evidence"]["events"])

    oom = by_code["oom-killed"]
    assert oom["evidence"]["lastState"]["reason"] == "OOMKilled"
    assert oom["evidence"]["exitCode"] == 137
    assert "ghcr.io/wharf-demo/does-not-exist:0.0.1" in by_code["image-pull"]["reason"]
    assert "Insufficient cpu" in by_code["unschedulable"]["evidence"]["message"]
    assert any(
        e["reason"] == "FailedScheduling" for e in by_code["unschedulable"]["evidence"]["events"]
    )
    job = by_code["job-failed"]
    assert job["reason"] == "the Job failed (BackoffLimitExceeded)"
    assert job["evidence"]["exitCode"] == 2
    assert "warehouse unreachable" in job["evidence"]["previousLog"]
    assert by_code["service-no-endpoints"]["evidence"]["endpoints"]["notReady"]
    assert by_code["pvc-pending"]["evidence"]["events"][0]["reason"] == "ProvisioningFailed"
    assert "fast-ssd" in by_code["pvc-pending"]["reason"]
    assert body["summary"] is None


async def test_a_healthy_namespace_has_no_findings(client: Client) -> None:
    await _settled(client)
    body = await (await client.get(URL, params={"namespace": "shop"})).json()
    assert body["findings"] == []
    whole = await (await client.get(URL)).json()
    assert _keys(whole) >= BROKEN
    assert {f["object"]["namespace"] for f in whole["findings"]} == {"broken"}


async def test_summary_without_a_model_is_ai_unavailable(client: Client) -> None:
    resp = await client.post(f"{URL}/summary", params={"namespace": "broken"}, headers=ADMIN)
    await assert_problem(resp, 409, code="ai-unavailable")
    await assert_problem(await client.post(f"{URL}/summary"), 401)


async def test_summary_sends_redacted_evidence_and_is_cached(
    ai_console: Client, model: ModelServer, sim: Simulator
) -> None:
    await _settled(ai_console)
    resp = await ai_console.post(f"{URL}/summary", params={"namespace": "broken"}, headers=ADMIN)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["summary"]["text"] == model.answer
    assert body["summary"]["fingerprint"] == body["fingerprint"]
    assert body["summary"]["model"] == "gpt-test"
    sent = model.requests[0]
    assert sent["model"] == "gpt-test"
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "crashloop" in sent["messages"][1]["content"]

    again = await ai_console.post(f"{URL}/summary", params={"namespace": "broken"}, headers=ADMIN)
    assert (await again.json())["summary"]["text"] == model.answer
    shown = await (await ai_console.get(URL, params={"namespace": "broken"})).json()
    assert shown["summary"]["text"] == model.answer  # GET shows the cached one, asks nothing
    assert len(model.requests) == 1
    other = await (await ai_console.get(URL, params={"namespace": "shop"})).json()
    assert other["summary"] is None
    audit = await (await ai_console.get("/api/v1/audit", headers=ADMIN)).json()
    assert [e["action"] for e in audit[:2]] == ["diagnose.summary", "diagnose.summary"]


async def test_model_errors_and_a_slow_model(
    ai_console: Client, ai_console_timing_out: AiConsole, model: ModelServer
) -> None:
    model.fail = (429, "Rate limit reached for gpt-test")
    resp = await ai_console.post(f"{URL}/summary", params={"namespace": "shop"}, headers=ADMIN)
    problem = await assert_problem(resp, 502, code="ai-failed")
    assert "429" in problem["detail"]
    assert "Rate limit reached" in problem["detail"]
    assert KEY not in problem["detail"]

    model.fail, model.hold = None, asyncio.Event()  # the model answers nothing until released
    impatient = await ai_console_timing_out(0.5)
    resp = await impatient.post(f"{URL}/summary", params={"namespace": "shop"}, headers=ADMIN)
    await assert_problem(resp, 504, code="ai-timeout")
    model.hold.set()
