"""Every API call the console's pages make is an operation of ``spec/console*.yaml``.

The page scripts write each call's path as a literal template at the call site
(`` call("POST", `/clusters/${c}/apply`) ``, `` stream(`/clusters/${c}/logs/stream${query(...)}`) ``),
and only ``api.js`` talks to the network. This reads the scripts, takes every such path with the
method written before it on its line (GET when none is), and checks each against the merged spec;
``/ws/exec`` is the one WebSocket, described in the spec's introduction rather than as an
operation.
"""

from __future__ import annotations

import functools
import re

from common.openapi import load_document
from console.app import SPEC_PATH
from console.web.pages import STATIC_DIR

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: A path literal: a template or quoted string that starts with one of the API's top segments.
PATH = re.compile(r"""[`"](/(?:clusters|auth|helm|about|audit|ws)\b[^`"]*)[`"]""")
METHOD = re.compile(r'"(GET|POST|PUT|PATCH|DELETE)"')
WEBSOCKETS = {("GET", "/ws/exec")}


def scripts() -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(STATIC_DIR.glob("*.js"))}


def calls(source: str) -> set[tuple[str, str]]:
    """(method, path with each ``${...}`` as ``{}`` and no query) of every call in ``source``."""
    found = set()
    for line in source.splitlines():
        if line.lstrip().startswith("//"):
            continue
        for match in PATH.finditer(line):
            methods = METHOD.findall(line[: match.start()])
            path = re.sub(r"\$\{query\(.*$", "", match.group(1))
            path = re.sub(r"\$\{[^}]*\}", "{}", path.split("?")[0])
            found.add((methods[-1] if methods else "GET", path))
    return found


@functools.cache
def operations() -> frozenset[tuple[str, str]]:
    document = load_document(SPEC_PATH)
    return frozenset(
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method.upper() in METHODS
    )


def defined(call: tuple[str, str]) -> bool:
    """Whether an operation has ``call``'s method and a path template that ``call``'s path fits
    (a ``{}`` of the script, or a literal segment, where the spec has a parameter)."""
    method, path = call
    return call in WEBSOCKETS or any(
        method == op_method
        and re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(op_path)), path)
        for op_method, op_path in operations()
    )


def test_every_call_of_the_pages_is_an_operation_of_the_spec() -> None:
    made = set().union(*map(calls, scripts().values()))
    unknown = sorted(c for c in made if not defined(c))
    assert not unknown, f"calls the spec does not define: {unknown}"
    # What the pages do needs these, at least: the reader found them, so it reads the scripts.
    assert {
        ("GET", "/clusters"),
        ("GET", "/clusters/{}/nav"),
        ("GET", "/clusters/{}/resources/{}"),
        ("GET", "/clusters/{}/resources/{}/watch"),
        ("GET", "/clusters/{}/search"),
        ("GET", "/clusters/{}/detail/{}/{}/{}"),
        ("POST", "/clusters/{}/resources/{}/{}/{}/scale"),
        ("POST", "/clusters/{}/apply/dry-run"),
        ("GET", "/clusters/{}/logs/stream"),
        ("GET", "/ws/exec"),
        ("POST", "/clusters/{}/helm/releases/{}/{}/rollback"),
        ("POST", "/clusters/{}/remediations/apply"),
        ("DELETE", "/auth/session"),
    } <= made
    assert len(made) >= 30


def test_the_reader_sees_a_call_outside_the_spec() -> None:
    wrong = 'const x = await call("DELETE", `/clusters/${enc(c)}/nav`);'
    assert calls(wrong) == {("DELETE", "/clusters/{}/nav")}
    assert not any(map(defined, calls(wrong)))
    assert defined(("GET", "/clusters/{}/resources/pods/object"))
    assert calls("get(`/clusters/${c}/search${query({ q })}`)") == {("GET", "/clusters/{}/search")}


def test_only_the_api_module_talks_to_the_network() -> None:
    for name, source in scripts().items():
        if name != "api.js":
            assert not re.search(r"\b(fetch|EventSource|WebSocket|XMLHttpRequest)\s*\(", source), (
                name
            )
            assert "here.api" not in source, name
