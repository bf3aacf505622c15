"""Every real JUnit report in the shared reference set parses with the counts it really holds.

The expected numbers were counted by hand from the files (testcase elements and their
failure/error/skipped/flaky children), not copied from the parser's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from results.parsers import JUnitReport, TestStatus, parse_junit

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "results"

# file: (tests, passed, failed, errors, skipped, flaky, dialect)
TRUTH = {
    "junit-surefire3-rerun-flaky.xml": (4, 2, 1, 1, 0, 2, "surefire"),
    "junit-gradle-TEST-BarTest.xml": (1, 1, 0, 0, 0, 0, "gradle"),
    "junit-pytest-xunit1-skipped.xml": (14, 10, 0, 0, 4, 0, "pytest-xunit1"),
    "junit-jest-junit.xml": (2, 2, 0, 0, 0, 0, "jest-junit"),
    "junit-gotestsum-golden.xml": (47, 38, 5, 0, 4, 0, "gotestsum"),
    "junit-dotnet-JunitXml.TestLogger.xml": (9, 5, 4, 0, 0, 0, "dotnet-junit-logger"),
    "junit-bazel-generated-suite-logs.xml": (1, 0, 0, 1, 0, 0, "bazel"),
    "junit-phpunit-nested-testsuites.xml": (15, 15, 0, 0, 0, 0, "phpunit"),
}


def parse(name: str) -> JUnitReport:
    return parse_junit(REFERENCE / name)


def codes(report: JUnitReport) -> dict[str, int]:
    return {d.code: d.count for d in report.diagnostics}


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_reference_counts(name: str) -> None:
    tests, passed, failed, errors, skipped, flaky, dialect = TRUTH[name]
    report = parse(name)
    counts = report.counts
    assert (counts.tests, counts.passed, counts.failed, counts.errors) == (
        tests,
        passed,
        failed,
        errors,
    )
    assert (counts.skipped, counts.flaky) == (skipped, flaky)
    assert len(report.cases) == tests
    assert sum(suite.counts.tests for suite in report.suites) == tests
    assert report.dialect == dialect
    assert report.diagnostics[0].code == "dialect"


def test_reference_set_is_complete() -> None:
    on_disk = {p.name for p in REFERENCE.glob("junit-*.xml")}
    assert on_disk == set(TRUTH)


def test_surefire_flaky_and_reruns() -> None:
    cases = {c.name: c for c in parse("junit-surefire3-rerun-flaky.xml").cases}
    assert cases["throwsAlways"].status is TestStatus.ERROR
    assert cases["throwsAlways"].reruns == 3
    assert cases["throwsAlways"].failure_type == "java.lang.RuntimeException"
    assert cases["failsAssertionAlways"].status is TestStatus.FAILED
    assert cases["failsAssertionAlways"].reruns == 3
    assert cases["failsAssertionAlways"].message == (
        "Always fails assertion ==> expected: <1> but was: <2>"
    )
    flaky = cases["failsAssertionOnlyFirstAttempt"]
    assert flaky.status is TestStatus.FLAKY
    assert flaky.reruns == 1
    assert flaky.message is not None
    assert flaky.message.startswith("First attempt fails")
    assert flaky.trace is not None
    assert "ExampleTests.java:32" in flaky.trace
    assert cases["throwsOnlyFirstAttempt"].status is TestStatus.FLAKY


def test_surefire_declared_tests_mismatch_reported_once() -> None:
    report = parse("junit-surefire3-rerun-flaky.xml")
    assert codes(report)["count-mismatch"] == 1
    mismatch = next(d for d in report.diagnostics if d.code == "count-mismatch")
    assert "tests=2 (found 4)" in mismatch.message


def test_gradle_suite_output_and_name_with_spaces() -> None:
    report = parse("junit-gradle-TEST-BarTest.xml")
    assert report.cases[0].name == "it is true()"
    assert report.cases[0].duration_s == pytest.approx(0.014)
    suite = report.suites[0]
    assert suite.system_out is not None
    assert suite.system_out.startswith("Hi beforeAll")
    assert suite.system_err is None  # empty CDATA


def test_pytest_skip_message_and_durations() -> None:
    report = parse("junit-pytest-xunit1-skipped.xml")
    skipped = [c for c in report.cases if c.status is TestStatus.SKIPPED]
    assert {c.name for c in skipped} == {"test_all_hosts_blacklisted", "test_min_hosts_timeout"}
    assert skipped[0].message == (
        "This test fails due to https://github.com/horovod/horovod/issues/2030"
    )
    assert report.duration_s == pytest.approx(72.024)  # sum of the 14 testcase times
    assert report.suites[0].duration_s == pytest.approx(72.194)  # the suite's own time


def test_jest_empty_classname_uses_suite_for_identity() -> None:
    report = parse("junit-jest-junit.xml")
    assert [c.classname for c in report.cases] == ["", ""]
    assert report.cases[0].key == "widget.test.js Load widget via link"


def test_gotestsum_subtests_empty_classname_and_empty_suite() -> None:
    report = parse("junit-gotestsum-golden.xml")
    names = [c.name for c in report.cases]
    assert "TestNestedSuccess/a/sub" in names
    main = report.cases[0]
    assert (main.classname, main.name, main.status) == ("", "TestMain", TestStatus.FAILED)
    assert main.message == "Failed"
    assert main.trace is not None
    assert "sometimes main can exit 2" in main.trace
    assert main.key.endswith("internal/badmain TestMain")
    assert [s.counts.tests for s in report.suites] == [1, 18, 28, 0]
    assert codes(report)["count-mismatch"] == 1  # badmain declares tests="0"
    skipped = next(c for c in report.cases if c.name == "TestSkippedWitLog")
    assert skipped.message is not None
    assert "the skip message" in skipped.message


def test_dotnet_duplicate_names_kept_and_exponent_times_fixed() -> None:
    report = parse("junit-dotnet-JunitXml.TestLogger.xml")
    dupes = [c for c in report.cases if c.name == "Multiply_ReturnsEight(1,2)"]
    assert [c.occurrence for c in dupes] == [1, 2]
    assert dupes[0].key != dupes[1].key
    assert all(c.status is TestStatus.FAILED for c in dupes)
    assert codes(report)["duplicate-test"] == 1
    assert codes(report)["time-format-fixed"] == 4  # four time="1E-07"
    assert report.cases[1].duration_s == pytest.approx(1e-7)
    assert dupes[0].message == "  Expected: 8\r\n  But was:  2\r\n"


def test_bazel_error_with_empty_body_and_suite_log() -> None:
    report = parse("junit-bazel-generated-suite-logs.xml")
    case = report.cases[0]
    assert case.status is TestStatus.ERROR
    assert case.message == "exited with error code 1"
    assert case.trace is None
    out = report.suites[0].system_out
    assert out is not None
    assert "ModuleNotFoundError" in out
    assert report.suites[0].system_err is not None


def test_phpunit_nested_suite_flattened() -> None:
    report = parse("junit-phpunit-nested-testsuites.xml")
    assert len(report.suites) == 1
    suite = report.suites[0]
    assert suite.name == "Askedio\\Tests\\IntegrationTest"
    assert suite.parents == ("Application Test Suite",)
    assert suite.counts.tests == 15
    assert report.cases[0].classname == "Askedio.Tests.IntegrationTest"
    assert "nested-suites-flattened" in codes(report)
    assert "count-mismatch" not in codes(report)
