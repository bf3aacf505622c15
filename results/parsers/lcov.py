"""LCOV tracefiles (``geninfo``, Istanbul/nyc, c8, grcov, ``cargo llvm-cov --lcov``).

One ``SF:`` … ``end_of_record`` block per file and test; ``DA:<line>,<hits>[,<checksum>]`` is
line data and ``BRDA:<line>,<block>,<branch>,<taken|->`` branch data. The same ``SF`` may repeat
(per ``TN`` test name), so records of one file are unioned: a line ran if any record ran it, a
branch was taken if any record took it. ``LF``/``LH``/``BRF``/``BRH`` and function records are
summaries and are not needed. This module must not read the source files it names.
"""

from __future__ import annotations

import io

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport
from results.parsers.linedata import FileTable, LineData, build_report, normalise_path
from results.parsers.model import CoverageReport, ParseLimits
from results.parsers.textlines import text_lines

_SUMMARY_KEYS = frozenset({"TN", "VER", "FN", "FNDA", "FNF", "FNH", "FNL", "FNA", "LF", "LH"})
_SUMMARY_KEYS |= {"BRF", "BRH", "MRF", "MRH"}
#: A branch is (line, block, branch); records of one file are unioned by this identity.
_BranchId = tuple[int, str, str]


def parse_lcov_stream(
    stream: io.BufferedIOBase, *, limits: ParseLimits, log: DiagnosticLog
) -> CoverageReport:
    files = FileTable()
    taken: dict[str, dict[_BranchId, bool]] = {}
    current: LineData | None = None
    branches: dict[_BranchId, bool] = {}
    for number, line in text_lines(stream, limits):
        key, _, value = line.partition(":")
        if key == "DA" and current is not None:
            _da(current, value, number)
        elif key == "BRDA" and current is not None:
            _brda(branches, value, number)
        elif key == "SF":
            current, branches = files.get(value), taken.setdefault(normalise_path(value), {})
        elif line == "end_of_record" and current is not None:
            current = None
        elif key in ("DA", "BRDA"):
            raise _bad(f"{key} record outside an SF … end_of_record block", number)
        elif key not in _SUMMARY_KEYS and line:
            log.note("unknown-record", f"line {number}: unknown LCOV record {key!r} ignored")
    if current is not None:
        log.note("missing-end-of-record", "the last SF block has no end_of_record; kept")
    for path, ids in taken.items():
        _branches_into(files.get(path), ids)
    return build_report("lcov", files.freeze(), log)


def _da(current: LineData, value: str, number: int) -> None:
    fields = value.split(",")
    try:
        line = int(fields[0])
        hits = float(fields[1])
    except (IndexError, ValueError) as exc:
        raise _bad(f"bad DA record {value!r}", number) from exc
    current.line(line, hits > 0)


def _brda(taken: dict[_BranchId, bool], value: str, number: int) -> None:
    fields = value.split(",")
    try:
        line = int(fields[0])
        count = fields[3].strip()
        ran = count not in ("-", "") and float(count) > 0
    except (IndexError, ValueError) as exc:
        raise _bad(f"bad BRDA record {value!r}", number) from exc
    key = (line, fields[1], fields[2])
    taken[key] = taken.get(key, False) or ran


def _branches_into(current: LineData, taken: dict[_BranchId, bool]) -> None:
    per_line: dict[int, list[int]] = {}
    for (line, _block, _branch), ran in taken.items():
        counts = per_line.setdefault(line, [0, 0])
        counts[0] += ran
        counts[1] += 1
    for line, (covered, total) in per_line.items():
        current.branch(line, covered, total)


def _bad(message: str, number: int) -> InvalidReport:
    return InvalidReport(f"{message} at line {number}", reason="bad-value", line=number)
