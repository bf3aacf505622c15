"""Patch coverage: of the lines a change added, how many the run's coverage knows, and ran.

A diff names files by their path in the repository (``src/shop/cart.py``); coverage reports name
them as their tool saw them: relative to a source root (Cobertura from coverage.py: ``cart.py``
or ``shop/cart.py``), as a package path (JaCoCo: ``shop/Cart.java``) or absolute (LCOV:
``/home/ci/build/src/shop/cart.py``). Both sides are first normalised as the coverage parsers
normalise paths (forward slashes, no ``./``), then a diff path matches the coverage path that
equals it, that it ends with (a prefix stripped off the coverage side) or that ends with it (a
build directory in front), whole path segments only. Of several, the longest match wins; a tie
is no match (guessing would count the wrong file). Files that match nothing are listed.

A changed line counts only where the coverage knows the line: blank lines, comments and other
non-executable lines are in neither set and count for nothing. Shards: the store recomputes this
from the run's merged line data after every upload, so shards add up as line coverage does.
This module must not know SQL or HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from results.parsers.diff import FileChange
from results.parsers.linedata import normalise_path
from results.parsers.model import FileCoverage, percentage


@attrs.frozen
class PatchTotals:
    """Changed lines that are coverable (``valid``), and of those ``covered``."""

    covered: int
    valid: int

    @property
    def missed(self) -> int:
        return self.valid - self.covered

    @property
    def pct(self) -> float | None:
        return percentage(self.covered, self.valid)


@attrs.frozen
class PatchFile:
    """One changed file: ``coverage_path`` is None when no coverage path matched it."""

    path: str
    coverage_path: str | None
    changed: frozenset[int]
    covered: frozenset[int] = frozenset()
    missed: frozenset[int] = frozenset()

    @property
    def totals(self) -> PatchTotals:
        return PatchTotals(len(self.covered), len(self.covered) + len(self.missed))


@attrs.frozen
class PatchCoverage:
    files: tuple[PatchFile, ...]

    @property
    def totals(self) -> PatchTotals:
        covered = sum(len(f.covered) for f in self.files)
        return PatchTotals(covered, covered + sum(len(f.missed) for f in self.files))

    @property
    def unmatched(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files if f.coverage_path is None)


def match_paths(wanted: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """Each diff path of ``wanted`` that matches one coverage path of ``known``, to that path."""
    by_name: dict[str, list[str]] = {}
    for path in known:
        by_name.setdefault(_name(normalise_path(path)), []).append(path)
    found: dict[str, str] = {}
    for path in wanted:
        match = _best(normalise_path(path), by_name.get(_name(normalise_path(path)), ()))
        if match is not None:
            found[path] = match
    return found


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _best(path: str, candidates: Iterable[str]) -> str | None:
    """The candidate sharing the most trailing segments with ``path`` (one of them whole)."""
    scored: dict[int, list[str]] = {}
    for candidate in candidates:
        other = normalise_path(candidate)
        if other == path or other.endswith("/" + path) or path.endswith("/" + other):
            scored.setdefault(min(len(other), len(path)), []).append(candidate)
    if not scored:
        return None
    best = scored[max(scored)]
    return best[0] if len(best) == 1 else None


def patch_coverage(
    changes: Iterable[FileChange], coverage: Mapping[str, FileCoverage]
) -> PatchCoverage:
    """``coverage``: the run's merged line data by its coverage path."""
    changes = list(changes)
    matched = match_paths((c.path for c in changes), coverage)
    files = []
    for change in changes:
        where = matched.get(change.path)
        if where is None:
            files.append(PatchFile(change.path, None, change.added))
            continue
        lines = coverage[where]
        files.append(
            PatchFile(
                change.path,
                where,
                change.added,
                covered=change.added & lines.covered,
                missed=change.added & lines.uncovered,
            )
        )
    return PatchCoverage(tuple(files))
