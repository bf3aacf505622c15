"""Go coverage profiles (``go test -coverprofile``), from statement blocks to lines.

Format: ``mode: set|count|atomic``, then ``import/path/file.go:L1.C1,L2.C2 statements count``
per block. Each block is expanded to its lines; a line ran if any block over it ran (blocks
overlap at their edges, and repeat when profiles are concatenated or ``-coverpkg`` is used).
Blocks with no statements do not make lines executable. Paths stay Go import paths. Line
coverage therefore differs slightly from ``go tool cover``'s statement percentage; Go profiles
carry no branch data, so branch coverage is unknown.
This module must not map import paths to files on disk.
"""

from __future__ import annotations

import io

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport
from results.parsers.linedata import FileTable, LineData, build_report
from results.parsers.model import CoverageReport, ParseLimits
from results.parsers.textlines import text_lines

_MODES = ("set", "count", "atomic")
#: A block longer than this is not real Go code; refusing it bounds the work per input line.
MAX_BLOCK_LINES = 100_000


def parse_gocover_stream(
    stream: io.BufferedIOBase, *, limits: ParseLimits, log: DiagnosticLog
) -> CoverageReport:
    files = FileTable()
    mode: str | None = None
    last_path, data = "", LineData()
    for number, line in text_lines(stream, limits):
        if line.startswith("mode:"):
            mode = _mode(line[5:].strip(), mode, number, log)
            continue
        if not line:
            continue
        if mode is None:
            raise InvalidReport(
                "not a Go coverage profile: the first line must be 'mode: set|count|atomic'",
                reason="unknown-format",
                line=number,
            )
        path, first, last, statements, count = _block(line, number)
        if statements == 0:
            continue
        if path != last_path:
            last_path, data = path, files.get(path)
        ran = count > 0
        for line_number in range(first, last + 1):
            data.line(line_number, ran)
    return build_report("go", files.freeze(), log)


def _mode(value: str, mode: str | None, number: int, log: DiagnosticLog) -> str:
    if value not in _MODES:
        raise InvalidReport(f"unknown Go coverage mode {value!r}", reason="bad-value", line=number)
    if mode is not None:
        log.note(
            "concatenated-profiles",
            f"line {number}: another 'mode:' header; profiles were concatenated and are unioned",
        )
    return value


def _block(line: str, number: int) -> tuple[str, int, int, int, int]:
    try:
        span_part, statements, count = line.rsplit(" ", 2)
        path, _, span = span_part.rpartition(":")
        begin, _, end = span.partition(",")
        first = int(begin.partition(".")[0])
        last = int(end.partition(".")[0])
        result = (path, first, last, int(statements), int(count))
    except ValueError as exc:
        raise _bad(f"bad coverage block {line[:200]!r}", number) from exc
    if not path or first < 1 or last < first or last - first > MAX_BLOCK_LINES:
        raise _bad(f"bad coverage block {line[:200]!r}", number)
    return result


def _bad(message: str, number: int) -> InvalidReport:
    return InvalidReport(f"{message} at line {number}", reason="bad-value", line=number)
