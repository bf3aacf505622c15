"""JUnit XML test reports (every producer's dialect) into a ``JUnitReport``.

JUnit XML is a loose family of dialects, so this parser follows the document rather than any one
schema: ``<testsuites>`` or bare ``<testsuite>`` roots; suites nested at any depth (flattened to
the suites that hold test cases); ``error`` over ``failure`` over ``skipped``; Surefire
``flakyFailure``/``flakyError`` as flaky (it passed on a retry) and ``rerunFailure``/``rerunError``
as reruns of a failed test. Totals are counted from the test cases; the producer's ``tests``/
``failures``/... attributes are only compared and mismatches reported. Repeated test names are
handled by ``junit_repeats``.

This module must not do I/O beyond the stream it is given, and must not fail a report for
anything it can work around: it records a diagnostic instead. Malformed or hostile XML is
refused by ``results.parsers.xml``.
"""

from __future__ import annotations

import math

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.dialect import SAMPLE_CASES, DialectEvidence
from results.parsers.durations import parse_duration
from results.parsers.errors import InvalidReport
from results.parsers.junit_parts import (
    CaseBuilder,
    SuiteFrame,
    Tally,
    check_declared,
    childless_case,
)
from results.parsers.junit_repeats import number_repeats
from results.parsers.model import (
    Diagnostic,
    JUnitReport,
    ParseLimits,
    SuiteReport,
    TestCase,
    TestCounts,
)
from results.parsers.source import ReportSource
from results.parsers.xml import stream_xml

_ROOTS = ("testsuites", "testsuite")
_OUTCOMES = ("failure", "error", "skipped")
_ATTEMPTS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")
_OUTPUTS = ("system-out", "system-err")


def parse_junit(source: ReportSource, *, limits: ParseLimits | None = None) -> JUnitReport:
    """Parse one JUnit XML report (a path or a binary file, optionally gzip-compressed)."""
    limits = limits or ParseLimits()
    log = DiagnosticLog()
    handler = _JUnitHandler(limits, log)
    stream_xml(source, lambda _tag, _attrs: handler, limits=limits, log=log)
    return handler.result()


class _JUnitHandler:
    end_tags: frozenset[str] | None = None  # every end: the handler keeps a tag stack

    def __init__(self, limits: ParseLimits, log: DiagnosticLog) -> None:
        self._limits = limits
        self._log = log
        self._evidence = DialectEvidence()
        self._tags: list[str] = []
        self._open: list[SuiteFrame] = []
        self._frames: list[SuiteFrame] = []
        # The open <testcase>: its attributes and suite, and a builder only once it has a child
        # element (most cases are one empty element and never need one).
        self._case_attrs: dict[str, str] | None = None
        self._case_frame: SuiteFrame | None = None
        self._case: CaseBuilder | None = None
        self._orphans: SuiteFrame | None = None
        self._root_tag = ""
        self._root_attrs: dict[str, str] = {}

    # -- element events ------------------------------------------------------------------------

    def start(self, tag: str, attrs: dict[str, str]) -> int:
        tags = self._tags
        parent = tags[-1] if tags else ""
        tags.append(tag)
        if tag == "testcase":
            frame = self._open[-1] if self._open else self._orphan_suite()
            if self._evidence.cases_seen < SAMPLE_CASES:
                self._evidence.saw_case(attrs)
            self._case_attrs, self._case_frame, self._case = attrs, frame, None
            return 0
        case_attrs = self._case_attrs
        if case_attrs is not None:
            case = self._case
            if case is None:
                assert self._case_frame is not None
                case = self._case = CaseBuilder(case_attrs, self._case_frame, self._limits)
            return self._case_child(case, tag, attrs, parent)
        if tag == "testsuite":
            self._open_suite(attrs)
        elif not parent:
            self._open_root(tag, attrs)
        elif tag in _OUTPUTS and parent == "testsuite":
            return self._limits.output_chars
        elif tag == "property":
            self._evidence.saw_property(attrs.get("name", ""))
        return 0

    def end(self, tag: str, text: str | None) -> None:
        self._tags.pop()
        if self._case_attrs is not None:
            if tag == "testcase":
                self._close_case()
            elif self._case is not None:
                self._case.child_end(tag, text)
        elif tag == "testsuite":
            self._close_suite()
        elif text is not None and tag in _OUTPUTS and self._open:
            self._open[-1].set_output(tag, text)

    # -- structure -----------------------------------------------------------------------------

    def _open_root(self, tag: str, attrs: dict[str, str]) -> None:
        if tag not in _ROOTS:
            raise InvalidReport(
                f"not a JUnit XML report: root element is <{tag}>, "
                "expected <testsuites> or <testsuite>",
                reason="unknown-format",
            )
        self._root_tag = tag
        self._root_attrs = attrs
        self._evidence.saw_root(attrs)

    def _open_suite(self, attrs: dict[str, str]) -> None:
        if not self._tags[:-1]:
            self._open_root("testsuite", attrs)
        parents = tuple(frame.name for frame in self._open)
        if self._open:
            self._open[-1].child_suites += 1
            self._log.note(
                "nested-suites-flattened",
                f"suite '{attrs.get('name', '')}' is nested in '{parents[-1]}'; "
                "nested suites were flattened and their test cases kept",
            )
        frame = SuiteFrame(name=attrs.get("name", ""), attrs=attrs, parents=parents)
        self._evidence.saw_suite(attrs)
        self._open.append(frame)
        self._frames.append(frame)

    def _close_suite(self) -> None:
        frame = self._open.pop()
        frame.subtree.add_cases(frame.cases)
        check_declared(frame.name, frame.attrs, frame.subtree, self._log, what="suite")
        if self._open:
            self._open[-1].subtree.add(frame.subtree)

    def _orphan_suite(self) -> SuiteFrame:
        """The suite for test cases placed directly under ``<testsuites>``; closed in result()."""
        if self._orphans is None:
            self._log.note(
                "testcase-outside-suite",
                "test cases directly under <testsuites> were put in a suite named after the root",
            )
            self._orphans = SuiteFrame(self._root_attrs.get("name", ""), attrs={}, parents=())
            self._frames.append(self._orphans)
        return self._orphans

    def _case_child(self, case: CaseBuilder, tag: str, attrs: dict[str, str], parent: str) -> int:
        limits = self._limits
        if tag in _OUTCOMES:
            return case.outcome(tag, attrs, limits)
        if tag in _ATTEMPTS:
            self._evidence.saw_retry()
            case.attempt(tag, attrs, limits)
            return 0
        if tag == "stackTrace" and parent in _ATTEMPTS:
            return limits.trace_chars if case.wants_attempt_trace() else 0
        if tag in _OUTPUTS and parent == "testcase":
            return limits.output_chars
        return 0

    def _close_case(self) -> None:
        attrs, frame, case = self._case_attrs, self._case_frame, self._case
        self._case_attrs = self._case_frame = self._case = None
        assert attrs is not None
        assert frame is not None
        time = attrs.get("time")
        duration: float | None = None
        plain = False
        if time is not None:
            try:  # the common case, inlined: a plain non-negative decimal
                duration = float(time)
                plain = 0 <= duration < math.inf and "e" not in time and "E" not in time
            except ValueError:
                pass
        if not plain:
            duration = self._lenient_duration(time)
        if case is None:
            frame.cases.append(childless_case(frame.name, attrs, duration))
        else:
            frame.cases.append(case.build(duration))

    def _lenient_duration(self, time: str | None) -> float | None:
        """Any notation ``durations`` understands; what had to be fixed becomes a diagnostic."""
        duration, note = parse_duration(time)
        if note is not None:
            code = "time-format-fixed" if duration is not None else "time-unusable"
            self._log.note(code, note)
        return duration

    # -- result --------------------------------------------------------------------------------

    def result(self) -> JUnitReport:
        if self._orphans is not None:
            self._orphans.subtree.add_cases(self._orphans.cases)
        log = self._log
        total = _raw_total(self._frames)
        if self._root_tag == "testsuites":
            check_declared("testsuites", self._root_attrs, total, log, what="report")
        per_frame = number_repeats([frame.cases for frame in self._frames], log)
        suites = tuple(self._suite_reports(per_frame))
        cases = tuple(case for frame_cases in per_frame for case in frame_cases)
        dialect = self._evidence.decide()
        detected = Diagnostic("dialect", f"detected JUnit dialect: {dialect}")
        return JUnitReport(
            cases=cases,
            suites=suites,
            counts=TestCounts.of(cases),
            dialect=dialect,
            diagnostics=(detected, *log.result()),
        )

    def _suite_reports(self, per_frame: list[list[TestCase]]) -> list[SuiteReport]:
        reports = []
        for frame, cases in zip(self._frames, per_frame, strict=True):
            if frame.child_suites and not cases:
                continue  # a wrapper suite: its cases are reported by the nested suites
            duration = self._lenient_duration(frame.attrs.get("time"))
            reports.append(
                SuiteReport(
                    name=frame.name,
                    counts=TestCounts.of(cases),
                    duration_s=duration,
                    parents=frame.parents,
                    system_out=frame.system_out,
                    system_err=frame.system_err,
                )
            )
        return reports


def _raw_total(frames: list[SuiteFrame]) -> Tally:
    total = Tally()
    for frame in frames:
        if not frame.parents:
            total.add(frame.subtree)
    return total
