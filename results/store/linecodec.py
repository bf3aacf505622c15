"""Compact text for a file's line data in the database: ``1-5,7,9-12`` and ``12:1/2,15:2/2``.

Line numbers cluster in runs, so ranges keep a 5 MB JaCoCo report's line data to a few hundred
kilobytes, and the text stays readable in the sqlite3 shell. Decoding rebuilds the parsers'
``FileCoverage`` so a joining shard is merged by the parsers' own line union.
This module must not touch the database.
"""

from __future__ import annotations

from collections.abc import Iterable

from results.parsers.model import BranchLine, FileCoverage


def encode_lines(lines: Iterable[int]) -> str:
    ordered = sorted(lines)
    if not ordered:
        return ""
    parts: list[str] = []
    start = prev = ordered[0]
    for number in ordered[1:]:
        if number == prev + 1:
            prev = number
            continue
        parts.append(_span(start, prev))
        start = prev = number
    parts.append(_span(start, prev))
    return ",".join(parts)


def _span(start: int, end: int) -> str:
    return str(start) if start == end else f"{start}-{end}"


def decode_lines(text: str) -> frozenset[int]:
    lines: set[int] = set()
    for part in filter(None, text.split(",")):
        start, _, end = part.partition("-")
        if end:
            lines.update(range(int(start), int(end) + 1))
        else:
            lines.add(int(start))
    return frozenset(lines)


def encode_branches(branches: Iterable[BranchLine]) -> str:
    return ",".join(f"{b.line}:{b.covered}/{b.total}" for b in branches)


def decode_branches(text: str) -> tuple[BranchLine, ...]:
    out = []
    for part in filter(None, text.split(",")):
        line, _, counts = part.partition(":")
        covered, _, total = counts.partition("/")
        out.append(BranchLine(int(line), int(covered), int(total)))
    return tuple(out)


CoverageRow = tuple[str, int, int, int, int, str, str, str]


def file_row(file: FileCoverage) -> CoverageRow:
    """(path, lines covered, lines valid, branches covered, branches valid, covered, uncovered,
    branches) as the ``coverage_files`` columns after ``run_id``."""
    return (
        file.path,
        len(file.covered),
        file.lines_valid,
        file.branches_covered,
        file.branches_valid,
        encode_lines(file.covered),
        encode_lines(file.uncovered),
        encode_branches(file.branches),
    )


def file_from_row(path: str, covered: str, uncovered: str, branches: str) -> FileCoverage:
    return FileCoverage(
        path=path,
        covered=decode_lines(covered),
        uncovered=decode_lines(uncovered),
        branches=decode_branches(branches),
    )
