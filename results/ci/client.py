"""A results server seen from CI: upload reports, ask the gate, retry what is worth retrying.

Uploads go in batches that fit the server's default limits (``MAX_FILES`` files, ``MAX_BYTES``
bytes per request), all under one ``runKey``, so the server builds one run of them; the same key
makes a retried request harmless (a file the run already holds is skipped, not counted twice).
Retried: connection failures, time-outs, 429 and 502-504, with exponential back-off (and
``Retry-After`` when the server sends one). Not retried: any other answer, which ``ApiError``
carries with the server's problem details. The token goes in ``Authorization: Bearer``, never
into a message. This is a client the user points at their own server; it is not a service
fetching URLs it was given, so ``common.netguard`` has no say here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import attrs

from results.ci.commands import MAX_FILES

MAX_BYTES = 200 * 1024 * 1024  # its max-total-bytes is 256 MiB
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_BACKOFF_S = 60.0


class ApiError(Exception):
    """The server refused, or could not be reached after the retries; ``str()`` explains."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@attrs.frozen
class Retry:
    attempts: int = 5  # the first try included
    backoff_s: float = 1.0  # doubled after each failed attempt


@attrs.define(eq=False)
class ResultsClient:
    base: str  # e.g. http://results.example.com:8081, without /api/v1
    token: str | None = attrs.field(default=None, repr=False)
    retry: Retry = Retry()
    timeout_s: float = 300.0
    _session: aiohttp.ClientSession | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls, base: str, *, token: str | None, retry: Retry, timeout_s: float
    ) -> AsyncIterator[ResultsClient]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
            yield cls(base.rstrip("/"), token, retry, timeout_s, session)

    async def upload(
        self,
        fields: Mapping[str, str],
        files: Sequence[tuple[str, Path]],
        *,
        files_per_request: int = MAX_FILES,
        diff: Path | None = None,
    ) -> dict[str, Any]:
        """POST /api/v1/ingest with ``fields`` and the files, one batch per request; returns the
        last answer (the run's totals after every batch). ``diff`` goes with the first batch."""
        answer: dict[str, Any] = {}
        for number, batch in enumerate(batches(files, max_files=files_per_request)):
            if number == 0 and diff is not None:
                batch = [*batch, ("diff", diff)]
            answer = await self._send("POST", "/api/v1/ingest", form=(fields, batch))
        return answer

    async def gate(self, params: Mapping[str, str]) -> dict[str, Any]:
        return await self._send("GET", "/api/v1/gate", params=params)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        form: tuple[Mapping[str, str], Sequence[tuple[str, Path]]] | None = None,
    ) -> dict[str, Any]:
        assert self._session is not None, "use ResultsClient.open()"
        delay, failure = self.retry.backoff_s, ""
        for attempt in range(1, self.retry.attempts + 1):
            try:
                with contextlib.ExitStack() as files:
                    data = _form(files, *form) if form is not None else None
                    async with self._session.request(
                        method, self.base + path, params=params, data=data
                    ) as resp:
                        body = await resp.read()
                        if resp.status < 300:
                            return dict(await resp.json(content_type=None))
                        failure = _refusal(method, path, resp.status, body)
                        if resp.status not in RETRY_STATUSES:
                            raise ApiError(failure, status=resp.status)
                        delay = _retry_after(resp.headers, delay)
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                failure = f"{method} {self.base}{path}: {type(exc).__name__}: {exc}"
            if attempt < self.retry.attempts:
                await asyncio.sleep(min(delay, MAX_BACKOFF_S))
                delay *= 2
        raise ApiError(f"{failure} (gave up after {self.retry.attempts} attempts)")


def batches(
    files: Sequence[tuple[str, Path]], *, max_files: int = MAX_FILES
) -> list[list[tuple[str, Path]]]:
    """The files in request-sized groups, in order."""
    groups: list[list[tuple[str, Path]]] = []
    size = 0
    for part, path in files:
        length = path.stat().st_size
        if not groups or len(groups[-1]) >= max_files or size + length > MAX_BYTES:
            groups.append([])
            size = 0
        groups[-1].append((part, path))
        size += length
    return groups


def _form(
    files: contextlib.ExitStack, fields: Mapping[str, str], batch: Sequence[tuple[str, Path]]
) -> aiohttp.FormData:
    data = aiohttp.FormData(default_to_multipart=True)
    for name, value in fields.items():
        data.add_field(name, value)
    for part, path in batch:
        handle = files.enter_context(path.open("rb"))
        data.add_field(part, handle, filename=path.name, content_type="application/octet-stream")
    return data


def _refusal(method: str, path: str, status: int, body: bytes) -> str:
    """The server's problem details, as one message a person can act on."""
    try:
        problem = json.loads(body)
    except ValueError:
        return f"{method} {path} answered {status}: {body[:300].decode(errors='replace')}"
    if not isinstance(problem, dict):
        return f"{method} {path} answered {status}"
    lines = [f"{method} {path} answered {status} {problem.get('title', '')}: "
             f"{problem.get('detail', '')}".rstrip(": ")]  # fmt: skip
    for error in problem.get("errors") or []:
        lines.append(f"  {error.get('field', '?')}: {error.get('message', '')}")
    if problem.get("requestId"):
        lines.append(f"  request id {problem['requestId']}")
    return "\n".join(lines)


def _retry_after(headers: Mapping[str, str], default: float) -> float:
    value = headers.get("Retry-After", "")
    return float(value) if value.isdigit() else default
