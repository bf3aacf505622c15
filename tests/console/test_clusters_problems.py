"""Every row of the contract's error table renders as RFC 9457 with its status and code."""

from __future__ import annotations

import pytest
from kubernetes_asyncio.client.exceptions import ApiException

from common.errors import BadRequest, WharfError
from console.errors import (
    AiUnavailable,
    ClusterConflict,
    HelmFailed,
    InvalidCluster,
    PortForwardFailed,
    UnknownCluster,
)
from kubeclient import cluster_error


def refusal(status: int, message: str) -> ApiException:
    exc = ApiException(status=status, reason="Forbidden")
    exc.body = f'{{"kind":"Status","message":"{message}"}}'.encode()  # as read off the wire
    return exc


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (UnknownCluster("nope"), 404, "unknown-cluster"),
        (InvalidCluster("unreachable"), 400, "invalid-cluster"),
        (ClusterConflict("taken"), 409, "cluster-conflict"),
        (PortForwardFailed("no pod"), 400, "port-forward-failed"),
        (AiUnavailable(), 409, "ai-unavailable"),
        (HelmFailed("render failed"), 400, "helm-failed"),
        (cluster_error(refusal(403, "pods is forbidden")), 403, "cluster-refused"),
        (cluster_error(refusal(422, "denied by webhook")), 422, "cluster-refused"),
        (cluster_error(ApiException(status=0, reason="connect")), 502, "cluster-refused"),
        (BadRequest("bad"), 400, "invalid-request"),
    ],
)
def test_error_table(error: WharfError, status: int, code: str) -> None:
    body = error.to_problem(instance="/api/v1/clusters/x")
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"].endswith(str(status))
    assert body["detail"] == body["message"]
    assert body["instance"] == "/api/v1/clusters/x"


def test_cluster_refusals_carry_the_servers_reason() -> None:
    body = cluster_error(refusal(403, "pods is forbidden")).to_problem(instance="/")
    assert body["detail"] == "pods is forbidden"
