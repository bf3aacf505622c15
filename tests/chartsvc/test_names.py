"""Kubernetes' and Helm's name rules, one pattern each for the check and the spec."""

from __future__ import annotations

import re

import pytest

from chartsvc import names


@pytest.mark.parametrize(
    ("name", "subdomain", "label"),
    [
        ("web", True, True),
        ("a", True, True),
        ("my-app.v2", True, False),
        ("x" * 53, True, True),
        ("x" * 54, False, False),
        ("Web", False, False),
        ("-lead", False, False),
        ("trail-", False, False),
        ("a..b", False, False),
        ("a_b", False, False),
        ("web\n", False, False),  # Python's $ alone matches before a final newline
        ("", False, False),
    ],
)
def test_dns_names_and_their_lengths(name: str, subdomain: bool, label: bool) -> None:
    assert bool(re.match(names.dns_subdomain(53), name)) is subdomain
    assert bool(re.match(names.dns_label(53), name)) is label
