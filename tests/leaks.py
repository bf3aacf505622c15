"""The secret-leak scan each service's ``test_no_secret_leaks`` runs (issue "Trust", hostile
clients): a service is driven through its flows with known secrets while everything it logs (at
DEBUG, every logger, tracebacks included) and everything it answers (status line, headers, body)
is recorded; then no secret may appear anywhere, except in the one answer that hands it out.

Each secret is also looked for in the forms a careless line would write it: base64 (a Basic
header, a kubeconfig's ``*-data``) and percent-encoded (a URL in a log line).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import attrs
import pytest
from aiohttp import ClientResponse

from common.logs import QUIET_LOGGERS
from tests.typing_support import Client


@attrs.define
class Answer:
    what: str  # "POST /api/v1/clusters → 201"
    text: str  # headers and body as text
    may_show: frozenset[str]  # labels of the secrets this answer hands out


@attrs.define
class LeakScan:
    """Known secrets by label; answers recorded by :meth:`send`; :meth:`assert_clean` checks."""

    caplog: pytest.LogCaptureFixture
    secrets: dict[str, str] = attrs.field(factory=dict)
    log_only: set[str] = attrs.field(factory=set)  # labels of secrets answers may carry
    answers: list[Answer] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.caplog.set_level(logging.DEBUG)  # the root logger: every service logger under it
        for name in QUIET_LOGGERS:  # an earlier in-process configure_logging quieted them for good
            self.caplog.set_level(logging.DEBUG, logger=name)

    def secret(self, label: str, value: str, *, answers: bool = True) -> str:
        """Registers ``value`` (at least 8 characters, so a hit is never chance) and returns it;
        with ``answers=False`` it is looked for in the log only (a CSRF value a page carries)."""
        assert len(value) >= 8, f"secret {label!r} is too short to scan for"
        self.secrets[label] = value
        if not answers:
            self.log_only.add(label)
        return value

    async def send(
        self,
        client: Client,
        method: str,
        path: str,
        *,
        may_show: Iterable[str] = (),
        **kwargs: Any,
    ) -> ClientResponse:
        """``client.request(...)``, with the whole answer recorded (the body stays readable)."""
        resp = await client.request(method, path, **kwargs)
        body = (await resp.read()).decode("utf-8", "replace")
        headers = "\n".join(f"{name}: {value}" for name, value in resp.headers.items())
        self.record(f"{method} {path} → {resp.status}", f"{headers}\n\n{body}", may_show)
        return resp

    def record(self, what: str, text: str, may_show: Iterable[str] = ()) -> None:
        """An answer read some other way (a stream, an MCP tool result)."""
        self.answers.append(Answer(what, text, frozenset(may_show)))

    def assert_clean(self) -> None:
        log = self.caplog.text
        assert " DEBUG " in log or any(r.levelno == logging.DEBUG for r in self.caplog.records), (
            "nothing was logged at DEBUG: the scan would prove nothing"
        )
        hits = []
        for label, value in self.secrets.items():
            forms = _forms(value)
            if any(form in log for form in forms):
                hits.append(f"{label} in the log")
            if label in self.log_only:
                continue
            for answer in self.answers:
                if label not in answer.may_show and any(form in answer.text for form in forms):
                    hits.append(f"{label} in the answer to {answer.what}")
        assert not hits, "secrets leaked: " + "; ".join(hits)
        assert len(self.answers) >= 3, "too few answers recorded for the scan to mean anything"


def _forms(value: str) -> set[str]:
    raw = value.encode()
    return {
        value,
        quote(value, safe=""),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    }


def basic(user: str, password: str) -> str:
    """The ``Authorization`` value for HTTP Basic."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
