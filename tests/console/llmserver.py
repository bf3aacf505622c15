"""A loopback stand-in for an OpenAI-compatible chat-completions endpoint (a third party).

It speaks the real protocol: ``POST /v1/chat/completions`` with a bearer key, ``model`` and
``messages``; it answers a ``chat.completion`` object with ``choices[0].message.content`` and
``usage``, or an OpenAI-shaped error (``{"error": {"message", "type", "code"}}``) with its status.
Tests read what it was sent in ``requests`` and steer it with ``fail`` and ``hold``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

KEY = "sk-test-not-a-real-key"


@attrs.define
class ModelServer:
    answer: str = "The crashloop Deployment cannot reach its database; fix the DSN."
    requests: list[dict[str, Any]] = attrs.field(factory=list)
    fail: tuple[int, str] | None = None  # (status, message) answered instead of a completion
    hold: asyncio.Event | None = None  # when set to an unset event, answers wait for it
    server: TestServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/v1"))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.completions)
        return app

    async def completions(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return _error(401, "Incorrect API key provided", "invalid_api_key")
        body = await request.json()
        self.requests.append(body)
        if self.hold is not None:
            await self.hold.wait()
        if self.fail is not None:
            return _error(self.fail[0], self.fail[1], "rate_limit_exceeded")
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 1764000000,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 812, "completion_tokens": 40, "total_tokens": 852},
            }
        )


def _error(status: int, message: str, code: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return web.json_response(body, status=status)


@pytest.fixture
async def model(aiohttp_server: AiohttpServer) -> ModelServer:
    """The model server, listening on loopback for one test."""
    server = ModelServer()
    server.server = await aiohttp_server(server.app())
    return server
