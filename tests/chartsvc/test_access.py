"""The operations as the spec declares them and the deny-by-default access policy, without HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from chartsvc.access import AccessPolicy, InvalidApiKey, MutationsDisabled
from chartsvc.app import load_operations
from chartsvc.operations import DeclarationError, declared, mutating
from chartsvc.settings import AccessMode
from common.openapi import Spec
from tests.chartsvc.conftest import RELEASE_WRITES


def test_mutating_set_is_exactly_the_contracts() -> None:
    operations = load_operations(releases=True)
    repos = {"addRepository", "removeRepository", "pushChart"}
    assert RELEASE_WRITES | repos == mutating(operations)
    groups = [op.group for op in operations.values()]
    assert [groups.count(g) for g in ("releases", "charts", "repos", "hub", "dependencies")] == [
        17,
        14,
        9,
        1,
        1,
    ]


@pytest.mark.parametrize(
    ("mode", "key", "presented", "error"),
    [
        (AccessMode.READ_ONLY, None, None, MutationsDisabled),
        (AccessMode.READ_ONLY, "k", "k", MutationsDisabled),
        (AccessMode.FULL, None, None, MutationsDisabled),
        (AccessMode.FULL, "  ", "  ", MutationsDisabled),
        (AccessMode.FULL, "k", None, InvalidApiKey),
        (AccessMode.FULL, "k", "wrong", InvalidApiKey),
        (AccessMode.FULL, "k", "k", None),
    ],
)
def test_policy(
    mode: AccessMode, key: str | None, presented: str | None, error: type | None
) -> None:
    policy = AccessPolicy(mode, key)
    if error is None:
        policy.allow_mutation(presented)
    else:
        with pytest.raises(error):
            policy.allow_mutation(presented)


def test_key_is_not_in_repr() -> None:
    assert "s3cret" not in repr(AccessPolicy(AccessMode.FULL, "s3cret"))


def _spec(**op: Any) -> Spec:
    responses = {code: {"description": code} for code in ("200", "400", "404", "500")}
    node = {
        "operationId": "addRepository",
        "summary": "Add a chart repository",
        "tags": ["repos"],
        "x-mutating": False,
        "x-mcp": False,
        "responses": responses,
        **op,
    }
    return Spec.from_document({"openapi": "3.1.0", "paths": {"/repos": {"post": node}}})


def test_a_read_declared_in_full_is_accepted() -> None:
    (op,) = declared(_spec()).values()
    assert (op.method, op.path, op.group, op.mutating, op.tool) == (
        "POST",
        "/repos",
        "repos",
        False,
        False,
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"summary": " "}, "summary"),
        ({"tags": []}, "one tag"),
        ({"x-mutating": "yes"}, "x-mutating"),
        ({"x-mutating": True}, "401, 403"),
        ({"security": [{"ApiKey": []}]}, "exactly the mutating"),
        ({"x-mcp": {"readOnlyHint": True}}, "as booleans"),
        ({"x-mcp": {"readOnly": True}}, "x-mcp is false or a mapping"),
        ({"responses": {"200": {"description": "ok"}}}, "400, 404, 500"),
    ],
)
def test_an_operation_not_fully_declared_is_refused(change: dict[str, Any], why: str) -> None:
    with pytest.raises(DeclarationError, match=why):
        declared(_spec(**change))


def test_a_mutating_tool_cannot_claim_to_be_read_only() -> None:
    gate = {code: {"description": code} for code in ("200", "400", "401", "403", "404", "500")}
    hints = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
    spec = _spec(
        **{"x-mutating": True, "x-mcp": hints, "security": [{"ApiKey": []}], "responses": gate}
    )
    with pytest.raises(DeclarationError, match="readOnlyHint"):
        declared(spec)
