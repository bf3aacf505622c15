"""Checks and normal forms of the identifiers CI sends: project, branch, commit, flag, runKey, URL.

Ingest and the gate both go through here, so a commit stored by one is found by the other: hex
commits are lower-cased, and a branch given as ``refs/heads/main`` (GitHub's GITHUB_REF) is stored
and looked up as ``main``. Messages name the rule, never echo the value.
This module must not do I/O.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from common.errors import ValidationFailed

MAX_BRANCH = 255
MAX_RUN_KEY = 200
MAX_URL = 2048
DEFAULT_FLAG = "default"
_VISIBLE = r"[^\s\x00-\x1f\x7f]"  # no blank or control character
_HEADS = "refs/heads/"
PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
FLAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
COMMIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: A branch, GitHub's ``refs/heads/`` before it or not (never that alone).
BRANCH = re.compile(rf"(?!{_HEADS}$)(?:{_HEADS})?{_VISIBLE}{{1,{MAX_BRANCH}}}")
RUN_KEY = re.compile(rf"{_VISIBLE}{{1,{MAX_RUN_KEY}}}")
#: An absolute http(s) URL: the dashboard renders it as a link (no ``javascript:``, no ``ftp:``).
BUILD_URL = re.compile(
    rf"(?=.{{1,{MAX_URL}}}$)[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f/?#]{_VISIBLE}*"
)
#: The spec's schemas whose pattern is one of the checks above (``load_document``'s
#: ``patterns``), so the served spec and the server cannot drift.
SPEC_PATTERNS = {
    name: rf"^(?:{check.pattern})$(?!\n)"
    for name, check in {
        "ProjectName": PROJECT,
        "BranchName": BRANCH,
        "CommitId": COMMIT,
        "FlagName": FLAG,
        "RunKey": RUN_KEY,
        "BuildUrl": BUILD_URL,
    }.items()
}


class FieldError(ValueError):
    """``str()`` is the message for the field; the caller knows the field's name."""


def project(value: str) -> str:
    if not PROJECT.fullmatch(value):
        raise FieldError(
            "must be 1-128 characters: letters, digits, '.', '_', '-', '/', starting with a "
            "letter or digit"
        )
    return value


def branch(value: str) -> str:
    if not BRANCH.fullmatch(value):
        raise FieldError(f"must be 1-{MAX_BRANCH} characters without spaces or control characters")
    return value.removeprefix(_HEADS)


def commit(value: str) -> str:
    if not COMMIT.fullmatch(value):
        raise FieldError("must be a commit id: 1-100 letters, digits, '.', '_' or '-'")
    return value.lower() if all(c in string.hexdigits for c in value) else value


def flag(value: str) -> str:
    if not FLAG.fullmatch(value):
        raise FieldError("must be 1-64 characters: letters, digits, '.', '_', '-'")
    return value


def run_key(value: str) -> str:
    if not RUN_KEY.fullmatch(value):
        raise FieldError(f"must be 1-{MAX_RUN_KEY} characters without spaces")
    return value


def build_url(value: str) -> str:
    if not BUILD_URL.fullmatch(value):
        raise FieldError(f"must be an absolute http or https URL of at most {MAX_URL} characters")
    return value


Check = Callable[[str], str]
#: The checks of the query parameters that name runs, by parameter name.
RUN_QUERY: Mapping[str, Check] = {
    "project": project,
    "commit": commit,
    "branch": branch,
    "flag": flag,
    "baseSha": commit,
}


def read_query(
    params: Mapping[str, Any], checks: Mapping[str, Check] = RUN_QUERY
) -> dict[str, str]:
    """The given parameters among ``checks``, checked and in normal form; every bad one is named
    in one 400 (``ValidationFailed``)."""
    errors: list[dict[str, str]] = []
    values: dict[str, str] = {}
    for name, check in checks.items():
        if params.get(name) is None:
            continue
        try:
            values[name] = check(str(params[name]).strip())
        except FieldError as exc:
            errors.append({"in": "query", "field": name, "message": str(exc)})
    if errors:
        raise ValidationFailed(errors)
    return values
