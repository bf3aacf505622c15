"""The access gate in all four modes, over HTTP, for every mutating repository operation."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import ClientResponse, FormData, web
from multidict import CIMultiDict
from pytest_aiohttp import AiohttpClient

from chartsvc.app import create_app
from tests.chartsvc.conftest import MakeClient, MakeSettings
from tests.guards import assert_problem
from tests.typing_support import Client

WRITES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/api/v1/repos", {"json": {"name": "r", "url": "https://charts.example.com"}}),
    ("DELETE", "/api/v1/repos/r", {}),
    ("POST", "/api/v1/repos/push", {}),
]


def push_form() -> FormData:
    form = FormData()
    form.add_field("chart", b"x", filename="c.tgz", content_type="application/gzip")
    form.add_field("remote", "oci://registry.example.com/charts")
    return form


async def send(
    client: Client, method: str, path: str, kwargs: dict[str, Any], headers: dict[str, str]
) -> ClientResponse:
    if path.endswith("/push"):
        kwargs = {"data": push_form()}
    return await client.request(method, path, headers=headers, **kwargs)


@pytest.mark.parametrize(
    "settings",
    [
        (),
        ("chartsvc.security.mode=READ_ONLY", "chartsvc.security.api-key=k"),
        ("chartsvc.security.mode=FULL",),
    ],
    ids=["read-only-default", "read-only-with-key", "full-without-key"],
)
async def test_mutations_disabled_is_403(
    make_client: MakeClient, settings: tuple[str, ...]
) -> None:
    client = await make_client(*settings)
    for method, path, kwargs in WRITES:
        resp = await send(client, method, path, kwargs, {"X-API-Key": "k"})
        body = await assert_problem(resp, 403, code="mutations-disabled")
        assert "chartsvc.security.mode=FULL" in body["detail"]
    assert (await client.get("/api/v1/repos")).status == 200  # reads stay open


async def test_full_with_key_requires_the_key(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.security.mode=FULL", "chartsvc.security.api-key=k")
    for method, path, kwargs in WRITES:
        for headers in ({}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}):
            resp = await send(client, method, path, kwargs, headers)
            body = await assert_problem(resp, 401, code="invalid-api-key")
            assert "k" not in body["detail"].split()
            assert resp.headers["WWW-Authenticate"].startswith("ApiKey")
    # The right key passes the gate; what happens next is the operation's business.
    resp = await client.delete("/api/v1/repos/r", headers={"X-API-Key": "k"})
    await assert_problem(resp, 404)
    resp = await client.get("/api/v1/repos")
    assert resp.status == 200


async def test_a_repeated_key_is_a_401_whatever_its_copies(make_client: MakeClient) -> None:
    """Issue 39, item 10: good-then-bad (or bad-then-good) X-API-Key never passes the gate."""
    client = await make_client("chartsvc.security.mode=FULL", "chartsvc.security.api-key=k")
    for pair in (("k", "wrong"), ("wrong", "k"), ("k", "k")):
        headers = CIMultiDict(("X-API-Key", key) for key in pair)
        resp = await client.delete("/api/v1/repos/r", headers=headers)
        await assert_problem(resp, 401, code="repeated-credential")


async def test_gate_runs_before_validation(make_client: MakeClient) -> None:
    client = await make_client()
    resp = await client.post("/api/v1/repos", json={"bogus": 1})
    await assert_problem(resp, 403)


async def test_disabled_interceptor_removes_the_gate(make_client: MakeClient) -> None:
    client = await make_client("chartsvc.rest.access-interceptor.enabled=false")
    resp = await client.delete("/api/v1/repos/r")
    await assert_problem(resp, 404)  # reached the operation: no gate in the way
    resp = await client.post("/api/v1/repos", json={"name": "a", "url": "http://169.254.169.254/"})
    await assert_problem(resp, 400, code="address-refused")  # the guard still applies


async def test_the_gate_holds_in_a_host_app(
    aiohttp_client: AiohttpClient, make_settings: MakeSettings
) -> None:
    """Mounted under a host's prefix, the service decides its routes as it does alone."""
    host = web.Application()
    host.add_subapp("/svc", create_app(make_settings()))
    client = await aiohttp_client(host)
    resp = await client.delete("/svc/api/v1/repos/r")
    await assert_problem(resp, 403, code="mutations-disabled")
    assert (await client.get("/svc/api/v1/repos")).status == 200
