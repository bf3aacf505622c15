"""Tokens that expire in seconds and watches cut short, for testing clients' credential refresh:
``Simulator(min_token_seconds=1)`` lets a TokenRequest ask for a 2 s token, which is refused with
401 once expired, as kube-apiserver refuses an expired token; ``max_watch_seconds`` ends every
watch by then, whatever ``timeoutSeconds`` asked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from kubesim import Simulator
from kubesim.api import tokens
from tests.kubesim.conftest import Raw

TOKEN_PATH = "/api/v1/namespaces/default/serviceaccounts/short/token"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    folder = tmp_path_factory.mktemp("kubesim")
    with Simulator(folder, min_token_seconds=1, max_watch_seconds=2) as s:
        yield s


async def test_a_short_token_works_until_it_expires_then_is_401(raw: Raw) -> None:
    account = {"metadata": {"name": "short"}}
    assert (await raw("POST", "/api/v1/namespaces/default/serviceaccounts", account))[0] == 201
    binding = {"metadata": {"name": "short-view"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "view"},
               "subjects": [{"kind": "ServiceAccount", "name": "short",
                             "namespace": "default"}]}  # fmt: skip
    status, _, _ = await raw("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                             binding)  # fmt: skip
    assert status == 201
    status, issued, _ = await raw("POST", TOKEN_PATH, {"spec": {"expirationSeconds": 2}})
    assert status == 201
    assert issued["spec"]["expirationSeconds"] == 2
    token = issued["status"]["token"]
    assert (await raw("GET", "/api/v1/namespaces/default/configmaps", token=token))[0] == 200
    await asyncio.sleep(2.2)
    status, body, _ = await raw("GET", "/api/v1/namespaces/default/configmaps", token=token)
    assert (status, body["reason"]) == (401, "Unauthorized")


async def test_a_watch_ends_by_the_cap(raw: Raw) -> None:
    started = time.monotonic()
    async with raw.stream(
        "/api/v1/namespaces/default/configmaps", watch="true", timeoutSeconds="300"
    ) as resp:
        await asyncio.wait_for(resp.read(), 10)
    assert 1.5 < time.monotonic() - started < 6


def test_the_default_minimum_is_kube_apiservers() -> None:
    sa = {"metadata": {"name": "x", "namespace": "default", "uid": "u"}}
    issued = tokens.token_request(b"key", sa, {"spec": {"expirationSeconds": 2}})
    assert issued["spec"]["expirationSeconds"] == tokens.MIN_SECONDS == 600
