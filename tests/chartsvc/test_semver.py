"""SemVer parsing, precedence and Helm (Masterminds/semver v3) constraints.

Expected answers are what Helm's own library gives; cases cover each operator's edge (dirty
wildcards, major-zero carets, prerelease opt-in) so a drift from Helm's resolution shows here.
"""

from __future__ import annotations

import itertools
import random
import re

import hypothesis
import pytest
from hypothesis import strategies as st

from chartsvc.semver import (
    CONSTRAINT,
    Constraint,
    InvalidConstraint,
    Version,
    parse_version,
    sort_newest_first,
)


def v(text: str) -> Version:
    parsed = parse_version(text)
    assert parsed is not None, text
    return parsed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.2.3", "1.2.3"),
        ("v1.2.3", "1.2.3"),
        ("1.2", "1.2.0"),
        ("1", "1.0.0"),
        ("1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5"),
        ("0.0.0-0", "0.0.0-0"),
        ("2.3.5-20161202202307-sha.e8fc5e5", "2.3.5-20161202202307-sha.e8fc5e5"),
    ],
)
def test_parse_loose(text: str, expected: str) -> None:
    assert str(v(text)) == expected
    assert v(text).original == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a.b.c",
        "1.2.3.4",
        "1.2.3-",
        "1.2.3-01",
        "1.2.3+",
        "1.2.3-a..b",
        " 1.2.3",
        "1.2.3 ",
        "18446744073709551616.0.0",
        "1.x",
    ],
)
def test_parse_rejects(text: str) -> None:
    assert parse_version(text) is None


@pytest.mark.parametrize("text", ["v1.2.3", "1.2", "01.2.3", "1.02.3", "1"])
def test_strict_rejects_loose_spellings(text: str) -> None:
    assert parse_version(text, strict=True) is None
    assert parse_version(text) is not None


def test_strict_accepts_full_versions() -> None:
    assert parse_version("1.2.3-alpha.1+meta", strict=True) == v("1.2.3-alpha.1")


def test_semver_spec_precedence_chain() -> None:
    # The example chain from SemVer 2.0 section 11, then releases.
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "1.10.0",
        "2.0.0",
    ]
    parsed = [v(x) for x in chain]
    assert all(a < b for a, b in itertools.pairwise(parsed))
    shuffled = chain[:]
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=v) == chain


def test_build_metadata_does_not_change_precedence() -> None:
    assert v("1.0.0+a") == v("1.0.0+b")
    assert hash(v("1.0.0+a")) == hash(v("1.0.0"))
    assert not v("1.0.0+a") < v("1.0.0+b")


def test_numeric_prerelease_identifiers_compare_as_numbers() -> None:
    assert v("1.0.0-rc.2") < v("1.0.0-rc.10")
    assert v("1.0.0-2") < v("1.0.0-a")


def test_sort_newest_first_puts_invalid_last_in_given_order() -> None:
    got = sort_newest_first(["1.0.0", "junk", "2.0.0-rc.1", "v1.10.0", "nope", "1.2", "2.0.0"])
    assert got == ["2.0.0", "2.0.0-rc.1", "v1.10.0", "1.2", "1.0.0", "junk", "nope"]


def test_sort_newest_first_is_stable_for_equal_precedence() -> None:
    assert sort_newest_first(["1.0.0+b", "1.0.0+a", "0.9.0"]) == ["1.0.0+b", "1.0.0+a", "0.9.0"]


CASES = [
    # plain, = and wildcard forms
    ("=2.0.0", "2.0.0", True),
    ("=2.0.0", "1.2.3", False),
    ("=2.0", "2.0.1", True),
    ("2.1", "2.2.1", False),
    ("4.1", "4.1.0", True),
    ("2", "2.1.1", True),
    ("2", "3.4.5", False),
    ("2.*", "2.1.1", True),
    ("2.1.*", "2.2.1", False),
    ("1.x", "1.4", True),
    ("4.1.x", "4.1.3", True),
    ("0.x.x", "1.2.3", False),
    ("2.x.x", "2.16.1", True),
    ("*", "4.5.6", True),
    ("*", "1.2.3-alpha.1", False),
    ("*-0", "1.2.3-alpha.1", True),
    ("0.0.0", "1.2.3", False),
    # !=
    ("!=4.1.0", "4.1.0", False),
    ("!=4.1.0", "4.1.1", True),
    ("!=4.1", "4.1.1", False),
    ("!=4.1", "5.1.0", True),
    ("!=4.x", "4.1.0", False),
    ("!=4.1.x", "4.2.0", True),
    ("!=4.1-alpha", "4.1.0", True),
    ("!=4.1-alpha", "4.1.0-alpha", False),
    ("!=4.1", "5.1.0-alpha.1", False),
    ("!=1.2.3", "1.2.4-beta", True),
    # > and >=
    (">1.1", "4.1.0", True),
    (">1.1", "1.1.0", False),
    (">11", "11.1.0", False),
    (">11.1", "11.1.1", False),
    (">11.1", "11.2.1", True),
    (">0", "0.0.1-alpha", False),
    (">0.0.0-0", "0.0.0-alpha", True),
    (">1.2.3-alpha.1", "1.2.3-alpha.2", True),
    (">=1.1", "1.1.0", True),
    (">=1.1", "0.0.9", False),
    (">=1.1", "4.1.0-beta", False),
    (">=0-0", "0.0.1-alpha", True),
    ("=> 1.2", "1.2.0", True),
    # < and <=
    ("<11", "11.1.0", False),
    ("<1.1", "1.1.1", False),
    ("<1.x", "0.1.1", True),
    ("<1.x", "1.1.1", False),
    ("<1.1.x", "1.0.500", True),
    ("<0-z", "0.0.0-alpha", True),
    ("<=11", "11.2.3", True),
    ("<=1.1", "1.1.1", True),
    ("<=1.1", "1.2.3", False),
    ("<=2.x", "3.0.0", False),
    ("<=1.1.x", "1.2.500", False),
    ("=< 1.2", "1.2.0", True),
    ("<=1.1", "0.1.0-alpha", False),
    ("<=1.1-a", "0.1.0-alpha", True),
    # ~
    ("~1.2.3", "1.2.4", True),
    ("~1.2.3", "1.3.4", False),
    ("~1.2.3", "1.2.2", False),
    ("~1.2", "1.2.4", True),
    ("~1", "1.3.5", True),
    ("~1", "2.1.1", False),
    ("~1.x", "1.4", True),
    ("~*", "2.1.1", True),
    ("~0.0.0", "1.2.3", True),
    ("~>1.2", "1.2.9", True),
    ("~1.1-alpha", "1.1.1-beta", True),
    ("~1.1", "1.1.1-alpha", False),
    ("~1.2.3-beta.2", "1.2.4-beta.2", True),
    # ^
    ("^1.2.3", "1.8.9", True),
    ("^1.2.3", "2.8.9", False),
    ("^1.2.3", "1.2.1", False),
    ("^1.2", "1.8.9", True),
    ("^1", "2.0.0", False),
    ("^1.x", "1.1.1", True),
    ("^0.2.3", "0.2.5", True),
    ("^0.2.3", "0.5.6", False),
    ("^0.2", "0.2.9", True),
    ("^0.0.3", "0.0.3", True),
    ("^0.0.3", "0.0.4", False),
    ("^0.0", "0.0.3", True),
    ("^0.0", "0.1.4", False),
    ("^0", "0.2.3", True),
    ("^0", "1.1.4", False),
    ("^0.0.0", "1.2.3", False),
    ("^1.2.0", "1.2.1-alpha.1", False),
    ("^1.2.0-alpha.0", "1.2.1-alpha.1", True),
    ("^1.2.0-alpha.2", "1.2.0-alpha.1", False),
    # AND, OR, hyphen ranges
    (">1.1, <2", "1.2.1", True),
    (">1.1 <2", "1.1.1", False),
    (">= 1.1, <     2", "1.5.0", True),
    (">=1.1 <2 !=1.2.3", "1.2.3", False),
    (">=1.1, <2, !=1.2.3 || > 3", "4.1.2", True),
    (">=1.1, <2, !=1.2.3 || > 3", "3.0.0", False),
    (">=1.1 <2 || >=3", "3.0.0", True),
    ("1.1 - 2", "1.1.1", True),
    ("1.5.0 - 4.5", "3.7.0", True),
    ("1.1-3", "4.3.2", False),
    ("1.0.0 - 2.0.0 <=2.0.0", "1.5.0", True),
    ("1 - 2", "2.9.9", True),
    ("1 - 2", "3.0.0", False),
    ("v1.2", "1.2.7", True),
]


@pytest.mark.parametrize(("constraint", "version", "expected"), CASES)
def test_constraint_matches_like_helm(constraint: str, version: str, expected: bool) -> None:
    assert Constraint.parse(constraint).matches(v(version)) is expected


def test_matches_accepts_strings_and_refuses_garbage() -> None:
    c = Constraint.parse("^1")
    assert c.matches("1.4.0")
    assert not c.matches("not-a-version")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "foo",
        ">= bar",
        "BAR >= 1.2.3",
        "12.3.4.1234",
        "12.3.34~ 1.2.3",
        "1.2.3-01",
        ">=1 |",
        "1|2",
        "x" * 300,
        "^",
        ">= 1.0 <",
    ],
)
def test_invalid_constraints_are_400(text: str) -> None:
    with pytest.raises(InvalidConstraint) as caught:
        Constraint.parse(text)
    assert caught.value.status == 400


def test_constraint_groups() -> None:
    c = Constraint.parse(">= 1.2.3, < 2.0 || => 3.0 < 4")
    assert [len(g) for g in c.groups] == [2, 2]
    assert len(Constraint.parse("1.0.0 - 2.0.0, <=2.0.0").groups[0]) == 3
    assert str(c) == ">= 1.2.3, < 2.0 || => 3.0 < 4"


#: What Helm users write, each accepted by the spec's pattern and by the parser alike.
WRITTEN = [
    "18.2.4",
    "v1.2",
    "^1.2",
    "~1.2.3",
    "~> 1.2",
    ">=1.0 <2",
    ">= 1.0, < 2.0",
    "1.x",
    "1.2.X",
    "*",
    "1 - 2",
    "1.2 - 3.4 || ^5",
    "1, 2 - 3",
    "1 - 2 3",
    "!=1.2.3-rc.1",
    "=< 1.0.0+build.5",
    "1.0.0-alpha-1.0",
    "\t^1\n",
    "18446744073709551",
]
#: Spellings the parser refuses, refused by the pattern too (among them rules the pattern states
#: beyond Masterminds' regexes: a range after a blank alone, Unicode blanks, a 20-digit number).
REFUSED = [
    "",
    "1 2 - 3",
    ">=1 - 2",
    "1x",
    "1.0.0-01",
    ">=1\u2003<2",
    "\u00a01",
    "18446744073709551615",
    "1 ||",
    "|| 1",
    "1,,2",
    "1 - 2 - 3",
    "x" * 300,
    "1" * 257,
]


@pytest.mark.parametrize("text", WRITTEN)
def test_the_pattern_admits_what_helm_users_write(text: str) -> None:
    assert re.fullmatch(CONSTRAINT, text)
    Constraint.parse(text)


@pytest.mark.parametrize("text", REFUSED)
def test_the_pattern_refuses_what_the_parser_refuses(text: str) -> None:
    assert not re.fullmatch(CONSTRAINT, text)
    with pytest.raises(InvalidConstraint):
        Constraint.parse(text)


def test_a_constraint_at_the_length_limit_is_one() -> None:
    longest = "||".join(["1.2.3"] * 36) + "||   1"
    assert len(longest) == 256
    assert re.fullmatch(CONSTRAINT, longest)
    assert len(Constraint.parse(longest).groups) == 37


#: Pieces of constraints, right and wrong, so that joined at random they make near misses.
PIECES = st.sampled_from(
    [
        "1",
        "2.3",
        "4.5.6",
        "x",
        "*",
        "v",
        "01",
        "-rc",
        ".1",
        ".01",
        "+b",
        "-",
        " - ",
        " ",
        "\t",
        ",",
        "||",
        "|",
        ">=",
        "<",
        "^",
        "~",
        "=>",
        "!=",
        "\u2003",
        "a",
    ]
)


@hypothesis.settings(max_examples=400, derandomize=True, database=None, deadline=None)
@hypothesis.given(st.lists(PIECES, min_size=1, max_size=8).map("".join))
def test_the_pattern_and_the_parser_agree(text: str) -> None:
    """The spec's ``VersionConstraint`` and ``Constraint.parse`` admit the same text: the
    parser checks the pattern first, so a pattern looser than the grammar fails here."""
    matched = re.fullmatch(CONSTRAINT, text) is not None
    try:
        Constraint.parse(text)
    except InvalidConstraint:
        assert not matched, text
    else:
        assert matched, text
