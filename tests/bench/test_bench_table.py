"""``scripts/bench/all``'s table: every benchmark is in it, and it is built from their report lines."""

from __future__ import annotations

import subprocess
import sys

from tests.bench.support import BENCH, benchmarks


def test_every_benchmark_script_runs_in_the_table() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import table
    finally:
        sys.path.remove(str(BENCH))
    assert sorted(table.BENCHMARKS) == benchmarks()


def test_the_table_is_printed_from_the_benchmarks_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "table.py"), "--smoke", "kubesim_list", "results_parse"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=BENCH.parents[1],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["benchmark", "figure", "value", "target", "verdict", "baseline"]
    rows = [line for line in lines[2:] if line.startswith(("kubesim_list", "results_parse"))]
    assert any("list of 200 ConfigMaps, median" in row and "<= 150" in row for row in rows)
    assert any("parsers / bare iterparse" in row and "iterparse" in row for row in rows)
    assert "0 missed or failed" in done.stdout


def test_a_benchmark_that_fails_is_a_failed_row_and_exit_1() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "table.py"), "--smoke", "--timeout", "0.01", "kubesim_list"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=BENCH.parents[1],
    )
    assert done.returncode == 1
    assert "failed" in done.stdout
    assert "1 missed or failed" in done.stdout
