"""Benchmark of the results report parsers against a bare ``iterparse`` of the same files.

Generates a 20,000-testcase JUnit report and a ~5 MB JaCoCo report, then times, each in a fresh
subprocess (so peak RSS is the parse's own):

- ``iterparse``: ``for _ in xml.etree.ElementTree.iterparse(path): pass`` over both files, the
  baseline the target is stated against;
- ``iterparse+clear``: the same, clearing each element, shown for reference;
- ``parsers``: ``parse_junit`` + ``parse_coverage`` (defusedxml-hardened, streaming, building
  the full value objects).

Targets: parsers within 2x of the bare iterparse; peak RSS growth under 150 MB. Prints the
figures and exits 1 when a target is missed. Usage: ``python scripts/bench/results_parse.py``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from report import Report, options

ROOT = Path(__file__).resolve().parents[2]
TESTCASES = 20_000
JACOCO_BYTES = 5_000_000
RATIO_TARGET = 2.0
RSS_TARGET_MB = 150.0

TRACE = "org.opentest4j.AssertionFailedError: expected: &lt;1&gt; but was: &lt;2&gt;\n" + "".join(
    f"\tat com.example.service.Component{i}.call(Component{i}.java:{i + 10})\n" for i in range(25)
)


def write_junit(path: Path, cases: int = TESTCASES) -> None:
    rnd = random.Random(1)
    per_suite = 50
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench">\n')
        for suite in range(cases // per_suite):
            cls = f"com.example.pkg{suite % 40}.Service{suite}Test"
            out.write(
                f'<testsuite name="{cls}" tests="{per_suite}" failures="0" errors="0" '
                f'skipped="0" time="1.5">\n<properties><property name="java.version" '
                'value="21"/></properties>\n'
            )
            for case in range(per_suite):
                out.write(_testcase(rnd, cls, case))
            out.write("<system-out><![CDATA[suite output\n]]></system-out>\n</testsuite>\n")
        out.write("</testsuites>\n")


def _testcase(rnd: random.Random, cls: str, case: int) -> str:
    millis = rnd.randint(0, 999)
    head = f'<testcase name="test{case}_behaves(int)" classname="{cls}" time="0.{millis:03d}"'
    roll = rnd.random()
    if roll < 0.04:
        failure = f'<failure message="expected 1" type="AssertionFailedError">{TRACE}</failure>'
        return f"{head}>{failure}</testcase>\n"
    if roll < 0.05:
        error = f'<error message="boom" type="java.lang.IllegalStateException">{TRACE}</error>'
        return f"{head}>{error}</testcase>\n"
    if roll < 0.08:
        return f'{head}><skipped message="disabled until fixed"/></testcase>\n'
    if roll < 0.09:
        attempt = f"<stackTrace>{TRACE}</stackTrace>"
        return f'{head}><flakyFailure message="first try">{attempt}</flakyFailure></testcase>\n'
    if roll < 0.12:
        return f"{head}><system-out>log line one\nlog line two\n</system-out></testcase>\n"
    return f"{head}/>\n"


def write_jacoco(path: Path, size: int = JACOCO_BYTES) -> None:
    rnd = random.Random(2)
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC '
            '"-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="bench">'
            '<sessioninfo id="bench" start="1" dump="2"/>'
        )
        package = 0
        while out.tell() < size:
            out.write(_jacoco_package(rnd, package))
            package += 1
        out.write('<counter type="LINE" missed="0" covered="0"/></report>')


def _jacoco_package(rnd: random.Random, package: int) -> str:
    name = f"com/example/p{package}"
    parts = [f'<package name="{name}">']
    for cls in range(8):
        parts.append(f'<class name="{name}/C{cls}" sourcefilename="C{cls}.java">')
        for method in range(6):
            parts.append(
                f'<method name="m{method}" desc="()V" line="{method * 10 + 1}">'
                '<counter type="INSTRUCTION" missed="3" covered="6"/>'
                '<counter type="LINE" missed="1" covered="3"/>'
                '<counter type="METHOD" missed="0" covered="1"/></method>'
            )
        parts.append('<counter type="LINE" missed="6" covered="18"/></class>')
    for cls in range(8):
        parts.append(f'<sourcefile name="C{cls}.java">')
        for line in range(1, 70):
            missed = rnd.random() < 0.3
            branches = ' mb="1" cb="1"' if line % 7 == 0 else ' mb="0" cb="0"'
            mi, ci = ("4", "0") if missed else ("0", str(rnd.randint(1, 9)))
            parts.append(f'<line nr="{line}" mi="{mi}" ci="{ci}"{branches}/>')
        parts.append('<counter type="LINE" missed="6" covered="18"/></sourcefile>')
    parts.append('<counter type="LINE" missed="48" covered="144"/></package>')
    return "".join(parts)


# -- measurement (runs in a child process) ---------------------------------------------------


def bare(paths: list[Path]) -> None:
    for path in paths:
        for _ in ET.iterparse(path):  # noqa: S314 - baseline on our own generated files
            pass


def bare_clear(paths: list[Path]) -> None:
    for path in paths:
        for _, element in ET.iterparse(path):  # noqa: S314 - as above
            element.clear()


def parsers(paths: list[Path]) -> None:
    from results.parsers import parse_coverage, parse_junit

    junit_path, jacoco_path = paths
    report = parse_junit(junit_path)
    coverage = parse_coverage(jacoco_path)
    assert report.counts.tests > 0, report.counts
    assert coverage.line_pct is not None


MODES = {"iterparse": bare, "iterparse+clear": bare_clear, "parsers": parsers}


def child(mode: str, paths: list[Path], repeats: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    if mode == "parsers":
        import results.parsers  # noqa: F401 - import cost is not parse cost
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        MODES[mode](paths)
        timings.append(time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"best_s": min(timings), "rss_growth_mb": (after - before) / 1024}


def measure(mode: str, paths: list[Path], repeats: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", mode, "--repeats", str(repeats)]
    output = subprocess.run(
        [*command, *map(str, paths)], check=True, capture_output=True, text=True
    ).stdout
    return dict(json.loads(output))


def main() -> int:
    args = _arguments()
    if args.child:
        print(json.dumps(child(args.child, args.paths, args.repeats)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        junit, jacoco = Path(tmp, "junit.xml"), Path(tmp, "jacoco.xml")
        write_junit(junit, args.testcases)
        write_jacoco(jacoco, int(JACOCO_BYTES * args.testcases / TESTCASES))
        megabytes = [path.stat().st_size / 1e6 for path in (junit, jacoco)]
        sizes = f"{megabytes[0]:.1f} MB JUnit, {megabytes[1]:.1f} MB JaCoCo"
        print(f"inputs: {args.testcases} testcases ({sizes}); best of {args.repeats} runs each")
        results = {mode: measure(mode, [junit, jacoco], args.repeats) for mode in MODES}
    return summary(results, Report.of("results_parse", args))


def summary(results: dict[str, dict[str, float]], out: Report) -> int:
    for mode, figures in results.items():
        seconds, growth = figures["best_s"], figures["rss_growth_mb"]
        print(f"  {mode:<16} {seconds:7.3f} s   peak RSS growth {growth:6.1f} MB")
    ours = results["parsers"]
    ratio = ours["best_s"] / results["iterparse"]["best_s"]
    ratio_clear = ours["best_s"] / results["iterparse+clear"]["best_s"]
    print(f"ratio parsers / iterparse: {ratio:.2f}x (target <= {RATIO_TARGET}x)")
    print(f"ratio parsers / iterparse+clear: {ratio_clear:.2f}x (reference only)")
    print(f"parsers peak RSS growth: {ours['rss_growth_mb']:.1f} MB (target < {RSS_TARGET_MB} MB)")
    out.figure("parsers / bare iterparse", ratio, "x", at_most=RATIO_TARGET, baseline="iterparse")
    out.figure("parsers, peak RSS growth", ours["rss_growth_mb"], "MB", at_most=RSS_TARGET_MB)
    return out.emit()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--testcases", type=int, default=TESTCASES)
    parser.add_argument("--child", choices=sorted(MODES), help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    return options(
        parser, quick={"repeats": 3, "testcases": 5000}, smoke={"repeats": 1, "testcases": 200}
    )


if __name__ == "__main__":
    sys.exit(main())
