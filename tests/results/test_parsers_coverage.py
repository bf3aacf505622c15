"""Coverage parsing: the real reports, hand-written LCOV and Go profiles, detection and merging.

Expected numbers for the real reports were counted from the files: JaCoCo from its
``<sourcefile>`` lines and its report-level LINE/BRANCH counters, Cobertura from the class-level
``<line>`` elements (85 with hits="1", 67 with hits="0" in the coverage.py report).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from results.parsers import (
    CoverageReport,
    InvalidReport,
    ParseLimits,
    merge_coverage,
    parse_coverage,
    percentage,
)

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "results"


def cov(text: str | bytes) -> CoverageReport:
    data = text.encode() if isinstance(text, str) else text
    return parse_coverage(io.BytesIO(data))


def codes(report: CoverageReport) -> set[str]:
    return {d.code for d in report.diagnostics}


# file: (format, lines covered, lines valid, branches covered, branches valid, files)
TRUTH = {
    "jacoco-default-package.xml": ("jacoco", 6, 9, 1, 2, 1),
    "jacoco-aggregate-empty-report.xml": ("jacoco", 0, 0, 0, 0, 0),
    "cobertura-coveragepy-4.5.1.xml": ("cobertura", 85, 152, 0, 0, 2),
    "cobertura-java-2.0.3-doctype.xml": ("cobertura", 0, 8, 0, 6, 2),
}


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_reference_coverage(name: str) -> None:
    fmt, covered, valid, b_covered, b_valid, files = TRUTH[name]
    report = parse_coverage(REFERENCE / name)
    assert report.format == fmt
    assert (report.lines_covered, report.lines_valid) == (covered, valid)
    assert (report.branches_covered, report.branches_valid) == (b_covered, b_valid)
    assert len(report.files) == files
    assert "counter-mismatch" not in codes(report)


def test_reference_set_is_complete() -> None:
    on_disk = {p.name for p in REFERENCE.iterdir() if p.name.startswith(("jacoco", "cobertura"))}
    assert on_disk == set(TRUTH)


def test_jacoco_default_package_lines_and_percentages() -> None:
    report = parse_coverage(REFERENCE / "jacoco-default-package.xml")
    (file,) = report.files
    assert file.path == "Example.java"  # default package name="" adds no prefix
    assert sorted(file.covered) == [1, 3, 6, 8, 15, 16]
    assert sorted(file.uncovered) == [4, 11, 12]
    assert [tuple(b) for b in file.branches] == [(3, 1, 2)]
    assert report.line_pct == pytest.approx(200 / 3)
    assert report.branch_pct == 50.0
    assert "doctype-seen" in codes(report)


def test_empty_jacoco_is_unknown_not_zero() -> None:
    report = parse_coverage(REFERENCE / "jacoco-aggregate-empty-report.xml")
    assert report.line_pct is None
    assert report.branch_pct is None
    assert "coverage-unknown" in codes(report)


def test_coveragepy_branches_not_measured_is_unknown() -> None:
    report = parse_coverage(REFERENCE / "cobertura-coveragepy-4.5.1.xml")
    assert report.line_pct == pytest.approx(100 * 85 / 152)
    assert report.branch_pct is None
    assert {f.path for f in report.files} == {"__init__.py", "classes.py"}


def test_java_cobertura_counts_class_lines_once_and_zero_is_zero() -> None:
    report = parse_coverage(REFERENCE / "cobertura-java-2.0.3-doctype.xml")
    assert report.line_pct == 0.0
    assert report.branch_pct == 0.0
    by_path = {f.path: f for f in report.files}
    app1 = by_path["org/dugu/acc/dev/cobertura/demo/DemoApplication1.java"]
    assert sorted(app1.uncovered) == [3, 5, 6, 7, 9]
    assert [tuple(b) for b in app1.branches] == [(6, 0, 2), (7, 0, 2)]


GCOVR = """<?xml version="1.0" ?>
<!DOCTYPE coverage SYSTEM 'http://cobertura.sourceforge.net/xml/coverage-04.dtd'>
<coverage line-rate="0.75" branch-rate="0.5" lines-covered="3" lines-valid="4"
  branches-covered="1" branches-valid="2" complexity="0.0" version="gcovr 7.2">
 <sources><source>/build/src</source></sources>
 <packages><package name="lib" line-rate="0.75" branch-rate="0.5" complexity="0.0"><classes>
  <class name="util_c" filename="lib\\util.c" line-rate="0.5" branch-rate="0.5" complexity="0.0">
   <methods/>
   <lines>
    <line number="3" hits="7" branch="false"/>
    <line number="4" hits="7" branch="true" condition-coverage="50% (1/2)">
     <conditions><condition number="0" type="jump" coverage="50%"/></conditions>
    </line>
   </lines>
  </class>
  <class name="util_inline" filename="./lib/util.c" line-rate="0.5" branch-rate="0"
    complexity="0.0">
   <methods/>
   <lines><line number="4" hits="0" branch="False"/><line number="9" hits="0"/></lines>
  </class>
 </classes></package></packages>
</coverage>
"""


def test_gcovr_classes_of_one_file_are_unioned() -> None:
    report = cov(GCOVR)
    (file,) = report.files
    assert file.path == "lib/util.c"  # backslashes and ./ normalised, never resolved
    assert (sorted(file.covered), sorted(file.uncovered)) == ([3, 4], [9])
    assert [(b.line, b.covered, b.missed) for b in file.branches] == [(4, 1, 1)]
    assert report.branch_pct == 50.0
    assert "counter-mismatch" in codes(report)  # it declares 3/4, the union is 2/3


ISTANBUL_CLOVER = """<?xml version="1.0" encoding="UTF-8"?>
<coverage generated="1700000000000" clover="3.2.0">
  <project timestamp="1700000000000" name="All files">
    <metrics statements="5" coveredstatements="3" conditionals="2" coveredconditionals="1"
      methods="1" coveredmethods="1" elements="8" coveredelements="5" complexity="0" loc="5"
      ncloc="5" packages="1" files="1" classes="1"/>
    <package name="src">
      <metrics statements="5" coveredstatements="3" conditionals="2" coveredconditionals="1"/>
      <file name="app.js" path="/repo/src/app.js">
        <metrics statements="5" coveredstatements="3" conditionals="2" coveredconditionals="1"/>
        <line num="1" count="1" type="stmt"/>
        <line num="2" count="1" type="method"/>
        <line num="3" count="4" type="cond" truecount="1" falsecount="0"/>
        <line num="4" count="0" type="stmt"/>
        <line num="5" count="2" type="stmt"/>
        <line num="6" count="0" type="stmt"/>
      </file>
    </package>
  </project>
</coverage>
"""

PHPUNIT_CLOVER = """<?xml version="1.0" encoding="UTF-8"?>
<coverage generated="1573571394">
  <project timestamp="1573571394">
    <file name="/app/src/Money.php">
      <class name="App\\Money" namespace="App">
        <metrics complexity="2" methods="2" coveredmethods="1" statements="3"
          coveredstatements="2" elements="5" coveredelements="3"/>
      </class>
      <line num="9" type="method" name="__construct" visibility="public" count="3"/>
      <line num="11" type="stmt" count="3"/>
      <line num="12" type="stmt" count="3"/>
      <line num="17" type="stmt" count="0"/>
    </file>
    <metrics files="1" loc="20" ncloc="20" classes="1" methods="2" coveredmethods="1"
      statements="3" coveredstatements="2" elements="5" coveredelements="3"/>
  </project>
</coverage>
"""


def test_clover_from_istanbul_and_phpunit() -> None:
    istanbul = cov(ISTANBUL_CLOVER)
    assert istanbul.format == "clover"
    (file,) = istanbul.files
    assert file.path == "/repo/src/app.js"
    assert (sorted(file.covered), sorted(file.uncovered)) == ([1, 3, 5], [4, 6])
    assert [(b.line, b.covered, b.total) for b in file.branches] == [(3, 1, 2)]
    phpunit = cov(PHPUNIT_CLOVER)
    assert phpunit.format == "clover"
    assert (phpunit.lines_covered, phpunit.lines_valid) == (2, 3)  # the method line is no line
    assert phpunit.files[0].path == "/app/src/Money.php"


def test_jacoco_groups_at_any_depth_and_repeated_sourcefile_union() -> None:
    report = cov(
        '<?xml version="1.0"?><!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" '
        '"report.dtd"><report name="r"><group name="g1"><group name="g2">'
        '<package name="a/b"><sourcefile name="X.java"><line nr="1" mi="0" ci="2" mb="0" cb="0"/>'
        '<line nr="2" mi="3" ci="0" mb="1" cb="0"/></sourcefile></package></group>'
        '<package name="a/b"><sourcefile name="X.java"><line nr="2" mi="0" ci="3" mb="0" cb="1"/>'
        '<line nr="3" mi="1" ci="0"/></sourcefile></package></group>'
        '<counter type="LINE" missed="1" covered="2"/></report>'
    )
    (file,) = report.files
    assert file.path == "a/b/X.java"
    assert (sorted(file.covered), sorted(file.uncovered)) == ([1, 2], [3])
    assert [tuple(b) for b in file.branches] == [(2, 1, 1)]
    assert "counter-mismatch" not in codes(report)


def test_jacoco_counters_only_report_keeps_totals() -> None:
    report = cov(
        '<report name="r"><package name="p"><class name="p/C"><counter type="LINE" missed="1" '
        'covered="3"/></class></package><counter type="LINE" missed="1" covered="3"/></report>'
    )
    assert report.line_pct == 75.0
    assert report.files == ()
    assert "no-line-data" in codes(report)


def test_jacoco_counter_mismatch_is_reported() -> None:
    report = cov(
        '<report name="r"><package name="p"><sourcefile name="A.java">'
        '<line nr="1" mi="0" ci="1"/></sourcefile></package>'
        '<counter type="LINE" missed="5" covered="5"/></report>'
    )
    assert report.line_pct == 100.0
    assert "counter-mismatch" in codes(report)


LCOV = """TN:unit
SF:/repo/src/a.c
FN:1,main
FNDA:1,main
DA:1,1
DA:2,0
DA:3,5,abcdef
BRDA:3,0,0,1
BRDA:3,0,1,-
LF:3
LH:2
end_of_record
TN:integration
SF:/repo/src/a.c
DA:2,1
DA:4,0
BRDA:3,0,1,2
end_of_record
SF:src/b.c
DA:10,0
end_of_record
"""


def test_lcov_records_of_one_file_are_unioned() -> None:
    report = cov(LCOV)
    assert report.format == "lcov"
    by_path = {f.path: f for f in report.files}
    a = by_path["/repo/src/a.c"]
    assert (sorted(a.covered), sorted(a.uncovered)) == ([1, 2, 3], [4])
    assert [tuple(b) for b in a.branches] == [(3, 2, 2)]  # branch 1 taken in the second record
    assert sorted(by_path["src/b.c"].uncovered) == [10]
    assert (report.lines_covered, report.lines_valid) == (3, 5)
    assert report.branch_pct == 100.0


def test_lcov_bad_record_names_its_line() -> None:
    with pytest.raises(InvalidReport) as caught:
        cov("SF:a.c\nDA:1,1\nDA:x,1\nend_of_record\n")
    assert caught.value.line == 3


GO = """mode: count
example.com/m/pkg/a.go:3.14,5.2 2 1
example.com/m/pkg/a.go:5.2,7.3 1 0
example.com/m/pkg/a.go:9.1,10.5 1 0
example.com/m/pkg/a.go:12.1,12.9 0 0
example.com/m/pkg/b.go:1.1,2.2 1 3
"""


def test_go_blocks_expand_to_lines_and_overlap_counts_as_ran() -> None:
    report = cov(GO)
    assert report.format == "go"
    by_path = {f.path: f for f in report.files}
    a = by_path["example.com/m/pkg/a.go"]
    assert sorted(a.covered) == [3, 4, 5]  # line 5 is shared with an unrun block
    assert sorted(a.uncovered) == [6, 7, 9, 10]  # line 12's block has no statements
    assert sorted(by_path["example.com/m/pkg/b.go"].covered) == [1, 2]
    assert report.branch_pct is None


def test_go_concatenated_profiles_union() -> None:
    report = cov("mode: set\nm/a.go:1.1,1.9 1 0\nmode: set\nm/a.go:1.1,1.9 1 1\n")
    assert sorted(report.files[0].covered) == [1]
    assert "concatenated-profiles" in codes(report)


@pytest.mark.parametrize(
    "bad",
    ["mode: set\nm/a.go:1.1 1 1\n", "mode: set\nm/a.go:5.1,2.1 1 1\n", "mode: sometimes\n"],
)
def test_go_bad_profiles_are_refused(bad: str) -> None:
    with pytest.raises(InvalidReport):
        cov(bad)


def test_go_huge_block_is_refused_not_expanded() -> None:
    with pytest.raises(InvalidReport):
        cov("mode: set\nm/a.go:1.1,999999999.1 1 1\n")


def test_detection_is_by_content_and_gzip_is_transparent() -> None:
    assert cov(gzip.compress(GO.encode())).format == "go"
    assert cov(b"\xef\xbb\xbf" + LCOV.encode()).format == "lcov"
    assert cov("\n\n  <coverage lines-valid='0'><packages/></coverage>").format == "cobertura"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("hello world", "unknown-format"),
        ('<testsuites><testsuite name="x"/></testsuites>', "unknown-format"),
        ("", "unknown-format"),
    ],
)
def test_unknown_coverage_is_refused(content: str, reason: str) -> None:
    with pytest.raises(InvalidReport) as caught:
        cov(content)
    assert caught.value.reason == reason
    assert caught.value.status == 400


def test_long_text_line_is_refused() -> None:
    with pytest.raises(InvalidReport) as caught:
        parse_coverage(
            io.BytesIO(b"SF:" + b"a" * 5000 + b"\n"), limits=ParseLimits(max_line_chars=1000)
        )
    assert caught.value.reason == "line-too-long"


SHARD_1 = "SF:src/x.py\nDA:1,1\nDA:2,1\nDA:3,0\nDA:4,0\nBRDA:2,0,0,1\nBRDA:2,0,1,0\nend_of_record\n"
SHARD_2 = "SF:src/x.py\nDA:1,1\nDA:2,0\nDA:3,1\nDA:4,0\nBRDA:2,0,0,0\nBRDA:2,0,1,1\nend_of_record\n"


def test_shard_merge_is_a_line_union_not_a_sum() -> None:
    one, two = cov(SHARD_1), cov(SHARD_2)
    assert (one.lines_covered, one.lines_valid) == (2, 4)
    assert (two.lines_covered, two.lines_valid) == (2, 4)
    merged = merge_coverage([one, two])
    (file,) = merged.files
    assert sorted(file.covered) == [1, 2, 3]  # covered in any shard
    assert sorted(file.uncovered) == [4]
    assert (merged.lines_covered, merged.lines_valid) == (3, 4)  # a sum would say 4/8
    assert merged.line_pct == 75.0
    assert [tuple(b) for b in file.branches] == [(2, 1, 2)]
    assert "merged" in codes(merged)


def test_merge_of_different_files_and_formats() -> None:
    jacoco = cov(
        '<report name="r"><package name="p"><sourcefile name="A.java">'
        '<line nr="1" mi="0" ci="1"/></sourcefile></package></report>'
    )
    merged = merge_coverage([jacoco, cov(GO)])
    assert merged.format == "go+jacoco"
    assert len(merged.files) == 3
    assert merged.lines_valid == jacoco.lines_valid + cov(GO).lines_valid


def test_merge_of_nothing_and_of_empty_reports_is_unknown() -> None:
    assert merge_coverage([]).line_pct is None
    empty = parse_coverage(REFERENCE / "jacoco-aggregate-empty-report.xml")
    assert merge_coverage([empty, empty]).line_pct is None


def test_merge_leaves_out_counter_only_reports_and_says_so() -> None:
    counters_only = cov('<report name="r"><counter type="LINE" missed="1" covered="1"/></report>')
    merged = merge_coverage([counters_only, cov(SHARD_1)])
    assert (merged.lines_covered, merged.lines_valid) == (2, 4)
    assert "merge-without-line-data" in codes(merged)


def test_percentage() -> None:
    assert percentage(0, 0) is None
    assert percentage(0, 5) == 0.0
    assert percentage(1, 4) == 25.0
