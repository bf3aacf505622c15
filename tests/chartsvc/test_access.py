"""The operation table and the deny-by-default access policy, without HTTP."""

from __future__ import annotations

import pytest

from chartsvc.access import AccessPolicy, InvalidApiKey, MutationsDisabled
from chartsvc.operations import MUTATING, OPERATIONS, annotate_spec
from chartsvc.settings import AccessMode


def test_mutating_set_is_exactly_the_contracts() -> None:
    assert {
        "installRelease",
        "installReleaseUpload",
        "upgradeRelease",
        "upgradeReleaseUpload",
        "uninstallRelease",
        "rollbackRelease",
        "testRelease",
        "addRepository",
        "removeRepository",
        "pushChart",
    } == MUTATING
    assert len(OPERATIONS) == 15 + 8 + 9 + 1 + 1


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
    for op in ("addRepository", "installRelease"):
        if error is None:
            policy.check(op, presented)
        else:
            with pytest.raises(error):
                policy.check(op, presented)
    policy.check("listRepositories", None)  # reads never need a key


def test_key_is_not_in_repr() -> None:
    assert "s3cret" not in repr(AccessPolicy(AccessMode.FULL, "s3cret"))


def test_annotate_spec_adds_gate_responses_from_the_table() -> None:
    doc = {
        "paths": {
            "/repos": {
                "post": {"operationId": "addRepository", "responses": {"201": {}}},
                "get": {"operationId": "listRepositories", "responses": {"200": {}}},
            }
        }
    }
    out = annotate_spec(doc)
    post, get = out["paths"]["/repos"]["post"], out["paths"]["/repos"]["get"]
    assert {"401", "403"} <= set(post["responses"])
    assert post["x-mutating"] is True
    assert not {"401", "403"} & set(get["responses"])
    assert get["summary"] == "List configured repositories"
    with pytest.raises(ValueError, match="not declared"):
        annotate_spec({"paths": {"/x": {"get": {"operationId": "nope"}}}})
