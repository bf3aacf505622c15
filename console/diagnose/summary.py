"""The LLM summary of a diagnosis: what is sent (redacted evidence only), and the cache.

Only ``POST …/diagnose/summary`` calls :meth:`Summaries.summarise`; ``GET …/diagnose`` reads
:meth:`Summaries.cached`, which answers only for exactly the same findings (their fingerprint).
The prompt holds the findings' codes, objects, reasons and evidence, after redaction: anything that
looks like a credential (``password=...``, ``token: ...``, bearer tokens, JWTs, private keys,
long base64 runs) is replaced by ``[REDACTED]``; Secrets are never read by a diagnosis at all. The
cache is per (cluster, namespace), bounded, in memory.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from console.diagnose.llm import ChatClient
from console.diagnose.model import Finding
from console.diagnose.service import Diagnosis

MAX_CACHED = 256
MAX_ANSWER_TOKENS = 700
REDACTED = "[REDACTED]"
#: (pattern, replacement): what looks like a credential, and what stands in for it.
_SECRETS = (
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
        ),
        REDACTED,
    ),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), rf"\1{REDACTED}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), REDACTED),
    (
        re.compile(
            r"(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|credentials?)"
            r"[\"']?\s*[:=]\s*)(?:\"[^\"]*\"|'[^']*'|[^\s,;}]+)"
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"\b[A-Za-z0-9+/]{40,}={0,2}"), REDACTED),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+@"), rf"\1{REDACTED}@"),
)
SYSTEM_PROMPT = (
    "You are a Kubernetes troubleshooting assistant. You get deterministic findings about a "
    "cluster, each with a code, the object, a one-line reason and evidence (events, container "
    "exit state, log excerpts). Explain the most likely root cause of each problem and the "
    "concrete fix (kubectl or manifest change), most severe first. Be brief: at most two short "
    "sentences per finding. Do not invent facts the evidence does not support."
)


def redact(text: str) -> str:
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


#: How a finding is written into the prompt: the API's own JSON of it, which the HTTP layer owns
#: (``console.http.encode.diagnose.encode_finding``) and hands to :class:`Summaries`.
Describe = Callable[[Finding], Mapping[str, Any]]


def prompt(diagnosis: Diagnosis, cluster: str, describe: Describe) -> list[dict[str, str]]:
    findings = [describe(f) for f in diagnosis.findings]
    scope = f"namespace {diagnosis.namespace}" if diagnosis.namespace else "the whole cluster"
    text = f"Cluster {cluster}, {scope}. Findings (JSON):\n" + json.dumps(findings, indent=1)
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": redact(text)},
    ]


@attrs.frozen
class Summary:
    fingerprint: str
    text: str
    model: str
    created: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@attrs.define
class Summaries:
    client: ChatClient | None
    describe: Describe
    _cache: OrderedDict[tuple[str, str | None], Summary] = attrs.field(factory=OrderedDict)

    def cached(self, cluster: str, diagnosis: Diagnosis) -> Summary | None:
        found = self._cache.get((cluster, diagnosis.namespace))
        return found if found is not None and found.fingerprint == diagnosis.fingerprint else None

    async def summarise(self, cluster: str, diagnosis: Diagnosis) -> Summary:
        """The cached summary of exactly these findings, else a new one from the model."""
        known = self.cached(cluster, diagnosis)
        if known is not None:
            return known
        assert self.client is not None, "callers check that a model is configured"
        answer = await self.client.complete(
            prompt(diagnosis, cluster, self.describe), max_tokens=MAX_ANSWER_TOKENS
        )
        made = Summary(
            diagnosis.fingerprint,
            answer.text,
            answer.model,
            time.time(),
            answer.prompt_tokens,
            answer.completion_tokens,
        )
        key = (cluster, diagnosis.namespace)
        self._cache[key] = made
        self._cache.move_to_end(key)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)
        return made

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
