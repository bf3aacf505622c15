"""JUnit parsing rules on small hand-written reports: one rule per test."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from results.parsers import InvalidReport, JUnitReport, ParseLimits, TestStatus, parse_junit
from results.parsers.durations import parse_duration


def junit(xml: str, limits: ParseLimits | None = None) -> JUnitReport:
    return parse_junit(io.BytesIO(xml.encode()), limits=limits)


def codes(report: JUnitReport) -> dict[str, int]:
    return {d.code: d.count for d in report.diagnostics}


@pytest.mark.parametrize(
    ("text", "seconds", "fixed"),
    [
        ("0.25", 0.25, False),
        ("2,120.532", 2120.532, True),  # Surefire 3.1.0 thousands separator
        ("0,03", 0.03, True),  # locale decimal comma
        ("1E-07", 1e-07, True),  # .NET exponent notation
        ("14,029.255", 14029.255, True),
        ("1.234,5", 1234.5, True),
        ("1,234,567", 1234567.0, True),
    ],
)
def test_time_formats(text: str, seconds: float, fixed: bool) -> None:
    value, note = parse_duration(text)
    assert value == pytest.approx(seconds)
    assert (note is not None) == fixed


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "abc", "1,2,3.4.5"])
def test_unusable_times_are_unknown_not_zero(text: str) -> None:
    value, note = parse_duration(text)
    assert value is None
    assert note is not None


def test_time_fixes_are_reported_once_with_a_count() -> None:
    report = junit(
        '<testsuite name="s"><testcase name="a" time="2,120.532"/>'
        '<testcase name="b" time="0,03"/><testcase name="c" time="x"/></testsuite>'
    )
    assert [c.duration_s for c in report.cases] == [pytest.approx(2120.532), 0.03, None]
    assert codes(report)["time-format-fixed"] == 2
    assert codes(report)["time-unusable"] == 1


def test_outcome_precedence_error_over_failure_over_skipped() -> None:
    report = junit(
        '<testsuite name="s">'
        '<testcase name="a"><skipped/><failure message="f"/><error message="e"/></testcase>'
        '<testcase name="b"><failure message="f1"/><failure message="f2"/></testcase>'
        '<testcase name="c"><skipped message="later"/></testcase>'
        '<testcase name="d"/></testsuite>'
    )
    statuses = [(c.name, c.status, c.message) for c in report.cases]
    assert statuses == [
        ("a", TestStatus.ERROR, "e"),
        ("b", TestStatus.FAILED, "f1"),
        ("c", TestStatus.SKIPPED, "later"),
        ("d", TestStatus.PASSED, None),
    ]
    assert (report.counts.errors, report.counts.failed, report.counts.skipped) == (1, 1, 1)


def test_failure_without_message_uses_first_trace_line() -> None:
    report = junit(
        '<testsuite name="s"><testcase name="a"><failure type="AssertionError">\n'
        "  AssertionError: boom\n  at x.py:1\n</failure></testcase></testsuite>"
    )
    case = report.cases[0]
    assert case.message == "AssertionError: boom"
    assert case.failure_type == "AssertionError"
    assert case.trace is not None
    assert "at x.py:1" in case.trace


def test_nested_suites_at_any_depth_are_flattened() -> None:
    report = junit(
        '<testsuites><testsuite name="a" tests="3"><testsuite name="b" tests="3">'
        '<testcase name="t1"/><testsuite name="c" tests="2"><testcase name="t2"/>'
        '<testcase name="t3"><failure/></testcase></testsuite>'
        "</testsuite></testsuite></testsuites>"
    )
    assert report.counts.tests == 3
    assert [(s.name, s.parents, s.counts.tests) for s in report.suites] == [
        ("b", ("a",), 1),
        ("c", ("a", "b"), 2),
    ]
    assert [c.suite for c in report.cases] == ["b", "c", "c"]
    assert codes(report)["nested-suites-flattened"] == 2
    assert "count-mismatch" not in codes(report)


def test_declared_counts_are_hints_and_mismatches_reported() -> None:
    report = junit(
        '<testsuites tests="9"><testsuite name="s" tests="5" failures="0" errors="1">'
        '<testcase name="a"/><testcase name="b"/><testcase name="c"/>'
        '<testcase name="d"><failure/></testcase></testsuite></testsuites>'
    )
    assert report.counts.tests == 4
    messages = [d.message for d in report.diagnostics if d.code == "count-mismatch"]
    assert "tests=5 (found 4), failures=0 (found 1), errors=1 (found 0)" in messages[0]
    assert [d.count for d in report.diagnostics if d.code == "count-mismatch"] == [2]


def test_gradle_style_reruns_fold_into_one_flaky_case() -> None:
    report = junit(
        '<testsuite name="s">'
        '<testcase classname="C" name="t" time="1"><failure message="first"/></testcase>'
        '<testcase classname="C" name="t" time="2"><failure message="second"/></testcase>'
        '<testcase classname="C" name="t" time="3"/>'
        '<testcase classname="C" name="other"/></testsuite>'
    )
    assert report.counts.tests == 2
    assert (report.counts.failed, report.counts.flaky, report.counts.passed) == (0, 1, 2)
    flaky = report.cases[0]
    assert (flaky.status, flaky.reruns, flaky.message) == (TestStatus.FLAKY, 2, "second")
    assert flaky.duration_s == 6
    assert report.suites[0].counts.flaky == 1
    assert "reruns-folded" in codes(report)


def test_same_name_without_retry_shape_keeps_every_case() -> None:
    report = junit(
        '<testsuite name="s">'
        '<testcase classname="C" name="t"/><testcase classname="C" name="t"><failure/></testcase>'
        "</testsuite>"
    )
    assert report.counts.tests == 2
    assert (report.counts.passed, report.counts.failed) == (1, 1)
    assert [c.key for c in report.cases] == ["C t", "C t #2"]
    assert codes(report)["duplicate-test"] == 1


def test_same_name_in_two_suites_is_a_repeat_not_a_retry() -> None:
    report = junit(
        '<testsuites><testsuite name="a"><testcase classname="C" name="t"><failure/></testcase>'
        '</testsuite><testsuite name="b"><testcase classname="C" name="t"/></testsuite>'
        "</testsuites>"
    )
    assert (report.counts.failed, report.counts.passed) == (1, 1)
    assert [c.occurrence for c in report.cases] == [1, 2]


def test_flaky_failure_is_flaky_and_rerun_failure_stays_failed() -> None:
    report = junit(
        '<testsuite name="s">'
        '<testcase name="f"><flakyFailure message="m"><stackTrace>st</stackTrace>'
        "<system-out>attempt output</system-out></flakyFailure>"
        "<flakyError><stackTrace>second</stackTrace></flakyError></testcase>"
        '<testcase name="r"><failure message="x"/><rerunFailure/><rerunFailure/></testcase>'
        "</testsuite>"
    )
    flaky, failed = report.cases
    assert (flaky.status, flaky.reruns, flaky.trace, flaky.system_out) == (
        TestStatus.FLAKY,
        2,
        "st",
        None,
    )
    assert (failed.status, failed.reruns) == (TestStatus.FAILED, 2)
    assert report.counts.failed == 1
    assert report.counts.flaky == 1


def test_case_output_and_caps_are_configurable() -> None:
    limits = ParseLimits(message_chars=10, trace_chars=20, output_chars=5)
    report = junit(
        '<testsuite name="s"><testcase name="a">'
        f'<failure message="{"m" * 50}">{"t" * 100}</failure>'
        "<system-out>0123456789</system-out><system-err>e</system-err>"
        "</testcase></testsuite>",
        limits,
    )
    case = report.cases[0]
    assert case.message is not None
    assert case.message.startswith("m" * 10 + "\n[… truncated: 50")
    assert case.trace is not None
    assert case.trace.startswith("t" * 20 + "\n[… truncated: 100")
    assert case.system_out == "01234\n[… truncated: 10 characters in total]"
    assert case.system_err == "e"


def test_default_caps_are_4k_message_and_64k_trace() -> None:
    report = junit(
        f'<testsuite name="s"><testcase name="a"><failure message="{"m" * 5000}">'
        f"{'t' * 70000}</failure></testcase></testsuite>"
    )
    case = report.cases[0]
    assert case.message is not None
    assert case.message.startswith("m" * 4096 + "\n")
    assert case.trace is not None
    assert case.trace.startswith("t" * 65536 + "\n")


def test_googletest_notrun_is_skipped() -> None:
    report = junit(
        '<testsuites><testsuite name="s"><testcase name="DISABLED_x" status="notrun" '
        'result="suppressed" classname="S"/></testsuite></testsuites>'
    )
    assert report.cases[0].status is TestStatus.SKIPPED
    assert report.dialect == "googletest"


def test_testcase_directly_under_testsuites() -> None:
    report = junit('<testsuites name="root"><testcase name="a"/></testsuites>')
    assert report.counts.tests == 1
    assert report.cases[0].suite == "root"
    assert "testcase-outside-suite" in codes(report)


def test_empty_testsuites_is_a_valid_empty_report() -> None:
    report = junit("<testsuites/>")
    assert report.counts.tests == 0
    assert report.suites == ()


def test_default_namespace_is_ignored() -> None:
    report = junit(
        '<testsuite xmlns="urn:x" name="s"><testcase name="a"><failure/></testcase></testsuite>'
    )
    assert report.counts.failed == 1


def test_blank_lines_before_the_declaration_are_tolerated() -> None:
    report = junit(
        '\n\n  <?xml version="1.0"?>\n<testsuite name="s"><testcase name="a"/></testsuite>'
    )
    assert report.counts.tests == 1
    assert "leading-whitespace" in codes(report)
    bom = parse_junit(io.BytesIO(b'\xef\xbb\xbf\n<?xml version="1.0"?><testsuite name="s"/>'))
    assert bom.counts.tests == 0


def test_not_junit_is_refused() -> None:
    with pytest.raises(InvalidReport) as caught:
        junit('<report name="jacoco"/>')
    assert caught.value.reason == "unknown-format"
    assert caught.value.code == "invalid-report"
    assert caught.value.status == 400


def test_path_and_gzip_input(tmp_path: Path) -> None:
    xml = b'<testsuite name="s"><testcase name="a"/><testcase name="b"><error/></testcase>'
    xml += b"</testsuite>"
    plain = tmp_path / "r.xml"
    plain.write_bytes(xml)
    packed = tmp_path / "r.xml.bin"  # no .gz suffix: detection is by magic bytes
    packed.write_bytes(gzip.compress(xml))
    assert parse_junit(plain).counts.errors == 1
    assert parse_junit(str(packed)).counts.errors == 1


def test_caller_file_object_is_left_open() -> None:
    stream = io.BytesIO(b'<testsuite name="s"><testcase name="a"/></testsuite>')
    parse_junit(stream)
    assert not stream.closed


def test_dialect_surefire_by_schema_and_gradle_by_shape() -> None:
    surefire = junit(
        '<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/'
        'xsd/surefire-test-report-3.0.xsd" name="s"><testcase name="a"/></testsuite>'
    )
    assert surefire.dialect == "surefire"
    gradle = junit(
        '<testsuite name="s" tests="1" skipped="0" failures="0" errors="0" '
        'timestamp="2023-01-11T08:51:38" hostname="h" time="0.1"><testcase name="a"/></testsuite>'
    )
    assert gradle.dialect == "gradle"
    assert junit('<testsuite name="s"><testcase name="a"/></testsuite>').dialect == "generic"


@pytest.mark.parametrize(
    ("xml", "dialect"),
    [
        (
            '<testsuites name="Mocha Tests"><testsuite name="s"><testcase name="a"/></testsuite>'
            "</testsuites>",
            "mocha-junit-reporter",
        ),
        (
            '<testsuites name="custom"><testsuite name="f.test.js"><testcase classname="A b" '
            'name="A b"/></testsuite></testsuites>',
            "jest-junit",
        ),
        (
            '<testsuite name="pytest"><testcase classname="t" name="a"/></testsuite>',
            "pytest-xunit2",
        ),
        (
            '<testsuites tests="1"><testsuite name="p" tests="1" hostname="h"><properties>'
            '<property name="go.version" value="1.0"/></properties><testcase name="TestA" '
            'classname="p"/></testsuite></testsuites>',
            "go-junit-report",
        ),
    ],
)
def test_more_dialects(xml: str, dialect: str) -> None:
    assert junit(xml).dialect == dialect


def test_suite_time_fixes_are_reported() -> None:
    report = junit('<testsuite name="s" time="2,120.532"><testcase name="a" time="1"/></testsuite>')
    assert report.suites[0].duration_s == pytest.approx(2120.532)
    assert "time-format-fixed" in codes(report)
