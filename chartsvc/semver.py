"""Semantic versions and Helm's version constraints, as Helm reads them.

Helm orders chart versions and resolves dependency ranges with Masterminds/semver v3, so a chart
service that wants the same answers as the ``helm`` CLI must parse and compare the same way:

- ``parse_version`` accepts Masterminds' loose form (``v1.2``, ``1`` → 1.0.0, …) as indexes do;
  ``strict=True`` accepts only ``MAJOR.MINOR.PATCH[-pre][+build]`` (Helm's rule for OCI tags).
- Ordering is SemVer 2.0 precedence: build metadata is ignored; a prerelease sorts before its
  release; prerelease identifiers compare numerically when numeric, numeric before alphanumeric.
- ``Constraint.parse`` reads ``^1.2``, ``~1.2.3``, ``>=1.0 <2.0``, ``>=1.0, <2.0``, ``1.x``, ``*``,
  ``||`` and hyphen ranges (``1 - 2``), with Masterminds' rule that a prerelease version only
  matches a constraint that itself names a prerelease.

This module must not do I/O or know about HTTP; the only error it raises is ``InvalidConstraint``
(a 400).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

import attrs

from common.errors import BadRequest

_IDENT = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_LOOSE = re.compile(rf"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-({_IDENT}))?(?:\+({_IDENT}))?")
_STRICT = re.compile(
    rf"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-({_IDENT}))?(?:\+({_IDENT}))?"
)
# Masterminds parses segments as uint64; anything larger is not a version.
_MAX_SEGMENT = 2**64 - 1


class InvalidConstraint(BadRequest, code="invalid-version-constraint"):
    """A version constraint Helm would not accept (``dependency "x" has an invalid constraint``)."""

    def __init__(self, constraint: str, reason: str = "not a valid version constraint") -> None:
        super().__init__(f"{constraint!r} is {reason}", extra={"constraint": constraint})
        self.constraint = constraint


@functools.total_ordering
@attrs.frozen(eq=False)
class Version:
    """A parsed version; compares by SemVer 2.0 precedence (``original`` keeps the spelling)."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: str = ""
    original: str = ""

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        return text + (f"+{self.build}" if self.build else "")

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def _key(self) -> tuple[int, int, int, tuple[tuple[int, int, str], ...] | None]:
        return (self.major, self.minor, self.patch, _prerelease_key(self.prerelease))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Version) -> bool:
        mine, theirs = self._key(), other._key()
        if mine[:3] != theirs[:3]:
            return mine[:3] < theirs[:3]
        # A release (None) outranks any prerelease of the same core version.
        if mine[3] is None or theirs[3] is None:
            return mine[3] is not None and theirs[3] is None
        return mine[3] < theirs[3]


def _prerelease_key(identifiers: tuple[str, ...]) -> tuple[tuple[int, int, str], ...] | None:
    """Numeric identifiers sort numerically and before alphanumeric ones; a shorter list sorts
    first when it is a prefix of the longer (SemVer 2.0 rule 11)."""
    if not identifiers:
        return None
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in identifiers)


def parse_version(text: str, *, strict: bool = False) -> Version | None:
    """The version ``text`` spells, or None when it is not one."""
    match = (_STRICT if strict else _LOOSE).fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, build = match.groups()
    numbers = [int(major), int(minor or 0), int(patch or 0)]
    if any(n > _MAX_SEGMENT for n in numbers):
        return None
    prerelease = tuple(pre.split(".")) if pre else ()
    # SemVer forbids leading zeros in numeric prerelease identifiers; Masterminds refuses them too.
    if any(p.isdigit() and len(p) > 1 and p.startswith("0") for p in prerelease):
        return None
    major_n, minor_n, patch_n = numbers
    return Version(major_n, minor_n, patch_n, prerelease, build or "", text)


def sort_newest_first(versions: Iterable[str]) -> list[str]:
    """Versions newest first by precedence; unparsable ones last, in their given order (as Helm)."""
    parsed: list[tuple[Version, int, str]] = []
    invalid: list[str] = []
    for index, text in enumerate(versions):
        version = parse_version(text)
        if version is None:
            invalid.append(text)
        else:
            parsed.append((version, index, text))
    # Equal precedence (1.0.0+a, 1.0.0+b) keeps the given order: by index, then a stable reverse.
    parsed.sort(key=lambda item: item[1])
    parsed.sort(key=lambda item: item[0], reverse=True)
    return [text for _, _, text in parsed] + invalid


# --- constraints --------------------------------------------------------------------------------

_CV = (
    r"v?([0-9xX*]+)(\.[0-9xX*]+)?(\.[0-9xX*]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
)
_OPS = r"=|!=|>|<|>=|=>|<=|=<|~|~>|\^|"
# Masterminds' own patterns: one comparison, a hyphen range, and a whole AND-group.
_ONE = re.compile(rf"\s*({_OPS})\s*({_CV})\s*")
_RANGE = re.compile(rf"\s*({_CV})\s+-\s+({_CV})\s*")
_FIND = re.compile(rf"({_OPS})\s*({_CV})")
_GROUP = re.compile(rf"(\s*({_OPS})\s*({_CV})\s*)((?:\s+|,\s*)({_OPS})\s*({_CV})\s*)*")
# Real constraints are a few dozen characters; the cap keeps the backtracking regexes cheap.
MAX_CONSTRAINT_LENGTH = 256

# The whole grammar as one regular expression: the spec's ``VersionConstraint`` states it and
# ``Constraint.parse`` holds every constraint to it, so the two accept the same text. Blanks are
# Go's ``\s`` (ASCII, as Masterminds reads them); a segment is a number Helm's uint64 holds (at
# most 19 digits) or a wildcard; a numeric prerelease identifier has no leading zero; a hyphen
# range follows a comma or starts a group (Masterminds' rewrite leaves ``1 2 - 3`` unparsable).
_BLANK = r"[\t\n\f\r ]"
_NUMBER = r"[0-9]{1,19}"
_SEGMENT = rf"(?:{_NUMBER}|[xX*])"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_BUILD_ID = r"[0-9A-Za-z-]+"
_TAIL = rf"(?:-{_PRE_ID}(?:\.{_PRE_ID})*)?(?:\+{_BUILD_ID}(?:\.{_BUILD_ID})*)?"
_VERSION = rf"v?{_SEGMENT}(?:\.{_SEGMENT}){{0,2}}{_TAIL}"
#: A version as ``parse_version`` and Helm's loader read it (``helm package --version``), without
#: anchors: ``1``, ``v1.2``, ``1.2.3-rc.1+build.5``; no number over 19 digits.
VERSION = rf"v?{_NUMBER}(?:\.{_NUMBER}){{0,2}}{_TAIL}"
_COMPARISON = rf"(?:(?:!=|>=|=>|<=|=<|~>|[=<>~^]){_BLANK}*)?{_VERSION}"
_HYPHEN = rf"{_VERSION}{_BLANK}+-{_BLANK}+{_VERSION}"
_AND = (
    rf"{_BLANK}*(?:{_HYPHEN}|{_COMPARISON})"
    rf"(?:{_BLANK}*,{_BLANK}*(?:{_HYPHEN}|{_COMPARISON})|{_BLANK}+{_COMPARISON})*{_BLANK}*"
)
#: A Helm version constraint (or an exact version) of at most ``MAX_CONSTRAINT_LENGTH`` characters,
#: without anchors: ``^1.2``, ``~1.2.3``, ``>=1.0 <2.0``, ``>=1.0, <2.0``, ``1.x``, ``*``,
#: ``1 - 2``, OR-ed with ``||``.
CONSTRAINT = rf"(?![\s\S]{{{MAX_CONSTRAINT_LENGTH + 1}}}){_AND}(?:\|\|{_AND})*"
_CONSTRAINT = re.compile(CONSTRAINT)
_X = frozenset({"x", "X", "*"})
_CV_GROUPS = 9  # capture groups inside _CV: the second version of a range starts after them


@attrs.frozen
class _Term:
    """One comparison such as ``>=1.2`` (``version`` 1.2.0 with ``patch_dirty``)."""

    op: str
    version: Version
    dirty: bool = False
    minor_dirty: bool = False
    patch_dirty: bool = False


@attrs.frozen
class Constraint:
    """A parsed Helm constraint: OR-groups of AND-ed comparisons."""

    text: str
    groups: tuple[tuple[_Term, ...], ...]

    @classmethod
    def parse(cls, text: str) -> Constraint:
        if len(text) > MAX_CONSTRAINT_LENGTH:
            raise InvalidConstraint(text[:40] + "…", "longer than any real constraint")
        if _CONSTRAINT.fullmatch(text) is None:
            raise InvalidConstraint(text)
        groups = tuple(_parse_group(text, g) for g in _rewrite_ranges(text).split("||"))
        return cls(text=text, groups=groups)

    def matches(self, version: Version | str) -> bool:
        """Whether ``version`` satisfies the constraint (an unparsable string never does)."""
        parsed = parse_version(version) if isinstance(version, str) else version
        if parsed is None:
            return False
        return any(all(_check(term, parsed) for term in group) for group in self.groups)

    def __str__(self) -> str:
        return self.text


def _rewrite_ranges(text: str) -> str:
    def rewrite(match: re.Match[str]) -> str:
        return f">= {match.group(1)}, <= {match.group(2 + _CV_GROUPS)} "

    return _RANGE.sub(rewrite, text)


def _parse_group(whole: str, group: str) -> tuple[_Term, ...]:
    if not _GROUP.fullmatch(group):
        raise InvalidConstraint(whole)
    return tuple(_parse_term(whole, m.group(0)) for m in _FIND.finditer(group))


def _parse_term(whole: str, text: str) -> _Term:
    match = _ONE.fullmatch(text)
    if match is None:
        raise InvalidConstraint(whole)
    op, major, minor, patch = match.group(1), match.group(3), match.group(4), match.group(5)
    pre = match.group(6) or ""
    minor, patch = (minor or "").lstrip("."), (patch or "").lstrip(".")
    dirty = minor_dirty = patch_dirty = False
    if major in _X:
        core, dirty = "0.0.0", True
    elif minor in _X or not minor:
        core, dirty, minor_dirty = f"{major}.0.0", True, True
    elif patch in _X or not patch:
        core, dirty, patch_dirty = f"{major}.{minor}.0", True, True
    else:
        core = f"{major}.{minor}.{patch}"
    version = parse_version(core + pre)
    if version is None:  # e.g. "1x" or a segment past uint64
        raise InvalidConstraint(whole)
    return _Term(op, version, dirty=dirty, minor_dirty=minor_dirty, patch_dirty=patch_dirty)


def _check(term: _Term, v: Version) -> bool:
    # Masterminds: a prerelease only satisfies a comparison that names a prerelease itself
    # (``!=`` applies the rule only to its wildcard form).
    if v.is_prerelease and not term.version.is_prerelease and (term.op != "!=" or term.dirty):
        return False
    return _OPERATORS[term.op](term, v)


def _not_equal(t: _Term, v: Version) -> bool:
    c = t.version
    if t.dirty:
        if c.major != v.major:
            return True
        if c.minor != v.minor and not t.minor_dirty:
            return True
        if t.minor_dirty:
            return False
        if c.patch != v.patch and not t.patch_dirty:
            return True
        if t.patch_dirty:
            if v.is_prerelease or c.is_prerelease:
                return _prerelease_key(v.prerelease) != _prerelease_key(c.prerelease)
            return False
    return v != c


def _greater(t: _Term, v: Version) -> bool:
    c = t.version
    if not t.dirty:
        return v > c
    if v.major != c.major:
        return v.major > c.major
    if t.minor_dirty:  # >11 means 12 or above
        return False
    if t.patch_dirty:  # >11.1 means 11.2 or above
        return v.minor > c.minor
    return v > c


def _less_equal(t: _Term, v: Version) -> bool:
    c = t.version
    if not t.dirty:
        return v <= c
    if v.major > c.major:
        return False
    return not (v.major == c.major and v.minor > c.minor and not t.minor_dirty)


def _tilde(t: _Term, v: Version) -> bool:
    c = t.version
    if v < c:
        return False
    if (c.major, c.minor, c.patch) == (0, 0, 0) and not t.minor_dirty and not t.patch_dirty:
        return True  # ~0.0.0 and ~* accept everything
    if v.major != c.major:
        return False
    return v.minor == c.minor or t.minor_dirty


def _tilde_or_equal(t: _Term, v: Version) -> bool:
    return _tilde(t, v) if t.dirty else v == t.version


def _caret(t: _Term, v: Version) -> bool:
    c = t.version
    if v < c:
        return False
    if c.major > 0 or t.minor_dirty:
        return v.major == c.major
    if v.major > 0:
        return False
    if c.minor > 0 or t.patch_dirty:
        return v.minor == c.minor
    if v.minor > 0:
        return False
    return v.patch == c.patch


_OPERATORS: dict[str, Callable[[_Term, Version], bool]] = {
    "": _tilde_or_equal,
    "=": _tilde_or_equal,
    "!=": _not_equal,
    ">": _greater,
    "<": lambda t, v: v < t.version,
    ">=": lambda t, v: v >= t.version,
    "=>": lambda t, v: v >= t.version,
    "<=": _less_equal,
    "=<": _less_equal,
    "~": _tilde,
    "~>": _tilde,
    "^": _caret,
}
