"""An OpenAI-compatible chat-completions client: the console's only outbound call to a model.

``POST {base_url}/chat/completions`` with ``model`` and ``messages``, ``Authorization: Bearer
<key>`` when a key is set; the answer's ``choices[0].message.content`` is the text. Any server
speaking that protocol works (OpenAI, Azure-style gateways, vLLM, Ollama, LiteLLM). Every request
goes through ``common.netguard`` (a :class:`GuardedClient`), with a total timeout. Failures are a
502 ``ai-failed`` naming the status and the provider's own error message (cut short), a 504 on a
timeout; the key never appears in an error, a log or ``repr``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import attrs

from common.errors import BadGateway, UpstreamStatus
from common.netguard import GuardedClient

MAX_ANSWER_BYTES = 256 * 1024
DETAIL_LIMIT = 300


@attrs.frozen
class ModelEndpoint:
    base_url: str
    model: str
    api_key: str | None = attrs.field(default=None, repr=False)
    timeout_s: float = 30.0


@attrs.frozen
class Completion:
    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None


@attrs.define
class ChatClient(GuardedClient):
    endpoint: ModelEndpoint = attrs.field(kw_only=True)

    async def complete(self, messages: list[dict[str, str]], *, max_tokens: int) -> Completion:
        url = self.endpoint.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        body = {
            "model": self.endpoint.model,
            "messages": messages,
            "temperature": 0.2,
            "max_tokens": max_tokens,
        }
        try:
            async with asyncio.timeout(self.endpoint.timeout_s):
                response = await self.request("POST", url, json=body, headers=headers)
                async with response:
                    raw = await response.content.read(MAX_ANSWER_BYTES + 1)
                    status = response.status
        except TimeoutError:
            raise UpstreamStatus(
                504,
                f"the model did not answer within {self.endpoint.timeout_s:g} s",
                code="ai-timeout",
            ) from None
        except aiohttp.ClientError as exc:
            raise BadGateway(
                f"the model endpoint cannot be reached ({type(exc).__name__})", code="ai-failed"
            ) from None
        return _completion(status, raw, self.endpoint.model)


def _completion(status: int, raw: bytes, model: str) -> Completion:
    if len(raw) > MAX_ANSWER_BYTES:
        raise BadGateway("the model's answer is too large", code="ai-failed")
    try:
        answer: Any = json.loads(raw)
    except ValueError:
        answer = None
    if status != 200:
        raise BadGateway(
            f"the model endpoint answered HTTP {status}: {_error_text(answer)}", code="ai-failed"
        )
    try:
        text = answer["choices"][0]["message"]["content"]
        usage = answer.get("usage") or {}
    except (TypeError, KeyError, IndexError, AttributeError):
        raise BadGateway("the model's answer is not a chat completion", code="ai-failed") from None
    if not isinstance(text, str) or not text.strip():
        raise BadGateway("the model answered with no text", code="ai-failed")
    return Completion(
        text.strip(),
        str(answer.get("model") or model),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
    )


def _error_text(answer: Any) -> str:
    """The provider's own message (``{"error": {"message": ...}}``), cut short."""
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message or "no error message")[:DETAIL_LIMIT]
