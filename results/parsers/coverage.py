"""Coverage uploads: format detection by content, the shard merge, and the percentages.

An upload's form field says nothing reliable about its format, so the first bytes decide: XML
goes to JaCoCo (root ``<report>``) or Cobertura/Clover (root ``<coverage>``), text to a Go
coverprofile (``mode:``) or LCOV (``TN:``/``SF:``). Shards and flags are merged by LINE UNION
per file: a line covered in any shard is covered, a line is counted once however many shards
list it. Report counters are never summed (the original project did, and double-counted lines).
This module must not parse formats itself and must not touch the database or HTTP.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from results.parsers.clover import CloverHandler, is_clover_root
from results.parsers.cobertura import CoberturaHandler
from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport
from results.parsers.gocover import parse_gocover_stream
from results.parsers.jacoco import JacocoHandler
from results.parsers.lcov import parse_lcov_stream
from results.parsers.linedata import FileTable, build_report
from results.parsers.model import CoverageReport, ParseLimits
from results.parsers.source import ReportSource, open_report
from results.parsers.xml import XmlHandler, feed_xml

_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_LCOV_START = re.compile(rb"(TN|SF|VER|FN|FNL|DA):")


def parse_coverage(source: ReportSource, *, limits: ParseLimits | None = None) -> CoverageReport:
    """Parse a JaCoCo, Cobertura, Clover, LCOV or Go coverage report, whichever it is."""
    limits = limits or ParseLimits()
    log = DiagnosticLog()
    with open_report(source, limits) as stream:
        kind = sniff(stream.peek(4096))
        if kind == "xml":
            return _parse_xml(stream, limits, log)
        if kind == "go":
            return parse_gocover_stream(stream, limits=limits, log=log)
        if kind == "lcov":
            return parse_lcov_stream(stream, limits=limits, log=log)
    raise InvalidReport(
        "unknown coverage format: expected JaCoCo, Cobertura or Clover XML, LCOV or a Go "
        "coverprofile",
        reason="unknown-format",
    )


def sniff(head: bytes) -> str | None:
    """``"xml"``, ``"go"``, ``"lcov"`` or None, from the first bytes of the decompressed report."""
    if head.startswith(_BOMS[1:]):
        return "xml"  # UTF-16 is only ever XML here
    text = head.removeprefix(_BOMS[0]).lstrip()
    if text.startswith(b"<"):
        return "xml"
    if text.startswith(b"mode:"):
        return "go"
    if _LCOV_START.match(text):
        return "lcov"
    return None


class _Chosen:
    handler: JacocoHandler | CoberturaHandler | CloverHandler | None = None


def _parse_xml(
    stream: io.BufferedIOBase, limits: ParseLimits, log: DiagnosticLog
) -> CoverageReport:
    chosen = _Chosen()

    def choose(tag: str, attrs: dict[str, str]) -> XmlHandler:
        if tag == "report":
            chosen.handler = JacocoHandler(log)
        elif tag == "coverage" and is_clover_root(attrs):
            chosen.handler = CloverHandler(log)
        elif tag == "coverage":
            chosen.handler = CoberturaHandler(log)
        else:
            raise InvalidReport(
                f"unknown coverage XML: root element <{tag}>, expected JaCoCo <report> "
                "or Cobertura/Clover <coverage>",
                reason="unknown-format",
            )
        return chosen.handler

    feed_xml(stream, choose, limits=limits, log=log)
    if chosen.handler is None:  # expat refuses a document without a root element first
        raise InvalidReport("empty XML document", reason="malformed-xml")
    return chosen.handler.result()


def merge_coverage(reports: Iterable[CoverageReport]) -> CoverageReport:
    """Union shards line by line: covered anywhere → covered; every line counted once.

    Branches on a line merge to the most taken and the most known of any shard (shards report
    counts per line, not which branch, so this is a lower bound). Reports without line data
    (counter-only JaCoCo) cannot be unioned; they are left out and a diagnostic says so.
    """
    reports = list(reports)
    log = DiagnosticLog()
    table = FileTable()
    for report in reports:
        log.extend(tuple(d for d in report.diagnostics if d.code != "coverage-unknown"))
        if not report.files and report.lines_valid:
            log.note(
                "merge-without-line-data",
                f"a {report.format} report without line data was left out of the merge",
            )
        for file in report.files:
            data = table.get(file.path)
            for number in file.uncovered:
                data.line(number, False)
            for number in file.covered:
                data.line(number, True)
            for branch in file.branches:
                data.branch(branch.line, branch.covered, branch.total)
    formats = sorted({report.format for report in reports})
    if len(reports) > 1:
        log.note("merged", f"{len(reports)} coverage reports merged by line union")
    return build_report("+".join(formats) or "none", table.freeze(), log)
