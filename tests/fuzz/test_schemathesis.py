"""Every operation of every service under a schema-driven fuzzer (schemathesis).

Each service runs on a real loopback server in a thread of its own, as a client would meet it, with
credentials that let the fuzzer past authentication. Schemathesis generates requests from the
served OpenAPI document — valid ones and, for the negative phase, ones that break the schema — and
checks every answer: no server error, only documented status codes and content types, bodies that
match their schemas. ``FUZZ_EXAMPLES`` bounds the examples per operation so the suite stays fast.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hypothesis
import pytest
import requests
import schemathesis
from aiohttp import web
from schemathesis import BaseSchema, checks
from schemathesis.generation import GenerationMode

from chartsvc.app import create_app as chartsvc_app
from chartsvc.settings import Settings as ChartsvcSettings
from common.config import load_settings
from common.openapi import MULTIPART, SPEC
from common.serving import GuardedRunner, ServerSettings
from console.app import create_app as console_app
from console.settings import Settings as ConsoleSettings
from results.app import create_app as results_app
from results.settings import Settings as ResultsSettings
from tests.addresses import free_port
from tests.chartsvc.fixtures_charts import chart_yaml, tgz_bytes
from tests.console.support import ADMIN as CONSOLE_ADMIN
from tests.console.support import ADMIN_PASSWORD

if TYPE_CHECKING:
    # The case schemathesis generates for an OpenAPI operation. Keep the name: with derandomize,
    # Hypothesis seeds each test from its source text, so renaming it changes the examples run.
    from schemathesis.specs.openapi.schemas import OpenApiCase as Case

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "4"))
FUZZ = hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every run: a failure here is reproducible
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)
API_KEY = "fuzz-key"


class Served:
    """An aiohttp application on a loopback port, run by its own event loop in a thread."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._loop = asyncio.new_event_loop()
        # As ``wharf serve`` runs it: a URL or header the HTTP parser refuses is a problem too.
        self._runner = GuardedRunner(
            app, limits=ServerSettings(), handle_signals=False, access_log=None
        )
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> Served:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(60)
        return self

    async def _start(self) -> None:
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def _document(app: web.Application) -> dict[str, Any]:
    served: dict[str, Any] = app[SPEC].served("/api/v1")
    return served


def _apps(data: Path) -> dict[str, tuple[web.Application, Mapping[str, str]]]:
    chartsvc = load_settings(
        ChartsvcSettings,
        overrides=[
            f"chartsvc.data-dir={data / 'chartsvc'}",
            "chartsvc.security.mode=FULL",
            f"chartsvc.security.api-key={API_KEY}",
        ],
    )
    results = load_settings(ResultsSettings, overrides=[f"results.data-dir={data / 'results'}"])
    console = load_settings(
        ConsoleSettings,
        overrides=[
            f"console.data-dir={data / 'console'}",
            f"console.security.admin.password={ADMIN_PASSWORD}",
            "console.clusters.warm-up=false",
            "console.clusters.impersonate=off",
        ],
    )
    # environ={}: no kubeconfig, so the console serves its one fallback cluster, which is not
    # there; cluster calls answer as an unreachable cluster does, which the spec documents.
    return {
        "chartsvc": (chartsvc_app(chartsvc, environ={}), {"X-API-Key": API_KEY}),
        "results": (results_app(results, environ={}), {}),
        "console": (console_app(console, environ={}), CONSOLE_ADMIN),
    }


def _streams(document: Mapping[str, Any]) -> list[str]:
    """Operations that answer an event stream: they run until the client leaves, so a fuzzer
    call would wait for its timeout; their tests are in each service's own suite."""
    return [
        op["operationId"]
        for item in document["paths"].values()
        for op in item.values()
        if isinstance(op, dict)
        and any("text/event-stream" in (r.get("content") or {}) for r in op["responses"].values())
    ]


def _schema_for(service: str) -> BaseSchema:
    """The served document of ``service``, built the way the service builds it at start-up."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        app, _ = _apps(Path(scratch))[service]
        document = _document(app)
    schema = schemathesis.openapi.from_dict(document)
    streams = _streams(document)
    return schema.exclude(operation_id=streams) if streams else schema


@schemathesis.serializer("application/gzip")
def _gzip(_: Any, value: Any) -> bytes:
    """Chart archives and reports may be sent gzip-compressed: compress what was generated."""
    raw = value if isinstance(value, bytes) else str(value).encode()
    return gzip.compress(raw, mtime=0)


@schemathesis.serializer("application/pgp-signature")
def _signature(_: Any, value: Any) -> bytes:
    """A provenance file is armored text: send what was generated as it is."""
    return value if isinstance(value, bytes) else str(value).encode()


SCHEMAS = {name: _schema_for(name) for name in ("chartsvc", "results", "console")}


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[Served, Mapping[str, str]]]]:
    built = _apps(tmp_path_factory.mktemp("fuzz"))
    started: dict[str, tuple[Served, Mapping[str, str]]] = {}
    try:
        for name, (app, headers) in built.items():
            started[name] = (Served(app).__enter__(), headers)
        yield started
    finally:
        for served, _ in started.values():
            served.__exit__()


#: What every answer must satisfy, besides never being a 500. Not here: ``not_a_server_error``
#: (a 502 naming an upstream that does not exist on this machine is the right answer, and a
#: status the operation does not document fails ``status_code_conformance``),
#: ``positive_data_acceptance`` where a rule is beyond the schema (see ``_positive``), and
#: ``allow_header_conformance``, which reads only OPTIONS answers the fuzzer never asks for: every
#: undocumented method of every path is asked below (``test_every_other_method...``).
CHECKS = [
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.negative_data_rejection,
]
#: Every service's spec says every rule the server holds a request to (patterns, lengths, ranges):
#: a schema-valid request it refuses is a defect of the spec or of the server.
POSITIVE = {"results", "chartsvc", "console"}
#: Operations with a rule no schema can state, left out of that check (and why).
NOT_POSITIVE = {
    "getGate": "one of commit or branch is required: a rule across two parameters",
    "metricsGraph": "a node needs name, a namespace namespace, a pod both: across parameters",
    "applyRemediation": "confirm: true is an interlock with its own code, confirmation-required",
    "addCluster": "a kubeconfig's contents are checked by reading it",
    "updateCluster": "a kubeconfig's contents are checked by reading it; id equals the path's",
    "listKubeconfigContexts": "a kubeconfig's contents are checked by reading it",
    "saveValuesFileByBody": "the YAML text must hold a mapping: checked by reading it",
    "packageChart": "Chart.yaml's contents are checked by Helm reading them",
}


def _positive(service: str, case: Case) -> bool:
    return (
        service in POSITIVE and case.operation.definition.raw.get("operationId") not in NOT_POSITIVE
    )


#: A JUnit report of one passing test.
JUNIT = '<testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite>'
#: A chart archive, reports and a diff whose contents are what the parts ask: what a file holds
#: is checked by opening it, beyond any schema, so a schema-valid upload carries a real file in
#: each part and the positive check is of everything else the request says.
FILES: dict[str, bytes | list[bytes]] = {
    "chart": tgz_bytes(
        {
            "fuzz/Chart.yaml": chart_yaml("fuzz", "0.1.0"),
            "fuzz/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        }
    ),
    "junit": [JUNIT.encode()],
    "jacoco": [b"SF:src/app.py\nDA:1,1\nDA:2,0\nend_of_record\n"],
    "diff": b"--- a/src/app.py\n+++ b/src/app.py\n@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n",
}


def _real_files(case: Case) -> None:
    """Each file part of a schema-valid multipart body, given real contents (``FILES``)."""
    raw = case.operation.definition.raw
    takes_files = MULTIPART in ((raw.get("requestBody") or {}).get("content") or {})
    if not takes_files or case.meta is None or case.meta.generation.mode != GenerationMode.POSITIVE:
        return
    # In place, before the call: still the case generated (schemathesis judges again only what
    # its hooks change, and a part's bytes are no JSON string to that judgement).
    body: dict[str, Any] = case.body  # type: ignore[assignment]  # a form: a mapping of parts
    for part, real in FILES.items():
        if part in body:
            body[part] = real * len(body[part]) if isinstance(real, list) else real


#: Refusals no schema can foresee, by their problem's code: where a URL's host leads (loopback,
#: private, metadata, a numeric spelling of one) is the address guard's decision when it is
#: fetched; an OCI reference's tag and a different version conflict across two fields; whether a
#: provenance file is signed by a key of the keyring (none here) is decided by reading it.
BEYOND_THE_SCHEMA = {"address-refused", "version-conflict", "provenance-failed"}
#: Address refusals for the URL's form (its scheme, a host at all): the spec's pattern says those.
URL_FORM = {"unsupported-scheme", "invalid-url"}


def _beyond_the_schema(response: Any) -> bool:
    if response.status_code != 400:
        return False
    problem = response.json()
    return problem.get("code") in BEYOND_THE_SCHEMA and problem.get("addressClass") not in URL_FORM


def _check(servers: dict[str, tuple[Served, Mapping[str, str]]], service: str, case: Case) -> None:
    served, headers = servers[service]
    _real_files(case)
    response = case.call(base_url=f"{served.base_url}/api/v1", headers=dict(headers), timeout=30)
    assert response.status_code != 500, (
        f"{case.method} {case.formatted_path} answered 500: {response.text[:500]}"
    )
    positive = _positive(service, case) and not _beyond_the_schema(response)
    more = [checks.positive_data_acceptance] if positive else []
    case.validate_response(response, checks=[*CHECKS, *more])


def _fuzz(service: str) -> Callable[..., None]:
    @SCHEMAS[service].parametrize()
    @FUZZ
    def test(case: Case, servers: dict[str, tuple[Served, Mapping[str, str]]]) -> None:
        _check(servers, service, case)

    fuzzed: Callable[..., None] = test
    return fuzzed


test_chartsvc = _fuzz("chartsvc")
test_results = _fuzz("results")
test_console = _fuzz("console")


METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@pytest.mark.parametrize("service", ["chartsvc", "results", "console"])
def test_every_other_method_is_a_405_naming_exactly_the_documented_ones(
    service: str, servers: dict[str, tuple[Served, Mapping[str, str]]]
) -> None:
    """Each path of the served spec, asked with each method it does not list: 405, and ``Allow``
    lists exactly the documented methods (not those of a templated path that also matches, nor
    HEAD, which no path documents)."""
    served, headers = servers[service]
    wrong = []
    with requests.Session() as session:
        for path, item in _document(served.app)["paths"].items():
            documented = {m.upper() for m in item if m in METHODS}
            url = f"{served.base_url}/api/v1{re.sub(r'{[^}]+}', 'x', path)}"
            for method in sorted({m.upper() for m in METHODS} - documented):
                resp = session.request(method, url, headers=dict(headers), timeout=30)
                allowed = set(resp.headers.get("Allow", "").split(","))
                if (resp.status_code, allowed) != (405, documented):
                    wrong.append(f"{method} {path}: {resp.status_code} Allow {sorted(allowed)}")
    assert not wrong


#: The operations that start a chain (their links lead to the others).
FIRST = {
    "results": {"POST /ingest"},
    "console": {"PUT /helm/values", "PUT /helm/values/{name}"},
}
#: The operations of each service that the spec links (a created thing to what reads and deletes
#: it); the state machine keeps to them, so its steps are spent on chains, not on single calls.
LINKED = {
    "results": ["ingest", "getRun", "compareRun", "getProject", "listRuns", "getGate"],
    "console": ["saveValuesFile", "saveValuesFileByBody", "getValuesFile", "deleteValuesFile"],
}


@pytest.mark.parametrize("service", sorted(LINKED))
def test_linked_operations_in_sequence(
    service: str, servers: dict[str, tuple[Served, Mapping[str, str]]]
) -> None:
    """Stateful: schemathesis follows the spec's links (an ingest to its run, project and gate; a
    saved values file to its reading and deletion), feeding each answer into the next call."""
    served, headers = servers[service]
    calls: list[str] = []

    linked = SCHEMAS[service].include(operation_id=LINKED[service])

    class Machine(linked.as_state_machine()):  # type: ignore[misc]
        def before_call(self, case: Case) -> None:
            # The single-call tests above fuzz an ingest's fields; here an ingest is the start of
            # a chain, so it sends a real report under valid names and the links are followed.
            if case.operation.label == "POST /ingest":
                case.body = {
                    "project": "chain",
                    "branch": "main",
                    "commit": "ab12",
                    "junit": [JUNIT],
                }

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return {
                "base_url": f"{served.base_url}/api/v1",
                "headers": dict(headers),
                "timeout": 30,
            }

        def validate_response(self, response: Any, case: Case, **kwargs: Any) -> None:
            calls.append(f"{case.operation.label} {response.status_code}")
            assert response.status_code != 500, (
                f"{case.method} {case.formatted_path} answered 500: {response.text[:500]}"
            )
            case.validate_response(response, checks=CHECKS)

    Machine.run(
        settings=hypothesis.settings(FUZZ, max_examples=EXAMPLES * 2, stateful_step_count=4)
    )
    assert calls, "the state machine made no call"
    followed = [
        c for c in calls if c.split()[1] not in FIRST[service] and c.endswith(("200", "204"))
    ]
    assert followed, f"no link was followed to a successful call: {calls}"
