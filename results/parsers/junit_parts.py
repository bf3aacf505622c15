"""Mutable builders the JUnit parser fills while the XML streams past, and the count check.

``CaseBuilder`` gathers one ``<testcase>`` (outcome elements, retry attempts, output) and decides
its status; ``SuiteFrame`` is one open ``<testsuite>``; ``Tally`` counts test cases in a suite's
subtree so the producer's declared ``tests``/``failures``/``errors``/``skipped`` can be compared.
This module must not read XML itself: ``junit`` feeds it.
"""

from __future__ import annotations

from collections import Counter

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.model import ParseLimits, TestCase, TestStatus

#: Outcome precedence within one test case: an error outranks a failure outranks a skip.
_RANK = {"skipped": 1, "failure": 2, "error": 3}
_STATUS = {"skipped": TestStatus.SKIPPED, "failure": TestStatus.FAILED, "error": TestStatus.ERROR}
#: ``status``/``result`` attribute values that mean "not run" (googletest, some generators).
_NOT_RUN = frozenset({"notrun", "skipped", "disabled", "suppressed"})


class Tally:
    __slots__ = ("errors", "failed", "flaky", "skipped", "tests")

    def __init__(self) -> None:
        self.tests = self.failed = self.errors = self.skipped = self.flaky = 0

    def add_cases(self, cases: list[TestCase]) -> None:
        statuses = Counter(case.status for case in cases)
        self.tests += len(cases)
        self.failed += statuses[TestStatus.FAILED]
        self.errors += statuses[TestStatus.ERROR]
        self.skipped += statuses[TestStatus.SKIPPED]
        self.flaky += statuses[TestStatus.FLAKY]

    def add(self, other: Tally) -> None:
        self.tests += other.tests
        self.failed += other.failed
        self.errors += other.errors
        self.skipped += other.skipped
        self.flaky += other.flaky


class SuiteFrame:
    __slots__ = (
        "attrs",
        "cases",
        "child_suites",
        "name",
        "parents",
        "subtree",
        "system_err",
        "system_out",
    )

    def __init__(self, name: str, attrs: dict[str, str], parents: tuple[str, ...]) -> None:
        self.name = name
        self.attrs = attrs
        self.parents = parents
        self.cases: list[TestCase] = []
        self.child_suites = 0
        self.subtree = Tally()
        self.system_out: str | None = None
        self.system_err: str | None = None

    def set_output(self, tag: str, text: str) -> None:
        value = text if text.strip() else None
        if tag == "system-out":
            self.system_out = value
        else:
            self.system_err = value


class CaseBuilder:
    """One open ``<testcase>``. Defaults live on the class: most cases never set them, so a
    passing case costs three assignments here instead of fifteen."""

    kind: str | None = None
    capturing: str | None = None
    message: str | None = None
    outcome_type: str | None = None
    text: str | None = None
    reruns = 0
    flaky = 0
    attempt_message: str | None = None
    attempt_type: str | None = None
    attempt_trace: str | None = None
    system_out: str | None = None
    system_err: str | None = None

    def __init__(self, attrs: dict[str, str], frame: SuiteFrame, limits: ParseLimits) -> None:
        self.attrs = attrs
        self.frame = frame
        self.limits = limits

    def outcome(self, tag: str, attrs: dict[str, str], limits: ParseLimits) -> int:
        """A failure/error/skipped element; the highest-ranked first occurrence wins."""
        if self.kind is not None and _RANK[tag] <= _RANK[self.kind]:
            return 0
        self.kind = tag
        self.message = cap(attrs.get("message"), limits.message_chars)
        self.outcome_type = attrs.get("type") or None
        self.text = None
        self.capturing = tag
        return limits.message_chars if tag == "skipped" else limits.trace_chars

    def attempt(self, tag: str, attrs: dict[str, str], limits: ParseLimits) -> None:
        """flakyFailure/flakyError (failed, later passed) or rerunFailure/rerunError (failed)."""
        if tag.startswith("flaky"):
            self.flaky += 1
        else:
            self.reruns += 1
        if self.attempt_message is None:
            self.attempt_message = cap(attrs.get("message"), limits.message_chars)
            self.attempt_type = attrs.get("type") or None

    def wants_attempt_trace(self) -> bool:
        return self.attempt_trace is None

    def child_end(self, tag: str, text: str | None) -> None:
        if text is None:
            return
        if tag == self.capturing:
            self.text = text if text.strip() else None
            self.capturing = None
        elif tag == "stackTrace" and self.attempt_trace is None:
            self.attempt_trace = text if text.strip() else None
        elif tag == "system-out":
            self.system_out = text if text.strip() else None
        elif tag == "system-err":
            self.system_err = text if text.strip() else None

    def build(self, duration: float | None) -> TestCase:
        attrs = self.attrs
        if self.kind is None and not self.flaky and self.system_out is self.system_err is None:
            return childless_case(self.frame.name, attrs, duration)
        status, message, failure_type, trace = self._outcome()
        return TestCase(
            suite=self.frame.name,
            classname=attrs.get("classname") or attrs.get("class") or "",
            name=attrs.get("name", ""),
            status=status,
            duration_s=duration,
            message=message,
            failure_type=failure_type,
            trace=trace,
            reruns=self.reruns + self.flaky,
            system_out=self.system_out,
            system_err=self.system_err,
        )

    def _outcome(self) -> tuple[TestStatus, str | None, str | None, str | None]:
        """Only for a case with an outcome, an attempt or output (``childless_case`` does the
        rest): the status, message, failure type and trace."""
        kind = self.kind
        if kind == "skipped":
            message = self.message or (self.text.strip() if self.text else None)
            return TestStatus.SKIPPED, message, self.outcome_type, None
        if kind is not None:
            message = self.message or first_line(self.text, self.limits.message_chars)
            return _STATUS[kind], message, self.outcome_type, self.text
        if self.flaky:
            message = self.attempt_message or first_line(
                self.attempt_trace, self.limits.message_chars
            )
            return TestStatus.FLAKY, message, self.attempt_type, self.attempt_trace
        return _passed_or_not_run(self.attrs), None, None, None


def childless_case(suite: str, attrs: dict[str, str], duration: float | None) -> TestCase:
    """A ``<testcase>`` with nothing inside that matters: passed, or not run if its attributes
    say so. Most cases of any report, so this is kept short."""
    classname = attrs.get("classname") or attrs.get("class") or ""
    return TestCase(suite, classname, attrs.get("name", ""), _passed_or_not_run(attrs), duration)


def _passed_or_not_run(attrs: dict[str, str]) -> TestStatus:
    if attrs.get("status") in _NOT_RUN or attrs.get("result") in _NOT_RUN:
        return TestStatus.SKIPPED
    return TestStatus.PASSED


def cap(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… truncated: {len(text)} characters in total]"


def first_line(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    for line in text.splitlines():
        if line.strip():
            return cap(line.strip(), limit)
    return None


_DECLARED = (("tests", ("tests",)), ("failed", ("failures",)), ("errors", ("errors",)))
_DECLARED_SKIPS = ("skipped", "skip", "skips")


def check_declared(
    name: str, attrs: dict[str, str], tally: Tally, log: DiagnosticLog, *, what: str
) -> None:
    """Compare the producer's declared totals with the test cases actually present."""
    wrong = []
    for field, keys in (*_DECLARED, ("skipped", _DECLARED_SKIPS)):
        raw = next((attrs[key] for key in keys if key in attrs), None)
        if raw is None:
            continue
        actual = getattr(tally, field)
        try:
            declared = int(raw.strip())
        except ValueError:
            wrong.append(f"{keys[0]}={raw!r} (not a number; found {actual})")
            continue
        if declared != actual:
            wrong.append(f"{keys[0]}={declared} (found {actual})")
    if wrong:
        log.note(
            "count-mismatch",
            f"{what} '{name}' declares {', '.join(wrong)}; totals were counted from the test cases",
        )
