"""Checks every service's tests reuse: a JSON answer's status, the problem+json shape and spec/route
parity."""

from __future__ import annotations

from typing import Any

from aiohttp import ClientResponse

PROBLEM_FIELDS = ("type", "title", "status", "detail", "instance", "message")


async def assert_json(resp: ClientResponse, status: int = 200) -> Any:
    """The JSON body of ``resp``, after checking its status (the body is the message if not)."""
    assert resp.status == status, await resp.text()
    return await resp.json()


async def assert_problem(
    resp: ClientResponse, status: int, *, code: str | None = None
) -> dict[str, Any]:
    """The response is an RFC 9457 problem with ``status`` (and ``code``); returns the body."""
    text = await resp.text()
    assert resp.status == status, f"expected {status}, got {resp.status}: {text}"
    assert resp.content_type == "application/problem+json", resp.content_type
    body: dict[str, Any] = await resp.json(content_type=None)
    for field in PROBLEM_FIELDS:
        assert field in body, f"problem lacks {field}: {body}"
    assert body["status"] == status
    assert body["message"] == body["detail"]
    assert body["instance"] == resp.url.path
    if code is not None:
        assert body.get("code") == code, body
    return body
