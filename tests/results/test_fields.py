"""The identifiers CI sends: the spec's patterns are the checks ingest and the gate make."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from common.openapi import SPEC
from results import fields
from results.app import create_app
from tests.results.support import settings_for

CHECKS: dict[str, Callable[[str], str]] = {
    "ProjectName": fields.project,
    "BranchName": fields.branch,
    "CommitId": fields.commit,
    "FlagName": fields.flag,
    "RunKey": fields.run_key,
    "BuildUrl": fields.build_url,
}
#: Values at each rule's edges: lengths, a leading character, blanks and control characters,
#: GitHub's refs/heads/ prefix (alone it names no branch).
PROBES = [
    "https://ci.example.com/build/7",
    "HTTP://ci/1?x=y#z",
    "http://" + "u" * 2041,
    "http://" + "u" * 2042,
    "https://",
    "https:///path",
    "https://?q",
    "ftp://ci.example.com/",
    "javascript:alert(1)",
    "https://ci example",
    "https://ci\n",
    "main",
    "shop/api",
    "refs/heads/main",
    "refs/heads/",
    "refs/heads/refs/heads/",
    "refs/heads/" + "b" * 255,
    "b" * 255,
    "b" * 256,
    "a" * 64,
    "a" * 65,
    "a" * 128,
    "a" * 129,
    "r" * 200,
    "r" * 201,
    "",
    "-x",
    ".x",
    "a b",
    "a\tb",
    "a\x7f",
    "a\n",
    "é",
    "v1.2_3-x",
    "4F2A9C1",
]


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_each_spec_pattern_admits_what_its_check_admits(name: str) -> None:
    pattern = re.compile(fields.SPEC_PATTERNS[name])
    for value in PROBES:
        try:
            CHECKS[name](value)
        except fields.FieldError:
            accepted = False
        else:
            accepted = True
        assert (pattern.search(value) is not None) == accepted, (name, value)


def test_a_branch_loses_githubs_prefix_and_is_never_the_prefix_alone() -> None:
    assert fields.branch("refs/heads/main") == "main"
    assert fields.branch("refs/heads/" + "b" * 255) == "b" * 255
    with pytest.raises(fields.FieldError):
        fields.branch("refs/heads/")


def test_the_served_spec_states_the_checks(tmp_path: Path) -> None:
    served = create_app(settings_for(tmp_path))[SPEC].served("/api/v1")
    schemas = served["components"]["schemas"]
    assert {name: schemas[name]["pattern"] for name in fields.SPEC_PATTERNS} == (
        fields.SPEC_PATTERNS
    )
