"""No console secret reaches a log line or an answer: the admin password (right and wrong), the
session cookie, kubeconfig credentials (a bearer token, a client key) on every cluster path that
takes one (good, unreachable and garbled), and the LLM key on a summary that fails, then works."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from kubesim import Simulator
from tests.chartsvc.conftest import LOOPBACK
from tests.chartsvc.fixtures_registry import SigningKey
from tests.conftest import ApiClient
from tests.console.llmserver import KEY as MODEL_KEY
from tests.console.llmserver import ModelServer, model
from tests.console.support import ADMIN_PASSWORD, ADMIN_USER, kubeconfig_text, make_settings
from tests.leaks import LeakScan, basic

__all__ = ["model"]


def client_key_pair() -> tuple[str, str]:
    """A real client certificate and key (PEM), as a kubeconfig's ``client-*-data`` holds them."""
    made = SigningKey.generate()
    key_pem = made.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return made.pem().decode(), key_pem


def with_client_key(kubeconfig: str, cert_pem: str, key_pem: str, *, server: str = "") -> str:
    doc: dict[str, Any] = yaml.safe_load(kubeconfig)
    user = doc["users"][0]["user"]
    user["client-certificate-data"] = base64.b64encode(cert_pem.encode()).decode()
    user["client-key-data"] = base64.b64encode(key_pem.encode()).decode()
    if server:
        doc["clusters"][0]["cluster"]["server"] = server
    return yaml.safe_dump(doc, sort_keys=False)


async def test_no_secret_in_the_console_logs_or_answers(
    api_client: ApiClient,
    sim: Simulator,
    tmp_path: Path,
    model: ModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    scan = LeakScan(caplog)
    scan.secret("admin password", ADMIN_PASSWORD)
    admin = {"Authorization": scan.secret("Basic header", basic(ADMIN_USER, ADMIN_PASSWORD))}
    wrong = scan.secret("a wrong password", "not-the-password-but-close")
    scan.secret("cluster token", sim.token)
    scan.secret("LLM key", MODEL_KEY)
    cert_pem, key_pem = client_key_pair()
    key_body = "".join(key_pem.splitlines()[1:-1])
    scan.secret("client key", key_body)
    kubeconfig = scan.secret("kubeconfig", with_client_key(kubeconfig_text(sim), cert_pem, key_pem))
    unreachable = with_client_key(
        kubeconfig_text(sim), cert_pem, key_pem, server="https://127.0.0.1:9"
    )
    settings = make_settings(
        tmp_path / "console",
        "security.open-mode=false",
        "ai.provider=openai",
        "ai.model=gpt-test",
        f"ai.base-url={model.base_url}",
        f"ai.api-key={MODEL_KEY}",
    )
    app = create_app(settings, environ={})
    app[OUTBOUND_ALLOW] = LOOPBACK
    client = await api_client(app)

    resp = await scan.send(client, "GET", "/api/v1/clusters", headers=admin)
    assert resp.status == 200
    resp = await scan.send(
        client, "GET", "/api/v1/clusters", headers={"Authorization": basic(ADMIN_USER, wrong)}
    )
    assert resp.status == 401
    resp = await scan.send(
        client, "POST", "/api/v1/auth/session", headers=admin, may_show=["session"]
    )
    assert resp.status == 200
    scan.secret("session", resp.cookies["JSESSIONID"].value)
    resp = await scan.send(client, "POST", "/api/v1/auth/session")  # who is signed in
    assert resp.status == 200

    resp = await scan.send(
        client, "POST", "/api/v1/clusters/contexts", json={"kubeconfig": kubeconfig}, headers=admin
    )
    assert resp.status == 200
    definition = {"id": "leaky", "name": "Leaky", "kubeconfig": kubeconfig}
    resp = await scan.send(client, "POST", "/api/v1/clusters", json=definition, headers=admin)
    assert resp.status == 201, await resp.text()
    garbled = kubeconfig.replace("users:", "users: [", 1)
    for unusable in ({"id": "gone", "kubeconfig": unreachable}, {"kubeconfig": garbled}):
        resp = await scan.send(client, "POST", "/api/v1/clusters", json=unusable, headers=admin)
        assert resp.status == 400  # invalid-cluster, naming the cause but not the credentials
    resp = await scan.send(client, "PUT", "/api/v1/clusters/leaky", json=definition, headers=admin)
    assert resp.status == 200, await resp.text()
    for path in ("/api/v1/clusters", "/api/v1/clusters/leaky/config", "/api/v1/about"):
        resp = await scan.send(client, "GET", path, headers=admin)
        assert resp.status == 200, path

    summary = "/api/v1/clusters/leaky/diagnose/summary"
    for fail, status in (((429, "Rate limit reached"), 502), (None, 200)):
        model.fail = fail
        resp = await scan.send(
            client, "POST", summary, params={"namespace": "default"}, headers=admin
        )
        assert resp.status == status, await resp.text()
    assert model.requests, "the model was never asked: the LLM key was never used"

    resp = await scan.send(client, "GET", "/api/v1/audit", headers=admin)
    assert resp.status == 200
    actions = {entry["action"] for entry in await resp.json()}
    # the trail holds the cluster calls, refused ones included, so their details were scanned too
    assert {"cluster.add", "cluster.update", "diagnose.summary"} <= actions
    resp = await scan.send(client, "DELETE", "/api/v1/auth/session")
    assert resp.status == 204
    scan.assert_clean()
